/* Type and shape inference over a graph: each node's operator definition computes its outputs from the
 * current input types and the constant values known (initializers, Constant nodes); the result is merged
 * with the types the model declares, a conflict naming the value. Symbolic dims are bound first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "model/engine.h"
#include "ops/op.h"

int64_t tb_dim_binding_find(const tb_graph *g, const tb_dim_bindings *b, int symbol) {
  if (!b || !g || !g->model || symbol < 0 || (size_t)symbol >= g->model->n_symbols) return -1;
  for (size_t i = 0; i < b->count; i++)
    if (b->names[i] && strcmp(b->names[i], g->model->symbols[symbol]) == 0) return b->values[i];
  return -1;
}

void tb_graph_bind_dims(tb_graph *g, const tb_dim_bindings *b) {
  if (!b || !b->count) return;
  for (size_t v = 0; v < g->n_values; v++) {
    tb_value_type *t = &g->values[v].type;
    if (!t->has_shape) continue;
    for (size_t d = 0; d < t->ndim; d++) {
      if (t->dims[d].value >= 0 || t->dims[d].symbol < 0) continue;
      int64_t size = tb_dim_binding_find(g, b, t->dims[d].symbol);
      if (size >= 0) t->dims[d].value = size;
    }
  }
}

void tb_value_type_of(const tb_tensor *t, tb_value_type *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_VALUE_TENSOR;
  out->has_dtype = true;
  out->dtype = tb_tensor_dtype(t);
  out->has_shape = true;
  out->ndim = tb_tensor_ndim(t);
  const int64_t *shape = tb_tensor_shape(t);
  for (size_t d = 0; d < out->ndim; d++) {
    out->dims[d].value = shape[d];
    out->dims[d].symbol = -1;
  }
}

bool tb_value_type_complete(const tb_value_type *t) {
  if (t->kind != TB_VALUE_TENSOR || !t->has_dtype || !t->has_shape) return false;
  for (size_t d = 0; d < t->ndim; d++)
    if (t->dims[d].value < 0) return false;
  return true;
}

const char *tb_value_type_dims_str(const tb_graph *g, const tb_value_type *t, char *buf, size_t cap) {
  if (!t->has_shape) {
    snprintf(buf, cap, "(unknown shape)");
    return buf;
  }
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < t->ndim && len < cap; d++) {
    const char *sep = d ? ", " : "";
    if (t->dims[d].value >= 0)
      len += (size_t)snprintf(buf + len, cap - len, "%s%lld", sep, (long long)t->dims[d].value);
    else if (g && g->model && t->dims[d].symbol >= 0 && (size_t)t->dims[d].symbol < g->model->n_symbols)
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, g->model->symbols[t->dims[d].symbol]);
    else
      len += (size_t)snprintf(buf + len, cap - len, "%s?", sep);
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

tb_status tb_infer_node(const tb_graph *g, const tb_node *n, const tb_value_type *const *in,
                        const tb_ir_tensor *const *values, tb_value_type *out) {
  for (size_t o = 0; o < n->n_outputs; o++) {
    memset(&out[o], 0, sizeof out[o]);
    out[o].kind = TB_VALUE_TENSOR;
  }
  char label[200];
  if (!n->def) return tb_error(TB_ERR_INTERNAL, "%s: inference before the graph was checked", tb_node_label(g, n, label, sizeof label));
  if (!n->def->infer) return TB_OK;
  tb_infer_ctx ctx = {g, n, n->n_inputs, in, values, n->n_outputs, out};
  return n->def->infer(&ctx);
}

/* Merge what inference found into what the model declares for value v. */
static tb_status merge(const tb_graph *g, const tb_node *n, tb_value *v, const tb_value_type *inferred) {
  tb_value_type *d = &v->type;
  char label[200], a[256], b[256];
  if (inferred->kind != TB_VALUE_TENSOR) {
    *d = *inferred;
    return TB_OK;
  }
  if (d->has_dtype && inferred->has_dtype && d->dtype != inferred->dtype)
    return tb_error(TB_ERR_MODEL, "value '%s': declared element type %s but %s gives %s", v->name, tb_dtype_name(d->dtype),
                    tb_node_label(g, n, label, sizeof label), tb_dtype_name(inferred->dtype));
  if (d->has_shape && inferred->has_shape) {
    bool conflict = d->ndim != inferred->ndim;
    for (size_t i = 0; !conflict && i < d->ndim; i++)
      conflict = d->dims[i].value >= 0 && inferred->dims[i].value >= 0 && d->dims[i].value != inferred->dims[i].value;
    if (conflict)
      return tb_error(TB_ERR_MODEL, "value '%s': declared shape %s but %s gives %s", v->name,
                      tb_value_type_dims_str(g, d, a, sizeof a), tb_node_label(g, n, label, sizeof label),
                      tb_value_type_dims_str(g, inferred, b, sizeof b));
  }
  if (!d->has_dtype && inferred->has_dtype) {
    d->has_dtype = true;
    d->dtype = inferred->dtype;
  }
  d->kind = TB_VALUE_TENSOR;
  if (!d->has_shape && inferred->has_shape) {
    d->has_shape = true;
    d->ndim = inferred->ndim;
    memcpy(d->dims, inferred->dims, sizeof d->dims);
  } else if (d->has_shape && inferred->has_shape) {
    for (size_t i = 0; i < d->ndim; i++)
      if (d->dims[i].value < 0 && (inferred->dims[i].value >= 0 || d->dims[i].symbol < 0)) d->dims[i] = inferred->dims[i];
  }
  return TB_OK;
}

