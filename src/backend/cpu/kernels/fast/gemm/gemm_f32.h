/* Internal: fp32 GEMM for the level-2 CPU kernels: C = alpha * op(A) * op(B) + beta * C with row-major
 * operands, cache blocking (KC x NC panels of B, MC x KC blocks of A), packing into contiguous slivers,
 * and a register-tile micro-kernel per instruction set (AVX-512, AVX2+FMA, portable C). */
#ifndef TB_CPU_KERNELS_FAST_GEMM_F32_H
#define TB_CPU_KERNELS_FAST_GEMM_F32_H
#include <stdbool.h>
#include <stdint.h>

typedef enum tb_gemm_path { TB_GEMM_PORTABLE = 0, TB_GEMM_AVX2, TB_GEMM_AVX512 } tb_gemm_path;

/* The micro-kernel contract: c[MR x NR] (row stride ldc) += alpha * sum over kc of a[p*MR + i] * b[p*NR + j],
 * a and b packed by the driver (rows/columns past the matrix edge are zeros). */
typedef void (*tb_gemm_ukr)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha);
/* The same on the top-left rows x cols of the tile only (an edge of C), with the same operations per
 * element as the full tile; the rest of c is not touched. */
typedef void (*tb_gemm_ukr_edge)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                                 int rows, int cols);

struct tb_gemm_epilogue;
/* The epilogue on one C tile (gemm_f32_internal.h: tb_gemm_tile_init / tb_gemm_tile_act), vectorised for
 * an instruction set; the same result per element as the portable one. */
typedef void (*tb_gemm_tile_init_fn)(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                     float beta, const struct tb_gemm_epilogue *ep);
typedef void (*tb_gemm_tile_act_fn)(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                    const struct tb_gemm_epilogue *ep);

typedef struct tb_gemm_kernel {
  int mr, nr;
  tb_gemm_ukr ukr;
  tb_gemm_ukr_edge edge; /* NULL: the driver runs ukr on a copy of the edge tile */
  /* NULL, or ukr / edge onto a zero C without reading it (c = alpha * acc + 0.0f, the same bits as ukr on a
   * zeroed tile): the first depth block when beta is 0 and there is no bias or residual. Both or none. */
  tb_gemm_ukr ukr_set;
  tb_gemm_ukr_edge edge_set;
  tb_gemm_tile_init_fn tile_init; /* NULL: the portable epilogue */
  tb_gemm_tile_act_fn tile_act;
  /* NULL, or: `rows` (<= width) rows of a row-major matrix x (row stride ld), depth kc, packed into one
   * sliver dst[p * width + o], rows past `rows` zero (the portable packing's layout and values). */
  void (*pack_rows)(const float *x, int64_t ld, int64_t rows, int64_t kc, int width, float *dst);
  /* NULL, or the edge sliver of few columns (cols <= narrow_cols) over a whole packed A block at once:
   * c[rows x cols] (row stride ldc) from `rows` rows of packed A (consecutive MR-row slivers of kc * MR
   * floats each, zero rows past `rows`) and the first cols columns of one packed B sliver, each element
   * with the operations ukr / edge (load_c) or ukr_set / edge_set (!load_c) give it, bit for bit. Its
   * vectors run along A's rows (a sliver's MR rows in one vector) with one broadcast of B per column, so a
   * 4-column edge costs 4 columns of work instead of NR (a 1x1 convolution's 196 = 6 x 32 + 4 pixels). */
  void (*narrow)(int64_t kc, const float *a, int64_t rows, const float *b, int cols, float *c, int64_t ldc, float alpha,
                 bool load_c);
  int narrow_cols;
} tb_gemm_kernel;

extern const tb_gemm_kernel tb_gemm_kernel_avx512; /* 14 x 32 */
extern const tb_gemm_kernel tb_gemm_kernel_avx2;   /* 6 x 16 */
extern const tb_gemm_kernel tb_gemm_kernel_portable; /* 4 x 16 */

/* The path for a feature set (TB_FEATURE_BIT mask): AVX-512 when AVX512F+FMA, AVX2 when AVX2+FMA, else
 * portable. */
tb_gemm_path tb_gemm_path_for(uint64_t features);

/* C[m x n] (row stride ldc) = alpha * op(A) op(B) + beta * C; op(A) is m x k (A stored k x m when trans_a,
 * row stride lda), op(B) is k x n (B stored n x k when trans_b). beta == 0 ignores C's old contents (NaN
 * included). Returns false only when the packing buffers cannot be allocated. */
