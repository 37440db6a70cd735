/* The one-node operator test harness shared by every operator family's tests: a graph holding one node in a
 * fresh model (op, opset, inputs and outputs, attributes), value types, the op's infer run on input types and
 * known values, and its reference CPU kernel run on CPU tensors with the outputs preallocated or not. */
#ifndef TB_TEST_OP_HARNESS_H
#define TB_TEST_OP_HARNESS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_kernel_util.h"
#include "ir/ir.h"
#include "ops/op.h"
#include "test_util.h"

enum { TOH_MAX = 16 };

/* Attributes for tb_graph_add_node (the lists live in compound literals of the caller's scope). */
#define TOH_INT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_INT, .i = (v)})
#define TOH_FLOAT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_FLOAT, .f = (v)})
#define TOH_STR(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_STRING, .s = (v), .s_len = strlen(v)})
#define TOH_INTS_N(n, v, c) ((tb_attr){.name = (n), .type = TB_ATTR_INTS, .ints = (v), .count = (c)})
#define TOH_FLOATS_N(n, v, c) ((tb_attr){.name = (n), .type = TB_ATTR_FLOATS, .floats = (v), .count = (c)})
#define TOH_INTS(n, ...) TOH_INTS_N(n, ((const int64_t[]){__VA_ARGS__}), sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define TOH_FLOATS(n, ...) TOH_FLOATS_N(n, ((const float[]){__VA_ARGS__}), sizeof((float[]){__VA_ARGS__}) / sizeof(float))
#define TOH_STRS(n, ...)                                                                                 \
  ((tb_attr){.name = (n), .type = TB_ATTR_STRINGS, .strings = (const char *const[]){__VA_ARGS__},        \
             .count = sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)})
#define TOH_GRAPH(n, graph) ((tb_attr){.name = (n), .type = TB_ATTR_GRAPH, .g = (graph)})
#define TOH_TENSOR(n, tensor) ((tb_attr){.name = (n), .type = TB_ATTR_TENSOR, .t = (tensor)})
#define TOH_NONE ((tb_dtype)TB_DTYPE_COUNT) /* an omitted input in a toh_in */

typedef struct toh {
  tb_ir_model *model;
  tb_graph *graph;
  int node;
  size_t n_in, n_out;
  tb_backend *cpu;
  bool owns_cpu;
  tb_subgraph_fn run_subgraph; /* for control-flow kernels */
  void *exec;
  tb_tensor *in[TOH_MAX];  /* inputs of toh_run_owned (NULL: omitted), destroyed by toh_teardown */
  tb_tensor *out[TOH_MAX]; /* outputs of toh_run_owned, destroyed by toh_teardown */
  tb_value_type out_types[TOH_MAX]; /* outputs of toh_infer_tensors */
} toh;

/* An input given as host data: dtype, shape and packed data. */
typedef struct toh_in {
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  const void *data;
} toh_in;

static inline tb_node *toh_node(toh *t) { return &t->graph->nodes[t->node]; }

/* A model with an empty main graph; kernels run on `cpu` (borrowed), or on a CPU backend of its own when
 * NULL. Add the node with toh_add (subgraphs may be made in between). */
static inline void toh_begin(toh *t, tb_backend *cpu) {
  memset(t, 0, sizeof *t);
  t->model = tb_ir_model_new();
  assert_non_null(t->model);
  t->graph = tb_graph_new(t->model, NULL, "g");
  assert_non_null(t->graph);
  t->cpu = cpu;
  t->owns_cpu = cpu == NULL;
  if (!cpu) TB_ASSERT_OK(tb_backend_create("cpu", &t->cpu));
}

/* The node `op` of `domain` ("" for ONNX, "tb") at `opset`: n_in inputs in0.. (omitted where omit has bit
 * i) and n_out outputs out0.. (omitted where omit_out has bit i). Fails the test when no definition exists. */
