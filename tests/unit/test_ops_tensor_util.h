/* Helpers for the tensor-family operator tests: one node in a graph, its inputs as CPU tensors, its
 * inference run (with the values of the inputs the op declares it needs) and its reference kernel run,
 * and checks on the outputs' shapes and elements. */
#ifndef TB_TEST_OPS_TENSOR_UTIL_H
#define TB_TEST_OPS_TENSOR_UTIL_H
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/kernel.h"
#include "model/ir.h"
#include "ops/op.h"
#include "test_tensor_util.h"

enum { TTN_MAX_IN = 8, TTN_MAX_OUT = 8 };

typedef struct ttn {
  tb_backend *cpu;
  tb_ir_model *model;
  tb_graph *g;
  tb_node *node;
  size_t n_in, n_out;
  tb_tensor *in[TTN_MAX_IN];
  tb_tensor *out[TTN_MAX_OUT];
  tb_value_type out_types[TTN_MAX_OUT];
} ttn;

/* A node `op` at `opset` with n_in inputs (names in0..) and n_out outputs, with these attributes. An
 * input left without a tensor (ttn_input not called) is an omitted optional input. */
static inline ttn *ttn_new(tb_backend *cpu, const char *op, int opset, size_t n_in, size_t n_out, const tb_attr *attrs,
                           size_t n_attrs) {
  ttn *t = calloc(1, sizeof *t);
  assert_non_null(t);
  t->cpu = cpu;
  t->model = tb_ir_model_new();
  assert_non_null(t->model);
  t->g = tb_graph_new(t->model, NULL, "g");
  assert_non_null(t->g);
  int ins[TTN_MAX_IN], outs[TTN_MAX_OUT];
  char name[32];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = tb_graph_value(t->g, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = tb_graph_value(t->g, name);
  }
  int k = tb_graph_add_node(t->g, "n0", op, "", ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(k >= 0);
  t->node = &t->g->nodes[k];
  t->node->opset = opset;
  t->node->def = tb_op_find("", op, opset);
  t->n_in = n_in;
  t->n_out = n_out;
  return t;
}

static inline void ttn_free(ttn *t) {
  for (size_t i = 0; i < TTN_MAX_IN; i++) tb_tensor_destroy(t->in[i]);
  for (size_t i = 0; i < TTN_MAX_OUT; i++) tb_tensor_destroy(t->out[i]);
  tb_graph_destroy(t->g);
  tb_ir_model_destroy(t->model);
  free(t);
}

/* Input i: a CPU tensor with these elements (packed). */
static inline void ttn_input(ttn *t, size_t i, tb_dtype dt, size_t ndim, const int64_t *shape, const void *data) {
  assert_int_equal(tb_tensor_create(t->cpu, dt, ndim, shape, &t->in[i]), TB_OK);
  if (tb_tensor_nbytes(t->in[i])) assert_int_equal(tb_tensor_copy_from_host(t->in[i], data, tb_tensor_nbytes(t->in[i])), TB_OK);
}

static inline void ttn_type_of(const tb_tensor *x, tb_value_type *ty) {
  memset(ty, 0, sizeof *ty);
  ty->kind = TB_VALUE_TENSOR;
  ty->has_dtype = true;
  ty->dtype = tb_tensor_dtype(x);
  ty->has_shape = true;
  ty->ndim = tb_tensor_ndim(x);
  for (size_t d = 0; d < ty->ndim; d++) ty->dims[d] = (tb_dim){tb_tensor_shape(x)[d], -1};
}

/* Inference on explicit input types (NULL: omitted) and values (NULL: unknown); outputs in out_types. */
static inline tb_status ttn_infer_types(ttn *t, const tb_value_type *const *types, const tb_ir_tensor *const *values) {
  assert_non_null(t->node->def);
  memset(t->out_types, 0, sizeof t->out_types);
  tb_infer_ctx ctx = {t->g, t->node, t->n_in, types, values, t->n_out, t->out_types};
  return t->node->def->infer(&ctx);
}

/* Inference with every input's concrete shape, and the values of the op's value inputs (as at run time);
 * with_values false gives the prepare-time case where those values are unknown. */
static inline tb_status ttn_infer(ttn *t, bool with_values) {
  tb_value_type types[TTN_MAX_IN];
  const tb_value_type *in[TTN_MAX_IN];
  tb_ir_tensor vals[TTN_MAX_IN];
  const tb_ir_tensor *values[TTN_MAX_IN];
  for (size_t i = 0; i < t->n_in; i++) {
    in[i] = NULL;
    values[i] = NULL;
    if (!t->in[i]) continue;
    ttn_type_of(t->in[i], &types[i]);
    in[i] = &types[i];
    if (with_values && t->node->def && (t->node->def->value_inputs & (1u << i))) {
      memset(&vals[i], 0, sizeof vals[i]);
      vals[i].dtype = types[i].dtype;
      vals[i].ndim = types[i].ndim;
      memcpy(vals[i].dims, tb_tensor_shape(t->in[i]), vals[i].ndim * sizeof(int64_t));
      vals[i].data = tb_tensor_host_data(t->in[i]);
      vals[i].nbytes = tb_tensor_nbytes(t->in[i]);
      values[i] = &vals[i];
    }
  }
  return ttn_infer_types(t, in, values);
}

/* Run the reference kernel. prealloc: outputs allocated first from the run-time inference (as the
 * executor does); else the kernel allocates them. */
static inline tb_status ttn_run_mode(ttn *t, bool prealloc) {
  for (size_t i = 0; i < TTN_MAX_OUT; i++) {
    tb_tensor_destroy(t->out[i]);
    t->out[i] = NULL;
  }
  tb_value_type types[TTN_MAX_IN];
  const tb_value_type *in[TTN_MAX_IN];
  for (size_t i = 0; i < t->n_in; i++) {
    in[i] = NULL;
    if (t->in[i]) {
      ttn_type_of(t->in[i], &types[i]);
      in[i] = &types[i];
    }
  }
  const tb_cpu_kernel *k = tb_cpu_kernel_find(t->g, t->node, in, 0, 0);
  if (!k) fail_msg("no CPU kernel for %s", t->node->op_type);
  if (prealloc) {
    tb_status st = ttn_infer(t, true);
    if (st != TB_OK) return st;
    for (size_t o = 0; o < t->n_out; o++) {
      const tb_value_type *ty = &t->out_types[o];
      bool known = ty->has_shape;
      int64_t dims[TB_MAX_DIMS];
      for (size_t d = 0; known && d < ty->ndim; d++) known = (dims[d] = ty->dims[d].value) >= 0;
      if (known) assert_int_equal(tb_tensor_create(t->cpu, ty->dtype, ty->ndim, dims, &t->out[o]), TB_OK);
    }
  }
  tb_kernel_ctx ctx = {t->g, t->node, t->n_in, t->in, t->n_out, t->out, t->cpu, NULL, NULL, 1};
  return k->run(&ctx);
}

static inline tb_status ttn_run(ttn *t) {
  tb_status st = ttn_run_mode(t, true);
  if (st != TB_OK) return st;
  /* The same results when the kernel allocates its outputs. */
  size_t sizes[TTN_MAX_OUT];
  void *copies[TTN_MAX_OUT];
  for (size_t o = 0; o < t->n_out; o++) {
    copies[o] = NULL;
    if (!t->out[o]) continue;
    sizes[o] = tb_tensor_nbytes(t->out[o]);
    copies[o] = malloc(sizes[o] + 1);
    if (sizes[o]) memcpy(copies[o], tb_tensor_host_data(t->out[o]), sizes[o]);
  }
  st = ttn_run_mode(t, false);
  for (size_t o = 0; o < t->n_out; o++) {
    if (!copies[o]) continue;
    if (st == TB_OK) {
      assert_int_equal(tb_tensor_nbytes(t->out[o]), sizes[o]);
      if (sizes[o]) assert_memory_equal(tb_tensor_host_data(t->out[o]), copies[o], sizes[o]);
    }
    free(copies[o]);
  }
  return st;
}

/* Output o of the last run has this dtype and shape. */
static inline void ttn_check_shape(const ttn *t, size_t o, tb_dtype dt, size_t ndim, const int64_t *shape) {
  assert_non_null(t->out[o]);
  assert_int_equal(tb_tensor_dtype(t->out[o]), dt);
  assert_int_equal(tb_tensor_ndim(t->out[o]), ndim);
  for (size_t d = 0; d < ndim; d++) assert_int_equal(tb_tensor_shape(t->out[o])[d], shape[d]);
}

/* Output o: dtype, shape and packed elements. */
static inline void ttn_check(const ttn *t, size_t o, tb_dtype dt, size_t ndim, const int64_t *shape, const void *data) {
  ttn_check_shape(t, o, dt, ndim, shape);
  size_t n = tb_tensor_nbytes(t->out[o]);
  if (n) assert_memory_equal(tb_tensor_host_data(t->out[o]), data, n);
}

/* Inferred output o: rank (or -1 for unknown rank) and dims (-1 unknown). */
static inline void ttn_check_type(const ttn *t, size_t o, tb_dtype dt, int ndim, const int64_t *dims) {
  const tb_value_type *ty = &t->out_types[o];
  assert_true(ty->has_dtype);
  assert_int_equal(ty->dtype, dt);
  if (ndim < 0) {
    assert_false(ty->has_shape);
    return;
  }
  assert_true(ty->has_shape);
  assert_int_equal(ty->ndim, (size_t)ndim);
  for (int d = 0; d < ndim; d++) assert_int_equal(ty->dims[d].value, dims[d]);
}

/* Attribute builders. */
static inline tb_attr ttn_int(const char *name, int64_t v) {
  tb_attr a = {0};
  a.name = name;
  a.type = TB_ATTR_INT;
  a.i = v;
  return a;
}
static inline tb_attr ttn_float(const char *name, float v) {
  tb_attr a = {0};
  a.name = name;
  a.type = TB_ATTR_FLOAT;
  a.f = v;
  return a;
}
static inline tb_attr ttn_ints(const char *name, const int64_t *v, size_t n) {
  tb_attr a = {0};
  a.name = name;
  a.type = TB_ATTR_INTS;
  a.ints = v;
  a.count = n;
  return a;
}
static inline tb_attr ttn_floats(const char *name, const float *v, size_t n) {
  tb_attr a = {0};
  a.name = name;
  a.type = TB_ATTR_FLOATS;
  a.floats = v;
  a.count = n;
  return a;
}
static inline tb_attr ttn_string(const char *name, const char *s) {
  tb_attr a = {0};
  a.name = name;
  a.type = TB_ATTR_STRING;
  a.s = s;
  a.s_len = strlen(s);
  return a;
}
static inline tb_attr ttn_tensor(const char *name, tb_ir_tensor *tensor) {
  tb_attr a = {0};
  a.name = name;
  a.type = TB_ATTR_TENSOR;
  a.t = tensor;
  return a;
}

#define TTN_SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define TTN_F32(...) ((const float[]){__VA_ARGS__})
#define TTN_I64(...) ((const int64_t[]){__VA_ARGS__})
#define TTN_I32(...) ((const int32_t[]){__VA_ARGS__})

#endif
