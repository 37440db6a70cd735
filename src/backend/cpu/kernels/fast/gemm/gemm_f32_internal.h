/* Internal to the fp32 GEMM files: the blocking sizes, the packed-operand layout, the packing routines for
 * plain operands, and the per-tile epilogue the driver (gemm_driver.c) applies. */
#ifndef TB_CPU_KERNELS_FAST_GEMM_F32_INTERNAL_H
#define TB_CPU_KERNELS_FAST_GEMM_F32_INTERNAL_H
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"

/* KC: the usual depth of one packed block, KC_MAX its most (tb_gemm_depth_block; the reduction order of
 * every element follows the blocks); MC: rows of A packed at once (stays in L2); NC: columns of B packed
 * at once (at most). GEMM_MAX_TILE: the largest MR x NR. */
enum { GEMM_MC = 336, GEMM_KC = 192, GEMM_KC_MAX = 256, GEMM_NC = 4096, GEMM_MAX_TILE = 14 * 32 };

/* The depth of every block but the last (which may be shorter) for a GEMM of depth k > 0: k cut into the
 * nearest whole number of GEMM_KC blocks (more when a block would pass GEMM_KC_MAX), all about equal, so
 * that no block is a thin remainder paying a full pass over C. */
int64_t tb_gemm_depth_block(int64_t k);

/* An operand packed once: depth blocks of tb_gemm_depth_block(k) (the last one shorter), each holding
 * ceil(outer/width) slivers of kc * width floats; the block at depth p0 starts at p0 * outer_pad. */
struct tb_gemm_packed {
  bool is_a;
  int width;            /* MR (A) or NR (B) of the path it was packed for */
  int64_t outer, k;     /* m (A) or n (B), and the depth */
  int64_t outer_pad;    /* outer rounded up to width */
  float *data;
};

const tb_gemm_kernel *tb_gemm_kernel_for(tb_gemm_path path);

/* Pack rows o0 .. o0+outer of op(A) (as_a) or columns of op(B), depth p0 .. p0+kc, into width-slivers,
 * with kr's pack_rows when it has one. */
void tb_gemm_pack_plain(const tb_gemm_kernel *kr, const tb_gemm_operand *op, bool as_a, int64_t o0, int64_t outer,
                        int64_t p0, int64_t kc, int width, float *dst);
/* tb_gemm_kernel.pack_rows with AVX-512 (gemm_f32_pack_avx512.c; only when the CPU has AVX512F). */
void tb_gemm_pack_rows_avx512(const float *x, int64_t ld, int64_t rows, int64_t kc, int width, float *dst);

/* tb_gemm_kernel.narrow for AVX-512 (14-row slivers, 32-column B slivers) and AVX2+FMA (6-row, 16-column;
 * gemm_f32_narrow.c; call only when the CPU has the ISA). */
void tb_gemm_narrow_avx512(int64_t kc, const float *a, int64_t rows, const float *b, int cols, float *c, int64_t ldc,
                           float alpha, bool load_c);
void tb_gemm_narrow_avx2(int64_t kc, const float *a, int64_t rows, const float *b, int cols, float *c, int64_t ldc,
                         float alpha, bool load_c);

/* The start of a C tile before the first product block: C = beta * C + bias + residual (beta 0: C's old
 * contents are not read). rows x cols at (i0, j0) of C. */
void tb_gemm_tile_init(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols, float beta,
                       const tb_gemm_epilogue *ep);
/* The activation over a finished C tile. */
void tb_gemm_tile_act(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                      const tb_gemm_epilogue *ep);
/* The same two with AVX-512 (gemm_f32_epilogue_avx512.c; call only when the CPU has AVX512F). */
void tb_gemm_tile_init_avx512(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols, float beta,
                              const tb_gemm_epilogue *ep);
void tb_gemm_tile_act_avx512(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                             const tb_gemm_epilogue *ep);
/* The same two with AVX2 (gemm_f32_epilogue_avx2.c; call only when the CPU has AVX2 and FMA). */
void tb_gemm_tile_init_avx2(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols, float beta,
                            const tb_gemm_epilogue *ep);
void tb_gemm_tile_act_avx2(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                           const tb_gemm_epilogue *ep);

#endif
