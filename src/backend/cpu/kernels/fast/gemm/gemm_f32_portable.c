/* The portable C micro-kernel (4 x 16): plain loops the compiler may vectorise with the baseline ISA. */
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"

enum { MR = 4, NR = 16 };

static void ukr_portable(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha) {
  float acc[MR][NR] = {{0}};
  for (int64_t p = 0; p < kc; p++) {
    const float *ap = a + p * MR, *bp = b + p * NR;
    for (int i = 0; i < MR; i++)
      for (int j = 0; j < NR; j++) acc[i][j] += ap[i] * bp[j];
  }
  for (int i = 0; i < MR; i++)
    for (int j = 0; j < NR; j++) c[i * ldc + j] += alpha * acc[i][j];
}

const tb_gemm_kernel tb_gemm_kernel_portable = {.mr = MR, .nr = NR, .ukr = ukr_portable};