/* The constant a Constant node holds in its `value` attribute. */
static const tb_ir_tensor *constant_node_value(const tb_node *n) {
  if (strcmp(n->op_type, "Constant") != 0 || n->domain[0]) return NULL;
  const tb_attr *a = tb_node_attr(n, "value");
  return a && a->type == TB_ATTR_TENSOR ? a->t : NULL;
}

tb_status tb_graph_infer(tb_graph *g) {
  size_t nv = g->n_values;
  const tb_ir_tensor **known = calloc(nv ? nv : 1, sizeof *known);
  const tb_value_type **in = NULL;
  const tb_ir_tensor **vals = NULL;
  tb_value_type *out = NULL;
  size_t cap_in = 0, cap_out = 0;
  tb_status st = TB_OK;
  if (!known) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for inference", g->name);
  for (size_t v = 0; v < nv; v++) known[v] = g->values[v].constant;
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) {
    const tb_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (n->n_inputs > cap_in) {
      free(in);
      free(vals);
      cap_in = n->n_inputs;
      in = calloc(cap_in, sizeof *in);
      vals = calloc(cap_in, sizeof *vals);
      if (!in || !vals) {
        st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for inference", g->name);
        break;
      }
    }
    if (n->n_outputs > cap_out) {
      free(out);
      cap_out = n->n_outputs;
      out = calloc(cap_out, sizeof *out);
      if (!out) {
        st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for inference", g->name);
        break;
      }
    }
    for (size_t k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      in[k] = v >= 0 ? &g->values[v].type : NULL;
      vals[k] = v >= 0 ? known[v] : NULL;
    }
    st = tb_infer_node(g, n, in, vals, out);
    for (size_t o = 0; o < n->n_outputs && st == TB_OK; o++) {
      int v = n->outputs[o];
      if (v >= 0) st = merge(g, n, &g->values[v], &out[o]);
    }
    const tb_ir_tensor *c = constant_node_value(n);
    if (c && n->n_outputs >= 1 && n->outputs[0] >= 0) known[n->outputs[0]] = c;
  }
  free(known);
  free(in);
  free(vals);
  free(out);
  return st;
}