static inline void toh_add_op(toh *t, const char *domain, const char *op, int opset, size_t n_in, unsigned omit,
                              size_t n_out, unsigned omit_out, const tb_attr *attrs, size_t n_attrs) {
  int ins[TOH_MAX], outs[TOH_MAX];
  char name[32];
  assert_true(n_in <= TOH_MAX && n_out <= TOH_MAX);
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = (omit >> i) & 1u ? -1 : tb_graph_value(t->graph, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = (omit_out >> i) & 1u ? -1 : tb_graph_value(t->graph, name);
  }
  t->node = tb_graph_add_node(t->graph, "n0", op, domain, ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(t->node >= 0);
  toh_node(t)->opset = opset;
  toh_node(t)->def = tb_op_find(domain, op, opset);
  if (!toh_node(t)->def) fail_msg("no definition of %s%s%s at opset %d", domain, domain[0] ? "::" : "", op, opset);
  t->n_in = n_in;
  t->n_out = n_out;
}

/* toh_add_op of an ONNX op. */
static inline void toh_add(toh *t, const char *op, int opset, size_t n_in, unsigned omit, size_t n_out, unsigned omit_out,
                           const tb_attr *attrs, size_t n_attrs) {
  toh_add_op(t, "", op, opset, n_in, omit, n_out, omit_out, attrs, n_attrs);
}

/* toh_begin with a CPU backend of its own, then toh_add with every output present. */
static inline void toh_setup(toh *t, const char *op, int opset, size_t n_in, unsigned omit, size_t n_out,
                             const tb_attr *attrs, size_t n_attrs) {
  toh_begin(t, NULL);
  toh_add(t, op, opset, n_in, omit, n_out, 0, attrs, n_attrs);
}

static inline void toh_clear(tb_tensor **tensors, size_t n) {
  for (size_t i = 0; i < n; i++) {
    tb_tensor_destroy(tensors[i]);
    tensors[i] = NULL;
  }
}

static inline void toh_teardown(toh *t) {
  toh_clear(t->in, TOH_MAX);
  toh_clear(t->out, TOH_MAX);
  if (t->owns_cpu) tb_backend_destroy(t->cpu);
  tb_graph_destroy(t->graph);
  tb_ir_model_destroy(t->model);
}

/* A value type: dtype and dims (-1 unknown); ndim SIZE_MAX for an unknown rank. */
static inline tb_value_type toh_type(tb_dtype dtype, size_t ndim, const int64_t *dims) {
  tb_value_type v;
  memset(&v, 0, sizeof v);
  v.kind = TB_VALUE_TENSOR;
  v.has_dtype = true;
  v.dtype = dtype;
  if (ndim == SIZE_MAX) return v;
  v.has_shape = true;
  v.ndim = ndim;
  for (size_t i = 0; i < ndim; i++) {
    v.dims[i].value = dims[i];
    v.dims[i].symbol = -1;
  }
  return v;
}

/* The value type of a tensor: its dtype and concrete shape. */
static inline tb_value_type toh_type_of(const tb_tensor *x) {
  return toh_type(tb_tensor_dtype(x), tb_tensor_ndim(x), tb_tensor_shape(x));
}

/* Run the node's infer on these input types (NULL: omitted) and known values (NULL array: none). */
static inline tb_status toh_infer_values(toh *t, const tb_value_type *const *in, const tb_ir_tensor *const *values,
                                         tb_value_type *out) {
  const tb_ir_tensor *none[TOH_MAX] = {0};
  assert_non_null(toh_node(t)->def);
  tb_infer_ctx ctx = {t->graph, toh_node(t), t->n_in, in, values ? values : none, t->n_out, out};
  for (size_t i = 0; i < t->n_out; i++) memset(&out[i], 0, sizeof out[i]);
  return toh_node(t)->def->infer(&ctx);
}

static inline tb_status toh_infer(toh *t, const tb_value_type *const *in, tb_value_type *out) {
  return toh_infer_values(t, in, NULL, out);
}

/* Infer from the tensors in t->in (their concrete shapes) into t->out_types; with_values also gives the
 * values of the inputs the op declares it needs (as at run time), without them the prepare-time case. */
static inline tb_status toh_infer_tensors(toh *t, bool with_values) {
  tb_value_type types[TOH_MAX];
  const tb_value_type *in[TOH_MAX];
  tb_ir_tensor vals[TOH_MAX];
  const tb_ir_tensor *values[TOH_MAX];
  assert_non_null(toh_node(t)->def);
  for (size_t i = 0; i < t->n_in; i++) {
    in[i] = NULL;
    values[i] = NULL;
    if (!t->in[i]) continue;
    types[i] = toh_type_of(t->in[i]);
    in[i] = &types[i];
    if (with_values && (toh_node(t)->def->value_inputs & (1u << i))) {
      memset(&vals[i], 0, sizeof vals[i]);
      vals[i].dtype = types[i].dtype;
      vals[i].ndim = types[i].ndim;
      memcpy(vals[i].dims, tb_tensor_shape(t->in[i]), vals[i].ndim * sizeof(int64_t));
      vals[i].data = tb_tensor_host_data(t->in[i]);
      vals[i].nbytes = tb_tensor_nbytes(t->in[i]);
      values[i] = &vals[i];
    }
  }
  memset(t->out_types, 0, sizeof t->out_types);
  return toh_infer_values(t, in, values, t->out_types);
}

/* A tensor on backend b holding these packed elements. */
static inline tb_tensor *toh_host_tensor(tb_backend *b, tb_dtype dtype, size_t ndim, const int64_t *shape, const void *data) {
  tb_tensor *x = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, dtype, ndim, shape, &x));
  if (tb_tensor_nbytes(x)) TB_ASSERT_OK(tb_tensor_copy_from_host(x, data, tb_tensor_nbytes(x)));
  return x;
}

/* A CPU tensor holding an input's data. */
static inline tb_tensor *toh_tensor(toh *t, const toh_in *in) {
  return toh_host_tensor(t->cpu, in->dtype, in->ndim, in->shape, in->data);
}

