/* Concat: for each outer index, each input's block along the axis in turn (tb_tk_concat_copy, also the
 * level-2 Concat's, which computes the output shape without the inference context). The copies run over the pool
 * (tb_pool_parallel_for_work: a small Concat stays on the caller) in pieces of at most PIECE_BYTES, so that
 * one large block (YOLO's and U-Net's skip Concats on one image: one block per input) is split too; run on
 * one thread they were 6% of YOLO's CPU time at 2 threads. Pieces are plain copies: the result does not
 * depend on the split. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "core/threadpool.h"
#include "ops/tensor/tensor_params.h"

enum { PIECE_BYTES = 64 * 1024, STACK_INPUTS = 16 };

typedef struct concat_job {
  unsigned char *dst;
  const unsigned char **src;
  size_t *block;      /* per input: bytes per outer index */
  size_t *at;         /* per input: its offset within an output row */
  size_t *first;      /* per input: its first piece; first[n_inputs] is the count */
  size_t *per_outer;  /* per input: pieces per outer index */
  size_t n_inputs, row;
} concat_job;

static void concat_pieces(void *p, size_t begin, size_t end) {
  const concat_job *j = p;
  size_t i = 0;
  for (size_t t = begin; t < end; t++) {
    while (t >= j->first[i + 1]) i++;
    size_t local = t - j->first[i], o = local / j->per_outer[i], k = local % j->per_outer[i];
    size_t off = k * PIECE_BYTES, len = j->block[i] - off < PIECE_BYTES ? j->block[i] - off : PIECE_BYTES;
    memcpy(j->dst + o * j->row + j->at[i] + off, j->src[i] + o * j->block[i] + off, len);
  }
}

static tb_status run_concat(tb_kernel_ctx *ctx) {
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_infer_outputs(ctx, outs);
  if (st != TB_OK) return st;
  const tb_axis_params *p = ctx->params;
  return tb_tk_concat_copy(ctx, outs[0], tb_tk_axis(p->axis, tb_tensor_ndim(outs[0]))); /* range checked by inference */
}

tb_status tb_tk_concat_copy(tb_kernel_ctx *ctx, tb_tensor *out, int64_t axis) {
  tb_status st = TB_OK;
  size_t rank = tb_tensor_ndim(out), n = ctx->n_inputs;
  const int64_t *shape = tb_tensor_shape(out);
  size_t elem = tb_dtype_size(tb_tensor_dtype(out));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = (size_t)axis + 1; d < rank; d++) inner *= shape[d];
  const unsigned char *src_stack[STACK_INPUTS];
  size_t sizes_stack[4 * STACK_INPUTS + 1];
  const unsigned char **src = n <= STACK_INPUTS ? src_stack : malloc(n * sizeof *src);
  size_t *sizes = n <= STACK_INPUTS ? sizes_stack : malloc((4 * n + 1) * sizeof *sizes);
  if (!src || !sizes) {
    if (src != src_stack) free(src);
    if (sizes != sizes_stack) free(sizes);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the copies of %zu inputs", n);
  }
  concat_job j = {.dst = tb_tk_data(out), .src = src, .block = sizes, .at = sizes + n, .per_outer = sizes + 2 * n,
                  .first = sizes + 3 * n, .n_inputs = n, .row = (size_t)(shape[axis] * inner) * elem};
  size_t at = 0, pieces = 0;
  for (size_t i = 0; i < n && st == TB_OK; i++) {
    const tb_tensor *x;
    if ((st = tb_tk_input(ctx, i, &x, &src[i])) != TB_OK) break;
    j.block[i] = (size_t)(tb_tensor_shape(x)[axis] * inner) * elem;
    j.at[i] = at;
    j.per_outer[i] = (j.block[i] + PIECE_BYTES - 1) / PIECE_BYTES;
    j.first[i] = pieces;
    pieces += (size_t)outer * j.per_outer[i];
    at += j.block[i];
  }
  j.first[n] = pieces;
  if (st == TB_OK)
    tb_pool_parallel_for_work(ctx->pool, pieces, (double)((size_t)outer * j.row / elem) * 2.0, concat_pieces, &j);
  if (src != src_stack) free(src);
  if (sizes != sizes_stack) free(sizes);
  return st;
}

const tb_kernel tb_kernel_concat = {.domain = "", .name = "Concat", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_concat};
