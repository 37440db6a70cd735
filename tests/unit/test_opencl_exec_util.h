/* Running one node on the OpenCL device (PoCL's opencl:0 here) against the CPU's level-0 reference kernel:
 * the node built with the op harness (ONNX or "tb" domain), inputs copied to the device (value inputs such
 * as Reshape's shape stay on the CPU, as the executor gives them), the backend's find_kernel, prepare, run,
 * read back, and an element-wise comparison |dev - ref| <= atol + rtol |ref|. */
#ifndef TB_TEST_OPENCL_EXEC_UTIL_H
#define TB_TEST_OPENCL_EXEC_UTIL_H
#include <math.h>
#include "backend/backend_impl.h"
#include "test_op_harness.h"

#define CLX_ATOL 1e-5
#define CLX_RTOL 1e-4

static tb_backend *clx_dev; /* opencl:0, opened by clx_setup */

static inline int clx_setup(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("TBT_FAKE_OPENCL");
  setenv("TB_CACHE_DIR", "off", 1);
  tb_status s = tb_backend_create("opencl:0", &clx_dev);
  if (s != TB_OK) fail_msg("opencl:0 (PoCL) could not be opened: %s", tb_last_error());
  return 0;
}

static inline int clx_teardown(void **state) {
  (void)state;
  tb_backend_destroy(clx_dev);
  clx_dev = NULL;
  return 0;
}

/* Deterministic values in [lo, hi). */
static inline void clx_fill(float *v, size_t n, unsigned seed, float lo, float hi) {
  uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v[i] = lo + (hi - lo) * (float)((x >> 11) % 1000000) / 1e6f;
  }
}

/* A "tb"-domain node (the O1 passes' fused ops) in a fresh harness. */
static inline void clx_tb_node(toh *t, const char *op, size_t n_in, unsigned omit, const tb_attr *attrs, size_t n_attrs) {
  toh_begin(t, NULL);
  int ins[TOH_MAX], outs[1];
  char name[16];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = (omit >> i) & 1u ? -1 : tb_graph_value(t->graph, name);
  }
  outs[0] = tb_graph_value(t->graph, "out0");
  t->node = tb_graph_add_node(t->graph, "n0", op, "tb", ins, n_in, outs, 1, attrs, n_attrs);
  assert_true(t->node >= 0);
  toh_node(t)->opset = 1;
  toh_node(t)->def = tb_op_find("tb", op, 1);
  if (!toh_node(t)->def) fail_msg("no definition of tb::%s", op);
  t->n_in = n_in;
  t->n_out = 1;
}

/* A tensor's elements as float32 on the host (malloc'd). */
static inline float *clx_read(const tb_tensor *x) {
  size_t n = (size_t)tb_tensor_numel(x), bytes = tb_tensor_nbytes(x);
  float *f = malloc((n ? n : 1) * sizeof *f);
  void *raw = malloc(bytes ? bytes : 1);
  assert_non_null(f);
  assert_non_null(raw);
  if (bytes) TB_ASSERT_OK(tb_tensor_copy_to_host(x, raw, bytes));
  TB_ASSERT_OK(tb_convert(tb_tensor_dtype(x), raw, TB_DTYPE_F32, f, n, true));
  free(raw);
  return f;
}

/* Run the node on the device with these inputs; the outputs are preallocated (prealloc) or left to the
 * kernel. Returns the status of prepare + run; outputs in outs (device tensors). */
