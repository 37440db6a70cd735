/* The CUDA recurrent kernels (kernels/50_rnn.cu, cuda_ops_rnn.c) on the fake cuda:0 of the recorded 8x H100 node:
 * LSTM, GRU and RNN nodes with every attribute the CPU reference takes (directions, layouts, sequence_lens of both
 * integer types, initial states, peepholes, input_forget, linear_before_reset, activation lists with alpha / beta,
 * clip, omitted outputs), odd hidden sizes, the bench set's stacked LSTM and the real set's streaming GRU / LSTM
 * and CRNN shapes at small sizes, their values computed by the kernels' own source on the emulated grid
 * (tests/cuda_emu) and compared with the CPU backend at O0 within 1e-5 + 1e-4 |cpu| (float against the CPU's
 * double). Each node must run on the device. Also: find_kernel's answers, the whole model captured as a CUDA
 * graph and replayed, a bad input shape, a failing launch and device memory running out. Without the emulator
 * (no C++ compiler) the value tests print why and check nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/error.h"
#include "ops/rnn/rnn_params.h"
#include "pass_test.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "test_lstm_util.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_curnn"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* ---- One recurrent node against the CPU --------------------------------------------------------------- */

enum { WITH_BIAS = 1, WITH_LENS32 = 2, WITH_LENS64 = 4, WITH_INIT_H = 8, WITH_INIT_C = 16, WITH_PEEP = 32 };

typedef struct rnn_case {
  const char *op, *direction; /* direction NULL: the attribute absent (forward) */
  int64_t seq, batch, input, hidden;
  int layout;
  unsigned with;
  int64_t lens[4];
  float clip; /* 0: none */
  int input_forget, linear_before_reset;
  size_t n_acts, n_alpha, n_beta;
  const char *acts[6];
  float alpha[6], beta[6];
  unsigned omit; /* bit k: output k omitted */
} rnn_case;

static int64_t dirs_of(const rnn_case *c) { return c->direction && strcmp(c->direction, "bidirectional") == 0 ? 2 : 1; }
static int64_t gates_of(const rnn_case *c) { return strcmp(c->op, "LSTM") == 0 ? 4 : strcmp(c->op, "GRU") == 0 ? 3 : 1; }

static void attr_strings(tb_graph *g, int node, const char *name, size_t count, const char *const *v) {
  tb_attr *a = pt_attr(g, node, name, TB_ATTR_STRINGS);
  const char **copy = tb_graph_alloc(g, count * sizeof *copy);
  for (size_t i = 0; i < count; i++) copy[i] = tb_graph_strdup(g, v[i]);
  a->strings = copy;
  a->count = count;
}

static void attr_floats(tb_graph *g, int node, const char *name, size_t count, const float *v) {
  tb_attr *a = pt_attr(g, node, name, TB_ATTR_FLOATS);
  float *copy = tb_graph_alloc(g, count * sizeof *copy);
  memcpy(copy, v, count * sizeof *copy);
  a->floats = copy;
  a->count = count;
}

