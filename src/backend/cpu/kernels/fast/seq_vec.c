/* Vector math of the level-2 sequence kernels (see seq_vec.h). exp(x) = 2^n * e^r with n = round(x log2 e)
 * and r = x - n ln 2 (ln 2 split in two so r is exact), e^r from its Taylor polynomial of degree 7;
 * sigmoid = 1 / (1 + exp(-x)); tanh(|x|) = (1 - t) / (1 + t) with t = exp(-2|x|), sign put back. The
 * AVX-512 and AVX2 functions are built for their instruction sets only (target attribute) and called only
 * on those paths; the portable path uses libm. NaN goes through every function as NaN. */
#include "backend/cpu/kernels/fast/seq_vec.h"
#include <math.h>
#include <string.h>
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f
#define EXP_LN2_LO (-2.12194440e-4f)
/* e^r = 1 + r + r^2 (P5 + r (P4 + r (P3 + r (P2 + r (P1 + r P0))))): the Taylor series to r^7, whose
 * truncation for |r| <= ln2 / 2 is below 6e-9 relative */
#define EXP_P0 (1.0f / 5040.0f)
#define EXP_P1 (1.0f / 720.0f)
#define EXP_P2 (1.0f / 120.0f)
#define EXP_P3 (1.0f / 24.0f)
#define EXP_P4 (1.0f / 6.0f)
#define EXP_P5 0.5f

enum { VEC_SIGMOID, VEC_TANH, VEC_EXP };

#if defined(__x86_64__)
#define T512 __attribute__((target("avx512f,fma")))
#define T256 __attribute__((target("avx2,fma")))

T512 static inline __m512 exp512(__m512 x) {
  /* min/max with the constant first keep a NaN in x */
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(88.7228394f), x));
  __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_HI), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_LO), r);
  __m512 p = _mm512_set1_ps(EXP_P0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_P5));
  __m512 y = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(y, n); /* 2^n with gradual underflow */
}

T512 static inline __m512 func512(int fn, __m512 x) {
  __m512 one = _mm512_set1_ps(1.0f);
  if (fn == VEC_EXP) return exp512(x);
  if (fn == VEC_SIGMOID) return _mm512_div_ps(one, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
  __m512i sign_bit = _mm512_set1_epi32((int)0x80000000u);
  __m512i bits = _mm512_castps_si512(x);
  __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign_bit, bits));
  __m512 t = exp512(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  __m512 th = _mm512_div_ps(_mm512_sub_ps(one, t), _mm512_add_ps(one, t));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(th), _mm512_and_si512(sign_bit, bits)));
}

T512 static void map512(int fn, float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, func512(fn, _mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (unsigned)(n - i)) - 1u);
    _mm512_mask_storeu_ps(x + i, m, func512(fn, _mm512_maskz_loadu_ps(m, x + i)));
  }
}

T256 static inline __m256 exp256(__m256 x) {
  x = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(88.7228394f), x));
  __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_HI), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_LO), r);
  __m256 p = _mm256_set1_ps(EXP_P0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_P5));
  __m256 y = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  /* 2^n (n in -150..128) as two normal powers of two, so the underflow is gradual and 128 overflows */
  __m256i ni = _mm256_cvtps_epi32(n), n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  __m256i bias = _mm256_set1_epi32(127);
  y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23)));
  return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23)));
}

T256 static inline __m256 func256(int fn, __m256 x) {
  __m256 one = _mm256_set1_ps(1.0f);
  if (fn == VEC_EXP) return exp256(x);
  if (fn == VEC_SIGMOID) return _mm256_div_ps(one, _mm256_add_ps(one, exp256(_mm256_sub_ps(_mm256_setzero_ps(), x))));
  __m256 sign_bit = _mm256_set1_ps(-0.0f);
  __m256 ax = _mm256_andnot_ps(sign_bit, x);
  __m256 t = exp256(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
  __m256 th = _mm256_div_ps(_mm256_sub_ps(one, t), _mm256_add_ps(one, t));
  return _mm256_or_ps(th, _mm256_and_ps(sign_bit, x));
}

T256 static void map256(int fn, float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, func256(fn, _mm256_loadu_ps(x + i)));
  if (i < n) {
    float tail[8] = {0};
    memcpy(tail, x + i, (size_t)(n - i) * sizeof(float));
    _mm256_storeu_ps(tail, func256(fn, _mm256_loadu_ps(tail)));
    memcpy(x + i, tail, (size_t)(n - i) * sizeof(float));
  }
}
#endif

static void map_portable(int fn, float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    x[i] = fn == VEC_EXP    ? expf(v)
           : fn == VEC_TANH ? tanhf(v)
           : v >= 0         ? 1.0f / (1.0f + expf(-v))
                            : expf(v) / (1.0f + expf(v));
  }
}

static void map(tb_gemm_path path, int fn, float *x, int64_t n) {
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512) {
    map512(fn, x, n);
    return;
  }
  if (path == TB_GEMM_AVX2) {
    map256(fn, x, n);
    return;
  }
#endif
  (void)path;
  map_portable(fn, x, n);
}

void seq_vec_exp(tb_gemm_path path, float *x, int64_t n) { map(path, VEC_EXP, x, n); }

void seq_vec_activate(tb_gemm_path path, const tb_rnn_act *act, bool has_clip, float clip, float *x, int64_t n) {
  if (has_clip)
    for (int64_t i = 0; i < n; i++) x[i] = x[i] < -clip ? -clip : x[i] > clip ? clip : x[i];
  if (act->kind == TB_RNN_ACT_SIGMOID || act->kind == TB_RNN_ACT_TANH) {
    map(path, act->kind == TB_RNN_ACT_SIGMOID ? VEC_SIGMOID : VEC_TANH, x, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) x[i] = (float)rnn_activate(act, (double)x[i]);
}

void seq_vec_softmax(tb_gemm_path path, float *s, int64_t n) {
  float mx = s[0];
  for (int64_t j = 1; j < n; j++) mx = s[j] > mx ? s[j] : mx;
  for (int64_t j = 0; j < n; j++) s[j] -= mx;
  map(path, VEC_EXP, s, n);
  double sum = 0.0;
  for (int64_t j = 0; j < n; j++) sum += s[j];
  float inv = (float)(1.0 / sum);
  for (int64_t j = 0; j < n; j++) s[j] *= inv;
}
