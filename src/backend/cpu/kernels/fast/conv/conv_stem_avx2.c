/* The AVX2 + FMA stem convolution (conv_stem.h): 1 to 4 input channels, 3x3 kernel, stride 2, pixels in the
 * vector lanes. Jobs are (image, block of output rows); a job splits each input row its rows read into even
 * and odd padded columns once (tb_dw_split2_avx2, the depthwise staging's split: padded column pc at phase
 * pc % 2, index pc / 2), so that taps 0, 1 and 2 of output pixels ox .. ox + 7 are the contiguous loads
 * even[ox], odd[ox] and even[ox + 1]. A register block is 3 output channels x 24 pixels (9 accumulators
 * started at the bias): each of the C x 9 taps loads 3 input vectors and broadcasts the 3 channels'
 * weights from the direct convolution's packing (6 loads per 9 FMAs; its 6 x 16 tiles: 8 per 12, plus a
 * transposed store). The block is stored straight into the NCHW rows with the residual and Relu /
 * LeakyRelu / Clip (the scalar rules: a NaN passes through, -0 stays), the last vector of a row through
 * maskstore. Each output is summed in the order channel, kernel row, kernel column by one job. Built for
 * AVX2 + FMA by target attribute; the direct convolution's AVX2 path calls it, only when cpuid has both. */
#include "backend/cpu/kernels/fast/conv/conv_stem.h"
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_depthwise.h"
#include "ops/fused/fused_params.h"
#include "core/threadpool.h"

#if defined(__x86_64__)
bool tb_conv_stem_avx2_fits(const tb_conv_geom *g) {
  return g->spatial == 2 && g->group == 1 && g->in_c >= 1 && g->in_c <= 4 && g->kh == 3 && g->kw == 3 && g->sh == 2 &&
         g->sw == 2 && g->dh == 1 && g->dw == 1 && g->ph >= 0 && g->pw >= 0 && g->oh >= 1 && g->ow >= 1;
}

#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE_AVX2 AVX2 static inline __attribute__((always_inline))

/* 3 channels x 3 vectors: 9 accumulators, 3 input vectors and a broadcast in the 16 registers (measured on
 * the 3 -> 16 / 24 / 32 stems against 4 x 3, which spills, 4 x 2, 5 x 2 and 6 x 2: 1-8% faster) */
enum { MB = 3, VB = 3, COLS = 16, ROWS_PER_JOB = 8 };

/* One output row: the staged rows under it, the weights, and where it goes. */
typedef struct stem_row {
  const float *in[12]; /* channel c, kernel row ky: in[c * 3 + ky], even phase (the odd one phase_len after) */
  int64_t c, phase_len, ow, plane, block_floats;
  const float *w, *bias, *res; /* res: the row in the residual (NULL for none) */
  float *y;                    /* the row in channel 0's plane */
  const tb_gemm_epilogue *ep;
} stem_row;

INLINE_AVX2 __m256i lanes_below(int64_t n) {
  int32_t k = n > 8 ? 8 : n < 0 ? 0 : (int32_t)n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Relu, LeakyRelu, Clip as the direct convolution's AVX2 store applies them. */
INLINE_AVX2 __m256 act(const tb_gemm_epilogue *ep, __m256 v) {
  const __m256 zero = _mm256_setzero_ps();
  if (ep->act == TB_FUSED_ACT_RELU) return _mm256_max_ps(zero, v);
  if (ep->act == TB_FUSED_ACT_LEAKY_RELU)
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(ep->act_alpha)), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
  if (ep->act == TB_FUSED_ACT_CLIP) {
    const __m256 lo = _mm256_set1_ps(ep->act_min), hi = _mm256_set1_ps(ep->act_max);
    v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
    return _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
  }
  return v;
}