/* The model of one node for c: X, initial_h and initial_c graph inputs, the weights initializers. */
static tb_model *case_model(const rnn_case *c, unsigned seed) {
  int64_t D = dirs_of(c), G = gates_of(c), H = c->hidden, B = c->batch;
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "rnn");
  const int64_t xd[3] = {c->layout ? B : c->seq, c->layout ? c->seq : B, c->input};
  const int64_t sd[3] = {c->layout ? B : D, c->layout ? D : B, H};
  tbt_input(g, "X", TB_DTYPE_F32, 3, xd, NULL);
  pt_const_rand(g, "W", 3, (const int64_t[]){D, G * H, c->input}, seed + 1, -0.5f, 0.5f);
  pt_const_rand(g, "R", 3, (const int64_t[]){D, G * H, H}, seed + 2, -0.5f, 0.5f);
  if (c->with & WITH_BIAS) pt_const_rand(g, "B", 2, (const int64_t[]){D, 2 * G * H}, seed + 3, -0.5f, 0.5f);
  if (c->with & WITH_LENS32) {
    int32_t l32[4];
    for (int64_t b = 0; b < B; b++) l32[b] = (int32_t)c->lens[b];
    tbt_const(g, "L", TB_DTYPE_I32, 1, &B, l32);
  }
  if (c->with & WITH_LENS64) tbt_const_i64(g, "L", 1, &B, c->lens);
  if (c->with & WITH_INIT_H) tbt_input(g, "H0", TB_DTYPE_F32, 3, sd, NULL);
  if (c->with & WITH_INIT_C) tbt_input(g, "C0", TB_DTYPE_F32, 3, sd, NULL);
  if (c->with & WITH_PEEP) pt_const_rand(g, "P", 2, (const int64_t[]){D, 3 * H}, seed + 4, -0.5f, 0.5f);
  char in[64], out[32];
  snprintf(in, sizeof in, "X,W,R,%s,%s,%s", c->with & WITH_BIAS ? "B" : "", c->with & (WITH_LENS32 | WITH_LENS64) ? "L" : "",
           c->with & WITH_INIT_H ? "H0" : "");
  if (G == 4) snprintf(in + strlen(in), sizeof in - strlen(in), ",%s,%s", c->with & WITH_INIT_C ? "C0" : "", c->with & WITH_PEEP ? "P" : "");
  static const char *const names[3] = {"Y", "Y_h", "Y_c"};
  snprintf(out, sizeof out, "%s,%s", c->omit & 1 ? "" : "Y", c->omit & 2 ? "" : "Y_h");
  if (G == 4) snprintf(out + strlen(out), sizeof out - strlen(out), ",%s", c->omit & 4 ? "" : "Y_c");
  int n = tbt_node(g, c->op, "rnn", in, out);
  for (int k = 0; k < (G == 4 ? 3 : 2); k++)
    if (!(c->omit & (1u << k))) tbt_output(g, names[k]);
  if (c->direction) pt_attr_string(g, n, "direction", c->direction);
  pt_attr_int(g, n, "hidden_size", H);
  if (c->layout) pt_attr_int(g, n, "layout", c->layout);
  if (c->clip > 0) pt_attr_float(g, n, "clip", c->clip);
  if (c->input_forget) pt_attr_int(g, n, "input_forget", 1);
  if (c->linear_before_reset) pt_attr_int(g, n, "linear_before_reset", 1);
  if (c->n_acts) attr_strings(g, n, "activations", c->n_acts, c->acts);
  if (c->n_alpha) attr_floats(g, n, "activation_alpha", c->n_alpha, c->alpha);
  if (c->n_beta) attr_floats(g, n, "activation_beta", c->n_beta, c->beta);
  return tbt_model_of(ir);
}

/* Run `model` on the CPU at O0 and on the emulated cuda:0 at `level` (every node on the device) with these inputs;
 * every output within 1e-5 + 1e-4 |cpu|. */
static void same_as_cpu(tb_model *model, size_t n_in, const feed *in, size_t n_out, tb_opt_level level, const char *what) {
  tcv_counts c = tcv_compare(model, n_in, in, n_out, level, 1e-5, 1e-4);
  if (c.fallbacks) fail_msg("%s: %zu nodes on the CPU", what, c.fallbacks);
  assert_int_equal(c.device_nodes, c.nodes_after);
}

