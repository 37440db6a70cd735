/* For the device backends' LSTM tests (test_opencl_exec_lstm.c, test_vulkan_exec_lstm.c): an LSTM node in
 * a one-node harness graph with X, W, R and optional B, initial_h, initial_c filled by the caller's
 * generator, and a whole model of stacked LSTM layers, shaped as the bench model set's lstm.onnx, written
 * as ONNX bytes. */
#ifndef TB_TEST_LSTM_UTIL_H
#define TB_TEST_LSTM_UTIL_H
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/model.h>
#include "test_onnx_pbw.h"
#include "test_op_harness.h"

enum { WITH_B = 1, WITH_H0 = 2, WITH_C0 = 4 };

typedef void (*tlstm_fill_fn)(float *v, size_t n, unsigned seed, float lo, float hi);

/* An LSTM node (opset 14) in a fresh harness on cpu with inputs X, W, R and, per `with`, B, initial_h,
 * initial_c; outputs Y, Y_h, Y_c except those in omit_out (bits 0..2). Values from fill_fn, seeded. */
static inline void tlstm_node(toh *t, tb_backend *cpu, tlstm_fill_fn fill_fn, const char *direction, int64_t seq, int64_t batch,
                              int64_t input, int64_t hidden, unsigned with, unsigned omit_out, unsigned seed) {
  int64_t dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  tb_attr attrs[2] = {TOH_STR("direction", direction), TOH_INT("hidden_size", hidden)};
  unsigned omit = (1u << 4) | (with & WITH_B ? 0 : 1u << 3) | (with & WITH_H0 ? 0 : 1u << 5) | (with & WITH_C0 ? 0 : 1u << 6);
  toh_begin(t, cpu);
  toh_add(t, "LSTM", 14, 7, omit, 3, omit_out, attrs, 2);
  int64_t xs[3] = {seq, batch, input}, ws[3] = {dirs, 4 * hidden, input}, rs[3] = {dirs, 4 * hidden, hidden};
  int64_t bs[2] = {dirs, 8 * hidden}, ss[3] = {dirs, batch, hidden};
  size_t nx = (size_t)(seq * batch * input), nw = (size_t)(dirs * 4 * hidden * input), nr = (size_t)(dirs * 4 * hidden * hidden);
  size_t nb = (size_t)(dirs * 8 * hidden), ns = (size_t)(dirs * batch * hidden);
  float *buf = malloc((nx + nw + nr + nb + 2 * ns) * sizeof *buf);
  assert_non_null(buf);
  float *x = buf, *w = x + nx, *r = w + nw, *b = r + nr, *h0 = b + nb, *c0 = h0 + ns;
  fill_fn(x, nx, seed, -1.0f, 1.0f);
  fill_fn(w, nw, seed + 1, -0.4f, 0.4f);
  fill_fn(r, nr, seed + 2, -0.4f, 0.4f);
  fill_fn(b, nb, seed + 3, -0.5f, 0.5f);
  fill_fn(h0, ns, seed + 4, -0.8f, 0.8f);
  fill_fn(c0, ns, seed + 5, -1.5f, 1.5f);
  toh_input(t, 0, TB_DTYPE_F32, 3, xs, x);
  toh_input(t, 1, TB_DTYPE_F32, 3, ws, w);
  toh_input(t, 2, TB_DTYPE_F32, 3, rs, r);
  if (with & WITH_B) toh_input(t, 3, TB_DTYPE_F32, 2, bs, b);
  if (with & WITH_H0) toh_input(t, 5, TB_DTYPE_F32, 3, ss, h0);
  if (with & WITH_C0) toh_input(t, 6, TB_DTYPE_F32, 3, ss, c0);
  free(buf);
}

/* A float32 initializer of `ndim` dims named `name`, values from fill_fn (seeded, in [lo, hi]). */
static inline void tlstm_initializer(pbw *graph, tlstm_fill_fn fill_fn, const char *name, const int64_t *dims, size_t ndim,
                                     unsigned seed, float lo, float hi) {
  size_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= (size_t)dims[i];
  float *v = malloc(n * sizeof *v);
  assert_non_null(v);
  fill_fn(v, n, seed, lo, hi);
  pbw t = {0};
  pbw_tensor_head(&t, name, 1, dims, ndim);
  pbw_bytes(&t, 9, v, n * sizeof *v); /* raw_data */
  pbw_msg(graph, 5, &t);
  free(v);
}

/* An ONNX model (opset 17) of `layers` forward LSTM layers, each followed by a Squeeze of the direction
 * axis, as bench/models/make_models.py writes lstm.onnx: input x [seq, batch, input], output y [seq, batch,
 * hidden], weights from fill_fn. The caller frees .data. */
