/* The fp32 GEMM driver: GotoBLAS-style loops (NC columns of B, KC depth, MC rows of A), B packed into
 * KC x NR slivers (kept in L1 by the micro-kernel), A packed into MR x KC slivers (an MC x KC block stays
 * in L2), edges computed into a zero-padded tile and copied back. */
#include "backend/cpu/kernels/fast/gemm_f32.h"
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/device.h>

enum { GEMM_MC = 336, GEMM_KC = 192, GEMM_NC = 4096, GEMM_MAX_TILE = 14 * 32 };

tb_gemm_path tb_gemm_path_for(uint64_t features) {
  uint64_t fma = TB_FEATURE_BIT(TB_FEATURE_FMA);
  if ((features & (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | fma)) == (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | fma))
    return TB_GEMM_AVX512;
  if ((features & (TB_FEATURE_BIT(TB_FEATURE_AVX2) | fma)) == (TB_FEATURE_BIT(TB_FEATURE_AVX2) | fma)) return TB_GEMM_AVX2;
  return TB_GEMM_PORTABLE;
}

static const tb_gemm_kernel *kernel_for(tb_gemm_path path) {
  if (path == TB_GEMM_AVX512 && !tb_gemm_kernel_avx512.ukr) path = TB_GEMM_PORTABLE;
  if (path == TB_GEMM_AVX2 && !tb_gemm_kernel_avx2.ukr) path = TB_GEMM_PORTABLE;
  if (path == TB_GEMM_AVX512) return &tb_gemm_kernel_avx512;
  if (path == TB_GEMM_AVX2) return &tb_gemm_kernel_avx2;
  return &tb_gemm_kernel_portable;
}

/* op(A)[i][p] for rows i0.., depth p0..: MR-row slivers, element (p, i) at p*MR + i, zero past m. */
static void pack_a(const float *a, int64_t lda, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc, int mr,
                   float *dst) {
  for (int64_t is = 0; is < mc; is += mr) {
    int64_t rows = mc - is < mr ? mc - is : mr;
    for (int64_t p = 0; p < kc; p++) {
      float *d = dst + p * mr;
      for (int64_t i = 0; i < rows; i++)
        d[i] = trans ? a[(p0 + p) * lda + i0 + is + i] : a[(i0 + is + i) * lda + p0 + p];
      for (int64_t i = rows; i < mr; i++) d[i] = 0;
    }
    dst += kc * mr;
  }
}

/* op(B)[p][j]: NR-column slivers, element (p, j) at p*NR + j, zero past n. */
static void pack_b(const float *b, int64_t ldb, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int nr,
                   float *dst) {
  for (int64_t js = 0; js < nc; js += nr) {
    int64_t cols = nc - js < nr ? nc - js : nr;
    for (int64_t p = 0; p < kc; p++) {
      float *d = dst + p * nr;
      if (!trans && cols == nr) {
        memcpy(d, b + (p0 + p) * ldb + j0 + js, (size_t)nr * sizeof(float));
        continue;
      }
      for (int64_t j = 0; j < cols; j++) d[j] = trans ? b[(j0 + js + j) * ldb + p0 + p] : b[(p0 + p) * ldb + j0 + js + j];
      for (int64_t j = cols; j < nr; j++) d[j] = 0;
    }
    dst += kc * nr;
  }
}

static void scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc) {
  if (beta == 1.0f) return;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

bool tb_gemm_f32(tb_gemm_path path, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return true;
  scale_c(m, n, beta, c, ldc);
  if (k <= 0 || alpha == 0.0f) return true;
  const tb_gemm_kernel *kr = kernel_for(path);
  int mr = kr->mr, nr = kr->nr;
  int64_t mc_max = (GEMM_MC / mr) * mr, nc_max = GEMM_NC;
  int64_t kc_max = k < GEMM_KC ? k : GEMM_KC;
  int64_t mc_alloc = m < mc_max ? (m + mr - 1) / mr * mr : mc_max;
  int64_t nc_alloc = n < nc_max ? (n + nr - 1) / nr * nr : nc_max;
  float *pa = aligned_alloc(64, (size_t)((mc_alloc * kc_max * 4 + 63) / 64 * 64));
  float *pb = aligned_alloc(64, (size_t)((nc_alloc * kc_max * 4 + 63) / 64 * 64));
  if (!pa || !pb) {
    free(pa);
    free(pb);
    return false;
  }
  _Alignas(64) float tile[GEMM_MAX_TILE];
  for (int64_t jc = 0; jc < n; jc += nc_max) {
    int64_t nc = n - jc < nc_max ? n - jc : nc_max;
    for (int64_t pc = 0; pc < k; pc += kc_max) {
      int64_t kc = k - pc < kc_max ? k - pc : kc_max;
      pack_b(b, ldb, trans_b, pc, kc, jc, nc, nr, pb);
      for (int64_t ic = 0; ic < m; ic += mc_max) {
        int64_t mc = m - ic < mc_max ? m - ic : mc_max;
        pack_a(a, lda, trans_a, ic, mc, pc, kc, mr, pa);
        for (int64_t jr = 0; jr < nc; jr += nr) {
          int64_t cols = nc - jr < nr ? nc - jr : nr;
          const float *bs = pb + (jr / nr) * kc * nr;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            int64_t rows = mc - ir < mr ? mc - ir : mr;
            const float *as = pa + (ir / mr) * kc * mr;
            float *cp = c + (ic + ir) * ldc + jc + jr;
            if (rows == mr && cols == nr) {
              kr->ukr(kc, as, bs, cp, ldc, alpha);
              continue;
            }
            memset(tile, 0, sizeof tile);
            kr->ukr(kc, as, bs, tile, nr, alpha);
            for (int64_t i = 0; i < rows; i++)
              for (int64_t j = 0; j < cols; j++) cp[i * ldc + j] += tile[i * nr + j];
          }
        }
      }
    }
  }
  free(pa);
  free(pb);
  return true;
}