static void check_case(const rnn_case *c, const char *what) {
  int64_t D = dirs_of(c), B = c->batch, H = c->hidden;
  tb_model *model = case_model(c, 11);
  size_t nx = (size_t)(c->seq * B * c->input), ns = (size_t)(D * B * H);
  float *x = malloc((nx + 2 * ns + 1) * sizeof *x), *h0 = x + nx, *c0 = h0 + ns;
  fill_range(x, nx, 3, -1.0f, 1.0f);
  fill_range(h0, ns, 4, -0.8f, 0.8f);
  fill_range(c0, ns, 5, -1.5f, 1.5f);
  feed in[3] = {{"X", TB_DTYPE_F32, 3, {c->layout ? B : c->seq, c->layout ? c->seq : B, c->input}, x}};
  size_t n_in = 1;
  const int64_t sd[3] = {c->layout ? B : D, c->layout ? D : B, H};
  if (c->with & WITH_INIT_H) in[n_in++] = (feed){"H0", TB_DTYPE_F32, 3, {sd[0], sd[1], sd[2]}, h0};
  if (c->with & WITH_INIT_C) in[n_in++] = (feed){"C0", TB_DTYPE_F32, 3, {sd[0], sd[1], sd[2]}, c0};
  size_t n_out = 0;
  for (int k = 0; k < (gates_of(c) == 4 ? 3 : 2); k++) n_out += !(c->omit & (1u << k));
  same_as_cpu(model, n_in, in, n_out, TB_LEVEL_O0, what);
  free(x);
  tb_model_destroy(model);
}

/* ---- find_kernel ------------------------------------------------------------------------------------ */

static const tb_kernel *find(const char *op, const tb_rnn_params *p, size_t n_in, const tb_dtype *dts, size_t n_out) {
  return tcv_find("", op, 14, p, n_in, dts, n_out); /* TB_DTYPE_COUNT: omitted */
}

static void find_kernel_by_dtype(void **state) {
  (void)state;
  tb_rnn_params lstm = {.cell = TB_RNN_CELL_LSTM, .num_directions = 2, .hidden_size = 4, .acts_per_direction = 3};
  tb_rnn_params gru = {.cell = TB_RNN_CELL_GRU, .num_directions = 1, .hidden_size = 4, .acts_per_direction = 2};
  const tb_dtype F = TB_DTYPE_F32, NONE = TB_DTYPE_COUNT;
  assert_non_null(find("LSTM", &lstm, 3, (const tb_dtype[]){F, F, F}, 3));
  assert_non_null(find("LSTM", &lstm, 8, (const tb_dtype[]){F, F, F, F, TB_DTYPE_I32, F, F, F}, 3));
  assert_non_null(find("LSTM", &lstm, 8, (const tb_dtype[]){F, F, F, NONE, TB_DTYPE_I64, NONE, NONE, F}, 1));
  assert_non_null(find("GRU", &gru, 6, (const tb_dtype[]){F, F, F, F, TB_DTYPE_I32, F}, 2));
  assert_non_null(find("RNN", &(tb_rnn_params){.cell = TB_RNN_CELL_RNN, .num_directions = 1, .acts_per_direction = 1}, 3,
                       (const tb_dtype[]){F, F, F}, 2));
  /* float16 / float64 stay on the CPU, as do float sequence lengths */
  assert_null(find("LSTM", &lstm, 3, (const tb_dtype[]){TB_DTYPE_F16, TB_DTYPE_F16, TB_DTYPE_F16}, 3));
  assert_null(find("GRU", &gru, 3, (const tb_dtype[]){TB_DTYPE_F64, TB_DTYPE_F64, TB_DTYPE_F64}, 2));
  assert_null(find("GRU", &gru, 5, (const tb_dtype[]){F, F, F, F, F}, 2));
  assert_null(find("GRU", NULL, 3, (const tb_dtype[]){F, F, F}, 2));
}

/* ---- Values ------------------------------------------------------------------------------------------- */

/* LSTM in each direction and layout, odd hidden sizes, with and without B, initial states and peepholes. */
static void lstm_directions_and_layouts(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const char *const dirs[3] = {"forward", "reverse", "bidirectional"};
  for (int d = 0; d < 3; d++)
    for (int layout = 0; layout < 2; layout++) {
      rnn_case c = {.op = "LSTM", .direction = dirs[d], .seq = 4, .batch = 3, .input = 5, .hidden = 7 + 2 * d, .layout = layout,
                    .with = layout ? WITH_BIAS | WITH_INIT_H | WITH_INIT_C | WITH_PEEP : WITH_BIAS};
      char what[64];
      snprintf(what, sizeof what, "LSTM %s layout %d", dirs[d], layout);
      check_case(&c, what);
    }
  rnn_case bare = {.op = "LSTM", .seq = 3, .batch = 2, .input = 4, .hidden = 1}; /* no B, no direction attribute, hidden 1 */
  check_case(&bare, "LSTM without B, hidden 1");
}

