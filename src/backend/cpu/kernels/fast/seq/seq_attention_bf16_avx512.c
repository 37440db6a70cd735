/* The block step of the level-3 tb::Attention on AVX512-BF16 (seq_attention_bf16.h): for up to 14 query
 * rows, the Q rows rounded to bf16 (pairs of d as 32-bit words, read by broadcast: no repacking), then
 * per sliver of 32 key columns a rows x 32 tile of vdpbf16ps sums (fp32) stored with the scale, the mask
 * and -inf past the last key applied and each row's running maximum kept; then per row exp(s - max) with
 * the sequence kernels' vector exp (seq_vec_x86.h), summed in fp32 and rounded to bf16; then per sliver
 * of 32 value columns a rows x 32 tile of E V, each row multiplied by its 1 / sum as it is stored. Q is
 * rounded as the bf16 GEMM rounds (bf16_round_avx512.h: nearest even, NaN quieted, subnormals kept), E
 * with vcvtneps2bf16 (see exp_rows). NaN
 * follows the reference: the maximum skips it, exp passes it on, the row's outputs are NaN. The row
 * count is a constant in each tile (one copy per count) so the accumulators stay in registers. */
#include "backend/cpu/kernels/fast/seq/seq_attention_bf16.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>
#include "backend/cpu/kernels/fast/vec/bf16_round_avx512.h"
#include "backend/cpu/kernels/fast/seq/seq_vec_x86.h"

#define ATTN_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")))
#define ATTN_INLINE static inline __attribute__((always_inline)) ATTN_TARGET

enum { MR = SEQ_ATTN_MR, NR = SEQ_ATTN_NR };

