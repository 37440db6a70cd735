/* The kernel contract's helpers: the query for a node, whether a kernel answers it, and, for kernels,
 * allocating (or checking) an output, errors naming the node and the row-major multi-index step. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "backend/kernel.h"
#include "core/error.h"
#include "backend/tensor/tensor_impl.h"

uint64_t tb_kernel_omitted_outputs(const tb_node *n) {
  uint64_t bits = 0;
  for (size_t o = 0; o < n->n_outputs && o < 64; o++)
    if (n->outputs[o] < 0) bits |= (uint64_t)1 << o;
  return bits;
}

uint64_t tb_kernel_constant_inputs(const tb_graph *g, const tb_node *n) {
  uint64_t bits = 0;
  for (size_t i = 0; i < n->n_inputs && i < 64; i++) {
    int v = n->inputs[i];
    if (v >= 0 && (size_t)v < g->n_values && g->values[v].constant && !g->values[v].is_input) bits |= (uint64_t)1 << i;
  }
  return bits;
}

const char *tb_kernel_label(const char *name, const char *op_type, char *buf, size_t cap) {
  if (name && *name) snprintf(buf, cap, "node '%s' (%s)", name, op_type ? op_type : "?");
  else snprintf(buf, cap, "node (%s)", op_type ? op_type : "?");
  return buf;
}

tb_kernel_query tb_kernel_query_for(const tb_node *n, const tb_value_type *const *in,
                                    tb_kernel_level level, uint64_t cpu_features) {
  tb_kernel_query q = {
      .domain = n->domain ? n->domain : "",
      .op_type = n->op_type,
      .opset = n->opset,
      .params = n->params,
      .n_inputs = n->n_inputs,
      .in = in,
      .n_outputs = n->n_outputs,
      .level = level,
      .cpu_features = cpu_features,
      .name = n->name ? n->name : "",
  };
  return q;
}

tb_kernel_query tb_kernel_ctx_query(const tb_kernel_ctx *ctx, const tb_value_type *const *in, tb_kernel_level level,
                                    uint64_t cpu_features) {
  tb_kernel_query q = {
      .domain = ctx->domain ? ctx->domain : "",
      .op_type = ctx->op_type,
      .opset = ctx->opset,
      .params = ctx->params,
      .n_inputs = ctx->n_inputs,
      .in = in,
      .n_outputs = ctx->n_outputs,
      .level = level,
      .cpu_features = cpu_features,
      .name = ctx->name ? ctx->name : "",
  };
  return q;
}

bool tb_kernel_matches(const tb_kernel *k, const tb_kernel_query *q) {
  if (strcmp(k->name, q->op_type) != 0 || strcmp(k->domain, q->domain) != 0) return false;
  if (k->level > q->level || (k->cpu_features & ~q->cpu_features) != 0) return false;
  return !k->accepts || k->accepts(q);
}

const char *tb_kernel_level_name(tb_kernel_level level) {
  switch (level) {
    case TB_KERNEL_REFERENCE: return "reference";
    case TB_KERNEL_FAST: return "fast";
    case TB_KERNEL_REDUCED: return "reduced";
  }
  return "unknown";
}

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
