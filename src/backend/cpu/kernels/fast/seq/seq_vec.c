/* Vector math of the level-2 sequence kernels (see seq_vec.h). exp(x) = 2^n * e^r with n = round(x log2 e)
 * and r = x - n ln 2 (ln 2 split in two so r is exact), e^r from its Taylor polynomial of degree 7;
 * sigmoid = 1 / (1 + exp(-x)); tanh(|x|) = (1 - t) / (1 + t) with t = exp(-2|x|), sign put back. The
 * AVX-512 functions (seq_vec_x86.h) and the AVX2 ones are built for their instruction sets only
 * (target attribute) and called only on those paths; the portable path uses libm. NaN goes through every
 * function as NaN. */
#include "backend/cpu/kernels/fast/seq/seq_vec.h"
#include <math.h>
#include <string.h>
#include "backend/cpu/kernels/fast/seq/seq_vec_x86.h"
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

enum { VEC_SIGMOID, VEC_TANH, VEC_EXP };

#if defined(__x86_64__)
#define T512 SEQ_T512
#define T256 SEQ_T256

T512 static inline __m512 func512(int fn, __m512 x) {
  if (fn == VEC_EXP) return seq_exp512(x);
  return fn == VEC_SIGMOID ? seq_sigmoid512(x) : seq_tanh512(x);
}

T512 static void map512(int fn, float *x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, func512(fn, _mm512_loadu_ps(x + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (unsigned)(n - i)) - 1u);
    _mm512_mask_storeu_ps(x + i, m, func512(fn, _mm512_maskz_loadu_ps(m, x + i)));
  }
}

T256 static inline __m256 func256(int fn, __m256 x) {
  if (fn == VEC_EXP) return seq_exp256(x);
  return fn == VEC_SIGMOID ? seq_sigmoid256(x) : seq_tanh256(x);
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

void tb_seq_vec_exp(tb_gemm_path path, float *x, int64_t n) { map(path, VEC_EXP, x, n); }

void tb_seq_vec_activate(tb_gemm_path path, const tb_rnn_act *act, bool has_clip, float clip, float *x, int64_t n) {
  if (has_clip)
    for (int64_t i = 0; i < n; i++) x[i] = x[i] < -clip ? -clip : x[i] > clip ? clip : x[i];
  if (act->kind == TB_RNN_ACT_SIGMOID || act->kind == TB_RNN_ACT_TANH) {
    map(path, act->kind == TB_RNN_ACT_SIGMOID ? VEC_SIGMOID : VEC_TANH, x, n);
    return;
  }
  for (int64_t i = 0; i < n; i++) x[i] = (float)tb_rnn_activate(act, (double)x[i]);
}

void tb_seq_vec_softmax(tb_gemm_path path, float *s, int64_t n) {
  float mx = s[0];
  for (int64_t j = 1; j < n; j++) mx = s[j] > mx ? s[j] : mx;
  for (int64_t j = 0; j < n; j++) s[j] -= mx;
  map(path, VEC_EXP, s, n);
  double sum = 0.0;
  for (int64_t j = 0; j < n; j++) sum += s[j];
  float inv = (float)(1.0 / sum);
  for (int64_t j = 0; j < n; j++) s[j] *= inv;
}
