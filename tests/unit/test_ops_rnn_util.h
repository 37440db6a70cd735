/* Helpers for the rnn and control-flow operator tests: one node in a fresh graph at a given opset, its
 * infer function on given input types, and its reference kernel on host data through a kernel context
 * built by hand (tensors on the CPU backend). */
#ifndef TEST_OPS_RNN_UTIL_H
#define TEST_OPS_RNN_UTIL_H
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernels/kernel.h"
#include "model/ir.h"
#include "ops/op.h"
#include "test_util.h"

#define RT_INT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_INT, .i = (v)})
#define RT_FLOAT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_FLOAT, .f = (v)})
#define RT_STR(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_STRING, .s = (v), .s_len = strlen(v)})
#define RT_STRS(n, ...)                                                                                  \
  ((tb_attr){.name = (n), .type = TB_ATTR_STRINGS, .strings = (const char *const[]){__VA_ARGS__},        \
             .count = sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)})
#define RT_FLOATS(n, ...)                                                                                \
  ((tb_attr){.name = (n), .type = TB_ATTR_FLOATS, .floats = (const float[]){__VA_ARGS__},                \
             .count = sizeof((float[]){__VA_ARGS__}) / sizeof(float)})
#define RT_INTS(n, ...)                                                                                  \
  ((tb_attr){.name = (n), .type = TB_ATTR_INTS, .ints = (const int64_t[]){__VA_ARGS__},                  \
             .count = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})
#define RT_GRAPH(n, graph) ((tb_attr){.name = (n), .type = TB_ATTR_GRAPH, .g = (graph)})
#define RT_NONE ((tb_dtype)TB_DTYPE_COUNT) /* an omitted input */

typedef struct rt_node {
  tb_ir_model *model;
  tb_graph *graph;
  int node;
  size_t n_in, n_out;
  tb_backend *cpu;
  tb_subgraph_fn run_subgraph; /* for control-flow kernels */
  void *exec;
} rt_node;

/* An input for rt_run: dtype (RT_NONE: omitted), shape and packed data. */
typedef struct rt_in {
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  const void *data;
} rt_in;

static inline tb_node *rt_get(rt_node *t) { return &t->graph->nodes[t->node]; }

/* A model and an empty main graph; add the node with rt_add (subgraphs made in between with rt_subgraph). */
static inline void rt_begin(rt_node *t) {
  memset(t, 0, sizeof *t);
  t->model = tb_ir_model_new();
  assert_non_null(t->model);
  t->graph = tb_graph_new(t->model, NULL, "g");
  assert_non_null(t->graph);
  TB_ASSERT_OK(tb_backend_create("cpu", &t->cpu));
}

/* The node `op` at `opset`: n_in inputs (omitted where omit has bit i) and n_out outputs (omitted where
 * omit_out has bit i). Fails the test when no definition exists. */