/* sequence_lens of int32 and int64 with a zero, a short and a full row, in both directions and layouts. */
static void lstm_sequence_lengths(void **state) {
  (void)state;
  if (!emulator_here()) return;
  rnn_case c = {.op = "LSTM", .direction = "bidirectional", .seq = 5, .batch = 3, .input = 3, .hidden = 6,
                .with = WITH_BIAS | WITH_LENS32 | WITH_INIT_H | WITH_INIT_C | WITH_PEEP, .lens = {5, 0, 2}};
  check_case(&c, "LSTM bidirectional, int32 lengths 5, 0, 2");
  c.with = WITH_BIAS | WITH_LENS64 | WITH_INIT_H;
  c.layout = 1;
  c.lens[0] = 1, c.lens[1] = 4, c.lens[2] = 0;
  check_case(&c, "LSTM bidirectional layout 1, int64 lengths 1, 4, 0");
  c.direction = "reverse";
  c.with = WITH_LENS32 | WITH_INIT_C;
  check_case(&c, "LSTM reverse, int32 lengths, initial_c only");
}

/* clip, input_forget, every activation with alpha / beta (per direction), and each output alone. */
static void lstm_attributes_and_outputs(void **state) {
  (void)state;
  if (!emulator_here()) return;
  rnn_case c = {.op = "LSTM", .direction = "bidirectional", .seq = 4, .batch = 2, .input = 5, .hidden = 5,
                .with = WITH_BIAS | WITH_INIT_H | WITH_INIT_C | WITH_PEEP, .clip = 0.7f, .input_forget = 1};
  check_case(&c, "LSTM clip 0.7, input_forget");
  c.clip = 0;
  c.input_forget = 0;
  c.n_acts = 6;
  const char *acts[6] = {"HardSigmoid", "Elu", "Softsign", "Sigmoid", "ScaledTanh", "LeakyRelu"};
  memcpy(c.acts, acts, sizeof acts);
  c.n_alpha = 4, c.n_beta = 2;
  const float alpha[4] = {0.3f, 0.9f, 1.2f, 0.05f}, beta[2] = {0.45f, 0.8f};
  memcpy(c.alpha, alpha, sizeof alpha);
  memcpy(c.beta, beta, sizeof beta);
  check_case(&c, "LSTM activations HardSigmoid Elu Softsign / Sigmoid ScaledTanh LeakyRelu");
  const char *more[6] = {"Sigmoid", "Softplus", "ThresholdedRelu", "Sigmoid", "Affine", "Relu"};
  memcpy(c.acts, more, sizeof more);
  c.n_alpha = 2, c.n_beta = 1;
  check_case(&c, "LSTM activations Softplus ThresholdedRelu / Affine Relu");
  c.n_acts = c.n_alpha = c.n_beta = 0;
  for (unsigned keep = 0; keep < 3; keep++) {
    c.omit = 7u & ~(1u << keep);
    char what[32];
    snprintf(what, sizeof what, "LSTM output %u alone", keep);
    check_case(&c, what);
  }
}