ATTN_INLINE __mmask16 lanes(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* acc[i] = row i of A (bf16 pairs, row stride lda elements) times the sliver b, summed over kp pairs. */
#define DOT_TILE(rows, kp, a, lda, b, acc)                                                     \
  do {                                                                                         \
    _Pragma("GCC unroll 14") for (int i_ = 0; i_ < (rows); i_++) acc[i_][0] = acc[i_][1] =    \
        _mm512_setzero_ps();                                                                   \
    for (int64_t q_ = 0; q_ < (kp); q_++) {                                                    \
      const __m512bh b0_ = (__m512bh)_mm512_loadu_si512((b) + q_ * NR * 2);                   \
      const __m512bh b1_ = (__m512bh)_mm512_loadu_si512((b) + q_ * NR * 2 + 32);              \
      _Pragma("GCC unroll 14") for (int i_ = 0; i_ < (rows); i_++) {                          \
        int32_t pair_;                                                                         \
        memcpy(&pair_, (a) + i_ * (lda) + 2 * q_, sizeof pair_);                               \
        const __m512bh av_ = (__m512bh)_mm512_set1_epi32(pair_);                               \
        acc[i_][0] = _mm512_dpbf16_ps(acc[i_][0], av_, b0_);                                   \
        acc[i_][1] = _mm512_dpbf16_ps(acc[i_][1], av_, b1_);                                   \
      }                                                                                        \
    }                                                                                          \
  } while (0)

/* 16 mask values of row mr from column c (lanes valid): contiguous, or one value broadcast along the row. */
ATTN_INLINE __m512 mask_lanes(const seq_attn_bf16_head *h, const float *mr, int64_t c, __mmask16 valid) {
  return h->mask_col ? _mm512_maskz_loadu_ps(valid, mr + c) : _mm512_set1_ps(mr[0]);
}

/* Scores rows x 32 at key column c0: scaled, masked, -inf past lk; the rows' maxima updated. */
ATTN_INLINE void score_tile(int rows, const seq_attn_bf16_head *h, int64_t row0, int64_t c0, const uint16_t *b,
                            seq_attn_bf16_scratch *s) {
  __m512 acc[MR][2];
  DOT_TILE(rows, h->kp_d, s->q_rows, 2 * h->kp_d, b, acc);
  const __mmask16 v0 = lanes(h->lk - c0), v1 = lanes(h->lk - c0 - 16);
  const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
  const __m512 scale = _mm512_set1_ps(h->scale_by_inverse ? h->inv_scale : h->scale);
  const bool div = h->has_scale && h->divide && !h->scale_by_inverse;
#pragma GCC unroll 14
  for (int i = 0; i < rows; i++) {
    __m512 x0 = acc[i][0], x1 = acc[i][1];
    if (div) {
      x0 = _mm512_div_ps(x0, scale);
      x1 = _mm512_div_ps(x1, scale);
    } else if (h->has_scale) {
      x0 = _mm512_mul_ps(x0, scale);
      x1 = _mm512_mul_ps(x1, scale);
    }
    if (h->mask) {
      const float *mr = h->mask + (row0 + i) * h->mask_row;
      x0 = _mm512_add_ps(x0, mask_lanes(h, mr, c0, v0));
      x1 = _mm512_add_ps(x1, mask_lanes(h, mr, c0 + 16, v1));
    }
    x0 = _mm512_mask_mov_ps(ninf, v0, x0);
    x1 = _mm512_mask_mov_ps(ninf, v1, x1);
    float *out = s->scores + i * s->lds + c0;
    _mm512_storeu_ps(out, x0);
    _mm512_storeu_ps(out + 16, x1);
    /* max(x, m) keeps m where x is NaN: the reference's x > m ? x : m */
    __m512 m = _mm512_max_ps(x0, _mm512_loadu_ps(s->row_max + i * 16));
    _mm512_storeu_ps(s->row_max + i * 16, _mm512_max_ps(x1, m));
  }
}

/* Y rows x 32 at value column c0 = (E V) / sum per row. */
ATTN_INLINE void output_tile(int rows, const seq_attn_bf16_head *h, int64_t row0, int64_t c0, const uint16_t *b,
                             const seq_attn_bf16_scratch *s) {
  __m512 acc[MR][2];
  DOT_TILE(rows, h->kp_l, s->e_rows, 2 * h->kp_l, b, acc);
  const __mmask16 m0 = lanes(h->dv - c0), m1 = lanes(h->dv - c0 - 16);
#pragma GCC unroll 14
  for (int i = 0; i < rows; i++) {
    const __m512 inv = _mm512_set1_ps(s->row_inv[i]);
    float *y = h->y + (row0 + i) * h->dv + c0;
    _mm512_mask_storeu_ps(y, m0, _mm512_mul_ps(acc[i][0], inv));
    _mm512_mask_storeu_ps(y + 16, m1, _mm512_mul_ps(acc[i][1], inv));
  }
}

#define ROW_CASES(call)                                                                              \
  switch (rows) {                                                                                    \
    case 1: call(1); break;                                                                          \
    case 2: call(2); break;                                                                          \
    case 3: call(3); break;                                                                          \
    case 4: call(4); break;                                                                          \
    case 5: call(5); break;                                                                          \
    case 6: call(6); break;                                                                          \
    case 7: call(7); break;                                                                          \
    case 8: call(8); break;                                                                          \
    case 9: call(9); break;                                                                          \
    case 10: call(10); break;                                                                        \
    case 11: call(11); break;                                                                        \
    case 12: call(12); break;                                                                        \
    case 13: call(13); break;                                                                        \
    default: call(14); break;                                                                        \
  }

ATTN_TARGET static void score_tiles(int rows, const seq_attn_bf16_head *h, int64_t row0, int64_t c0,
                                    const uint16_t *b, seq_attn_bf16_scratch *s) {
#define SCORE(r) score_tile(r, h, row0, c0, b, s)
  ROW_CASES(SCORE)
#undef SCORE
}

ATTN_TARGET static void output_tiles(int rows, const seq_attn_bf16_head *h, int64_t row0, int64_t c0,
                                     const uint16_t *b, const seq_attn_bf16_scratch *s) {
#define OUTPUT(r) output_tile(r, h, row0, c0, b, s)
  ROW_CASES(OUTPUT)
#undef OUTPUT
}

/* n floats to bf16 at dst, and a zero after them when n is odd (the pad of the last pair). */
ATTN_INLINE void round_row(const float *src, int64_t n, uint16_t *dst) {
  for (int64_t c = 0; c < n; c += 16) {
    __mmask16 m = lanes(n - c);
    _mm256_mask_storeu_epi16(dst + c, m, _mm512_cvtepi32_epi16(tb_round_bf16_avx512(_mm512_maskz_loadu_ps(m, src + c))));
  }
  if (n % 2) dst[n] = 0;
}

/* Per row: E = bf16(exp(s - max)) and 1 / sum (the fp32 exps summed). vcvtneps2bf16 rounds to nearest
 * even like the bf16 GEMM; it differs only on subnormal inputs, which it flushes to zero: numerators below
 * 1.2e-38 of the row's largest (1), nothing an fp32 output can show. */
ATTN_INLINE void exp_rows(int rows, const seq_attn_bf16_head *h, seq_attn_bf16_scratch *s) {
  const int64_t lk = h->lk, lde = 2 * h->kp_l, lds = s->lds;
  for (int i = 0; i < rows; i++) {
    const float *x = s->scores + i * lds;
    uint16_t *e = s->e_rows + i * lde;
    const __m512 top = _mm512_set1_ps(_mm512_reduce_max_ps(_mm512_loadu_ps(s->row_max + i * 16)));
    __m512 sum = _mm512_setzero_ps();
    for (int64_t c = 0; c < lk; c += 16) {
      __mmask16 m = lanes(lk - c);
      __m512 v = _mm512_maskz_mov_ps(m, seq_exp512(_mm512_sub_ps(_mm512_loadu_ps(x + c), top)));
      sum = _mm512_add_ps(sum, v);
      _mm256_mask_storeu_epi16(e + c, m, (__m256i)_mm512_cvtneps_pbh(v));
    }
    if (lk % 2) e[lk] = 0;
    s->row_inv[i] = 1.0f / _mm512_reduce_add_ps(sum);
  }
}

ATTN_TARGET void tb_seq_attention_bf16_block_avx512(const seq_attn_bf16_head *h, int64_t row0, int rows,
                                                 seq_attn_bf16_scratch *s) {
  for (int i = 0; i < rows; i++) {
    round_row(h->q + (row0 + i) * h->d, h->d, s->q_rows + i * 2 * h->kp_d);
    _mm512_storeu_ps(s->row_max + i * 16, _mm512_set1_ps(-__builtin_inff()));
  }
  for (int64_t c0 = 0; c0 < h->lk; c0 += NR) score_tiles(rows, h, row0, c0, h->k_pack + c0 * h->kp_d * 2, s);
  exp_rows(rows, h, s);
  for (int64_t c0 = 0; c0 < h->dv; c0 += NR) output_tiles(rows, h, row0, c0, h->v_pack + c0 * h->kp_l * 2, s);
}
#endif
