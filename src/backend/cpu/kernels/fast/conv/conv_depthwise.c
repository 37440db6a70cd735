/* The depthwise convolution of the level-2 kernels (group == C and M a multiple of C: one input channel per
 * group, where an implicit GEMM would have one row per group). Jobs are (image, input channel, block of
 * output rows) on the pool; each job stages the input rows its block needs once (pads as zeros, split
 * into phases for strides above 1: conv_depthwise.h), then for each of the channel's output channels
 * computes TB_DW_MAX_ROWS output rows at a time (at row stride 1, every dh-th row, so that the rows of one
 * call share input rows) with the row kernel of the path (AVX-512 and AVX2 in their
 * own files, portable here; every tap a contiguous load, bias and residual in the kernel), then applies the
 * activation to the job's rows while they are in cache (tb_conv_epilogue_row, conv_act_row.c). Small maps,
 * where rows of 7 or 14 would leave vector lanes idle, go to the channels-in-lanes kernel instead
 * (conv_depthwise_lanes.c; its cost rule tb_dwl_wanted picks). */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_depthwise.h"
#include "backend/cpu/kernels/fast/conv/conv_depthwise_lanes.h"
#include "core/threadpool.h"

/* Portable: blocks of 4 rows x 8 columns in local arrays (the compiler may vectorise them). */
void tb_dw_rows_portable(const tb_dw_rows *a) {
  enum { R = 4, COLS = 8 };
  for (int64_t r0 = 0; r0 < a->n_rows; r0 += R) {
    int64_t rows = a->n_rows - r0 < R ? a->n_rows - r0 : R;
    for (int64_t ox = 0; ox < a->ow; ox += COLS) {
      float acc[R][COLS];
      for (int r = 0; r < R; r++)
        for (int v = 0; v < COLS; v++) acc[r][v] = a->bias;
      const float *w = a->w;
      for (int64_t ky = 0; ky < a->kh; ky++) {
        int64_t phase = 0, idx = 0;
        for (int64_t kx = 0; kx < a->kw; kx++, w++) {
          int64_t off = phase * a->phase_len + idx + ox;
          for (int64_t r = 0; r < rows; r++) {
            const float *in = a->in[(r0 + r) * a->kh + ky] + off;
            for (int v = 0; v < COLS; v++) acc[r][v] += *w * in[v];
          }
          idx += a->dw / a->sw;
          phase += a->dw % a->sw;
          if (phase >= a->sw) phase -= a->sw, idx++;
        }
      }
      int64_t cols = a->ow - ox < COLS ? a->ow - ox : COLS;
      for (int64_t r = 0; r < rows; r++) {
        int64_t at = (r0 + r) * a->ldy + ox;
        for (int64_t v = 0; v < cols; v++) a->y[at + v] = acc[r][v] + (a->res ? a->res[at + v] : 0.0f);
      }
    }
  }
}

/* Floats per phase of a staged row: every column block the kernels read (ow rounded up to 32) plus the
 * taps' reach, a multiple of 16 (the split loops' step). */
static int64_t phase_len_of(const tb_conv_geom *g) {
  int64_t len = (g->ow + 31) / 32 * 32 + (g->kw - 1) * g->dw / g->sw + 1;
  return (len + 15) / 16 * 16;
}

/* One run's work: jobs of `rows` output rows (the last one shorter) of each (image, input channel). */
typedef struct dw_job {
  tb_gemm_path path;
  const tb_conv_geom *g;
  const float *x, *w, *bias, *residual;
  const tb_gemm_epilogue *ep;
  float *y;
  int64_t rows, splits, phase_len, max_staged;
  int failed;
} dw_job;

/* The input rows a job of output rows [oy0, oy1) reads: [*lo, *hi) (clipped to the input; may be empty). */
static void input_rows(const tb_conv_geom *g, int64_t oy0, int64_t oy1, int64_t *lo, int64_t *hi) {
  *lo = oy0 * g->sh - g->ph;
  *hi = (oy1 - 1) * g->sh - g->ph + (g->kh - 1) * g->dh + 1;
  if (*lo < 0) *lo = 0;
  if (*hi > g->ih) *hi = g->ih;
  if (*hi < *lo) *hi = *lo;
}

/* Stage input row xr into dst (sw phases of phase_len): the padded row line[pc] = xr[pc - pw] (0 outside),
 * pc < sw * phase_len, built in dst itself for stride 1, else in `line` and split into phases. Only the
 * input's columns are copied: dst (stride 1) and line start zeroed and every row puts its columns at the
 * same place, so the pads stay zero. */