/* GRU: linear_before_reset 0 and 1 in each direction, layouts, lengths, clip, activations, Y_h alone. */
static void gru_values(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const char *const dirs[3] = {"forward", "reverse", "bidirectional"};
  for (int d = 0; d < 3; d++)
    for (int lbr = 0; lbr < 2; lbr++) {
      rnn_case c = {.op = "GRU", .direction = dirs[d], .seq = 4, .batch = 3, .input = 6, .hidden = 5 + 2 * lbr, .layout = d == 1,
                    .with = WITH_BIAS | (lbr ? WITH_INIT_H : 0), .linear_before_reset = lbr};
      char what[64];
      snprintf(what, sizeof what, "GRU %s linear_before_reset %d", dirs[d], lbr);
      check_case(&c, what);
    }
  rnn_case c = {.op = "GRU", .direction = "bidirectional", .seq = 5, .batch = 3, .input = 4, .hidden = 3,
                .with = WITH_BIAS | WITH_LENS32 | WITH_INIT_H, .lens = {2, 5, 0}, .clip = 0.5f, .n_acts = 4,
                .acts = {"HardSigmoid", "Softsign", "Sigmoid", "Elu"}, .n_alpha = 2, .alpha = {0.25f, 0.7f}, .n_beta = 1, .beta = {0.4f}};
  check_case(&c, "GRU lengths, clip, activations");
  c.omit = 1;
  c.layout = 1;
  c.with = WITH_LENS64;
  c.linear_before_reset = 1;
  check_case(&c, "GRU Y_h alone, layout 1, no B");
}

/* RNN: activations, directions, lengths, layout 1. */
static void rnn_values(void **state) {
  (void)state;
  if (!emulator_here()) return;
  rnn_case c = {.op = "RNN", .seq = 4, .batch = 2, .input = 3, .hidden = 9, .with = WITH_BIAS};
  check_case(&c, "RNN forward, Tanh");
  c.direction = "bidirectional";
  c.with = WITH_BIAS | WITH_LENS32 | WITH_INIT_H;
  c.lens[0] = 3, c.lens[1] = 1;
  c.n_acts = 2;
  c.acts[0] = "Relu", c.acts[1] = "ThresholdedRelu";
  c.n_alpha = 1, c.alpha[0] = 0.1f;
  c.clip = 0.9f;
  check_case(&c, "RNN bidirectional Relu / ThresholdedRelu, lengths, clip");
  c.direction = "reverse";
  c.layout = 1;
  c.n_acts = 1;
  c.acts[0] = "Affine";
  c.n_alpha = 1, c.alpha[0] = 0.5f, c.n_beta = 1, c.beta[0] = -0.2f;
  c.omit = 2;
  check_case(&c, "RNN reverse layout 1 Affine, Y alone");
}

/* An empty sequence (seq 0): Y empty, Y_h / Y_c the initial states. */
static void empty_sequence(void **state) {
  (void)state;
  if (!emulator_here()) return;
  rnn_case c = {.op = "LSTM", .direction = "bidirectional", .seq = 0, .batch = 2, .input = 3, .hidden = 4,
                .with = WITH_BIAS | WITH_INIT_H | WITH_INIT_C};
  check_case(&c, "LSTM of 0 steps");
}

/* ---- Models --------------------------------------------------------------------------------------------- */

/* bench/models' lstm.onnx shape (stacked forward LSTM layers, each with a Squeeze), small, at O0 and O2. */
static void bench_lstm_model(void **state) {
  (void)state;
  if (!emulator_here()) return;
  pbw bytes = tlstm_model(fill_range, 2, 6, 2, 9, 11, 7);
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load_memory(bytes.data, bytes.len, NULL, &m));
  free(bytes.data);
  float x[6 * 2 * 9];
  fill_range(x, 6 * 2 * 9, 42, -1.0f, 1.0f);
  const feed in[1] = {{"x", TB_DTYPE_F32, 3, {6, 2, 9}, x}};
  same_as_cpu(m, 1, in, 1, TB_LEVEL_O0, "the 2-layer LSTM model at O0");
  same_as_cpu(m, 1, in, 1, TB_LEVEL_O2, "the 2-layer LSTM model at O2");
  tb_model_destroy(m);
}

/* Two stacked layers of op (the real set's streaming GRU / LSTM: batch 1, layout 1, the states given per
 * layer; the CRNN's: bidirectional, layout 0, a [T, 1, features] sequence), small sizes. */
