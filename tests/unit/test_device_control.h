/* For the device backends' control-flow tests (test_opencl_exec_control.c, test_vulkan_exec_control.c,
 * test_cuda_control.c): an If, a Loop and a Scan model whose bodies use ops every device backend has kernels for
 * (float32 Add, Sub, Mul, Neg, Relu), and dctl_compare, which prepares a
 * model on the CPU at O0 and on the device, runs both on the same inputs, compares every output (floats within
 * 1e-6 + 1e-5 |cpu|, other dtypes bit for bit) and checks through the profile that every node of the graph and
 * every body node that ran was placed on the device (none on the CPU). */
#ifndef TB_TEST_DEVICE_CONTROL_H
#define TB_TEST_DEVICE_CONTROL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pass_test.h"
#include "test_op_harness.h"
#include "test_engine_util.h"
#include "test_util.h"

/* One input of a run: its name, dtype, dims and host data. */
typedef struct dctl_input {
  const char *name;
  tb_dtype dtype;
  size_t ndim;
  int64_t dims[TB_MAX_DIMS];
  const void *data;
} dctl_input;

/* The input on the CPU backend. */
static inline tb_tensor *dctl_make_input(tb_backend *cpu, const dctl_input *f) {
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, f->dtype, f->ndim, f->dims, &t));
  size_t bytes = tb_tensor_nbytes(t);
  if (bytes) TB_ASSERT_OK(tb_tensor_copy_from_host(t, f->data, bytes));
  return t;
}

/* Deterministic floats in [-2, 2). */
static inline void dctl_fill(float *v, size_t n, unsigned seed) {
  uint32_t s = seed * 747796405u + 2891336453u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    v[i] = (float)(s >> 16) / 16384.0f - 2.0f;
  }
}

static inline void dctl_graph_attr(tb_graph *g, int node, const char *name, tb_graph *sub) {
  pt_attr(g, node, name, TB_ATTR_GRAPH)->g = sub;
}