static void stage_row(tb_gemm_path path, const tb_conv_geom *g, int64_t phase_len, const float *xr, float *line, float *dst) {
  int64_t len = g->sw * phase_len, pad = g->pw < len ? g->pw : len;
  int64_t n = g->iw < len - pad ? g->iw : len - pad;
  if (g->sw == 2 && path == TB_GEMM_AVX512) {
    tb_dw_stage2_avx512(dst, xr, pad, n, phase_len);
    return;
  }
  memcpy((g->sw == 1 ? dst : line) + pad, xr, (size_t)n * sizeof *xr);
  if (g->sw == 1) return;
  if (g->sw == 2 && path == TB_GEMM_AVX2) tb_dw_split2_avx2(dst, line, phase_len);
  else
    for (int64_t pc = 0; pc < len; pc++) dst[pc % g->sw * phase_len + pc / g->sw] = line[pc];
}

static void run_rows(tb_gemm_path path, const tb_dw_rows *a) {
  if (path == TB_GEMM_AVX512) tb_dw_rows_avx512(a);
  else if (path == TB_GEMM_AVX2) tb_dw_rows_avx2(a);
  else tb_dw_rows_portable(a);
}

static void dw_tasks(void *p, size_t begin, size_t end) {
  dw_job *j = p;
  const tb_conv_geom *g = j->g;
  int64_t row_len = g->sw * j->phase_len, mult = g->out_c / g->in_c, kh = g->kh;
  /* a zero row, the padded line (strides above 1) and the staged rows, all zeroed once (stage_row keeps
   * their pads zero), then the row pointers of a job's output rows */
  size_t floats = (size_t)((2 + j->max_staged) * row_len);
  float *buf = calloc(floats * sizeof(float) + (size_t)(j->rows * kh) * sizeof(const float *), 1);
  if (!buf) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  float *zero = buf, *line = buf + row_len, *staged = buf + 2 * row_len;
  const float **in = (const float **)(void *)(buf + floats);
  int64_t in_for = -1; /* the first output row `in` was set up for (the same for every channel) */
  for (size_t t = begin; t < end; t++) {
    int64_t plane = (int64_t)t / j->splits, oy0 = (int64_t)t % j->splits * j->rows;
    int64_t oy1 = oy0 + j->rows < g->oh ? oy0 + j->rows : g->oh, lo, hi;
    int64_t b = plane / g->in_c, c = plane % g->in_c;
    input_rows(g, oy0, oy1, &lo, &hi);
    const float *xp = j->x + plane * g->ih * g->iw;
    for (int64_t iy = lo; iy < hi; iy++) stage_row(j->path, g, j->phase_len, xp + iy * g->iw, line, staged + (iy - lo) * row_len);
    /* with row stride 1, the rows in classes of equal oy mod dh (one class without dilation): a kernel
     * call takes consecutive rows of one class, which share input rows */
    int64_t step = g->sh == 1 ? g->dh : 1;
    if (in_for != oy0) {
      int64_t k = 0;
      for (int64_t cls = 0; cls < step; cls++)
        for (int64_t oy = oy0 + cls; oy < oy1; oy += step, k++)
          for (int64_t ky = 0; ky < kh; ky++) {
            int64_t iy = oy * g->sh - g->ph + ky * g->dh;
            in[k * kh + ky] = iy < 0 || iy >= g->ih ? zero : staged + (iy - lo) * row_len;
          }
      in_for = oy0;
    }
    for (int64_t oc = c * mult; oc < (c + 1) * mult; oc++) {
      int64_t out = (b * g->out_c + oc) * g->oh * g->ow, k = 0;
      for (int64_t cls = 0; cls < step; cls++) {
        int64_t rows = oy1 - oy0 - cls <= 0 ? 0 : (oy1 - oy0 - cls + step - 1) / step; /* in this class */
        for (int64_t s = 0; s < rows; s += TB_DW_MAX_ROWS) {
          int64_t n = rows - s < TB_DW_MAX_ROWS ? rows - s : TB_DW_MAX_ROWS, oy = oy0 + cls + s * step;
          float *y = j->y + out + oy * g->ow;
          tb_dw_rows a = {.in = in + (k + s) * kh, .w = j->w + oc * kh * g->kw, .bias = j->bias ? j->bias[oc] : 0.0f,
                          .kh = kh, .kw = g->kw, .dw = g->dw, .sw = g->sw, .phase_len = j->phase_len, .ow = g->ow,
                          .n_rows = n, .rows_shift = g->sh == 1, .y = y, .ldy = step * g->ow,
                          .res = j->residual ? j->residual + out + oy * g->ow : NULL};
          run_rows(j->path, &a);
        }
        k += rows;
      }
      /* the activation over the job's rows at once (contiguous, still in cache): per row it would be a
       * call per 7 to 112 values, which costs the transcendental ones dearly */
      if (j->ep->act != 0) tb_conv_epilogue_row(j->ep, NULL, j->y + out + oy0 * g->ow, (oy1 - oy0) * g->ow);
    }
  }
  free(buf);
}