static void stacked_layers(const char *op, const char *direction, int layout, int64_t seq, int64_t input, int64_t hidden, const char *what) {
  rnn_case c = {.op = op, .direction = direction, .seq = seq, .batch = 1, .input = input, .hidden = hidden, .layout = layout,
                .with = WITH_BIAS | (layout ? WITH_INIT_H | (strcmp(op, "LSTM") == 0 ? WITH_INIT_C : 0) : 0)};
  int64_t D = dirs_of(&c), G = gates_of(&c), H = hidden;
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "stacked");
  const int64_t xd[3] = {layout ? 1 : seq, layout ? seq : 1, input}, sd[3] = {layout ? 1 : D, layout ? D : 1, H};
  tbt_input(g, "X", TB_DTYPE_F32, 3, xd, NULL);
  for (int l = 0; l < 2; l++) {
    char w[8], r[8], b[8], h0[8], c0[8], y[8], yh[8], yc[8], flat[8], in[64], out[32];
    snprintf(w, sizeof w, "W%d", l), snprintf(r, sizeof r, "R%d", l), snprintf(b, sizeof b, "B%d", l);
    snprintf(h0, sizeof h0, "H%d", l), snprintf(c0, sizeof c0, "C%d", l), snprintf(y, sizeof y, "Y%d", l);
    snprintf(yh, sizeof yh, "Yh%d", l), snprintf(yc, sizeof yc, "Yc%d", l), snprintf(flat, sizeof flat, "F%d", l);
    int64_t width = l == 0 ? input : D * H;
    pt_const_rand(g, w, 3, (const int64_t[]){D, G * H, width}, 20u + (unsigned)l, -0.4f, 0.4f);
    pt_const_rand(g, r, 3, (const int64_t[]){D, G * H, H}, 30u + (unsigned)l, -0.4f, 0.4f);
    pt_const_rand(g, b, 2, (const int64_t[]){D, 2 * G * H}, 40u + (unsigned)l, -0.3f, 0.3f);
    if (c.with & WITH_INIT_H) tbt_input(g, h0, TB_DTYPE_F32, 3, sd, NULL);
    if (c.with & WITH_INIT_C) tbt_input(g, c0, TB_DTYPE_F32, 3, sd, NULL);
    snprintf(in, sizeof in, "%s,%s,%s,%s,,%s", l == 0 ? "X" : "F0", w, r, b, c.with & WITH_INIT_H ? h0 : "");
    if (G == 4) snprintf(in + strlen(in), sizeof in - strlen(in), ",%s", c.with & WITH_INIT_C ? c0 : "");
    snprintf(out, sizeof out, "%s,%s", y, yh);
    if (G == 4) snprintf(out + strlen(out), sizeof out - strlen(out), ",%s", yc);
    int n = tbt_node(g, op, y, in, out);
    if (direction) pt_attr_string(g, n, "direction", direction);
    pt_attr_int(g, n, "hidden_size", H);
    if (layout) pt_attr_int(g, n, "layout", 1);
    tbt_output(g, yh);
    if (G == 4) tbt_output(g, yc);
    /* Y [seq, D, 1, H] (layout 0) or [1, seq, D, H] (layout 1) to the next layer's [.., .., D * H] */
    char shape[8];
    snprintf(shape, sizeof shape, "S%d", l);
    tbt_const_i64(g, shape, 1, &(int64_t){3}, (const int64_t[]){layout ? 1 : seq, layout ? seq : 1, D * H});
    snprintf(in, sizeof in, "%s,%s", y, shape);
    tbt_node(g, "Reshape", flat, in, flat);
  }
  tbt_output(g, "F1");
  tb_model *model = tbt_model_of(ir);
  size_t nx = (size_t)(seq * input), ns = (size_t)(D * H);
  float *x = malloc((nx + 4 * ns) * sizeof *x), *st = x + nx;
  fill_range(x, nx, 8, -1.0f, 1.0f);
  fill_range(st, 4 * ns, 9, -0.5f, 0.5f);
  feed in[5] = {{"X", TB_DTYPE_F32, 3, {xd[0], xd[1], xd[2]}, x}};
  size_t n_in = 1;
  for (int l = 0; l < 2; l++) {
    if (c.with & WITH_INIT_H) in[n_in++] = (feed){l ? "H1" : "H0", TB_DTYPE_F32, 3, {sd[0], sd[1], sd[2]}, st + (size_t)(2 * l) * ns};
    if (c.with & WITH_INIT_C) in[n_in++] = (feed){l ? "C1" : "C0", TB_DTYPE_F32, 3, {sd[0], sd[1], sd[2]}, st + (size_t)(2 * l + 1) * ns};
  }
  same_as_cpu(model, n_in, in, (size_t)(G == 4 ? 5 : 3), TB_LEVEL_O2, what);
  free(x);
  tb_model_destroy(model);
}

