/* An LSTM node for the device backends' LSTM tests (test_opencl_exec_lstm.c, test_vulkan_exec_lstm.c): a
 * one-node harness graph with X, W, R and optional B, initial_h, initial_c filled by the caller's generator. */
#ifndef TB_TEST_LSTM_UTIL_H
#define TB_TEST_LSTM_UTIL_H
#include <stdlib.h>
#include <string.h>
#include "test_op_harness.h"

enum { WITH_B = 1, WITH_H0 = 2, WITH_C0 = 4 };

typedef void (*tlstm_fill_fn)(float *v, size_t n, unsigned seed, float lo, float hi);

/* An LSTM node (opset 14) in a fresh harness on cpu with inputs X, W, R and, per `with`, B, initial_h,
 * initial_c; outputs Y, Y_h, Y_c except those in omit_out (bits 0..2). Values from fill, seeded. */
static inline void tlstm_node(toh *t, tb_backend *cpu, tlstm_fill_fn fill, const char *direction, int64_t seq, int64_t batch,
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
  fill(x, nx, seed, -1.0f, 1.0f);
  fill(w, nw, seed + 1, -0.4f, 0.4f);
  fill(r, nr, seed + 2, -0.4f, 0.4f);
  fill(b, nb, seed + 3, -0.5f, 0.5f);
  fill(h0, ns, seed + 4, -0.8f, 0.8f);
  fill(c0, ns, seed + 5, -1.5f, 1.5f);
  toh_input(t, 0, TB_DTYPE_F32, 3, xs, x);
  toh_input(t, 1, TB_DTYPE_F32, 3, ws, w);
  toh_input(t, 2, TB_DTYPE_F32, 3, rs, r);
  if (with & WITH_B) toh_input(t, 3, TB_DTYPE_F32, 2, bs, b);
  if (with & WITH_H0) toh_input(t, 5, TB_DTYPE_F32, 3, ss, h0);
  if (with & WITH_C0) toh_input(t, 6, TB_DTYPE_F32, 3, ss, c0);
  free(buf);
}

#endif
