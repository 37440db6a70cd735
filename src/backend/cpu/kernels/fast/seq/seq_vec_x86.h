/* Internal: the AVX-512 and AVX2 exp, sigmoid and tanh of the sequence kernels (seq_vec.h states their
 * accuracy), inline on __m512 / __m256 so a fused kernel (the LSTM step, seq_lstm_avx512.c and
 * seq_lstm_avx2.c) can apply them to values still in registers. Empty off x86-64; every function has its
 * instruction set's target attribute, so call it only on that path. NaN goes through each as NaN. */
#ifndef TB_CPU_KERNELS_FAST_SEQ_VEC_X86_H
#define TB_CPU_KERNELS_FAST_SEQ_VEC_X86_H
#if defined(__x86_64__)
#include <immintrin.h>

#define SEQ_T512 __attribute__((target("avx512f,fma")))
#define SEQ_T256 __attribute__((target("avx2,fma")))

#define SEQ_EXP_LOG2E 1.44269504088896341f
#define SEQ_EXP_LN2_HI 0.693359375f
#define SEQ_EXP_LN2_LO (-2.12194440e-4f)
/* e^r = 1 + r + r^2 (P5 + r (P4 + r (P3 + r (P2 + r (P1 + r P0))))): the Taylor series to r^7, whose
 * truncation for |r| <= ln2 / 2 is below 6e-9 relative */
#define SEQ_EXP_P0 (1.0f / 5040.0f)
#define SEQ_EXP_P1 (1.0f / 720.0f)
#define SEQ_EXP_P2 (1.0f / 120.0f)
#define SEQ_EXP_P3 (1.0f / 24.0f)
#define SEQ_EXP_P4 (1.0f / 6.0f)
#define SEQ_EXP_P5 0.5f

/* exp(x) = 2^n e^r, n = round(x log2 e), r = x - n ln 2 (ln 2 in two parts so r is exact). */
SEQ_T512 static inline __m512 seq_exp512(__m512 x) {
  /* min/max with the constant first keep a NaN in x */
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(88.7228394f), x));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(SEQ_EXP_LOG2E)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(SEQ_EXP_LN2_HI), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(SEQ_EXP_LN2_LO), r);
  __m512 p = _mm512_set1_ps(SEQ_EXP_P0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SEQ_EXP_P1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SEQ_EXP_P2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SEQ_EXP_P3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SEQ_EXP_P4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(SEQ_EXP_P5));
  __m512 y = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(y, n); /* 2^n with gradual underflow */
}

/* 1 / (1 + exp(-x)) */
SEQ_T512 static inline __m512 seq_sigmoid512(__m512 x) {
  __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, seq_exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

/* tanh(|x|) = (1 - t) / (1 + t) with t = exp(-2|x|), the sign of x put back */
SEQ_T512 static inline __m512 seq_tanh512(__m512 x) {
  __m512 one = _mm512_set1_ps(1.0f);
  __m512i sign_bit = _mm512_set1_epi32((int)0x80000000u);
  __m512i bits = _mm512_castps_si512(x);
  __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign_bit, bits));
  __m512 t = seq_exp512(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  __m512 th = _mm512_div_ps(_mm512_sub_ps(one, t), _mm512_add_ps(one, t));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(th), _mm512_and_si512(sign_bit, bits)));
}

/* 1 / d for d >= 1 (or +inf): the 14-bit reciprocal estimate and one Newton step, within 1 ulp of the
 * division (rounding aside, relative error below 2^-27); 1/inf = 0. */
SEQ_T512 static inline __m512 seq_recip512(__m512 d) {
  __m512 r = _mm512_rcp14_ps(d);
  __m512 e = _mm512_fnmadd_ps(d, r, _mm512_set1_ps(1.0f));
  r = _mm512_fmadd_ps(r, e, r);
  /* inf * 0 in the Newton step is NaN: keep the estimate (0) where d is inf */
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, _mm512_set1_ps(__builtin_inff()), _CMP_EQ_OQ), r,
                              _mm512_setzero_ps());
}

/* seq_sigmoid512 and seq_tanh512 with the reciprocal above in place of the division: no divider, the
 * same accuracy to about 1 ulp; for the fused LSTM cell, where the divisions are most of its latency. */
SEQ_T512 static inline __m512 seq_sigmoid512_rcp(__m512 x) {
  __m512 one = _mm512_set1_ps(1.0f);
  return seq_recip512(_mm512_add_ps(one, seq_exp512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

SEQ_T512 static inline __m512 seq_tanh512_rcp(__m512 x) {
  __m512 one = _mm512_set1_ps(1.0f);
  __m512i sign_bit = _mm512_set1_epi32((int)0x80000000u);
  __m512i bits = _mm512_castps_si512(x);
  __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign_bit, bits));
  __m512 t = seq_exp512(_mm512_mul_ps(ax, _mm512_set1_ps(-2.0f)));
  __m512 th = _mm512_mul_ps(_mm512_sub_ps(one, t), seq_recip512(_mm512_add_ps(one, t)));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(th), _mm512_and_si512(sign_bit, bits)));
}

/* ---- AVX2 ---- */

SEQ_T256 static inline __m256 seq_exp256(__m256 x) {
  x = _mm256_max_ps(_mm256_set1_ps(-104.0f), _mm256_min_ps(_mm256_set1_ps(88.7228394f), x));
  __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(SEQ_EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(SEQ_EXP_LN2_HI), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(SEQ_EXP_LN2_LO), r);
  __m256 p = _mm256_set1_ps(SEQ_EXP_P0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SEQ_EXP_P1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SEQ_EXP_P2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SEQ_EXP_P3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SEQ_EXP_P4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(SEQ_EXP_P5));
  __m256 y = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  /* 2^n (n in -150..128) as two normal powers of two, so the underflow is gradual and 128 overflows */
  __m256i ni = _mm256_cvtps_epi32(n), n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  __m256i bias = _mm256_set1_epi32(127);
  y = _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23)));
  return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23)));
}

SEQ_T256 static inline __m256 seq_sigmoid256(__m256 x) {
  __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, seq_exp256(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

SEQ_T256 static inline __m256 seq_tanh256(__m256 x) {
  __m256 one = _mm256_set1_ps(1.0f), sign_bit = _mm256_set1_ps(-0.0f);
  __m256 ax = _mm256_andnot_ps(sign_bit, x);
  __m256 t = seq_exp256(_mm256_mul_ps(ax, _mm256_set1_ps(-2.0f)));
  __m256 th = _mm256_div_ps(_mm256_sub_ps(one, t), _mm256_add_ps(one, t));
  return _mm256_or_ps(th, _mm256_and_ps(sign_bit, x));
}

#endif
#endif
