/* The convolution's epilogue around its GEMMs, on one output block (rows = output channels, columns =
 * output pixels) while the block is in cache: before the products the block is set to bias + residual
 * (the GEMM then accumulates onto it with beta 1, so it needs no epilogue of its own), or, after a
 * transposed product (pixels as rows), the block is that product transposed plus bias + residual; after
 * them the activation. Vectorised for AVX-512 and AVX2 (target attributes; each used only on its own path)
 * and plain C on the portable one; Relu, LeakyRelu and Clip keep the scalar rules exactly (a NaN passes
 * through), the other activations go through tb_conv_epilogue_row. (On AVX2 the plain C loops were scalar:
 * the bias start of a 1x1 convolution took 7.5% of EfficientNet-B0's time masked, against 3.1% unmasked;
 * docs/performance.md, "Where the AVX2 mask costs most".) */
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx2.h"

#define AVX2 __attribute__((target("avx2,fma")))

AVX2 static void init_avx2(float *y, int64_t ldy, int64_t rows, int64_t cols, const float *bias, const float *res,
                           int64_t ldr) {
  const __m256i tail = tb_lanes_below_avx2(cols % 8);
  for (int64_t i = 0; i < rows; i++) {
    float *yi = y + i * ldy;
    const float *ri = res ? res + i * ldr : NULL;
    __m256 b = _mm256_set1_ps(bias ? bias[i] : 0.0f);
    for (int64_t j = 0; j < cols; j += 8) {
      __m256 v = ri ? _mm256_add_ps(b, tb_load8_avx2(ri + j, cols - j, tail)) : b;
      tb_store8_avx2(yi + j, cols - j, tail, v);
    }
  }
}

/* 8 x 8 blocks of ct (8 pixels' rows of 8 channels) transposed in registers, then each channel's 8 pixels
 * + bias + residual stored (from_t_avx512's order of operations). */
AVX2 static void from_t_avx2(float *y, int64_t ldy, int64_t rows, int64_t cols, const float *ct, int64_t ldt,
                             const float *bias, const float *res, int64_t ldr) {
  const __m256i tail = tb_lanes_below_avx2(cols % 8);
  for (int64_t j = 0; j < cols; j += 8) {
    int64_t nj = cols - j < 8 ? cols - j : 8;
    for (int64_t i0 = 0; i0 < rows; i0 += 8) {
      int64_t ni = rows - i0 < 8 ? rows - i0 : 8;
      const __m256i ci = tb_lanes_below_avx2(ni);
      __m256 r[8];
      for (int64_t jj = 0; jj < 8; jj++)
        r[jj] = jj >= nj ? _mm256_setzero_ps() : ni == 8 ? _mm256_loadu_ps(ct + (j + jj) * ldt + i0)
                                                          : _mm256_maskload_ps(ct + (j + jj) * ldt + i0, ci);
      tb_transpose8_ps(r);
      for (int64_t ii = 0; ii < ni; ii++) {
        int64_t i = i0 + ii;
        __m256 v = _mm256_add_ps(r[ii], _mm256_set1_ps(bias ? bias[i] : 0.0f));
        if (res) v = _mm256_add_ps(v, tb_load8_avx2(res + i * ldr + j, cols - j, tail));
        tb_store8_avx2(y + i * ldy + j, cols - j, tail, v);
      }
    }
  }
}