bool tb_gemm_f32(tb_gemm_path path, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/* ---- The general driver: operands plain, packed once, or packed on demand; an epilogue; the pool ---- */

struct tb_pool;

/* Packs `outer` rows of op(A) (or columns of op(B)) starting at o0, depth p0 .. p0+kc, into slivers of
 * `width` (MR for A, NR for B): element (p, o) of a sliver at p * width + o, zeros past the matrix edge,
 * slivers one after another (kc * width floats each). An implicit-GEMM convolution packs its input
 * patches this way without building an im2col buffer. */
typedef void (*tb_gemm_pack_fn)(void *ctx, int64_t o0, int64_t outer, int64_t p0, int64_t kc, int width, float *dst);

typedef struct tb_gemm_packed tb_gemm_packed; /* an operand packed for one path; opaque */

/* One operand: exactly one of data, packed and pack is set. */
typedef struct tb_gemm_operand {
  const float *data;             /* row-major; op() transposes when trans */
  int64_t ld;
  bool trans;
  const tb_gemm_packed *packed;  /* from tb_gemm_pack_a / tb_gemm_pack_b for the same path and sizes */
  tb_gemm_pack_fn pack;          /* called per block, possibly from several threads at once */
  void *pack_ctx;
} tb_gemm_operand;

struct vec_ops;

/* After C = alpha * op(A) op(B) + beta * C: add bias, then residual, then the activation, per element.
 * act is a tb_fused_act kind (fused_kernel.h): 0 none, 1 Relu, 2 LeakyRelu (act_alpha), 3 Clip (act_min,
 * act_max), 4 Sigmoid, 5 Tanh, 6 HardSigmoid (act_alpha, act_beta), 7 HardSwish, 8 Gelu (erf: x * Phi(x)),
 * 9 Gelu with the tanh approximation, 10 SiLU (x * sigmoid(x)), 11 Mish (x * tanh(softplus(x))). */
typedef struct tb_gemm_epilogue {
  const float *bias;     /* NULL, or bias[i] added to row i (bias_axis 0) or bias[j] to column j (1) */
  int bias_axis;
  const float *residual; /* NULL, or an m x n matrix with row stride ld_residual; may be C itself (same
                          * pointer and stride): then C's values from before the call are added */
  int64_t ld_residual;
  int act;
  float act_alpha, act_beta, act_min, act_max;
  /* NULL, or the vec_ops table (vec_ops.h) whose row loops the epilogue uses: its unary loops (unary_p)
   * for every activation kind (the level-2 elementwise kernels of the same instruction set use the
   * same loops, so the fused activation equals the unfused one bit for bit), and its binary add for the
   * bias and residual where the epilogue adds them after the products (the bf16 GEMM). NULL: the scalar
   * tb_gemm_act per element. */
  const struct vec_ops *vec;
  /* Optional, the fp32 GEMM only (tb_gemm_f32_run; the bf16 GEMM adds bias and residual after the products
   * anyway): a column bias and a residual added after the last product block, just before the activation,
   * instead of into C before the first one: C = act((A B + late_bias) + late_residual), each add rounded as
   * a separate Add kernel rounds it, and the first block still writes C without reading it. */
  const float *late_bias;     /* NULL, or n values added to every row */
  const float *late_residual; /* NULL, or m x n with row stride ld_late_residual; not C itself */
  int64_t ld_late_residual;
} tb_gemm_epilogue;
/* The epilogue's activation of one value, in float (gemm_epilogue.c; the bf16 GEMM's epilogue uses it too). */
float tb_gemm_act(const tb_gemm_epilogue *ep, float x);
/* The activation over n contiguous values in place: ep->vec's unary loop where it has the activation,
 * else tb_gemm_act per element. */
void tb_gemm_act_row(const tb_gemm_epilogue *ep, float *x, int64_t n);

/* op(A) (m x k) or op(B) (k x n) packed once for this path, for weights packed at prepare time. NULL when
 * out of memory. */
tb_gemm_packed *tb_gemm_pack_a(tb_gemm_path path, const tb_gemm_operand *a, int64_t m, int64_t k);
tb_gemm_packed *tb_gemm_pack_b(tb_gemm_path path, const tb_gemm_operand *b, int64_t k, int64_t n);
void tb_gemm_packed_free(tb_gemm_packed *packed);

/* C[m x n] (row stride ldc) = epilogue(alpha * op(A) op(B) + beta * C), split over the pool's threads
 * (NULL: the caller's thread only; small products stay on the caller's thread). beta == 0 ignores C's old
 * contents. ep NULL: no epilogue. k == 0 or alpha == 0: C = epilogue(beta * C). The result does not depend
 * on the pool's thread count (same reduction order per element). False when a buffer cannot be allocated
 * (C is then unspecified), or when an operand is not exactly one of data/packed/pack or a packed one was
 * made for another path, side or size (C untouched). */
bool tb_gemm_f32_run(tb_gemm_path path, int64_t m, int64_t n, int64_t k, float alpha, const tb_gemm_operand *a,
                     const tb_gemm_operand *b, float beta, float *c, int64_t ldc, const tb_gemm_epilogue *ep,
                     struct tb_pool *pool);

#endif