static void real_set_shapes(void **state) {
  (void)state;
  if (!emulator_here()) return;
  stacked_layers("GRU", NULL, 1, 4, 9, 13, "the streaming GRU's layers");
  stacked_layers("LSTM", NULL, 1, 4, 9, 13, "the streaming LSTM's layers");
  stacked_layers("LSTM", "bidirectional", 0, 8, 11, 6, "the CRNN's layers");
}

/* A model of LSTM nodes only is captured as one CUDA graph; the replay with new inputs matches the CPU. */
static void lstm_graph_replay(void **state) {
  (void)state;
  if (!emulator_here()) return;
  rnn_case c = {.op = "LSTM", .seq = 3, .batch = 1, .input = 4, .hidden = 5, .layout = 1, .with = WITH_BIAS | WITH_INIT_H | WITH_INIT_C};
  tb_model *model = case_model(&c, 5);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &pc, NULL));
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &pg, &rg));
  assert_true(rg->graph_capture);
  assert_string_equal(rg->graph_capture_why, "");
  const char *names[3] = {"X", "H0", "C0"};
  for (int run = 0; run < 3; run++) {
    float x[12], h[5], cc[5];
    fill_range(x, 12, 60u + (unsigned)run, -1.0f, 1.0f);
    fill_range(h, 5, 70u + (unsigned)run, -0.5f, 0.5f);
    fill_range(cc, 5, 80u + (unsigned)run, -0.5f, 0.5f);
    tb_tensor *in[3] = {tbt_f32(cpu, 3, (const int64_t[]){1, 3, 4}, x), tbt_f32(cpu, 3, (const int64_t[]){1, 1, 5}, h),
                        tbt_f32(cpu, 3, (const int64_t[]){1, 1, 5}, cc)};
    tb_tensor *want[3] = {NULL}, *got[3] = {NULL};
    TB_ASSERT_OK(tb_prepared_run(pc, 3, names, in, 3, NULL, want));
    tb_status st = tb_prepared_run(pg, 3, names, in, 3, NULL, got);
    if (st != TB_OK) fail_msg("run %d: %s", run, tb_last_error());
    const char *why = NULL;
    if (!tb_prepared_graph_capture(pg, &why)) fail_msg("run %d: graph replay turned off: %s", run, why);
    for (size_t k = 0; k < 3; k++) {
      assert_int_equal(tb_tensor_dtype(got[k]), TB_DTYPE_F32);
      expect_same(want[k], got[k], k, 1e-5, 1e-4);
      tb_tensor_destroy(want[k]);
      tb_tensor_destroy(got[k]);
    }
    for (size_t i = 0; i < 3; i++) tb_tensor_destroy(in[i]);
  }
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  tb_model_destroy(model);
}

/* ---- Errors ------------------------------------------------------------------------------------------- */

