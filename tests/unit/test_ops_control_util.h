/* Helpers for the control-flow operator tests: body graphs with typed inputs and outputs, and a stand-in
 * for the executor's run_subgraph that computes a few known bodies in C (chosen by the body's name), so
 * the If/Loop/Scan kernels are tested on their own: slicing, carrying, stacking, directions. */
#ifndef TEST_OPS_CONTROL_UTIL_H
#define TEST_OPS_CONTROL_UTIL_H
#include "test_ops_rnn_util.h"

/* A value type for a body's input or output: dtype, rank (SIZE_MAX unknown) and dims. */
typedef struct ct_port {
  tb_dtype dtype;
  size_t ndim;
  int64_t dims[4];
  tb_value_kind kind; /* TB_VALUE_TENSOR (0) unless said */
} ct_port;

static inline int *ct_list(tb_graph *g, size_t n) {
  int *list = tb_graph_alloc(g, (n ? n : 1) * sizeof *list);
  assert_non_null(list);
  return list;
}

/* A body graph under t's main graph with these inputs (in0, in1...) and outputs (o0, o1...). */
static inline tb_graph *ct_body(toh *t, const char *name, size_t n_in, const ct_port *in, size_t n_out, const ct_port *out) {
  tb_graph *b = tb_graph_new(t->model, t->graph, name);
  assert_non_null(b);
  b->inputs = ct_list(b, n_in);
  b->outputs = ct_list(b, n_out);
  char vname[32];
  for (size_t k = 0; k < n_in + n_out; k++) {
    const ct_port *p = k < n_in ? &in[k] : &out[k - n_in];
    snprintf(vname, sizeof vname, k < n_in ? "in%zu" : "o%zu", k < n_in ? k : k - n_in);
    int v = tb_graph_value(b, vname);
    assert_true(v >= 0);
    b->values[v].type = toh_type(p->dtype, p->ndim, p->dims);
    b->values[v].type.kind = p->kind;
    if (k < n_in) {
      b->values[v].is_input = true;
      b->inputs[b->n_inputs++] = v;
    } else {
      b->values[v].is_output = true;
      b->outputs[b->n_outputs++] = v;
    }
  }
  return b;
}

/* An f32 tensor on the kernel's backend with these values. */
static inline tb_status ct_f32(tb_kernel_ctx *ctx, size_t ndim, const int64_t *shape, const float *data, tb_tensor **out) {
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, ndim, shape, out);
  if (st == TB_OK) st = tb_tensor_copy_from_host(*out, data, tb_tensor_nbytes(*out));
  return st;
}

static inline tb_status ct_bool(tb_kernel_ctx *ctx, bool v, size_t numel, tb_tensor **out) {
  uint8_t bytes[4] = {v, v, v, v};
  int64_t shape[1] = {(int64_t)numel};
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_BOOL, 1, shape, out);
  if (st == TB_OK) st = tb_tensor_copy_from_host(*out, bytes, numel);
  return st;
}

static int ct_calls; /* bodies run by ct_run_subgraph */

/* The stand-in executor. Bodies:
 *   "then": () -> f32 [3] {1, 2, 3};  "else": () -> f32 [2] {5, 4}
 *   "acc" (Loop): (i, cond, s[1]) -> (i < 2, s + i, (s + i) * 10)
 *   "badcond" (Loop): (i, cond, s[1]) -> (bool [2], s, s)
 *   "cumsum" (Scan): (s[2], x[2]) -> (s + x, s + x) */
static inline tb_status ct_run_subgraph(tb_kernel_ctx *ctx, const tb_graph *body, size_t n_inputs, tb_tensor *const *inputs,
                                        size_t n_outputs, tb_tensor **outputs) {
  ct_calls++;
  const char *name = body->name;
  assert_int_equal(n_inputs, body->n_inputs);
  assert_int_equal(n_outputs, body->n_outputs);
  if (strcmp(name, "then") == 0) return ct_f32(ctx, 1, (const int64_t[]){3}, (const float[]){1, 2, 3}, &outputs[0]);
  if (strcmp(name, "else") == 0) return ct_f32(ctx, 1, (const int64_t[]){2}, (const float[]){5, 4}, &outputs[0]);
  if (strcmp(name, "acc") == 0 || strcmp(name, "badcond") == 0) {
    assert_int_equal(tb_tensor_dtype(inputs[0]), TB_DTYPE_I64);
    assert_int_equal(tb_tensor_ndim(inputs[0]), 0);
    assert_int_equal(tb_tensor_dtype(inputs[1]), TB_DTYPE_BOOL);
    int64_t i = *(const int64_t *)tb_tensor_host_data(inputs[0]);
    float s = *(const float *)tb_tensor_host_data(inputs[2]) + (strcmp(name, "acc") == 0 ? (float)i : 0.0f);
    float scan = s * 10.0f;
    tb_status st = ct_bool(ctx, i < 2, strcmp(name, "acc") == 0 ? 1 : 2, &outputs[0]);
    if (st == TB_OK) st = ct_f32(ctx, 1, (const int64_t[]){1}, &s, &outputs[1]);
    if (st == TB_OK) st = ct_f32(ctx, 1, (const int64_t[]){1}, &scan, &outputs[2]);
    return st;
  }
  if (strcmp(name, "cumsum") == 0) {
    assert_true(tb_tensor_is_contiguous(inputs[1]));
    const float *s = tb_tensor_host_data(inputs[0]), *x = tb_tensor_host_data(inputs[1]);
    float sum[2] = {s[0] + x[0], s[1] + x[1]};
    tb_status st = ct_f32(ctx, 1, (const int64_t[]){2}, sum, &outputs[0]);
    if (st == TB_OK) st = ct_f32(ctx, 1, (const int64_t[]){2}, sum, &outputs[1]);
    return st;
  }
  return tb_kernel_error(ctx, TB_ERR_INTERNAL, "test runner: unknown body '%s'", name);
}

#endif
