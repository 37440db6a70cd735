/* Reference kernel for Einsum: one nested loop over the whole label space (output labels, then summed
 * labels), multiplying one element of each input and adding into the output element, in double.
 * Repeated labels in a term read diagonals; ellipsis axes of size 1 broadcast. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "ops/nn/einsum_parse.h"
#include "ops/nn/nn_params.h"

static tb_status einsum_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_einsum_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  size_t n_in = ctx->n_inputs;
  if (n_in == 0 || n_in > NN_EINSUM_MAX_INPUTS)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%zu inputs; 1 to %d are supported", n_in, NN_EINSUM_MAX_INPUTS);
  nn_buf in[NN_EINSUM_MAX_INPUTS];
  memset(in, 0, sizeof in);
  double *y = NULL;
  for (size_t i = 0; i < n_in && st == TB_OK; i++) st = tb_nn_load(ctx, i, false, &in[i]);
  if (st != TB_OK) goto done;
  size_t ranks[NN_EINSUM_MAX_INPUTS];
  const int64_t *dims[NN_EINSUM_MAX_INPUTS];
  for (size_t i = 0; i < n_in; i++) ranks[i] = in[i].ndim, dims[i] = in[i].shape;
  nn_einsum e;
  int64_t sizes[NN_EINSUM_LABELS];
  st = tb_nn_einsum_parse(p->equation, n_in, ranks, &e);
  if (st == TB_OK) st = tb_nn_einsum_sizes(&e, dims, sizes);
  if (st != TB_OK) goto done;
  /* The loop order: output labels first (so the output index is a prefix), then the summed ones. */
  int order[NN_EINSUM_LABELS];
  int64_t extent[NN_EINSUM_LABELS];
  size_t n_loop = 0;
  bool in_out[NN_EINSUM_LABELS] = {false};
  for (size_t k = 0; k < e.out_rank; k++) in_out[e.out_label[k]] = true, order[n_loop++] = e.out_label[k];
  for (int l = 0; l < NN_EINSUM_LABELS; l++)
    if (e.used[l] && !in_out[l]) order[n_loop++] = l;
  int64_t out_shape[TB_MAX_DIMS], total = 0, space = 1;
  for (size_t k = 0; k < e.out_rank; k++) out_shape[k] = sizes[e.out_label[k]];
  for (size_t k = 0; k < n_loop; k++) {
    extent[k] = sizes[order[k]];
    if (__builtin_mul_overflow(space, extent[k], &space)) {
      st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the index space of equation '%s' is too large", p->equation);
      goto done;
    }
  }
  st = tb_nn_checked_numel(ctx, e.out_rank, out_shape, &total);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st != TB_OK) goto done;
  int64_t pos[NN_EINSUM_LABELS] = {0}; /* index of each loop label */
  int64_t at[NN_EINSUM_LABELS] = {0};  /* the same, by label id */
  int64_t sum_space = total ? space / total : 0;
  for (int64_t s = 0; s < space; s++) {
    for (size_t k = 0; k < n_loop; k++) at[order[k]] = pos[k];
    double prod = 1.0;
    for (size_t i = 0; i < n_in; i++) {
      int64_t off = 0;
      for (size_t k = 0; k < in[i].ndim; k++) off = off * in[i].shape[k] + (in[i].shape[k] == 1 ? 0 : at[e.label[i][k]]);
      prod *= in[i].data[off];
    }
    y[s / sum_space] += prod;
    tb_kernel_next_index(n_loop, extent, pos);
  }
  st = tb_nn_store(ctx, 0, in[0].dtype, e.out_rank, out_shape, y);
done:
  free(y);
  for (size_t i = 0; i < n_in; i++) tb_nn_buf_free(&in[i]);
  return st;
}

const tb_kernel tb_kernel_einsum = {.domain = "", .name = "Einsum", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = einsum_run};
