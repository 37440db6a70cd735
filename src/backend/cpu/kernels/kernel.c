/* Kernel context helpers: allocating (or checking) a kernel's output, errors naming the node, and the
 * row-major multi-index step the kernels iterate with. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernels/kernel.h"
#include "core/error.h"
#include "backend/tensor/tensor_impl.h"

tb_status tb_kernel_error(const tb_kernel_ctx *ctx, tb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tb_status st = tb_node_verror(ctx->graph, ctx->node, status, fmt, ap);
  va_end(ap);
  return st;
}

tb_status tb_kernel_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape,
                           tb_tensor **out) {
  if (i >= ctx->n_outputs) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output %zu requested; the node has %zu", i, ctx->n_outputs);
  if (ndim > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "output %zu has rank %zu; at most %d supported", i, ndim, TB_MAX_DIMS);
  tb_tensor *t = ctx->outputs[i];
  if (t) {
    bool same = tb_tensor_dtype(t) == dtype && tb_tensor_ndim(t) == ndim &&
                (ndim == 0 || memcmp(tb_tensor_shape(t), shape, ndim * sizeof(int64_t)) == 0);
    if (!same) {
      char want[160], have[160];
      tb_dims_str(want, sizeof want, ndim, shape);
      tb_dims_str(have, sizeof have, tb_tensor_ndim(t), tb_tensor_shape(t));
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output %zu was allocated as %s %s but the kernel computed %s %s", i,
                             tb_dtype_name(tb_tensor_dtype(t)), have, tb_dtype_name(dtype), want);
    }
  } else {
    tb_status st = tb_tensor_create(ctx->backend, dtype, ndim, shape, &t);
    if (st != TB_OK) return st;
    ctx->outputs[i] = t;
  }
  if (out) *out = t;
  return TB_OK;
}

bool tb_kernel_next_index(size_t ndim, const int64_t *shape, int64_t *idx) {
  for (size_t k = ndim; k-- > 0;) {
    if (++idx[k] < shape[k]) return true;
    idx[k] = 0;
  }
  return false;
}
