/* Helpers for the elementwise operator tests: a graph holding one node, its infer function run on given
 * input types, and its reference CPU kernel run on given host data. */
#ifndef TEST_OPS_ELEMENTWISE_UTIL_H
#define TEST_OPS_ELEMENTWISE_UTIL_H
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernels/kernel.h"
#include "model/ir.h"
#include "ops/op.h"
#include "test_util.h"

#define EWT_INT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_INT, .i = (v)})
#define EWT_FLOAT(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_FLOAT, .f = (v)})
#define EWT_STR(n, v) ((tb_attr){.name = (n), .type = TB_ATTR_STRING, .s = (v), .s_len = strlen(v)})
#define EWT_MAX 8

typedef struct ewt {
  tb_ir_model *model;
  tb_graph *graph;
  int node;
  size_t n_in, n_out;
  tb_backend *cpu;
  tb_tensor *out[EWT_MAX];
} ewt;

/* One input for ewt_run: dtype, shape and packed data; data NULL for an omitted input. `strided` makes
 * the input a view with every innermost element followed by a gap (a non-contiguous tensor). */
typedef struct ewt_in {
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  const void *data;
  bool strided;
} ewt_in;

static inline tb_node *ewt_node(ewt *t) { return &t->graph->nodes[t->node]; }