/* Staged rows kept to about STAGE_FLOATS per job (so that they stay in the core's cache); with threads,
 * jobs of fewer rows (down to TB_DW_MAX_ROWS) until there are about four per thread. With a row stride
 * above 1 the row kernel loads the staged rows once per FMA (no rows shared between output rows), so they
 * are kept to STAGE_FLOATS_STRIDED, well inside L1, instead: a whole 112x112 plane staged in its two phases
 * (71 KiB) is read from L2 nine times per output vector. Jobs of 8 output rows (17 staged rows, 11 KiB)
 * made the 3x3 stride-2 convolutions at 112x112 in MobileNetV3-Large and EfficientNet-B0 about 15% faster
 * in the model (docs/performance.md, "Depthwise convolution"); at row stride 1 (each staged row loaded
 * once per tap column) smaller jobs measured no faster. The outputs' bits do not depend on the jobs. */
enum { STAGE_FLOATS = 64 * 1024, STAGE_FLOATS_STRIDED = 4 * 1024 };

bool tb_conv_depthwise_rows_run(tb_gemm_path path, const tb_conv_geom *g, const float *x, const float *w, const float *bias,
                                const float *residual, const tb_gemm_epilogue *ep, float *y, tb_pool *pool) {
  dw_job j = {.path = path, .g = g, .x = x, .w = w, .bias = bias, .residual = residual, .ep = ep, .y = y,
              .phase_len = phase_len_of(g)};
#if !defined(__x86_64__)
  j.path = TB_GEMM_PORTABLE;
#endif
  int64_t row_len = g->sw * j.phase_len, planes = g->batch * g->in_c, threads = tb_pool_threads(pool);
  int64_t reach = (g->kh - 1) * g->dh + 1; /* input rows under one output row */
  int64_t stage_floats = g->sh > 1 ? STAGE_FLOATS_STRIDED : STAGE_FLOATS;
  int64_t rows = (stage_floats / row_len - reach) / g->sh + 1;
  rows = rows < TB_DW_MAX_ROWS ? TB_DW_MAX_ROWS : rows / TB_DW_MAX_ROWS * TB_DW_MAX_ROWS;
  if (rows > g->oh) rows = g->oh;
  int64_t splits = (g->oh + rows - 1) / rows;
  if (threads > 1 && planes * splits < 4 * threads) {
    int64_t want = (4 * threads + planes - 1) / planes;
    rows = (g->oh + want - 1) / want;
    if (rows < TB_DW_MAX_ROWS) rows = g->oh < TB_DW_MAX_ROWS ? g->oh : TB_DW_MAX_ROWS;
    splits = (g->oh + rows - 1) / rows;
  }
  j.rows = rows;
  j.splits = splits;
  j.max_staged = (rows - 1) * g->sh + reach;
  if (j.max_staged > g->ih) j.max_staged = g->ih;
  /* work as the other convolutions count it (outputs x taps): a tiny one stays on the caller */
  tb_pool_parallel_for_work(pool, (size_t)(planes * splits), (double)(g->batch * g->out_c * g->oh * g->ow) *
                            (double)(g->kh * g->kw), dw_tasks, &j);
  return !j.failed;
}

/* The row kernels above, or channels in lanes (conv_depthwise_lanes.c) where its cost rule says so. */
bool tb_conv_depthwise_run(tb_gemm_path path, const tb_conv_geom *g, const float *x, const float *w, const float *bias,
                           const float *residual, const tb_gemm_epilogue *ep, float *y, tb_pool *pool) {
#if !defined(__x86_64__)
  path = TB_GEMM_PORTABLE;
#endif
  if (tb_dwl_wanted(path, g)) return tb_conv_depthwise_lanes_run(path, g, x, w, bias, residual, ep, y, pool);
  return tb_conv_depthwise_rows_run(path, g, x, w, bias, residual, ep, y, pool);
}