static inline tb_status clx_run_device(toh *t, tb_tensor *const *cpu_in, tb_tensor **outs, bool prealloc, const tb_kernel **kernel) {
  tb_tensor *dev_in[TOH_MAX] = {0};
  tb_value_type types[TOH_MAX];
  const tb_value_type *ptypes[TOH_MAX] = {0};
  const tb_node *n = toh_node(t);
  for (size_t i = 0; i < t->n_in; i++) {
    if (!cpu_in[i]) continue;
    types[i] = toh_type_of(cpu_in[i]);
    ptypes[i] = &types[i];
    if ((n->def->value_inputs >> i) & 1u) continue;
    TB_ASSERT_OK(tb_tensor_create(clx_dev, tb_tensor_dtype(cpu_in[i]), tb_tensor_ndim(cpu_in[i]), tb_tensor_shape(cpu_in[i]), &dev_in[i]));
    TB_ASSERT_OK(tb_tensor_copy(dev_in[i], cpu_in[i]));
  }
  const tb_kernel *k = tbt_backend_kernel_find(clx_dev, t->graph, n, ptypes);
  if (kernel) *kernel = k;
  if (!k) fail_msg("opencl:0 has no kernel for %s", n->op_type);
  assert_int_equal(k->level, 0);
  assert_int_equal(k->cpu_features, 0);
  for (size_t o = 0; o < t->n_out; o++) outs[o] = NULL;
  tb_tensor *in_all[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++) in_all[i] = dev_in[i] ? dev_in[i] : cpu_in[i];
  if (prealloc) {
    tb_tensor *saved[TOH_MAX];
    memcpy(saved, t->in, sizeof saved);
    memcpy(t->in, cpu_in, t->n_in * sizeof *cpu_in);
    tb_status st = toh_infer_tensors(t, true);
    memcpy(t->in, saved, sizeof saved);
    TB_ASSERT_OK(st);
    for (size_t o = 0; o < t->n_out; o++) {
      int64_t dims[TB_MAX_DIMS];
      for (size_t d = 0; d < t->out_types[o].ndim; d++) dims[d] = t->out_types[o].dims[d].value;
      TB_ASSERT_OK(tb_tensor_create(clx_dev, t->out_types[o].dtype, t->out_types[o].ndim, dims, &outs[o]));
    }
  }
  tb_kernel_ctx ctx = {t->graph, n, t->n_in, in_all, 0, NULL, clx_dev, NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&ctx, t->graph, n, ptypes);
  void *state = NULL;
  tb_status st = k->prepare ? k->prepare(&ctx, &state) : TB_OK;
  ctx.n_outputs = t->n_out;
  ctx.outputs = outs;
  ctx.state = state;
  if (st == TB_OK) st = k->run(&ctx);
  if (st == TB_OK) st = tb_backend_synchronize(clx_dev);
  if (k->release) k->release(state);
  toh_clear(dev_in, TOH_MAX);
  return st;
}

/* The node on the device vs the reference, every output, with the stated tolerance. */
static inline void clx_check_tol(toh *t, const toh_in *ins, bool prealloc, double atol, double rtol) {
  tb_tensor *cpu_in[TOH_MAX] = {0}, *ref[TOH_MAX] = {0}, *dev[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++)
    if (ins[i].dtype != TOH_NONE) cpu_in[i] = toh_tensor(t, &ins[i]);
  TB_ASSERT_OK(toh_run_tensors(t, cpu_in, ref, true));
  tb_status st = clx_run_device(t, cpu_in, dev, prealloc, NULL);
  if (st != TB_OK) fail_msg("%s on opencl:0: %s", toh_node(t)->op_type, tb_last_error());
  for (size_t o = 0; o < t->n_out; o++) {
    if (!ref[o]) continue;
    assert_non_null(dev[o]);
    assert_int_equal(tb_tensor_dtype(dev[o]), tb_tensor_dtype(ref[o]));
    toh_assert_shape(dev[o], tb_tensor_ndim(ref[o]), tb_tensor_shape(ref[o]));
    float *a = clx_read(dev[o]), *b = clx_read(ref[o]);
    for (int64_t i = 0; i < tb_tensor_numel(ref[o]); i++) {
      bool both_nan = isnan(a[i]) && isnan(b[i]);
      if (!both_nan && !(fabs((double)a[i] - (double)b[i]) <= atol + rtol * fabs((double)b[i])))
        fail_msg("%s output %zu element %lld: device %.9g, reference %.9g", toh_node(t)->op_type, o, (long long)i, a[i], b[i]);
    }
    free(a);
    free(b);
  }
  toh_clear(cpu_in, TOH_MAX);
  toh_clear(ref, TOH_MAX);
  toh_clear(dev, TOH_MAX);
}

static inline void clx_check(toh *t, const toh_in *ins) {
  clx_check_tol(t, ins, true, CLX_ATOL, CLX_RTOL);
  clx_check_tol(t, ins, false, CLX_ATOL, CLX_RTOL);
}

#endif