/* One node `op` at `opset` with n_in inputs (in0..; omitted where omit bit i is set) and n_out outputs. */
static inline void ewt_setup(ewt *t, const char *op, int opset, size_t n_in, unsigned omit, size_t n_out,
                             const tb_attr *attrs, size_t n_attrs) {
  memset(t, 0, sizeof *t);
  t->model = tb_ir_model_new();
  assert_non_null(t->model);
  t->graph = tb_graph_new(t->model, NULL, "g");
  assert_non_null(t->graph);
  int ins[EWT_MAX], outs[EWT_MAX];
  char name[32];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = (omit >> i) & 1u ? -1 : tb_graph_value(t->graph, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = tb_graph_value(t->graph, name);
  }
  t->node = tb_graph_add_node(t->graph, "n0", op, "", ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(t->node >= 0);
  ewt_node(t)->opset = opset;
  ewt_node(t)->def = tb_op_find("", op, opset);
  if (!ewt_node(t)->def) fail_msg("no definition of %s at opset %d", op, opset);
  t->n_in = n_in;
  t->n_out = n_out;
}

static inline void ewt_teardown(ewt *t) {
  for (size_t i = 0; i < EWT_MAX; i++) tb_tensor_destroy(t->out[i]);
  if (t->cpu) tb_backend_destroy(t->cpu);
  tb_graph_destroy(t->graph);
  tb_ir_model_destroy(t->model);
}

/* A value type: dims -1 unknown; ndim SIZE_MAX for an unknown rank. */
static inline tb_value_type ewt_type(tb_dtype dtype, size_t ndim, const int64_t *dims) {
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

/* Run the node's infer on these input types (NULL: omitted) and known values (NULL array: none). */
static inline tb_status ewt_infer_values(ewt *t, const tb_value_type *const *in, const tb_ir_tensor *const *values,
                                         tb_value_type *out) {
  const tb_ir_tensor *none[EWT_MAX] = {0};
  tb_infer_ctx ctx = {t->graph, ewt_node(t), t->n_in, in, values ? values : none, t->n_out, out};
  for (size_t i = 0; i < t->n_out; i++) memset(&out[i], 0, sizeof out[i]);
  return ewt_node(t)->def->infer(&ctx);
}
static inline tb_status ewt_infer(ewt *t, const tb_value_type *const *in, tb_value_type *out) {
  return ewt_infer_values(t, in, NULL, out);
}

static inline void ewt_assert_dims(const tb_value_type *v, size_t ndim, const int64_t *dims) {
  assert_true(v->has_shape);
  assert_int_equal(v->ndim, ndim);
  for (size_t i = 0; i < ndim; i++)
    if (v->dims[i].value != dims[i])
      fail_msg("dim %zu is %lld, expected %lld", i, (long long)v->dims[i].value, (long long)dims[i]);
}

/* A CPU tensor holding an input's data (a strided view when asked). */
static inline tb_tensor *ewt_tensor(ewt *t, const ewt_in *in) {
  tb_tensor *x;
  if (!in->strided) {
    TB_ASSERT_OK(tb_tensor_create(t->cpu, in->dtype, in->ndim, in->shape, &x));
    TB_ASSERT_OK(tb_tensor_copy_from_host(x, in->data, tb_tensor_nbytes(x)));
    return x;
  }
  /* Base with the innermost dim doubled; the view takes every other element. */
  int64_t base_shape[TB_MAX_DIMS], strides[TB_MAX_DIMS];
  assert_true(in->ndim > 0);
  memcpy(base_shape, in->shape, in->ndim * sizeof(int64_t));
  base_shape[in->ndim - 1] *= 2;
  tb_tensor *base, *view;
  TB_ASSERT_OK(tb_tensor_create(t->cpu, in->dtype, in->ndim, base_shape, &base));
  int64_t s = 1;
  for (size_t d = in->ndim; d-- > 0;) {
    strides[d] = d == in->ndim - 1 ? 2 : s;
    s *= base_shape[d];
  }
  TB_ASSERT_OK(tb_tensor_view(base, in->ndim, in->shape, strides, 0, &view));
  tb_tensor_destroy(base);
  TB_ASSERT_OK(tb_tensor_copy_from_host(view, in->data, tb_tensor_nbytes(view)));
  return view;
}

/* Run the reference kernel (level 0) on the inputs; outputs land in t->out[]. */
static inline tb_status ewt_run(ewt *t, const ewt_in *ins) {
  if (!t->cpu) TB_ASSERT_OK(tb_backend_create("cpu", &t->cpu));
  tb_tensor *tensors[EWT_MAX] = {0};
  tb_value_type types[EWT_MAX];
  const tb_value_type *ptypes[EWT_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++) {
    if (!ins[i].data) continue;
    tensors[i] = ewt_tensor(t, &ins[i]);
    types[i] = ewt_type(ins[i].dtype, ins[i].ndim, ins[i].shape);
    ptypes[i] = &types[i];
  }
  const tb_cpu_kernel *k = tb_cpu_kernel_find(t->graph, ewt_node(t), ptypes, 0, 0);
  if (!k) fail_msg("no level-0 kernel for %s", ewt_node(t)->op_type);
  for (size_t i = 0; i < EWT_MAX; i++) {
    tb_tensor_destroy(t->out[i]);
    t->out[i] = NULL;
  }
  tb_kernel_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.graph = t->graph;
  ctx.node = ewt_node(t);
  ctx.n_inputs = t->n_in;
  ctx.inputs = tensors;
  ctx.n_outputs = t->n_out;
  ctx.outputs = t->out;
  ctx.backend = t->cpu;
  ctx.threads = 1;
  tb_status st = k->run(&ctx);
  for (size_t i = 0; i < t->n_in; i++) tb_tensor_destroy(tensors[i]);
  return st;
}

/* Output i's shape and packed values (as f64 via tb_convert, for any dtype). */
static inline void ewt_assert_out_shape(ewt *t, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape) {
  tb_tensor *o = t->out[i];
  assert_non_null(o);
  assert_int_equal(tb_tensor_dtype(o), dtype);
  assert_int_equal(tb_tensor_ndim(o), ndim);
  for (size_t d = 0; d < ndim; d++) assert_int_equal(tb_tensor_shape(o)[d], shape[d]);
}

/* Output i equals want (count values of the output's own dtype, packed), bit for bit. */
static inline void ewt_assert_bytes(ewt *t, size_t i, const void *want, size_t count) {
  tb_tensor *o = t->out[i];
  assert_non_null(o);
  assert_int_equal(tb_tensor_numel(o), count);
  unsigned char got[4096];
  size_t bytes = tb_tensor_nbytes(o);
  assert_true(bytes <= sizeof got);
  TB_ASSERT_OK(tb_tensor_copy_to_host(o, got, bytes));
  assert_memory_equal(got, want, bytes);
}

/* Output i (any dtype) close to want: |got - want| <= tol * max(1, |want|); NaN matches NaN. */
static inline void ewt_assert_near(ewt *t, size_t i, const double *want, size_t count, double tol) {
  tb_tensor *o = t->out[i];
  assert_non_null(o);
  assert_int_equal(tb_tensor_numel(o), count);
  unsigned char raw[8192];
  double got[1024];
  assert_true(tb_tensor_nbytes(o) <= sizeof raw && count <= 1024);
  TB_ASSERT_OK(tb_tensor_copy_to_host(o, raw, tb_tensor_nbytes(o)));
  TB_ASSERT_OK(tb_convert(tb_tensor_dtype(o), raw, TB_DTYPE_F64, got, count, true));
  for (size_t k = 0; k < count; k++) {
    if (isnan(want[k]) && isnan(got[k])) continue;
    if (isinf(want[k]) && got[k] == want[k]) continue;
    double lim = tol * (fabs(want[k]) > 1 ? fabs(want[k]) : 1);
    if (!(fabs(got[k] - want[k]) <= lim)) fail_msg("element %zu is %.9g, expected %.9g", k, got[k], want[k]);
  }
}

#endif