/* y = If(cond, then: Relu(x * x) + w, else: Neg(x * x) * w); x [2, 7], w an outer weight [2, 7]. */
static inline tb_model *dctl_if_model(void) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t d[2] = {2, 7};
  static float w[14];
  dctl_fill(w, 14, 21);
  tbt_input(g, "x", TB_DTYPE_F32, 2, d, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_const_f32(g, "w", 2, d, w);
  tbt_node(g, "Mul", "square", "x,x", "xx");
  tb_graph *then_g = tb_graph_new(ir, g, "then");
  tbt_node(then_g, "Relu", "t_relu", "xx", "t_r");
  tbt_node(then_g, "Add", "t_add", "t_r,w", "t_out");
  tbt_output(then_g, "t_out");
  tb_graph *else_g = tb_graph_new(ir, g, "else");
  tbt_node(else_g, "Neg", "e_neg", "xx", "e_n");
  tbt_node(else_g, "Mul", "e_mul", "e_n,w", "e_out");
  tbt_output(else_g, "e_out");
  int n = tbt_node(g, "If", "branch", "cond", "y");
  dctl_graph_attr(g, n, "then_branch", then_g);
  dctl_graph_attr(g, n, "else_branch", else_g);
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

/* (s_final, trace) = Loop(M, cond, s0), body (i, c, s) -> (c, (s + w) * 0.5, s - w): the condition passed
 * through as the body's output, w an outer weight [3, 4], the per-iteration values stacked as a scan output. */
static inline tb_model *dctl_loop_model(void) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t d[2] = {3, 4}, one = 1;
  static float w[12];
  static const float half = 0.5f;
  dctl_fill(w, 12, 33);
  tbt_input(g, "M", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(g, "s0", TB_DTYPE_F32, 2, d, NULL);
  tbt_const_f32(g, "w", 2, d, w);
  tbt_const_f32(g, "half", 1, &one, &half);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "i", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(body, "c", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(body, "s", TB_DTYPE_F32, 2, d, NULL);
  tbt_node(body, "Add", "add_w", "s,w", "sw");
  tbt_node(body, "Mul", "halve", "sw,half", "s_out");
  tbt_node(body, "Sub", "sub_w", "s,w", "trace_out");
  tbt_output(body, "c");
  tbt_output(body, "s_out");
  tbt_output(body, "trace_out");
  int n = tbt_node(g, "Loop", "loop", "M,cond,s0", "s_final,trace");
  dctl_graph_attr(g, n, "body", body);
  tbt_output(g, "s_final");
  tbt_output(g, "trace");
  return tbt_model_of(ir);
}

/* (h_final, ys) = Scan(h0, xs, zs), body (h, x, z) -> (h + x * z, Relu(h + x * z)): xs [6, 4] along axis 0,
 * zs [4, 6] along axis 1 in reverse (strided slices), ys stacked along axis 1 ([4, 6]: strided slots). */
static inline tb_model *dctl_scan_model(void) {
  tb_ir_model *ir = tbt_ir_model(11);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t h[1] = {4}, xd[2] = {6, 4}, zd[2] = {4, 6};
  tbt_input(g, "h0", TB_DTYPE_F32, 1, h, NULL);
  tbt_input(g, "xs", TB_DTYPE_F32, 2, xd, NULL);
  tbt_input(g, "zs", TB_DTYPE_F32, 2, zd, NULL);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "h", TB_DTYPE_F32, 1, h, NULL);
  tbt_input(body, "x", TB_DTYPE_F32, 1, h, NULL);
  tbt_input(body, "z", TB_DTYPE_F32, 1, h, NULL);
  tbt_node(body, "Mul", "xz", "x,z", "p");
  tbt_node(body, "Add", "acc", "h,p", "h_out");
  tbt_node(body, "Relu", "emit", "h_out", "y");
  tbt_output(body, "h_out");
  tbt_output(body, "y");
  int n = tbt_node(g, "Scan", "scan", "h0,xs,zs", "h_final,ys");
  dctl_graph_attr(g, n, "body", body);
  pt_attr_int(g, n, "num_scan_inputs", 2);
  pt_attr_ints(g, n, "scan_input_axes", 2, (const int64_t[]){0, 1});
  pt_attr_ints(g, n, "scan_input_directions", 2, (const int64_t[]){0, 1});
  pt_attr_ints(g, n, "scan_output_axes", 1, (const int64_t[]){1});
  tbt_output(g, "h_final");
  tbt_output(g, "ys");
  return tbt_model_of(ir);
}

/* The device's output k against the CPU's. */
static inline void dctl_expect_output(const tb_tensor *cpu_out, const tb_tensor *dev_out, size_t k, const char *device) {
  assert_int_equal(tb_tensor_dtype(dev_out), tb_tensor_dtype(cpu_out));
  toh_assert_shape(dev_out, tb_tensor_ndim(cpu_out), tb_tensor_shape(cpu_out));
  size_t bytes = tb_tensor_nbytes(cpu_out);
  unsigned char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
  assert_non_null(want);
  assert_non_null(got);
  TB_ASSERT_OK(tb_tensor_copy_to_host(cpu_out, want, bytes));
  TB_ASSERT_OK(tb_tensor_copy_to_host(dev_out, got, bytes));
  if (tb_tensor_dtype(cpu_out) != TB_DTYPE_F32) {
    if (memcmp(want, got, bytes) != 0) fail_msg("output %zu differs between %s and the cpu", k, device);
  } else {
    const float *w = (const float *)want, *g = (const float *)got;
    for (size_t i = 0; i < bytes / sizeof(float); i++)
      if (!(fabs((double)g[i] - (double)w[i]) <= 1e-6 + 1e-5 * fabs((double)w[i])))
        fail_msg("output %zu element %zu: %s %.9g, cpu %.9g", k, i, device, (double)g[i], (double)w[i]);
  }
  free(want);
  free(got);
}

/* How many profiled body nodes (inside a subgraph, run at least once) ran on `placement`; fails on any other. */
static inline size_t dctl_body_nodes_on(tb_prepared *p, const char *placement) {
  size_t count = 0, on_device = 0;
  const tb_node_profile *entries = NULL;
  TB_ASSERT_OK(tb_prepared_profile(p, &count, &entries));
  for (size_t i = 0; i < count; i++) {
    if (!entries[i].graph[0] || entries[i].runs == 0) continue;
    if (strcmp(entries[i].placement, placement) != 0)
      fail_msg("body node %s (%s) in %s ran on %s, not %s", entries[i].name, entries[i].op_type, entries[i].graph,
               entries[i].placement, placement);
    on_device++;
  }
  return on_device;
}

/* Prepare `model` on the CPU at O0 and on `dev` at `level`; run both on each of `runs` sets of `n_in` inputs and
 * compare the `n_out` outputs; every graph node on the device, and `body_nodes` profiled body nodes on it.
 * check_prepared (when not NULL) looks at the device's prepared model before the runs. */
static inline void dctl_compare(tb_backend *dev, const char *placement, tb_model *model, tb_opt_level level, size_t runs,
                                size_t n_in, const dctl_input *in, size_t n_out, size_t body_nodes,
                                void (*check_prepared)(tb_prepared *)) {
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pd = NULL;
  const tb_prepare_result *rd = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &pc, NULL));
  o.level = level;
  TB_ASSERT_OK(tb_model_prepare(model, dev, &o, &pd, &rd));
  for (size_t i = 0; i < rd->cpu_fallback_nodes; i++) print_message("fallback: %s\n", rd->fallback_ops[i]);
  assert_int_equal(rd->cpu_fallback_nodes, 0);
  assert_int_equal(rd->device_nodes, rd->node_count);
  if (check_prepared) check_prepared(pd);
  TB_ASSERT_OK(tb_prepared_set_profiling(pd, true));
  for (size_t r = 0; r < runs; r++) {
    tb_tensor *inputs[8] = {NULL}, *want[8] = {NULL}, *got[8] = {NULL};
    const char *names[8];
    assert_true(n_in <= 8 && n_out <= 8);
    for (size_t i = 0; i < n_in; i++) {
      inputs[i] = dctl_make_input(cpu, &in[r * n_in + i]);
      names[i] = in[r * n_in + i].name;
    }
    TB_ASSERT_OK(tb_prepared_run(pc, n_in, names, inputs, n_out, NULL, want));
    tb_status st = tb_prepared_run(pd, n_in, names, inputs, n_out, NULL, got);
    if (st != TB_OK) fail_msg("run %zu on %s failed: %s: %s", r, placement, tb_status_str(st), tb_last_error());
    for (size_t k = 0; k < n_out; k++) {
      dctl_expect_output(want[k], got[k], k, placement);
      tb_tensor_destroy(want[k]);
      tb_tensor_destroy(got[k]);
    }
    for (size_t i = 0; i < n_in; i++) tb_tensor_destroy(inputs[i]);
  }
  assert_int_equal(dctl_body_nodes_on(pd, placement), body_nodes);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pd);
  tb_backend_destroy(cpu);
}

