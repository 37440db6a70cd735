/* Internal to the bf16 GEMM: the packed layout, the rounding, and what each path provides (micro-kernel
 * and packing routines).
 *
 * Packed layout (every path): a sliver holds `width` lines (MR rows of op(A) or NR columns of op(B)) over
 * a depth of kc, as kp = ceil(kc / 2) pairs of k: element (p, o) is at ((p / 2) * width + o) * 2 + p % 2,
 * so the two bf16 of one line for k = 2q, 2q + 1 form one 32-bit word (vdpbf16ps's operand, and AMX's
 * VNNI layout for B). Lines past the matrix edge and the odd k past kc are zeros. A path may lay out its
 * A slivers otherwise (pack_a_*: AMX stores them line by line) and pad every sliver's depth with zero
 * pairs to a multiple of pair_block (AMX: whole tiles); the driver then hands the micro-kernel the padded
 * pair count, and a sliver of kc holds tb_gemm_bf16_pairs(kr, kc) * width * 2 values. */
#ifndef TB_CPU_KERNELS_FAST_GEMM_BF16_KERNEL_H
#define TB_CPU_KERNELS_FAST_GEMM_BF16_KERNEL_H
#include <stdint.h>
#include <string.h>

/* c[MR x NR] (row stride ldc) = alpha * sum over pairs of a[..] b[..] + beta * c (beta 0: c not read). */
typedef void (*tb_gemm_bf16_ukr)(int64_t kp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc, float alpha,
                                 float beta);
/* One sliver from fp32: element (p, o) of the operand at src[p * ld + o] (o-contiguous: B plain, A
 * transposed, pack-function output) or at src[o * ld + p] (p-contiguous: A plain, B transposed);
 * outer <= width lines are present. */
typedef void (*tb_gemm_bf16_pack_fn)(const float *src, int64_t ld, int64_t kc, int64_t outer, int width, uint16_t *dst);

/* The same on the top-left rows x cols of the tile only (an edge of C), the same sums per element; the
 * rest of c is not touched. */
typedef void (*tb_gemm_bf16_ukr_edge)(int64_t kp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc,
                                      float alpha, float beta, int rows, int cols);

typedef struct tb_gemm_bf16_kernel {
  int mr, nr;
  int pair_block; /* 0 or 1: no padding; else slivers hold a multiple of this many pairs */
  tb_gemm_bf16_ukr ukr;
  tb_gemm_bf16_ukr_edge edge; /* NULL: the driver runs ukr on a scratch tile and copies the edge */
  void (*thread_setup)(void); /* NULL, or called on each thread before it runs micro-kernels (AMX tiles) */
  tb_gemm_bf16_pack_fn pack_o_contiguous, pack_p_contiguous;
  tb_gemm_bf16_pack_fn pack_a_o_contiguous, pack_a_p_contiguous; /* NULL: A packs as B does */
} tb_gemm_bf16_kernel;

extern const tb_gemm_bf16_kernel tb_gemm_bf16_kernel_portable;   /* 4 x 16 */
extern const tb_gemm_bf16_kernel tb_gemm_bf16_kernel_avx512bf16; /* 14 x 32; all zero off x86-64 */
extern const tb_gemm_bf16_kernel tb_gemm_bf16_kernel_amx;        /* 32 x 32; all zero off x86-64 */
extern const tb_gemm_bf16_kernel tb_gemm_bf16_kernel_amx_emulated; /* the same on the C model of AMX */

/* The kernel a path runs (tb_gemm_bf16_path; the portable one for a path not built here). */
const tb_gemm_bf16_kernel *tb_gemm_bf16_kernel_for(int path);

/* The pairs a sliver of depth kc holds for this kernel: ceil(kc / 2), padded to its pair_block. */
static inline int64_t tb_gemm_bf16_pairs(const tb_gemm_bf16_kernel *kr, int64_t kc) {
  int64_t kp = (kc + 1) / 2, block = kr->pair_block > 1 ? kr->pair_block : 1;
  return (kp + block - 1) / block * block;
}

/* float -> bf16 bits, round to nearest even, NaN keeps its top payload and gets the quiet bit: the same
 * bits as tb_convert (tested against tb_f32_to_bf16_ref). */
static inline uint16_t tb_bf16_round(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((bits >> 16) | 0x40u);
  return (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

static inline float tb_bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

#endif
