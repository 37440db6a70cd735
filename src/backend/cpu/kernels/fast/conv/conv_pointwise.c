/* The driver of the direct pointwise convolution (conv_pointwise.h): which geometries it takes, W packed in
 * 8-channel chunks, and jobs of (image, block of pixels) on the pool, each block's activations that the
 * kernel does not apply in registers run over its rows right after it. */
#include "backend/cpu/kernels/fast/conv/conv_pointwise.h"
#include <stdlib.h>
#include <string.h>
#include "core/threadpool.h"

/* Pixels per job: 10 tiles of 48 (the block's output rows, M x 480 floats, stay in L2 for an activation
 * run after it); with threads, as many blocks of whole vectors as make the jobs divide evenly between them
 * (each pixel's sum is the same FMA chain wherever its tile starts: the same bits on any thread count). */
enum { BLOCK_PIXELS = 480 };

bool tb_conv_pointwise_fits(tb_gemm_path path, const tb_conv_geom *g) {
  int64_t pixels = tb_conv_pixels(g);
  bool shallow = g->in_c <= TB_CONV_POINTWISE_MAX_DEPTH && pixels >= TB_CONV_POINTWISE_MIN_PIXELS;
  bool deep = g->in_c <= TB_CONV_POINTWISE_DEEP_DEPTH && pixels >= TB_CONV_POINTWISE_DEEP_PIXELS;
  return path == TB_GEMM_AVX512 && tb_conv_is_pointwise(g) && g->group == 1 && g->in_c >= 1 && g->out_c >= 1 &&
         (shallow || deep);
}

tb_conv_pointwise_weights *tb_conv_pointwise_pack(const tb_conv_geom *g, const float *w) {
  tb_conv_pointwise_weights *pw = calloc(1, sizeof *pw);
  if (!pw) return NULL;
  pw->out_c = g->out_c;
  pw->in_c = g->in_c;
  pw->chunks = (g->out_c + 7) / 8;
  pw->w = calloc((size_t)(pw->chunks * pw->in_c * 8), sizeof *pw->w);
  if (!pw->w) {
    free(pw);
    return NULL;
  }
  for (int64_t m = 0; m < pw->out_c; m++)
    for (int64_t k = 0; k < pw->in_c; k++) pw->w[(m / 8 * pw->in_c + k) * 8 + m % 8] = w[m * pw->in_c + k];
  return pw;
}

void tb_conv_pointwise_free(tb_conv_pointwise_weights *pw) {
  if (!pw) return;
  free(pw->w);
  free(pw);
}

typedef struct pw_job {
  const tb_conv_geom *g;
  const tb_conv_pointwise_weights *pw;
  const float *x, *bias, *res;
  const tb_gemm_epilogue *ep;
  float *y;
  int64_t blocks, block;
} pw_job;

static void pw_tasks(void *p, size_t begin, size_t end) {
  const pw_job *j = p;
  const tb_conv_geom *g = j->g;
  int64_t n = tb_conv_pixels(g);
  for (size_t t = begin; t < end; t++) {
    int64_t b = (int64_t)t / j->blocks, p0 = (int64_t)t % j->blocks * j->block;
    int64_t np = n - p0 < j->block ? n - p0 : j->block;
    if (np <= 0) continue;
    const float *x = j->x + b * g->in_c * n;
    float *y = j->y + b * g->out_c * n;
    const float *res = j->res ? j->res + b * g->out_c * n : NULL;
    tb_conv_pointwise_block_avx512(j->pw, x, n, p0, np, j->bias, res, j->ep, y);
    if (!tb_conv_pointwise_act_in_regs(j->ep->act)) tb_conv_block_act(TB_GEMM_AVX512, j->ep, y + p0, n, g->out_c, np);
  }
}

void tb_conv_pointwise_run(const tb_conv_geom *g, const tb_conv_pointwise_weights *pw, const float *x, const float *bias,
                           const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool) {
  int64_t n = tb_conv_pixels(g), threads = tb_pool_threads(pool), block = BLOCK_PIXELS;
  int64_t blocks = (n + block - 1) / block;
  if (threads > 1 && (g->batch * blocks) % threads != 0) { /* even blocks (whole vectors) over the threads */
    blocks = (blocks + threads - 1) / threads * threads;
    block = ((n + blocks - 1) / blocks + 15) / 16 * 16;
  }
  pw_job j = {.g = g, .pw = pw, .x = x, .bias = bias, .res = residual, .ep = ep, .y = y, .block = block,
              .blocks = (n + block - 1) / block};
  tb_pool_parallel_for(pool, (size_t)(g->batch * j.blocks), pw_tasks, &j);
}