/* false when the activation has no vector form here (the caller then runs the scalar one). */
AVX2 static bool act_avx2(const tb_gemm_epilogue *ep, float *y, int64_t ldy, int64_t rows, int64_t cols) {
  if (ep->act < 1 || ep->act > 3) return false;
  const __m256 zero = _mm256_setzero_ps(), alpha = _mm256_set1_ps(ep->act_alpha);
  const __m256 lo = _mm256_set1_ps(ep->act_min), hi = _mm256_set1_ps(ep->act_max);
  const __m256i tail = tb_lanes_below_avx2(cols % 8);
  for (int64_t i = 0; i < rows; i++) {
    float *yi = y + i * ldy;
    for (int64_t j = 0; j < cols; j += 8) {
      __m256 v = tb_load8_avx2(yi + j, cols - j, tail);
      if (ep->act == 1) {
        v = _mm256_blendv_ps(v, zero, _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
      } else if (ep->act == 2) {
        v = _mm256_blendv_ps(v, _mm256_mul_ps(v, alpha), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
      } else {
        v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
        v = _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
      }
      tb_store8_avx2(yi + j, cols - j, tail, v);
    }
  }
  return true;
}

#define AVX512 __attribute__((target("avx512f")))

static inline __mmask16 first_lanes(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

AVX512 static void init_avx512(float *y, int64_t ldy, int64_t rows, int64_t cols, const float *bias, const float *res,
                               int64_t ldr) {
  for (int64_t i = 0; i < rows; i++) {
    float *yi = y + i * ldy;
    const float *ri = res ? res + i * ldr : NULL;
    __m512 b = _mm512_set1_ps(bias ? bias[i] : 0.0f);
    for (int64_t j = 0; j < cols; j += 16) {
      __mmask16 m = first_lanes(cols - j);
      __m512 v = ri ? _mm512_add_ps(b, _mm512_maskz_loadu_ps(m, ri + j)) : b;
      _mm512_mask_storeu_ps(yi + j, m, v);
    }
  }
}

/* r[0..15] (row jj: 16 floats) transposed in registers: r[ii] lane jj = the old r[jj] lane ii. */
AVX512 static inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int k = 0; k < 8; k++) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; k++) {
    __m512d a = _mm512_castps_pd(t[4 * k]), b = _mm512_castps_pd(t[4 * k + 1]);
    __m512d c = _mm512_castps_pd(t[4 * k + 2]), d = _mm512_castps_pd(t[4 * k + 3]);
    u[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    u[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    u[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    u[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  for (int m = 0; m < 4; m++) { /* u[4k + m]: rows 4k..4k+3, columns m + 4L in 128-bit lane L */
    __m512 w1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88), w2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
    __m512 w3 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xDD), w4 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xDD);
    r[m] = _mm512_shuffle_f32x4(w1, w2, 0x88);
    r[m + 8] = _mm512_shuffle_f32x4(w1, w2, 0xDD);
    r[m + 4] = _mm512_shuffle_f32x4(w3, w4, 0x88);
    r[m + 12] = _mm512_shuffle_f32x4(w3, w4, 0xDD);
  }
}

/* 16 x 16 blocks of ct (16 pixels' rows of 16 channels) transposed in registers, then each channel's 16
 * pixels + bias + residual stored (a gather per channel and 16 pixels cost several times more). */
AVX512 static void from_t_avx512(float *y, int64_t ldy, int64_t rows, int64_t cols, const float *ct, int64_t ldt,
                                 const float *bias, const float *res, int64_t ldr) {
  for (int64_t j = 0; j < cols; j += 16) {
    __mmask16 m = first_lanes(cols - j);
    int64_t nj = cols - j < 16 ? cols - j : 16;
    for (int64_t i0 = 0; i0 < rows; i0 += 16) {
      __mmask16 ci = first_lanes(rows - i0);
      __m512 r[16];
      for (int64_t jj = 0; jj < 16; jj++)
        r[jj] = jj < nj ? _mm512_maskz_loadu_ps(ci, ct + (j + jj) * ldt + i0) : _mm512_setzero_ps();
      transpose16(r);
      int64_t ni = rows - i0 < 16 ? rows - i0 : 16;
      for (int64_t ii = 0; ii < ni; ii++) {
        int64_t i = i0 + ii;
        __m512 v = _mm512_add_ps(r[ii], _mm512_set1_ps(bias ? bias[i] : 0.0f));
        if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, res + i * ldr + j));
        _mm512_mask_storeu_ps(y + i * ldy + j, m, v);
      }
    }
  }
}

/* false when the activation has no vector form here (the caller then runs the scalar one). */
AVX512 static bool act_avx512(const tb_gemm_epilogue *ep, float *y, int64_t ldy, int64_t rows, int64_t cols) {
  if (ep->act < 1 || ep->act > 3) return false;
  const __m512 zero = _mm512_setzero_ps(), alpha = _mm512_set1_ps(ep->act_alpha);
  const __m512 lo = _mm512_set1_ps(ep->act_min), hi = _mm512_set1_ps(ep->act_max);
  for (int64_t i = 0; i < rows; i++) {
    float *yi = y + i * ldy;
    for (int64_t j = 0; j < cols; j += 16) {
      __mmask16 m = first_lanes(cols - j);
      __m512 v = _mm512_maskz_loadu_ps(m, yi + j);
      if (ep->act == 1) {
        v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), zero);
      } else if (ep->act == 2) {
        v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, alpha);
      } else {
        v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
        v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
      }
      _mm512_mask_storeu_ps(yi + j, m, v);
    }
  }
  return true;
}
#endif

void tb_conv_block_init(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *bias,
                        const float *res, int64_t ldr) {
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512) {
    init_avx512(y, ldy, rows, cols, bias, res, ldr);
    return;
  }
  if (path == TB_GEMM_AVX2) {
    init_avx2(y, ldy, rows, cols, bias, res, ldr);
    return;
  }
#endif
  (void)path;
  for (int64_t i = 0; i < rows; i++) {
    float *yi = y + i * ldy, b = bias ? bias[i] : 0.0f;
    if (res)
      for (int64_t j = 0; j < cols; j++) yi[j] = b + res[i * ldr + j];
    else
      for (int64_t j = 0; j < cols; j++) yi[j] = b;
  }
}

void tb_conv_block_from_t(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *ct, int64_t ldt,
                          const float *bias, const float *res, int64_t ldr) {
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512) {
    from_t_avx512(y, ldy, rows, cols, ct, ldt, bias, res, ldr);
    return;
  }
  if (path == TB_GEMM_AVX2) {
    from_t_avx2(y, ldy, rows, cols, ct, ldt, bias, res, ldr);
    return;
  }
#endif
  (void)path;
  for (int64_t i = 0; i < rows; i++) {
    float *yi = y + i * ldy, b = bias ? bias[i] : 0.0f;
    for (int64_t j = 0; j < cols; j++) yi[j] = ct[j * ldt + i] + b + (res ? res[i * ldr + j] : 0.0f);
  }
}

void tb_conv_block_act(tb_gemm_path path, const tb_gemm_epilogue *ep, float *y, int64_t ldy, int64_t rows, int64_t cols) {
  if (ep->act == 0) return;
  if (ldy == cols && rows > 1) { /* rows back to back (a block of whole planes): one pass, not one call per row */
    cols *= rows;                /* (a squeeze-excite 1x1 map's 1152 rows of one value cost 1152 vector tails) */
    rows = 1;
  }
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512 && act_avx512(ep, y, ldy, rows, cols)) return;
  if (path == TB_GEMM_AVX2 && act_avx2(ep, y, ldy, rows, cols)) return;
#endif
  (void)path;
  for (int64_t i = 0; i < rows; i++) tb_conv_epilogue_row(ep, NULL, y + i * ldy, cols);
}