/* A launch that fails, a device too small for the run's temporaries: a status and a sentence, nothing left. */
static void launch_failure_and_out_of_memory(void **state) {
  (void)state;
  rnn_case c = {.op = "GRU", .direction = "bidirectional", .seq = 40, .batch = 4, .input = 30, .hidden = 33, .with = WITH_BIAS};
  tb_model *model = case_model(&c, 9);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .no_graph_capture = true};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, NULL));
  static float x[40 * 4 * 30];
  fill_range(x, 40 * 4 * 30, 1, -1.0f, 1.0f);
  tb_tensor *in = tbt_f32(cpu, 3, (const int64_t[]){40, 4, 30}, x), *out[2] = {NULL};
  const char *names[1] = {"X"};
  unsetenv("FAKE_CUDA_EMULATE"); /* the values do not matter here */
  launch_reset();
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "3", 1); /* the product, the transpose, then the sequence */
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuLaunchKernel of tb_cu_rnn_seq_f32 for node 'rnn' (GRU) (grid 8 x 1 x 1 of 128 "
                                      "threads) failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_null(out[0]);
  launch_reset();
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "2", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_rnn_transpose_f32");
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY; free device memory");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 2, NULL, out));
  tb_tensor_destroy(out[0]);
  tb_tensor_destroy(out[1]);
  tb_prepared_destroy(p);
  /* the input projection's 40 * 4 * 2 * 99 floats (125 KiB) do not fit */
  setenv("FAKE_CUDA_MEM_CAPACITY", "96K", 1);
  tb_backend *small = open_cuda0();
  tb_status st = tb_model_prepare(model, small, &o, &p, NULL);
  if (st == TB_OK) {
    out[0] = out[1] = NULL;
    assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_OUT_OF_MEMORY);
    assert_null(out[0]);
    tb_prepared_destroy(p);
  } else {
    assert_int_equal(st, TB_ERR_OUT_OF_MEMORY);
  }
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: out of memory allocating");
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_tensor_destroy(in);
  tb_backend_destroy(small);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  tb_model_destroy(model);
}


/* An initial_h whose batch differs from X's (its dim unknown until the run): TB_ERR_MODEL naming the input, the dim
 * and both sizes (the run's inference on the concrete shapes says it before the kernel runs). */
static void bad_initial_state_shape(void **state) {
  (void)state;
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "bad");
  tbt_input(g, "X", TB_DTYPE_F32, 3, (const int64_t[]){2, 3, 4}, NULL);
  tbt_input(g, "H0", TB_DTYPE_F32, 3, (const int64_t[]){1, -1, 5}, NULL);
  pt_const_rand(g, "W", 3, (const int64_t[]){1, 20, 4}, 1, -0.5f, 0.5f);
  pt_const_rand(g, "R", 3, (const int64_t[]){1, 20, 5}, 2, -0.5f, 0.5f);
  int n = tbt_node(g, "LSTM", "rnn", "X,W,R,,,H0", "Y");
  pt_attr_int(g, n, "hidden_size", 5);
  tbt_output(g, "Y");
  tb_model *model = tbt_model_of(ir);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->cpu_fallback_nodes, 0);
  float x[24] = {0}, h[10] = {0};
  tb_tensor *in[2] = {tbt_f32(cpu, 3, (const int64_t[]){2, 3, 4}, x), tbt_f32(cpu, 3, (const int64_t[]){1, 2, 5}, h)}, *out = NULL;
  const char *names[2] = {"X", "H0"};
  tb_status st = tb_prepared_run(p, 2, names, in, 1, NULL, &out);
  assert_int_equal(st, TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'rnn' (LSTM): input initial_h has dimension 1 of size 2, expected 3");
  assert_null(out);
  for (size_t i = 0; i < 2; i++) tb_tensor_destroy(in[i]);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  tb_model_destroy(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_kernel_by_dtype),
      cmocka_unit_test_setup_teardown(lstm_directions_and_layouts, setup, teardown),
      cmocka_unit_test_setup_teardown(lstm_sequence_lengths, setup, teardown),
      cmocka_unit_test_setup_teardown(lstm_attributes_and_outputs, setup, teardown),
      cmocka_unit_test_setup_teardown(gru_values, setup, teardown),
      cmocka_unit_test_setup_teardown(rnn_values, setup, teardown),
      cmocka_unit_test_setup_teardown(empty_sequence, setup, teardown),
      cmocka_unit_test_setup_teardown(bench_lstm_model, setup, teardown),
      cmocka_unit_test_setup_teardown(real_set_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(lstm_graph_replay, setup, teardown),
      cmocka_unit_test_setup_teardown(launch_failure_and_out_of_memory, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_initial_state_shape, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
