/* The portable bf16 GEMM path: packing with the scalar rounding and a 4 x 16 micro-kernel that widens the
 * bf16 pairs to float and sums the (exact) products in fp32, as vdpbf16ps does, in plain C. */
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"

enum { MR = 4, NR = 16 };

static void ukr_portable(int64_t kp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc, float alpha,
                         float beta) {
  float acc[MR][NR] = {{0}};
  for (int64_t q = 0; q < kp; q++) {
    const uint16_t *aq = a + q * MR * 2, *bq = b + q * NR * 2;
    float b0[NR], b1[NR];
    for (int j = 0; j < NR; j++) {
      b0[j] = tb_bf16_to_float(bq[2 * j]);
      b1[j] = tb_bf16_to_float(bq[2 * j + 1]);
    }
    for (int i = 0; i < MR; i++) {
      float a0 = tb_bf16_to_float(aq[2 * i]), a1 = tb_bf16_to_float(aq[2 * i + 1]);
      for (int j = 0; j < NR; j++) acc[i][j] = acc[i][j] + a0 * b0[j] + a1 * b1[j];
    }
  }
  for (int i = 0; i < MR; i++)
    for (int j = 0; j < NR; j++)
      c[i * ldc + j] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * c[i * ldc + j];
}

static void pack_o_contiguous(const float *src, int64_t ld, int64_t kc, int64_t outer, int width, uint16_t *dst) {
  for (int64_t p = 0; p < (kc + 1) / 2 * 2; p++) {
    uint16_t *d = dst + (p / 2) * width * 2 + p % 2;
    for (int64_t o = 0; o < width; o++) d[o * 2] = p < kc && o < outer ? tb_bf16_round(src[p * ld + o]) : 0;
  }
}

static void pack_p_contiguous(const float *src, int64_t ld, int64_t kc, int64_t outer, int width, uint16_t *dst) {
  for (int64_t o = 0; o < width; o++)
    for (int64_t p = 0; p < (kc + 1) / 2 * 2; p++)
      dst[((p / 2) * width + o) * 2 + p % 2] = p < kc && o < outer ? tb_bf16_round(src[o * ld + p]) : 0;
}

const tb_gemm_bf16_kernel tb_gemm_bf16_kernel_portable = {.mr = MR, .nr = NR, .ukr = ukr_portable,
                                                          .pack_o_contiguous = pack_o_contiguous,
                                                          .pack_p_contiguous = pack_p_contiguous};