/* Output channels m0 .. m0 + R, pixels ox0 .. ox0 + 8 V (the last vector stored up to ow). */
INLINE_AVX2 void block(const stem_row *s, int64_t m0, int64_t ox0, int R, int V) {
  __m256 acc[MB * VB];
  const float *wm[MB];
#pragma GCC unroll 3
  for (int m = 0; m < R; m++) {
    wm[m] = s->w + (m0 + m) / COLS * s->block_floats + (m0 + m) % COLS;
    const __m256 b = _mm256_set1_ps(s->bias ? s->bias[m0 + m] : 0.0f);
#pragma GCC unroll 3
    for (int v = 0; v < V; v++) acc[m * V + v] = b;
  }
  for (int64_t c = 0; c < s->c; c++)
#pragma GCC unroll 3
    for (int ky = 0; ky < 3; ky++) {
      const float *even = s->in[c * 3 + ky] + ox0, *odd = even + s->phase_len;
#pragma GCC unroll 3
      for (int kx = 0; kx < 3; kx++) {
        const float *src = kx == 1 ? odd : even + kx / 2;
        const int64_t t = (c * 9 + ky * 3 + kx) * COLS;
        __m256 x[VB];
#pragma GCC unroll 3
        for (int v = 0; v < V; v++) x[v] = _mm256_loadu_ps(src + 8 * v);
#pragma GCC unroll 3
        for (int m = 0; m < R; m++) {
          const __m256 wb = _mm256_broadcast_ss(wm[m] + t);
#pragma GCC unroll 3
          for (int v = 0; v < V; v++) acc[m * V + v] = _mm256_fmadd_ps(wb, x[v], acc[m * V + v]);
        }
      }
    }
#pragma GCC unroll 3
  for (int m = 0; m < R; m++)
#pragma GCC unroll 3
    for (int v = 0; v < V; v++) {
      const int64_t col = ox0 + 8 * v, at = (m0 + m) * s->plane + col;
      __m256 out = acc[m * V + v];
      if (s->ow - col >= 8) {
        if (s->res) out = _mm256_add_ps(out, _mm256_loadu_ps(s->res + at));
        _mm256_storeu_ps(s->y + at, act(s->ep, out));
      } else {
        const __m256i mask = lanes_below(s->ow - col);
        if (s->res) out = _mm256_add_ps(out, _mm256_maskload_ps(s->res + at, mask));
        _mm256_maskstore_ps(s->y + at, mask, act(s->ep, out));
      }
    }
}

#define BLOCK(R, V) \
  AVX2 static void block_##R##_##V(const stem_row *s, int64_t m0, int64_t ox0) { block(s, m0, ox0, R, V); }
#define BLOCKS(R) BLOCK(R, 1) BLOCK(R, 2) BLOCK(R, 3)
BLOCKS(1)
BLOCKS(2)
BLOCKS(3)
typedef void (*block_fn)(const stem_row *, int64_t, int64_t);
static const block_fn blocks[MB][VB] = {{block_1_1, block_1_2, block_1_3}, {block_2_1, block_2_2, block_2_3},
                                        {block_3_1, block_3_2, block_3_3}};

typedef struct stem_job {
  const tb_conv_geom *g;
  const float *w, *x, *bias, *residual;
  const tb_gemm_epilogue *ep;
  float *y;
  int64_t block_floats, phase_len, rows, splits;
  int failed;
} stem_job;