static inline pbw tlstm_model(tlstm_fill_fn fill_fn, int layers, int64_t seq, int64_t batch, int64_t input, int64_t hidden,
                              unsigned seed) {
  pbw graph = {0};
  const int64_t axes_dims[1] = {1}, axes_value = 1;
  pbw axes = {0};
  pbw_tensor_head(&axes, "axes", 7, axes_dims, 1);
  pbw_bytes(&axes, 9, &axes_value, sizeof axes_value); /* int64 little-endian, as this machine */
  pbw_msg(&graph, 5, &axes);
  char prev[32] = "x";
  for (int i = 0; i < layers; i++) {
    char w[16], r[16], b[16], y[16], out[32];
    snprintf(w, sizeof w, "W%d", i);
    snprintf(r, sizeof r, "R%d", i);
    snprintf(b, sizeof b, "B%d", i);
    snprintf(y, sizeof y, "Y%d", i);
    snprintf(out, sizeof out, i + 1 == layers ? "y" : "h%d", i);
    int64_t width = i == 0 ? input : hidden;
    const int64_t wd[3] = {1, 4 * hidden, width}, rd[3] = {1, 4 * hidden, hidden}, bd[2] = {1, 8 * hidden};
    tlstm_initializer(&graph, fill_fn, w, wd, 3, seed + 10 * (unsigned)i + 1, -0.2f, 0.2f);
    tlstm_initializer(&graph, fill_fn, r, rd, 3, seed + 10 * (unsigned)i + 2, -0.2f, 0.2f);
    tlstm_initializer(&graph, fill_fn, b, bd, 2, seed + 10 * (unsigned)i + 3, -0.3f, 0.3f);
    pbw extra = {0}, attr = {0};
    pbw_str(&extra, 1, w); /* inputs after the first, in order */
    pbw_str(&extra, 1, r);
    pbw_str(&extra, 1, b);
    pbw_str(&attr, 1, "hidden_size");
    pbw_int(&attr, 3, hidden);
    pbw_int(&attr, 20, 2); /* AttributeProto.INT */
    pbw_msg(&extra, 5, &attr);
    pbw_node(&graph, y, "LSTM", prev, y, &extra);
    pbw_str(&extra, 1, "axes");
    pbw_node(&graph, out, "Squeeze", y, out, &extra);
    snprintf(prev, sizeof prev, "%s", out);
  }
  pbw_str(&graph, 2, "lstm");
  const int64_t xd[3] = {seq, batch, input}, yd[3] = {seq, batch, hidden};
  pbw_value_info(&graph, 11, "x", 1, xd, 3);
  pbw_value_info(&graph, 12, "y", 1, yd, 3);
  pbw model = pbw_model(&graph);
  free(graph.data);
  return model;
}

/* The bench-shaped 2-layer LSTM model (seq 64, batch 8, input 128, hidden 256) loaded from memory, and an
 * input x [64, 8, 128] on cpu, both from fill_fn. */
enum { TLSTM_SEQ = 64, TLSTM_BATCH = 8, TLSTM_INPUT = 128, TLSTM_HIDDEN = 256 };
static inline void tlstm_model_and_input(tlstm_fill_fn fill_fn, tb_backend *cpu, tb_model **m, tb_tensor **x) {
  pbw bytes = tlstm_model(fill_fn, 2, TLSTM_SEQ, TLSTM_BATCH, TLSTM_INPUT, TLSTM_HIDDEN, 7);
  TB_ASSERT_OK(tb_model_load_memory(bytes.data, bytes.len, NULL, m));
  free(bytes.data);
  int64_t shape[3] = {TLSTM_SEQ, TLSTM_BATCH, TLSTM_INPUT};
  size_t n = TLSTM_SEQ * TLSTM_BATCH * TLSTM_INPUT;
  float *data = malloc(n * sizeof *data);
  assert_non_null(data);
  fill_fn(data, n, 42, -1.0f, 1.0f);
  *x = toh_host_tensor(cpu, TB_DTYPE_F32, 3, shape, data);
  free(data);
}

/* The model prepared on b at `level` and run on x; its output copied to a new tensor on cpu. With
 * on_device, every node must have been placed on b (where: its name in the failure messages). */
static inline tb_tensor *tlstm_run_model(tb_model *m, tb_backend *b, tb_backend *cpu, bool on_device, const char *where,
                                         tb_opt_level level, tb_tensor *x) {
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  if (tb_model_prepare(m, b, &o, &p, &r) != TB_OK) fail_msg("the LSTM model on %s: %s", where, tb_last_error());
  if (on_device) {
    if (r->cpu_fallback_nodes)
      fail_msg("the LSTM model: %zu nodes on the CPU, first: %s", r->cpu_fallback_nodes, r->fallback_ops[0]);
    assert_true(r->nodes_after > 0);
    assert_int_equal(r->device_nodes, r->nodes_after);
  }
  const char *names[] = {"x"};
  tb_tensor *out = NULL;
  if (tb_prepared_run(p, 1, names, &x, 1, NULL, &out) != TB_OK)
    fail_msg("the LSTM model run on %s: %s", where, tb_last_error());
  tb_tensor *host = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, tb_tensor_ndim(out), tb_tensor_shape(out), &host));
  TB_ASSERT_OK(tb_tensor_copy(host, out));
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  return host;
}

/* got (on the device named `where`, at `what`) equals want (CPU O0) within 1e-5 + 1e-4 * |want|. */
static inline void tlstm_assert_close(const tb_tensor *got, const tb_tensor *want, const char *where, const char *what) {
  assert_int_equal(tb_tensor_numel(got), TLSTM_SEQ * TLSTM_BATCH * TLSTM_HIDDEN);
  assert_int_equal(tb_tensor_numel(got), tb_tensor_numel(want));
  const float *g = tb_tensor_host_data(got), *w = tb_tensor_host_data(want);
  for (int64_t i = 0; i < tb_tensor_numel(want); i++)
    if (!(fabs((double)g[i] - w[i]) <= 1e-5 + 1e-4 * fabs((double)w[i])))
      fail_msg("the 2-layer LSTM model at %s: element %lld: %s %.9g, CPU O0 %.9g", what, (long long)i, where, g[i], w[i]);
}

#endif
