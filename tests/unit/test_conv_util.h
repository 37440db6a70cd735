/* Test helper for the convolution kernels' tests (test_conv_fast.c, test_conv_direct.c, test_conv_direct_bf16.c,
 * test_conv_winograd.c): a seeded fill, the case tables' row types, every fused activation, the Conv /
 * tb::FusedConv node of a case with its random inputs in a harness, running a kernel prepared in each
 * way, bit comparison, the resolved geometry, and the paths' on/off environment switches. */
#ifndef TB_TEST_CONV_UTIL_H
#define TB_TEST_CONV_UTIL_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "core/threadpool.h"
#include "model/conv_algo.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

static inline void fill(float *x, int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
  for (int64_t i = 0; i < n; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    x[i] = (float)((double)((s * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
}

typedef struct conv_case {
  const char *what;
  int64_t batch, c, h, w; /* h 0: 1-D */
  int64_t m, kh, kw, group, stride, dilation;
  int64_t pads[4];        /* begin h, begin w, end h, end w (1-D: pads[1] and pads[3]) */
  const char *auto_pad;   /* instead of pads when set (NULL: pads) */
  bool bias;
} conv_case;

typedef struct act_case {
  const char *name; /* NULL: none */
  float alpha, beta, lo, hi;
} act_case;

static const act_case no_act = {NULL, 0, 0, 0, 0};
static const act_case acts[] = {
    {NULL, 0, 0, 0, 0},   {"Relu", 0, 0, 0, 0},     {"LeakyRelu", 0.2f, 0, 0, 0}, {"Clip", 0, 0, -0.5f, 0.7f},
    {"Sigmoid", 0, 0, 0, 0}, {"Tanh", 0, 0, 0, 0}, {"HardSigmoid", 0.3f, 0.4f, 0, 0}, {"HardSwish", 0, 0, 0, 0},
    {"Silu", 0, 0, 0, 0},    {"Mish", 0, 0, 0, 0},
};

static inline int rank_of(const conv_case *c) { return c->h ? 4 : 3; }

/* Node n0 of t: Conv (opset 11) or tb::FusedConv with these attributes; inputs X, W, B (omitted without
 * bias) and the residual R when `residual`. */
static inline void tconv_add_node(toh *t, bool fused, bool bias, bool residual, const tb_attr *attrs, size_t na) {
  toh_add_op(t, fused ? "tb" : "", fused ? "FusedConv" : "Conv", 11, residual ? 4 : 3, bias ? 0u : 4u, 1, 0, attrs, na);
}

/* The node n0: Conv (opset 11) or tb::FusedConv with this case's attributes; inputs X, W, B (omitted
 * without bias) and the residual R when `residual`. */
static inline void setup(toh *t, bool fused, const conv_case *c, const act_case *act, bool residual) {
  toh_begin(t, NULL);
  bool two = c->h != 0;
  int64_t kernel[2] = {c->kh, c->kw}, strides[2] = {c->stride, c->stride}, dil[2] = {c->dilation, c->dilation};
  int64_t pads[4] = {c->pads[0], c->pads[1], c->pads[2], c->pads[3]}, pads1[2] = {c->pads[1], c->pads[3]};
  size_t n = two ? 2 : 1;
  tb_attr attrs[12];
  size_t na = 0;
  attrs[na++] = TOH_INT("group", c->group);
  attrs[na++] = TOH_INTS_N("kernel_shape", two ? kernel : kernel + 1, n);
  attrs[na++] = TOH_INTS_N("strides", strides, n);
  attrs[na++] = TOH_INTS_N("dilations", dil, n);
  if (c->auto_pad) attrs[na++] = TOH_STR("auto_pad", c->auto_pad);
  else attrs[na++] = TOH_INTS_N("pads", two ? pads : pads1, 2 * n);
  if (act->name) {
    attrs[na++] = TOH_STR("activation", act->name);
    attrs[na++] = TOH_FLOAT("activation_alpha", act->alpha);
    attrs[na++] = TOH_FLOAT("activation_beta", act->beta);
    attrs[na++] = TOH_FLOAT("activation_min", act->lo);
    attrs[na++] = TOH_FLOAT("activation_max", act->hi);
  }
  tconv_add_node(t, fused, c->bias, residual, attrs, na);
}

static inline tb_tensor *random_tensor(toh *t, size_t ndim, const int64_t *shape, uint64_t seed) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= shape[i];
  float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
  assert_non_null(x);
  fill(x, n, seed);
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, ndim, shape, x);
  free(x);
  return r;
}

/* X, W, B of the case in t->in[0..2]. */
static inline void make_inputs(toh *t, const conv_case *c, uint64_t seed) {
  int64_t xs[4] = {c->batch, c->c, c->h, c->w}, ws[4] = {c->m, c->c / c->group, c->kh, c->kw};
  if (!c->h) xs[2] = c->w, ws[2] = c->kw;
  t->in[0] = random_tensor(t, (size_t)rank_of(c), xs, seed);
  t->in[1] = random_tensor(t, (size_t)rank_of(c), ws, seed + 1);
  if (c->bias) t->in[2] = random_tensor(t, 1, &c->m, seed + 2);
}

/* How a test prepares a kernel: not at all, with W a constant (the state packs it), or with W not
 * constant (no state: run() packs per call). */
typedef enum tconv_prep { TCONV_PREP_NONE, TCONV_PREP_CONST_W, TCONV_PREP_NO_W } tconv_prep;

/* X's graph value gets its static shape (x_known) or none; W's is a constant holding W's data or not. */
static inline void tconv_set_prepare_view(toh *t, bool x_known, bool w_constant) {
  const tb_tensor *x = t->in[0], *w = t->in[1];
  t->graph->values[toh_node(t)->inputs[0]].type =
      toh_type(TB_DTYPE_F32, x_known ? tb_tensor_ndim(x) : SIZE_MAX, tb_tensor_shape(x));
  tb_value *v = &t->graph->values[toh_node(t)->inputs[1]];
  v->constant = NULL;
  if (!w_constant) return;
  void *data = NULL;
  tb_ir_tensor *c = tb_graph_new_tensor(t->graph, "w", TB_DTYPE_F32, tb_tensor_ndim(w), tb_tensor_shape(w), &data);
  assert_non_null(c);
  if (tb_tensor_nbytes(w)) memcpy(data, tb_tensor_host_data(w), tb_tensor_nbytes(w)); /* an empty W has no data */
  v->constant = c;
}

/* The convolution algorithm tconv_run_kernel's prepare and run get (ctx->conv_algo, a tb_conv_algo; 0: auto). */
static int tconv_conv_algo;

/* Kernel k on t->in, prepared per `prep` (X's shape known to the prepare when x_known), run on `pool`;
 * a constant W must give a state, a non-constant one none. */
static inline tb_tensor *tconv_run_kernel(toh *t, const tb_kernel *k, tconv_prep prep, bool x_known, tb_pool *pool) {
  void *state = NULL;
  tb_tensor *out = NULL;
  if (prep != TCONV_PREP_NONE && k->prepare) {
    tconv_set_prepare_view(t, x_known, prep == TCONV_PREP_CONST_W);
    tb_tensor *consts[4] = {NULL, prep == TCONV_PREP_NO_W ? NULL : t->in[1], NULL, NULL};
    tb_kernel_ctx pc = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = consts,
                        .backend = t->cpu, .threads = 1, .conv_algo = tconv_conv_algo};
    const tb_value_type *types[TOH_MAX];
    (void)tbt_kernel_bind(&pc, t->graph, toh_node(t), tbt_graph_in_types(t->graph, toh_node(t), types, TOH_MAX));
    TB_ASSERT_OK(k->prepare(&pc, &state));
    assert_int_equal(state != NULL, prep == TCONV_PREP_CONST_W);
  }
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = t->in, .n_outputs = 1,
                       .outputs = &out, .backend = t->cpu, .threads = tb_pool_threads(pool), .pool = pool, .state = state,
                       .conv_algo = tconv_conv_algo};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  TB_ASSERT_OK(k->run(&ctx));
  if (k->release) k->release(state);
  return out;
}