static void stem_tasks(void *p, size_t begin, size_t end) {
  stem_job *j = p;
  const tb_conv_geom *g = j->g;
  const int64_t plen = j->phase_len, row_len = 2 * plen, staged_rows = 2 * j->rows + 1;
  /* a zero row, the padded line and the staged rows (C x staged_rows), zeroed once: every line puts the
   * input's columns at the same place, so its pads stay zero */
  size_t floats = (size_t)((2 + g->in_c * staged_rows) * row_len);
  float *buf = calloc(floats, sizeof(float));
  if (!buf) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  float *zero = buf, *line = buf + row_len, *staged = buf + 2 * row_len;
  const int64_t n = g->iw < row_len - g->pw ? g->iw : (row_len - g->pw > 0 ? row_len - g->pw : 0), plane = g->oh * g->ow;
  for (size_t t = begin; t < end; t++) {
    int64_t b = (int64_t)t / j->splits, oy0 = (int64_t)t % j->splits * j->rows;
    int64_t oy1 = oy0 + j->rows < g->oh ? oy0 + j->rows : g->oh;
    int64_t lo = oy0 * 2 - g->ph, hi = (oy1 - 1) * 2 - g->ph + 3;
    if (lo < 0) lo = 0;
    if (hi > g->ih) hi = g->ih;
    const float *xb = j->x + b * g->in_c * g->ih * g->iw;
    for (int64_t c = 0; c < g->in_c; c++)
      for (int64_t iy = lo; iy < hi; iy++) {
        if (n > 0) memcpy(line + g->pw, xb + (c * g->ih + iy) * g->iw, (size_t)n * sizeof(float));
        tb_dw_split2_avx2(staged + (c * staged_rows + iy - lo) * row_len, line, plen);
      }
    stem_row s = {.c = g->in_c, .phase_len = plen, .ow = g->ow, .plane = plane, .block_floats = j->block_floats,
                  .w = j->w, .bias = j->bias, .ep = j->ep};
    for (int64_t oy = oy0; oy < oy1; oy++) {
      for (int64_t c = 0; c < g->in_c; c++)
        for (int ky = 0; ky < 3; ky++) {
          int64_t iy = oy * 2 - g->ph + ky;
          s.in[c * 3 + ky] = iy < 0 || iy >= g->ih ? zero : staged + (c * staged_rows + iy - lo) * row_len;
        }
      int64_t out = b * g->out_c * plane + oy * g->ow;
      s.y = j->y + out;
      s.res = j->residual ? j->residual + out : NULL;
      for (int64_t m0 = 0; m0 < g->out_c; m0 += MB) {
        int r = g->out_c - m0 < MB ? (int)(g->out_c - m0) : MB;
        for (int64_t ox0 = 0; ox0 < g->ow; ox0 += 8 * VB) {
          int64_t vecs = (g->ow - ox0 + 7) / 8;
          blocks[r - 1][(vecs < VB ? vecs : VB) - 1](&s, m0, ox0);
        }
      }
    }
  }
  free(buf);
}

bool tb_conv_stem_avx2_run(const tb_conv_geom *g, const float *w, int64_t block_floats, const float *x, const float *bias,
                           const float *residual, const tb_gemm_epilogue *ep, float *y, tb_pool *pool) {
  /* even[ox + 1] is read for ox up to ow rounded up to 8 vectors; a multiple of 8 for the split */
  stem_job j = {.g = g, .w = w, .x = x, .bias = bias, .residual = residual, .ep = ep, .y = y,
                .block_floats = block_floats, .phase_len = (g->ow + 7) / 8 * 8 + 8, .rows = ROWS_PER_JOB};
  int64_t threads = tb_pool_threads(pool);
  if (threads > 1 && g->batch * ((g->oh + j.rows - 1) / j.rows) < 4 * threads) { /* about four jobs per thread */
    int64_t want = (4 * threads + g->batch - 1) / g->batch;
    j.rows = (g->oh + want - 1) / want;
  }
  if (j.rows > g->oh) j.rows = g->oh;
  j.splits = (g->oh + j.rows - 1) / j.rows;
  tb_pool_parallel_for_work(pool, (size_t)(g->batch * j.splits), (double)(g->batch * g->out_c * g->oh * g->ow) * (double)(9 * g->in_c),
                            stem_tasks, &j);
  return !j.failed;
}
#else
bool tb_conv_stem_avx2_fits(const tb_conv_geom *g) {
  (void)g;
  return false;
}
bool tb_conv_stem_avx2_run(const tb_conv_geom *g, const float *w, int64_t block_floats, const float *x, const float *bias,
                           const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool) {
  (void)g, (void)w, (void)block_floats, (void)x, (void)bias, (void)residual, (void)ep, (void)y, (void)pool;
  return false;
}
#endif
