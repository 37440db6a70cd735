/* Helpers for the nn operator tests: one node in a fresh graph, its infer function run on given input
 * types, and its reference kernel run on given host data (f32 unless said). */
#ifndef TEST_OPS_NN_UTIL_H
#define TEST_OPS_NN_UTIL_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernels/kernel.h"
#include "model/ir.h"
#include "ops/op.h"
#include "test_util.h"

#define NNT_INT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_INT, .i = (v)})
#define NNT_FLOAT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_FLOAT, .f = (v)})
#define NNT_STR(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_STRING, .s = (v), .s_len = strlen(v)})
#define NNT_INTS(n, ...)                                                                              \
  ((tb_attr){.name = (n), .type = TB_ATTR_INTS, .ints = (const int64_t[]){__VA_ARGS__},               \
             .count = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)})
#define NNT_NONE ((tb_dtype)TB_DTYPE_COUNT) /* an omitted input */

typedef struct nnt {
  tb_ir_model *model;
  tb_graph *graph;
  int node;
  size_t n_in, n_out;
  tb_backend *cpu;
} nnt;

/* An input for nnt_run: dtype (NNT_NONE: omitted), shape and packed data. */
typedef struct nnt_in {
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  const void *data;
} nnt_in;

static inline tb_node *nnt_get(nnt *t) { return &t->graph->nodes[t->node]; }

/* A graph with one node `op` at `opset` with n_in inputs (omitted where present[i] is false, all present
 * when present is NULL) and n_out outputs. */
static inline void nnt_setup(nnt *t, const char *op, int opset, size_t n_in, const bool *present, size_t n_out,
                             const tb_attr *attrs, size_t n_attrs) {
  memset(t, 0, sizeof *t);
  t->model = tb_ir_model_new();
  assert_non_null(t->model);
  t->graph = tb_graph_new(t->model, NULL, "g");
  assert_non_null(t->graph);
  int ins[16], outs[16];
  char name[32];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = present && !present[i] ? -1 : tb_graph_value(t->graph, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = tb_graph_value(t->graph, name);
  }
  t->node = tb_graph_add_node(t->graph, "n0", op, "", ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(t->node >= 0);
  nnt_get(t)->opset = opset;
  nnt_get(t)->def = tb_op_find("", op, opset);
  assert_non_null(nnt_get(t)->def);
  t->n_in = n_in;
  t->n_out = n_out;
}

static inline void nnt_teardown(nnt *t) {
  if (t->cpu) tb_backend_destroy(t->cpu);
  tb_graph_destroy(t->graph);
  tb_ir_model_destroy(t->model);
}

/* A value type: dtype and dims (-1 unknown); ndim SIZE_MAX for an unknown rank. */
static inline tb_value_type nnt_type(tb_dtype dtype, size_t ndim, const int64_t *dims) {
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
static inline tb_status nnt_infer(nnt *t, const tb_value_type *const *in, tb_value_type *out) {
  const tb_ir_tensor *values[16] = {0};
  tb_infer_ctx ctx = {t->graph, nnt_get(t), t->n_in, in, values, t->n_out, out};
  for (size_t i = 0; i < t->n_out; i++) memset(&out[i], 0, sizeof out[i]);
  return nnt_get(t)->def->infer(&ctx);
}

/* Infer with one f32 input of a given shape (and up to two more), checking the output's shape. */
static inline void nnt_assert_shape(const tb_value_type *v, size_t ndim, const int64_t *dims) {
  assert_true(v->has_shape);
  assert_int_equal(v->ndim, ndim);
  for (size_t i = 0; i < ndim; i++) {
    if (v->dims[i].value != dims[i]) fail_msg("dim %zu is %lld, expected %lld", i, (long long)v->dims[i].value, (long long)dims[i]);
  }
}

/* Run the reference kernel; outs[i] receive the outputs (caller destroys with nnt_free_outs). */
static inline tb_status nnt_run(nnt *t, const nnt_in *ins, tb_tensor **outs) {
  if (!t->cpu) TB_ASSERT_OK(tb_backend_create("cpu", &t->cpu));
  tb_tensor *tensors[16] = {0};
  tb_value_type types[16];
  const tb_value_type *ptypes[16] = {0};
  for (size_t i = 0; i < t->n_in; i++) {
    if (ins[i].dtype == NNT_NONE) continue;
    TB_ASSERT_OK(tb_tensor_create(t->cpu, ins[i].dtype, ins[i].ndim, ins[i].shape, &tensors[i]));
    TB_ASSERT_OK(tb_tensor_copy_from_host(tensors[i], ins[i].data, tb_tensor_nbytes(tensors[i])));
    types[i] = nnt_type(ins[i].dtype, ins[i].ndim, ins[i].shape);
    ptypes[i] = &types[i];
  }
  const tb_cpu_kernel *k = tb_cpu_kernel_find(t->graph, nnt_get(t), ptypes, 0, 0);
  assert_non_null(k);
  for (size_t i = 0; i < t->n_out; i++) outs[i] = NULL;
  tb_kernel_ctx ctx = {t->graph, nnt_get(t), t->n_in, tensors, t->n_out, outs, t->cpu, NULL, NULL, 1};
  tb_status st = k->run(&ctx);
  for (size_t i = 0; i < t->n_in; i++) tb_tensor_destroy(tensors[i]);
  return st;
}

static inline void nnt_free_outs(tb_tensor **outs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    tb_tensor_destroy(outs[i]);
    outs[i] = NULL;
  }
}

/* Output t has this shape and (as f32 / converted to f64) these values within 1e-5 + 1e-4 relative. */
static inline void nnt_assert_f32(const tb_tensor *t, size_t ndim, const int64_t *shape, const float *want) {
  assert_non_null(t);
  assert_int_equal(tb_tensor_dtype(t), TB_DTYPE_F32);
  assert_int_equal(tb_tensor_ndim(t), ndim);
  for (size_t i = 0; i < ndim; i++) assert_int_equal(tb_tensor_shape(t)[i], shape[i]);
  const float *got = tb_tensor_host_data(t);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++) {
    if (isnan(want[i]) && isnan(got[i])) continue;
    if (!(fabs((double)got[i] - (double)want[i]) <= 1e-5 + 1e-4 * fabs((double)want[i])))
      fail_msg("element %lld: got %.9g, expected %.9g", (long long)i, (double)got[i], (double)want[i]);
  }
}

static inline void nnt_assert_i64(const tb_tensor *t, size_t ndim, const int64_t *shape, const int64_t *want) {
  assert_non_null(t);
  assert_int_equal(tb_tensor_dtype(t), TB_DTYPE_I64);
  assert_int_equal(tb_tensor_ndim(t), ndim);
  for (size_t i = 0; i < ndim; i++) assert_int_equal(tb_tensor_shape(t)[i], shape[i]);
  const int64_t *got = tb_tensor_host_data(t);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++) assert_int_equal(got[i], want[i]);
}

#endif