static inline void rt_add(rt_node *t, const char *op, int opset, size_t n_in, unsigned omit, size_t n_out,
                          unsigned omit_out, const tb_attr *attrs, size_t n_attrs) {
  int ins[16], outs[16];
  char name[32];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = (omit >> i) & 1u ? -1 : tb_graph_value(t->graph, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = (omit_out >> i) & 1u ? -1 : tb_graph_value(t->graph, name);
  }
  t->node = tb_graph_add_node(t->graph, "n0", op, "", ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(t->node >= 0);
  rt_get(t)->opset = opset;
  rt_get(t)->def = tb_op_find("", op, opset);
  assert_non_null(rt_get(t)->def);
  t->n_in = n_in;
  t->n_out = n_out;
}

static inline void rt_setup(rt_node *t, const char *op, int opset, size_t n_in, unsigned omit, size_t n_out,
                            const tb_attr *attrs, size_t n_attrs) {
  rt_begin(t);
  rt_add(t, op, opset, n_in, omit, n_out, 0, attrs, n_attrs);
}

static inline void rt_teardown(rt_node *t) {
  tb_graph_destroy(t->graph);
  tb_ir_model_destroy(t->model);
  tb_backend_destroy(t->cpu);
}

/* A value type: dtype and dims (-1 unknown); ndim SIZE_MAX for an unknown rank. */
static inline tb_value_type rt_type(tb_dtype dtype, size_t ndim, const int64_t *dims) {
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

/* Run the node's infer with these input types (NULL entries: omitted). */
static inline tb_status rt_infer(rt_node *t, const tb_value_type *const *in, tb_value_type *out) {
  const tb_ir_tensor *values[16] = {0};
  tb_infer_ctx ctx = {t->graph, rt_get(t), t->n_in, in, values, t->n_out, out};
  for (size_t i = 0; i < t->n_out; i++) memset(&out[i], 0, sizeof out[i]);
  return rt_get(t)->def->infer(&ctx);
}

static inline void rt_assert_dims(const tb_value_type *v, tb_dtype dtype, size_t ndim, const int64_t *dims) {
  assert_true(v->has_dtype);
  assert_int_equal(v->dtype, dtype);
  assert_true(v->has_shape);
  assert_int_equal(v->ndim, ndim);
  for (size_t i = 0; i < ndim; i++)
    if (v->dims[i].value != dims[i])
      fail_msg("dim %zu is %lld, expected %lld", i, (long long)v->dims[i].value, (long long)dims[i]);
}

/* Run the reference kernel; outs[i] receive the outputs (free with rt_free_outs). */
static inline tb_status rt_run(rt_node *t, const rt_in *ins, tb_tensor **outs) {
  tb_tensor *tensors[16] = {0};
  tb_value_type types[16];
  const tb_value_type *ptypes[16] = {0};
  for (size_t i = 0; i < t->n_in; i++) {
    if (ins[i].dtype == RT_NONE) continue;
    TB_ASSERT_OK(tb_tensor_create(t->cpu, ins[i].dtype, ins[i].ndim, ins[i].shape, &tensors[i]));
    TB_ASSERT_OK(tb_tensor_copy_from_host(tensors[i], ins[i].data, tb_tensor_nbytes(tensors[i])));
    types[i] = rt_type(ins[i].dtype, ins[i].ndim, ins[i].shape);
    ptypes[i] = &types[i];
  }
  const tb_cpu_kernel *k = tb_cpu_kernel_find(t->graph, rt_get(t), ptypes, 0, 0);
  assert_non_null(k);
  for (size_t i = 0; i < t->n_out; i++) outs[i] = NULL;
  tb_kernel_ctx ctx = {t->graph, rt_get(t), t->n_in, tensors, t->n_out, outs, t->cpu, t->run_subgraph, t->exec, 1};
  tb_status st = k->run(&ctx);
  for (size_t i = 0; i < t->n_in; i++) tb_tensor_destroy(tensors[i]);
  return st;
}

static inline void rt_free_outs(tb_tensor **outs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    tb_tensor_destroy(outs[i]);
    outs[i] = NULL;
  }
}

static inline void rt_assert_shape(const tb_tensor *t, size_t ndim, const int64_t *shape) {
  assert_non_null(t);
  assert_int_equal(tb_tensor_ndim(t), ndim);
  for (size_t i = 0; i < ndim; i++)
    if (tb_tensor_shape(t)[i] != shape[i])
      fail_msg("dim %zu is %lld, expected %lld", i, (long long)tb_tensor_shape(t)[i], (long long)shape[i]);
}

/* Output t is f32 with this shape and these values within 1e-6 absolute + 1e-5 relative. */
static inline void rt_assert_f32(const tb_tensor *t, size_t ndim, const int64_t *shape, const double *want) {
  rt_assert_shape(t, ndim, shape);
  assert_int_equal(tb_tensor_dtype(t), TB_DTYPE_F32);
  const float *got = tb_tensor_host_data(t);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++)
    if (!(fabs((double)got[i] - want[i]) <= 1e-6 + 1e-5 * fabs(want[i])))
      fail_msg("element %lld: got %.9g, expected %.9g", (long long)i, (double)got[i], want[i]);
}

/* The f32 element i of t. */
static inline float rt_at(const tb_tensor *t, int64_t i) { return ((const float *)tb_tensor_host_data(t))[i]; }

static inline double rt_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

#endif
