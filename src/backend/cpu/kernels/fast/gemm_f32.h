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

typedef struct tb_gemm_kernel {
  int mr, nr;
  tb_gemm_ukr ukr;
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

#endif