/* The three models, each at O0 and O2, with the inputs named in their comments; check_prepared as dctl_compare's. */
static inline void dctl_if_both_branches(tb_backend *dev, const char *placement, void (*check_prepared)(tb_prepared *)) {
  static float x[14];
  dctl_fill(x, 14, 5);
  static const uint8_t yes = 1, no = 0;
  const dctl_input in[4] = {{"x", TB_DTYPE_F32, 2, {2, 7}, x}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes},
                            {"x", TB_DTYPE_F32, 2, {2, 7}, x}, {"cond", TB_DTYPE_BOOL, 0, {0}, &no}};
  tb_model *m = dctl_if_model();
  dctl_compare(dev, placement, m, TB_LEVEL_O0, 2, 2, in, 1, 4, check_prepared); /* each branch's two nodes, run once */
  dctl_compare(dev, placement, m, TB_LEVEL_O2, 2, 2, in, 1, 4, check_prepared);
  tb_model_destroy(m);
}

static inline void dctl_loop_runs(tb_backend *dev, const char *placement, void (*check_prepared)(tb_prepared *)) {
  static float s0[12];
  dctl_fill(s0, 12, 9);
  static const uint8_t yes = 1;
  static const int64_t five = 5, one = 1;
  const dctl_input in[6] = {{"M", TB_DTYPE_I64, 0, {0}, &five}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes},
                            {"s0", TB_DTYPE_F32, 2, {3, 4}, s0}, {"M", TB_DTYPE_I64, 0, {0}, &one},
                            {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {3, 4}, s0}};
  tb_model *m = dctl_loop_model();
  dctl_compare(dev, placement, m, TB_LEVEL_O0, 2, 3, in, 2, 3, check_prepared);
  dctl_compare(dev, placement, m, TB_LEVEL_O2, 2, 3, in, 2, 3, check_prepared);
  tb_model_destroy(m);
}

static inline void dctl_scan_runs(tb_backend *dev, const char *placement, void (*check_prepared)(tb_prepared *)) {
  static float h0[4], xs[24], zs[24];
  dctl_fill(h0, 4, 1);
  dctl_fill(xs, 24, 2);
  dctl_fill(zs, 24, 3);
  const dctl_input in[3] = {{"h0", TB_DTYPE_F32, 1, {4}, h0}, {"xs", TB_DTYPE_F32, 2, {6, 4}, xs}, {"zs", TB_DTYPE_F32, 2, {4, 6}, zs}};
  tb_model *m = dctl_scan_model();
  dctl_compare(dev, placement, m, TB_LEVEL_O0, 1, 3, in, 2, 3, check_prepared);
  dctl_compare(dev, placement, m, TB_LEVEL_O2, 1, 3, in, 2, 3, check_prepared);
  tb_model_destroy(m);
}

#endif
