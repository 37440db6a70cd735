/* The convolution output block's epilogue over a pool, in tasks of output-channel rows (conv_block_pool.h). */
#include "backend/cpu/kernels/fast/conv/conv_block_pool.h"
#include "core/threadpool.h"

typedef enum { BLOCK_INIT, BLOCK_FROM_T, BLOCK_ACT } block_kind;

typedef struct block_job {
  block_kind kind;
  tb_gemm_path path;
  float *y;
  int64_t ldy, cols, ldt, ldr;
  const float *ct, *bias, *res;
  const tb_gemm_epilogue *ep;
} block_job;

static void block_rows(void *p, size_t begin, size_t end) {
  const block_job *j = p;
  int64_t m0 = (int64_t)begin, mc = (int64_t)(end - begin);
  float *y = j->y + m0 * j->ldy;
  const float *bias = j->bias ? j->bias + m0 : NULL, *res = j->res ? j->res + m0 * j->ldr : NULL;
  if (j->kind == BLOCK_INIT) tb_conv_block_init(j->path, y, j->ldy, mc, j->cols, bias, res, j->ldr);
  else if (j->kind == BLOCK_FROM_T) tb_conv_block_from_t(j->path, y, j->ldy, mc, j->cols, j->ct + m0, j->ldt, bias, res, j->ldr);
  else tb_conv_block_act(j->path, j->ep, y, j->ldy, mc, j->cols);
}

/* Each element is read and written once (twice for the transposed block): the work TB_POOL_MIN_WORK counts. */
static void run_rows(block_job *j, int64_t rows, struct tb_pool *pool) {
  tb_pool_parallel_for_work(pool, (size_t)rows, (double)rows * (double)j->cols * 2.0, block_rows, j);
}

void tb_conv_block_init_pool(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *bias,
                             const float *res, int64_t ldr, struct tb_pool *pool) {
  block_job j = {.kind = BLOCK_INIT, .path = path, .y = y, .ldy = ldy, .cols = cols, .ldr = ldr, .bias = bias, .res = res};
  run_rows(&j, rows, pool);
}

void tb_conv_block_from_t_pool(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *ct,
                               int64_t ldt, const float *bias, const float *res, int64_t ldr, struct tb_pool *pool) {
  block_job j = {.kind = BLOCK_FROM_T, .path = path, .y = y, .ldy = ldy, .cols = cols, .ldt = ldt, .ldr = ldr, .ct = ct,
                 .bias = bias, .res = res};
  run_rows(&j, rows, pool);
}

void tb_conv_block_act_pool(tb_gemm_path path, const tb_gemm_epilogue *ep, float *y, int64_t ldy, int64_t rows, int64_t cols,
                            struct tb_pool *pool) {
  if (ep->act == 0) return;
  block_job j = {.kind = BLOCK_ACT, .path = path, .y = y, .ldy = ldy, .cols = cols, .ep = ep};
  run_rows(&j, rows, pool);
}