/* a and b hold the same bits, or fail naming the case and the first element that differs. */
static inline void tconv_assert_same_bits(const tb_tensor *a, const tb_tensor *b, const char *what, const char *how) {
  assert_int_equal(tb_tensor_nbytes(a), tb_tensor_nbytes(b));
  const uint32_t *x = tb_tensor_host_data(a), *y = tb_tensor_host_data(b);
  for (int64_t i = 0; i < tb_tensor_numel(a); i++)
    if (x[i] != y[i]) fail_msg("%s (%s): element %lld differs: 0x%08x vs 0x%08x", what, how, (long long)i, x[i], y[i]);
}

/* The case's geometry as the kernels resolve it. */
static inline tb_conv_geom tconv_geom(toh *t) {
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t)};
  TB_ASSERT_OK(tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL));
  tb_conv_geom g;
  TB_ASSERT_OK(tb_conv_geom_resolve(&ctx, tb_tensor_ndim(t->in[0]), tb_tensor_shape(t->in[0]), tb_tensor_ndim(t->in[1]),
                                    tb_tensor_shape(t->in[1]), &g));
  return g;
}

/* A method's environment variable as the default of the conv_algo prepare option (tb_conv_algo_from_env,
 * the other variable unset): unset, on and 1 leave auto; off and 0 give `without` (what is left without the
 * method); both off give the implicit GEMM; anything else leaves auto, with the sentence naming the
 * variable, the value and `runs` logged the first time. Leaves both variables unset. */
static inline void assert_env_default(const char *name, tb_conv_algo without, const char *runs) {
  const char *other = strcmp(name, "TB_CONV_DIRECT") == 0 ? "TB_CONV_WINOGRAD" : "TB_CONV_DIRECT";
  unsetenv(other);
  unsetenv(name);
  assert_int_equal(tb_conv_algo_from_env(), TB_CONV_ALGO_AUTO);
  const char *on[] = {"on", "1"}, *off[] = {"off", "0"};
  for (int i = 0; i < 2; i++) {
    setenv(name, on[i], 1);
    assert_int_equal(tb_conv_algo_from_env(), TB_CONV_ALGO_AUTO);
    setenv(name, off[i], 1);
    assert_int_equal(tb_conv_algo_from_env(), without);
  }
  setenv(other, "off", 1);
  assert_int_equal(tb_conv_algo_from_env(), TB_CONV_ALGO_GEMM);
  unsetenv(other);
  setenv(name, "fast please", 1);
  char want[256];
  snprintf(want, sizeof want, "tensorbridge: warning: CPU: %s='fast please' is not one of on, 1, off, 0; %s\n", name, runs);
  const char *level = getenv("TB_LOG");
  char *saved = level ? strdup(level) : NULL;
  setenv("TB_LOG", "warn", 1); /* ctest runs with TB_LOG=error */
  tbt_capture_stderr_begin();
  tb_conv_algo got = tb_conv_algo_from_env();
  char *log = tbt_capture_stderr_end();
  if (saved) setenv("TB_LOG", saved, 1);
  else unsetenv("TB_LOG");
  free(saved);
  assert_int_equal(got, TB_CONV_ALGO_AUTO);
  assert_string_equal(log, want);
  free(log);
  unsetenv(name);
}

#endif