/* Input i of toh_run_owned: a CPU tensor with these packed elements (replacing an earlier one). */
static inline void toh_input(toh *t, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, const void *data) {
  tb_tensor_destroy(t->in[i]);
  t->in[i] = toh_host_tensor(t->cpu, dtype, ndim, shape, data);
}

/* Run the reference kernel (level 0) on these input tensors (NULL: omitted); outs[0..n_out) are set.
 * prealloc: the outputs are created first from the run-time inference (as the executor does); else they
 * start NULL and the kernel allocates them. */
static inline tb_status toh_run_tensors(toh *t, tb_tensor *const *inputs, tb_tensor **outs, bool prealloc) {
  tb_value_type types[TOH_MAX];
  const tb_value_type *ptypes[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++) {
    if (!inputs[i]) continue;
    types[i] = toh_type_of(inputs[i]);
    ptypes[i] = &types[i];
  }
  const tb_kernel *k = tbt_kernel_find(t->graph, toh_node(t), ptypes, 0, 0);
  if (!k) fail_msg("no level-0 CPU kernel for %s", toh_node(t)->op_type);
  for (size_t i = 0; i < t->n_out; i++) outs[i] = NULL;
  if (prealloc) {
    tb_tensor *saved[TOH_MAX];
    memcpy(saved, t->in, sizeof saved);
    memcpy(t->in, inputs, t->n_in * sizeof *inputs);
    tb_status st = toh_infer_tensors(t, true);
    memcpy(t->in, saved, sizeof saved);
    if (st != TB_OK) return st;
    for (size_t o = 0; o < t->n_out; o++) {
      const tb_value_type *ty = &t->out_types[o];
      bool known = ty->has_shape;
      int64_t dims[TB_MAX_DIMS];
      for (size_t d = 0; known && d < ty->ndim; d++) known = (dims[d] = ty->dims[d].value) >= 0;
      if (known) TB_ASSERT_OK(tb_tensor_create(t->cpu, ty->dtype, ty->ndim, dims, &outs[o]));
    }
  }
  tb_kernel_ctx ctx = {t->graph, toh_node(t), t->n_in, (tb_tensor **)inputs, t->n_out, outs, t->cpu,
                       t->run_subgraph, t->exec, 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  return k->run(&ctx);
}

/* Run the reference kernel on t->in into t->out (earlier outputs destroyed first). */
static inline tb_status toh_run_owned(toh *t, bool prealloc) {
  toh_clear(t->out, TOH_MAX);
  return toh_run_tensors(t, t->in, t->out, prealloc);
}

/* Run the reference kernel on host inputs (dtype TOH_NONE: omitted); outs[i] receive the outputs, which
 * the caller frees with toh_free_outs. */
static inline tb_status toh_run(toh *t, const toh_in *ins, tb_tensor **outs) {
  tb_tensor *tensors[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++)
    if (ins[i].dtype != TOH_NONE) tensors[i] = toh_tensor(t, &ins[i]);
  tb_status st = toh_run_tensors(t, tensors, outs, false);
  toh_clear(tensors, t->n_in);
  return st;
}

static inline void toh_free_outs(tb_tensor **outs, size_t n) { toh_clear(outs, n); }

/* An inferred type has a shape of this rank and these dims. */
static inline void toh_assert_dims(const tb_value_type *v, size_t ndim, const int64_t *dims) {
  assert_true(v->has_shape);
  assert_int_equal(v->ndim, ndim);
  for (size_t i = 0; i < ndim; i++)
    if (v->dims[i].value != dims[i])
      fail_msg("dim %zu is %lld, expected %lld", i, (long long)v->dims[i].value, (long long)dims[i]);
}

/* An inferred type has this dtype and rank (< 0: an unknown rank) and these dims (-1 unknown). */
static inline void toh_assert_type(const tb_value_type *v, tb_dtype dtype, int ndim, const int64_t *dims) {
  assert_true(v->has_dtype);
  assert_int_equal(v->dtype, dtype);
  if (ndim < 0) {
    assert_false(v->has_shape);
    return;
  }
  toh_assert_dims(v, (size_t)ndim, dims);
}

/* A tensor has this shape. */
static inline void toh_assert_shape(const tb_tensor *x, size_t ndim, const int64_t *shape) {
  assert_non_null(x);
  assert_int_equal(tb_tensor_ndim(x), ndim);
  for (size_t i = 0; i < ndim; i++)
    if (tb_tensor_shape(x)[i] != shape[i])
      fail_msg("dim %zu is %lld, expected %lld", i, (long long)tb_tensor_shape(x)[i], (long long)shape[i]);
}

/* A tensor has this dtype and shape. */
static inline void toh_assert_tensor(const tb_tensor *x, tb_dtype dtype, size_t ndim, const int64_t *shape) {
  assert_non_null(x);
  assert_int_equal(tb_tensor_dtype(x), dtype);
  toh_assert_shape(x, ndim, shape);
}

#endif
