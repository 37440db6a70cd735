/* Helpers for the engine's tests: small graphs built with the IR builder, without an ONNX file. */
#ifndef TB_TEST_IR_UTIL_H
#define TB_TEST_IR_UTIL_H
#include <stdlib.h>
#include <string.h>
#include "model/engine.h"
#include "ir/ir.h"
#include "test_op_harness.h"

/* A model importing the default domain at `opset`. */
static inline tb_ir_model *tbt_ir_model(int64_t opset) {
  tb_ir_model *m = tb_ir_model_new();
  assert_non_null(m);
  m->opsets = tb_arena_alloc(&m->arena, sizeof *m->opsets);
  m->opsets[0].domain = "";
  m->opsets[0].version = opset;
  m->n_opsets = 1;
  return m;
}

static inline int *tbt_append(tb_graph *g, const int *list, size_t n, int v) {
  int *grown = tb_graph_alloc(g, (n + 1) * sizeof *grown);
  assert_non_null(grown);
  if (n) memcpy(grown, list, n * sizeof *grown);
  grown[n] = v;
  return grown;
}

/* Set a value's type: dims < 0 unknown; sym[i] a symbol name or NULL. */
static inline void tbt_type(tb_graph *g, int v, tb_dtype dtype, size_t ndim, const int64_t *dims, const char *const *sym) {
  tb_value_type *t = &g->values[v].type;
  *t = toh_type(dtype, ndim, dims);
  for (size_t i = 0; i < ndim; i++)
    if (sym && sym[i]) t->dims[i].symbol = tb_ir_model_symbol(g->model, sym[i]);
}

/* A graph input of this dtype and shape. */
static inline int tbt_input(tb_graph *g, const char *name, tb_dtype dtype, size_t ndim, const int64_t *dims,
                            const char *const *sym) {
  int v = tb_graph_value(g, name);
  assert_true(v >= 0);
  g->values[v].is_input = true;
  tbt_type(g, v, dtype, ndim, dims, sym);
  g->inputs = tbt_append(g, g->inputs, g->n_inputs++, v);
  return v;
}

static inline int tbt_output(tb_graph *g, const char *name) {
  int v = tb_graph_value(g, name);
  assert_true(v >= 0);
  g->values[v].is_output = true;
  g->outputs = tbt_append(g, g->outputs, g->n_outputs++, v);
  return v;
}

/* An initializer of this dtype with these packed values. */
static inline int tbt_const(tb_graph *g, const char *name, tb_dtype dtype, size_t ndim, const int64_t *dims, const void *data) {
  void *bytes;
  tb_ir_tensor *t = tb_graph_new_tensor(g, name, dtype, ndim, dims, &bytes);
  assert_non_null(t);
  memcpy(bytes, data, t->nbytes);
  int v = tb_graph_value(g, name);
  g->values[v].constant = t;
  g->values[v].is_initializer = true;
  tbt_type(g, v, dtype, ndim, dims, NULL);
  return v;
}

static inline int tbt_const_f32(tb_graph *g, const char *name, size_t ndim, const int64_t *dims, const float *data) {
  return tbt_const(g, name, TB_DTYPE_F32, ndim, dims, data);
}

static inline int tbt_const_i64(tb_graph *g, const char *name, size_t ndim, const int64_t *dims, const int64_t *data) {
  return tbt_const(g, name, TB_DTYPE_I64, ndim, dims, data);
}

/* A node whose inputs and outputs are comma-separated value names ("" between commas: omitted). */
static inline int tbt_node(tb_graph *g, const char *op, const char *name, const char *inputs, const char *outputs) {
  int in[16], out[16];
  size_t n_in = 0, n_out = 0;
  const char *lists[2] = {inputs, outputs};
  for (int l = 0; l < 2; l++) {
    const char *p = lists[l];
    if (!p || !*p) continue;
    for (;;) {
      const char *comma = strchr(p, ',');
      size_t len = comma ? (size_t)(comma - p) : strlen(p);
      char buf[128];
      memcpy(buf, p, len);
      buf[len] = '\0';
      int v = len ? tb_graph_value(g, buf) : -1;
      if (l == 0) in[n_in++] = v;
      else out[n_out++] = v;
      if (!comma) break;
      p = comma + 1;
    }
  }
  int index = tb_graph_add_node(g, name, op, "", in, n_in, out, n_out, NULL, 0);
  assert_true(index >= 0);
  return index;
}

/* The position of the node named `name` in g's order, or -1. */
static inline int tbt_node_pos(const tb_graph *g, const char *name) {
  for (size_t i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].name, name) == 0) return (int)i;
  return -1;
}

#endif
