/* The level-2 fp32 Conv and tb::FusedConv (src/backend/cpu/kernels/fast/conv/conv_*.c) against the level-0
 * reference kernels on every path this CPU has (AVX-512, AVX2+FMA, portable; the entries are called
 * directly, so no TB_CPU_FEATURES mask is needed to reach the narrower ones): implicit GEMM with groups,
 * strides, pads (explicit, asymmetric, auto_pad), dilation, 1-D; the 1x1 plain-GEMM path; the direct
 * depthwise path; the transposed product (pixels as the GEMM's rows, chosen when the output channels per
 * group fill whole column slivers) and pixel blocks; batch 2; with and without bias; FusedConv with a residual and each activation; weights
 * packed at prepare and weights not constant (prepare without W, packed per run); one thread and the
 * two-thread pool; wrong shapes as statuses naming the node; which entry the executor picks under masks;
 * and ResNet-18-shaped layers checked at sampled outputs against a double-precision direct convolution.
 * All of it twice: with conv_algo gemm (the implicit GEMM everywhere) and with the AVX-512 entries
 * taking the direct convolution (conv_direct.c) where it fits.
 * The patch packer itself (portable, and the AVX-512 masked-load one when the CPU has it) against a naive
 * im2col for sliver widths 4..128, row-crossing and partial slivers, depth ranges starting mid-channel,
 * strides, dilations and pads; every product both with X's shape unknown and known at prepare (the latter
 * picks the transposed product for few pixels).
 * The level-3 bf16 entries (AVX512-BF16, portable, and AMX on the C model of the tile instructions; the AMX
 * entry itself where AMX is not ready gives its fallback's bits) on the same cases. The bundled CNN (three Conv +
 * BatchNorm + Relu blocks, fused at O1 into FusedConv) at O2 under each mask and at O3 against O0.
 *
 * Tolerance: |fast - reference| <= 1e-4 * |reference| + 1e-4 per element (inputs in [-1, 1], at most a few
 * hundred products per output: fp32 summation error in any order stays near 1e-6 relative to sum |w x|,
 * while a wrong tap, pad or channel gives errors of order 0.1). bf16: the same bound against the reference
 * run on X and W rounded to bf16 (bf16 x bf16 products are exact in fp32, so only the summation order
 * differs), and the validate table's bf16 tolerance (rtol 1e-2, atol 1e-2) against the fp32 reference. */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

extern const tb_kernel tb_kernel_conv_f32_avx512, tb_kernel_conv_f32_avx2, tb_kernel_conv_f32_portable;
extern const tb_kernel tb_kernel_fused_conv_f32_avx512, tb_kernel_fused_conv_f32_avx2,
    tb_kernel_fused_conv_f32_portable;
extern const tb_kernel tb_kernel_conv_bf16_avx512bf16, tb_kernel_conv_bf16_portable, tb_kernel_conv_bf16_amx,
    tb_kernel_conv_bf16_amx_emulated;
extern const tb_kernel tb_kernel_fused_conv_bf16_avx512bf16, tb_kernel_fused_conv_bf16_portable,
    tb_kernel_fused_conv_bf16_amx, tb_kernel_fused_conv_bf16_amx_emulated;
extern const tb_kernel tb_kernel_conv, tb_kernel_fused_conv;

static const tb_kernel *const conv_entries[] = {&tb_kernel_conv_f32_portable, &tb_kernel_conv_f32_avx2,
                                                    &tb_kernel_conv_f32_avx512};
static const tb_kernel *const fused_entries[] = {&tb_kernel_fused_conv_f32_portable, &tb_kernel_fused_conv_f32_avx2,
                                                     &tb_kernel_fused_conv_f32_avx512};
/* indexed by tb_gemm_bf16_path */
static const tb_kernel *const conv_bf16_entries[] = {&tb_kernel_conv_bf16_portable, &tb_kernel_conv_bf16_avx512bf16,
                                                         &tb_kernel_conv_bf16_amx, &tb_kernel_conv_bf16_amx_emulated};
static const tb_kernel *const fused_bf16_entries[] = {
    &tb_kernel_fused_conv_bf16_portable, &tb_kernel_fused_conv_bf16_avx512bf16, &tb_kernel_fused_conv_bf16_amx,
    &tb_kernel_fused_conv_bf16_amx_emulated};
static const char *const path_names[] = {"portable", "avx2", "avx512"};
static const char *const bf16_path_names[] = {"bf16 portable", "bf16 avx512bf16", "bf16 amx", "bf16 amx-emulated"};
static tb_pool *pool2;

static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1; }
static bool cpu_has(tb_gemm_bf16_path p) {
  if (p == TB_GEMM_BF16_AVX512BF16) return tbt_cpu_has_bf16_path();
  uint64_t need = tb_gemm_bf16_path_features(p);
  return (tb_convert_hardware_features() & need) == need;
}
/* The bf16 paths that run here: portable and the AMX kernel on the C model of the tiles always, AVX512-BF16
 * and AMX when this CPU has them (AMX: and it is ready). */
static bool bf16_runs_here(int p) {
  return p == TB_GEMM_BF16_AMX ? tb_gemm_bf16_amx_ready() : cpu_has((tb_gemm_bf16_path)p);
}

/* PREP_CONST_W: W is a graph constant and prepare sees it (weights packed once); PREP_NO_W: prepare sees
 * no W (packed per run); PREP_ALL_INPUTS: prepare sees every input but W is not a constant (nothing may be
 * kept from it). */
typedef enum prep_mode { PREP_NONE, PREP_CONST_W, PREP_NO_W, PREP_ALL_INPUTS } prep_mode;
static bool last_prepared; /* whether the last prepare made a state */

/* Give X's graph value its static shape (known: prepare can then pick the transposed product for few
 * pixels) or make it unknown. */
static void set_x_shape_known(toh *t, bool known) {
  const tb_tensor *x = t->in[0];
  t->graph->values[toh_node(t)->inputs[0]].type =
      toh_type(TB_DTYPE_F32, known ? tb_tensor_ndim(x) : SIZE_MAX, tb_tensor_shape(x));
}

/* Mark (or unmark) t's input W as a graph constant holding W's data. */
static void set_w_constant(toh *t, bool constant) {
  tb_value *v = &t->graph->values[toh_node(t)->inputs[1]];
  if (!constant) {
    v->constant = NULL;
    return;
  }
  if (v->constant) return;
  void *data = NULL;
  const tb_tensor *w = t->in[1];
  tb_ir_tensor *c = tb_graph_new_tensor(t->graph, "w", TB_DTYPE_F32, tb_tensor_ndim(w), tb_tensor_shape(w), &data);
  assert_non_null(c);
  memcpy(data, tb_tensor_host_data(w), tb_tensor_nbytes(w));
  v->constant = c;
}

/* Run kernel k on t->in (prepared per `prep`) on `pool`; the status, and the output in *out. */
static tb_status run_kernel(toh *t, const tb_kernel *k, prep_mode prep, tb_pool *pool, tb_tensor **out) {
  void *state = NULL;
  *out = NULL;
  last_prepared = false;
  if (prep != PREP_NONE && k->prepare) {
    set_w_constant(t, prep == PREP_CONST_W);
    tb_tensor *consts[4] = {NULL, prep == PREP_NO_W ? NULL : t->in[1], NULL, NULL};
    if (prep == PREP_ALL_INPUTS) memcpy(consts, t->in, t->n_in * sizeof *consts);
    tb_kernel_ctx pc = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = consts,
                        .backend = t->cpu, .threads = 1, .conv_algo = tconv_conv_algo};
    (void)tbt_kernel_bind(&pc, t->graph, toh_node(t), NULL);
    TB_ASSERT_OK(k->prepare(&pc, &state));
    last_prepared = state != NULL;
    if (prep != PREP_CONST_W) assert_null(state);
  }
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = t->in, .n_outputs = 1,
                       .outputs = out, .backend = t->cpu, .threads = tb_pool_threads(pool), .pool = pool, .state = state,
                       .conv_algo = tconv_conv_algo};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  tb_status st = k->run(&ctx);
  if (k->release) k->release(state);
  return st;
}

/* |got - ref| <= atol + rtol * |ref| everywhere, or fail naming the case, the path and the element. */
static void assert_close_tol(const tb_tensor *got, const tb_tensor *ref, double rtol, double atol, const char *what,
                             const char *path) {
  assert_non_null(got);
  toh_assert_shape(got, tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (!(fabs((double)g[i] - r[i]) <= atol + rtol * fabs((double)r[i])))
      fail_msg("%s (%s path): element %lld is %.9g, reference %.9g", what, path, (long long)i, g[i], r[i]);
}

static void assert_close(const tb_tensor *got, const tb_tensor *ref, const char *what, const char *path) {
  assert_close_tol(got, ref, 1e-4, 1e-4, what, path);
}

/* A tensor rounded to bf16 and back (round to nearest even, as the bf16 GEMM rounds when it packs). */
static tb_tensor *bf16_rounded(toh *t, const tb_tensor *x) {
  size_t n = (size_t)tb_tensor_numel(x);
  uint16_t *h = malloc((n ? n : 1) * sizeof *h);
  float *f = malloc((n ? n : 1) * sizeof *f);
  assert_true(h && f);
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, tb_tensor_host_data(x), TB_DTYPE_BF16, h, n, false));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BF16, h, TB_DTYPE_F32, f, n, false));
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, tb_tensor_ndim(x), tb_tensor_shape(x), f);
  free(h);
  free(f);
  return r;
}

/* W scaled by 1 / sqrt(fan-in), as trained networks' weights are (outputs of order 1). */
static tb_tensor *scaled_weights(toh *t, const tb_tensor *w) {
  int64_t n = tb_tensor_numel(w), fan_in = n / tb_tensor_shape(w)[0];
  float *f = malloc((size_t)(n ? n : 1) * sizeof *f);
  assert_non_null(f);
  const float *src = tb_tensor_host_data(w);
  for (int64_t i = 0; i < n; i++) f[i] = src[i] / sqrtf((float)fan_in);
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, tb_tensor_ndim(w), tb_tensor_shape(w), f);
  free(f);
  return r;
}

/* The bf16 entries: against the reference run on bf16-rounded X and W (the fp32 bound; depthwise stays
 * fp32 in these entries, so against `ref`), with W constant and prepared on one thread and packed per run
 * on the pool; then with weights scaled like a trained network's against the fp32 reference at the
 * validate table's bf16 tolerance. */
static void check_bf16(toh *t, const conv_case *c, bool fused, const tb_tensor *ref, const char *what) {
  bool depthwise = c->group == c->c && c->group > 1 && c->m % c->group == 0; /* tb_conv_is_depthwise */
  const tb_kernel *ref_kernel = fused ? &tb_kernel_fused_conv : &tb_kernel_conv;
  tb_tensor *x = t->in[0], *w = t->in[1], *ref_rounded = NULL, *ref_scaled = NULL, *got = NULL;
  t->in[0] = bf16_rounded(t, x);
  t->in[1] = bf16_rounded(t, w);
  TB_ASSERT_OK(run_kernel(t, ref_kernel, PREP_NONE, NULL, &ref_rounded));
  tb_tensor_destroy(t->in[0]);
  tb_tensor_destroy(t->in[1]);
  t->in[0] = x;
  t->in[1] = w;
  set_w_constant(t, false);
  for (int p = 0; p < TB_GEMM_BF16_PATH_COUNT; p++) {
    if (!bf16_runs_here(p)) continue;
    const tb_kernel *k = fused ? fused_bf16_entries[p] : conv_bf16_entries[p];
    for (int run = 0; run < 3; run++) { /* prepared (X's shape unknown, then known), then packed per run */
      set_x_shape_known(t, run == 1);
      TB_ASSERT_OK(run_kernel(t, k, run == 2 ? PREP_NO_W : PREP_CONST_W, run == 2 ? pool2 : NULL, &got));
      if (run < 2) assert_int_equal(last_prepared, !depthwise);
      assert_close(got, depthwise ? ref : ref_rounded, what, bf16_path_names[p]);
      tb_tensor_destroy(got);
    }
    set_x_shape_known(t, false);
  }
  char table_what[256];
  snprintf(table_what, sizeof table_what, "%s, scaled weights against fp32 at the bf16 tolerance", what);
  t->in[1] = scaled_weights(t, w);
  TB_ASSERT_OK(run_kernel(t, ref_kernel, PREP_NONE, NULL, &ref_scaled));
  for (int p = 0; p < TB_GEMM_BF16_PATH_COUNT; p++) {
    if (!bf16_runs_here(p)) continue;
    TB_ASSERT_OK(run_kernel(t, fused ? fused_bf16_entries[p] : conv_bf16_entries[p], PREP_NO_W, pool2, &got));
    assert_close_tol(got, ref_scaled, 1e-2, 1e-2, table_what, bf16_path_names[p]);
    tb_tensor_destroy(got);
  }
  if (!tb_gemm_bf16_amx_ready()) { /* the AMX entry runs the path AMX falls back to, bit for bit */
    tb_tensor *fallback = NULL;
    TB_ASSERT_OK(run_kernel(t, fused ? fused_bf16_entries[TB_GEMM_BF16_AMX] : conv_bf16_entries[TB_GEMM_BF16_AMX],
                            PREP_NO_W, pool2, &got));
    int to = tb_gemm_bf16_runnable(TB_GEMM_BF16_AMX);
    TB_ASSERT_OK(run_kernel(t, fused ? fused_bf16_entries[to] : conv_bf16_entries[to], PREP_NO_W, pool2, &fallback));
    assert_memory_equal(tb_tensor_host_data(got), tb_tensor_host_data(fallback), tb_tensor_nbytes(fallback));
    tb_tensor_destroy(got);
    tb_tensor_destroy(fallback);
  }
  tb_tensor_destroy(t->in[1]);
  t->in[1] = w;
  tb_tensor_destroy(ref_rounded);
  tb_tensor_destroy(ref_scaled);
}

static bool with_bf16; /* check_case also checks the bf16 entries */

static void check_case(const conv_case *c, bool fused, const act_case *act, bool residual) {
  toh t;
  setup(&t, fused, c, act, residual);
  make_inputs(&t, c, (uint64_t)(c->m * 7 + c->c * 3 + c->kh));
  tb_tensor *ref = NULL;
  TB_ASSERT_OK(run_kernel(&t, fused ? &tb_kernel_fused_conv : &tb_kernel_conv, PREP_NONE, NULL, &ref));
  if (residual) {
    t.in[3] = random_tensor(&t, tb_tensor_ndim(ref), tb_tensor_shape(ref), 99);
    tb_tensor_destroy(ref);
    TB_ASSERT_OK(run_kernel(&t, &tb_kernel_fused_conv, PREP_NONE, NULL, &ref));
  }
  char what[160];
  snprintf(what, sizeof what, "%s%s%s%s", c->what, fused ? " fused" : "", act->name ? " " : "", act->name ? act->name : "");
  bool depthwise = c->group == c->c && c->group > 1 && c->m % c->group == 0; /* tb_conv_is_depthwise */
  for (int p = 0; p < n_paths(); p++) {
    const tb_kernel *k = fused ? fused_entries[p] : conv_entries[p];
    tb_tensor *got = NULL;
    for (int known = 0; known < 2; known++) { /* X's shape unknown at prepare, then known */
      set_x_shape_known(&t, known != 0);
      TB_ASSERT_OK(run_kernel(&t, k, PREP_CONST_W, NULL, &got));
      assert_int_equal(last_prepared, !depthwise); /* a constant W is packed once (depthwise uses it as it is) */
      assert_close(got, ref, what, path_names[p]);
      tb_tensor_destroy(got);
    }
    set_x_shape_known(&t, false);
    TB_ASSERT_OK(run_kernel(&t, k, (prep_mode)(p % 2 ? PREP_ALL_INPUTS : PREP_NO_W), pool2, &got));
    assert_close(got, ref, what, path_names[p]);
    tb_tensor_destroy(got);
  }
  if (with_bf16) check_bf16(&t, c, fused, ref, what);
  tb_tensor_destroy(ref);
  toh_teardown(&t);
}

/* batch, c, h, w, m, kh, kw, group, stride, dilation, pads, auto_pad, bias */
static const conv_case gemm_cases[] = {
    {"3x3 pad 1", 2, 8, 9, 11, 16, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 no bias odd sizes", 1, 5, 13, 7, 3, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, false},
    {"groups 4 stride 2", 2, 8, 10, 9, 12, 3, 3, 4, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"dilation 2", 1, 6, 12, 12, 10, 3, 3, 1, 1, 2, {2, 2, 2, 2}, NULL, true},
    {"5x5 stride 2 asymmetric pads", 1, 3, 17, 15, 8, 5, 5, 1, 2, 1, {0, 2, 1, 0}, NULL, true},
    {"SAME_UPPER 4x4 stride 2", 1, 4, 9, 10, 6, 4, 4, 1, 2, 1, {0}, "SAME_UPPER", true},
    {"SAME_LOWER 2x2", 1, 4, 7, 6, 5, 2, 2, 1, 1, 1, {0}, "SAME_LOWER", false},
    {"VALID 3x1 stride 3", 2, 3, 11, 8, 4, 3, 1, 1, 3, 1, {0}, "VALID", true},
    {"1x1 pointwise", 2, 32, 7, 9, 24, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 pointwise groups 2", 1, 8, 5, 5, 6, 1, 1, 2, 1, 1, {0}, NULL, false},
    {"1x1 pointwise 15x13 (pixel blocks on the pool)", 1, 12, 15, 13, 10, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 stride 2", 1, 16, 9, 9, 20, 1, 1, 1, 2, 1, {0}, NULL, true},
    {"1x1 pad 1", 1, 4, 3, 3, 5, 1, 1, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"1-D k3 stride 2 pad 1", 2, 5, 0, 29, 7, 1, 3, 1, 2, 1, {0, 1, 0, 1}, NULL, true},
    {"1-D dilation 2 groups 5", 1, 10, 0, 40, 15, 1, 3, 5, 1, 2, {0, 0, 0, 0}, NULL, false},
    {"1-D 1x1", 1, 6, 0, 33, 4, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"K past one block (C 40, 3x3)", 1, 40, 6, 6, 70, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"channel multiplier 2 (group == C: the depthwise path)", 1, 4, 6, 7, 8, 3, 3, 4, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"kernel as large as the input", 1, 3, 4, 4, 2, 4, 4, 1, 1, 1, {0}, NULL, true},
    {"7x7 stride 2 pad 3 (stem-like, rows wider than a sliver)", 1, 3, 75, 79, 9, 7, 7, 1, 2, 1, {3, 3, 3, 3}, NULL, true},
    {"3x3 over 900 pixels (two pixel blocks)", 1, 5, 30, 30, 7, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"batch 3 (GEMMs in turn, each on the pool)", 3, 6, 8, 9, 30, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"1x1 stride 2 over 50x50", 1, 6, 50, 50, 5, 1, 1, 1, 2, 1, {0}, NULL, false},
    {"3x3 stride 2 dilation 2", 1, 4, 23, 41, 6, 3, 3, 1, 2, 2, {2, 1, 0, 3}, NULL, true},
    {"1-D k19 (more tap columns than the mask table)", 1, 3, 0, 60, 4, 1, 19, 1, 1, 1, {0, 9, 0, 9}, NULL, true},
    {"3x3 64 channels (pixels as rows)", 1, 8, 10, 11, 64, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"1x1 pointwise 32 channels (pixels as rows)", 2, 16, 9, 7, 32, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 pointwise 30 channels over 7x7 (pixels as rows, a partial channel block)", 1, 16, 7, 7, 30, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 pointwise 160 -> 960 over 7x7 (pixels as rows)", 1, 160, 7, 7, 960, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 pointwise 112 -> 136 over 14x14 (narrow edge of 4 pixels)", 1, 112, 14, 14, 136, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"groups 2 of 32 channels stride 2 (pixels as rows)", 1, 8, 13, 12, 64, 3, 3, 2, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"1x1 stride 2 64 channels over 600 pixels (pixels as rows, two blocks)", 1, 4, 69, 35, 64, 1, 1, 1, 2, 1, {0}, NULL, false},
    {"1x1 14x14 256 channels (one GEMM: its epilogue on the pool)", 1, 24, 14, 14, 256, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 7x7 512 channels (one transposed GEMM: its epilogue on the pool)", 1, 16, 7, 7, 512, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 on a 1x1 map 40 -> 120 (squeeze-excite: planes of one value)", 2, 40, 1, 1, 120, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 on a 1x1 map 120 -> 32 (squeeze-excite)", 1, 120, 1, 1, 32, 1, 1, 1, 1, 1, {0}, NULL, true},
    {"1x1 on a 1x1 map 600 -> 40 (squeeze-excite: three depth blocks)", 1, 600, 1, 1, 40, 1, 1, 1, 1, 1, {0}, NULL, true},
};

static const conv_case depthwise_cases[] = {
    {"depthwise 3x3", 2, 16, 9, 21, 16, 3, 3, 16, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"depthwise 3x3 stride 2", 1, 8, 40, 37, 8, 3, 3, 8, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"depthwise 5x5 dilation 2 no bias", 1, 6, 15, 19, 6, 5, 5, 6, 1, 2, {4, 4, 4, 4}, NULL, false},
    {"depthwise 3x3 stride 3 asymmetric", 1, 5, 13, 35, 5, 3, 3, 5, 3, 1, {0, 2, 1, 0}, NULL, true},
    {"depthwise 1-D", 2, 7, 0, 50, 7, 1, 4, 7, 2, 1, {0, 1, 0, 2}, NULL, true},
    {"depthwise wide row stride 2", 1, 3, 3, 70, 3, 3, 3, 3, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"depthwise 1-D k7 stride 1", 1, 4, 0, 45, 4, 1, 7, 4, 1, 1, {0, 3, 0, 3}, NULL, true},
    {"depthwise pads wider than the input", 1, 2, 3, 3, 2, 5, 5, 2, 1, 1, {4, 4, 4, 4}, NULL, true},
    {"depthwise 17 kernel rows", 1, 3, 20, 9, 3, 17, 3, 3, 1, 1, {8, 1, 8, 1}, NULL, false},
    {"depthwise 3x3 no pads 33 wide", 2, 3, 5, 35, 3, 3, 3, 3, 1, 1, {0, 0, 0, 0}, NULL, true},
    {"depthwise 3x3 150 wide", 1, 2, 4, 150, 2, 3, 3, 2, 1, 1, {1, 1, 1, 1}, NULL, true},
};

/* The case of this name in a table (fails the test when absent). */
static const conv_case *named(const conv_case *table, size_t n, const char *what) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(table[i].what, what) == 0) return &table[i];
  fail_msg("no case '%s'", what);
  return NULL;
}
#define GEMM_CASE(what) named(gemm_cases, sizeof gemm_cases / sizeof gemm_cases[0], what)
#define DW_CASE(what) named(depthwise_cases, sizeof depthwise_cases / sizeof depthwise_cases[0], what)

static void conv_gemm_paths_match_reference(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof gemm_cases / sizeof gemm_cases[0]; i++) check_case(&gemm_cases[i], false, &no_act, false);
}

static void conv_depthwise_matches_reference(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof depthwise_cases / sizeof depthwise_cases[0]; i++)
    check_case(&depthwise_cases[i], false, &no_act, false);
}

/* FusedConv: every activation with and without a residual, on the GEMM, 1x1 and depthwise paths. */
static void fused_conv_each_activation_and_residual(void **state) {
  (void)state;
  const conv_case *cases[] = {GEMM_CASE("3x3 pad 1"), GEMM_CASE("groups 4 stride 2"), GEMM_CASE("1x1 pointwise"),
                              GEMM_CASE("1-D k3 stride 2 pad 1"), DW_CASE("depthwise 3x3"),
                              GEMM_CASE("3x3 over 900 pixels (two pixel blocks)"),
                              GEMM_CASE("3x3 64 channels (pixels as rows)"),
                              GEMM_CASE("1x1 pointwise 32 channels (pixels as rows)"),
                              GEMM_CASE("1x1 14x14 256 channels (one GEMM: its epilogue on the pool)"),
                              GEMM_CASE("1x1 7x7 512 channels (one transposed GEMM: its epilogue on the pool)"),
                              GEMM_CASE("1x1 on a 1x1 map 40 -> 120 (squeeze-excite: planes of one value)")};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
      check_case(cases[c], true, &acts[a], false);
      check_case(cases[c], true, &acts[a], true);
    }
  check_case(GEMM_CASE("3x3 no bias odd sizes"), true, &acts[1], true); /* input 2 omitted, residual at 3 */
  check_case(DW_CASE("depthwise 5x5 dilation 2 no bias"), true, &acts[3], true);
}

/* tb_conv_block_act over a block of whole planes (row stride = row length: one pass over rows x cols values)
 * gives the bits of one call per row (what it did before, and what the depthwise and direct paths do per
 * plane), for every activation kind, on the portable, AVX2 and AVX-512 block loops this CPU runs (each the
 * portable loop's bits), with each vec_ops table this CPU runs and without one (scalar), for
 * planes of 1 value (a squeeze-excite 1x1 map), 7 and 49; and a block whose rows are not back to back
 * leaves the values between them alone. */
static void block_act_whole_planes_same_bits_as_rows(void **state) {
  (void)state;
  const struct vec_ops *tables[] = {NULL, &tb_vec_ops_portable, &tb_vec_ops_avx2, &tb_vec_ops_avx512};
  const int64_t widths[] = {1, 7, 49};
  enum { ROWS = 37, MAX = 37 * 49 * 2 };
  float x[MAX], whole[MAX], rows[MAX];
  for (int i = 0; i < MAX; i++) x[i] = (float)((i * 7919) % 2003) / 200.0f - 5.0f;
  x[3] = NAN;
  for (int t = 0; t < 1 + n_paths(); t++)
    for (int act = 1; act <= 11; act++)
      for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        for (int isa = 0; isa < n_paths(); isa++) { /* portable, AVX2, AVX-512 loops */
          tb_gemm_epilogue ep = {.act = act, .act_alpha = 0.2f, .act_beta = 0.5f, .act_min = -1.0f, .act_max = 2.0f,
                                 .vec = tables[t]};
          int64_t n = widths[w];
          memcpy(whole, x, sizeof x);
          memcpy(rows, x, sizeof x);
          tb_conv_block_act((tb_gemm_path)isa, &ep, whole, n, ROWS, n);
          for (int64_t r = 0; r < ROWS; r++) tb_conv_block_act((tb_gemm_path)isa, &ep, rows + r * n, n, 1, n);
          assert_memory_equal(whole, rows, sizeof whole);
          assert_true(whole[0] != x[0]); /* the activation ran (x[0] = -5) */
          float plain[MAX]; /* the vector loops give the portable loop's bits (NaN, -0 and the tails too) */
          memcpy(plain, x, sizeof x);
          tb_conv_block_act(TB_GEMM_PORTABLE, &ep, plain, n, ROWS, n);
          assert_memory_equal(whole, plain, sizeof whole);
          memcpy(whole, x, sizeof x); /* rows 2n apart: per row, and the n values after each row untouched */
          memcpy(rows, x, sizeof x);
          tb_conv_block_act((tb_gemm_path)isa, &ep, whole, 2 * n, ROWS, n);
          for (int64_t r = 0; r < ROWS; r++) tb_conv_block_act((tb_gemm_path)isa, &ep, rows + r * 2 * n, 2 * n, 1, n);
          assert_memory_equal(whole, rows, sizeof whole);
          for (int64_t r = 0; r < ROWS; r++)
            assert_memory_equal(whole + r * 2 * n + n, x + r * 2 * n + n, (size_t)n * sizeof(float));
        }
}

/* The level-3 bf16 entries on the GEMM, 1x1 and depthwise cases, and FusedConv with a residual and each
 * activation. */
static void bf16_entries_match_reference(void **state) {
  (void)state;
  with_bf16 = true;
  for (size_t i = 0; i < sizeof gemm_cases / sizeof gemm_cases[0]; i++) check_case(&gemm_cases[i], false, &no_act, false);
  check_case(DW_CASE("depthwise 3x3"), false, &no_act, false);
  for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
    check_case(GEMM_CASE("3x3 pad 1"), true, &acts[a], true);
    check_case(GEMM_CASE("1x1 pointwise"), true, &acts[a], a % 2 == 0);
  }
  with_bf16 = false;
}

/* Element (k, j) of the patch matrix: the input under tap k for output pixel j (0 in the padding). */
static float im2col_at(const tb_conv_geom *g, const float *x, int64_t k, int64_t j) {
  int64_t taps = g->kh * g->kw, c = k / taps, ky = k % taps / g->kw, kx = k % g->kw;
  int64_t iy = j / g->ow * g->sh - g->ph + ky * g->dh, ix = j % g->ow * g->sw - g->pw + kx * g->dw;
  return iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw ? 0.0f : x[(c * g->ih + iy) * g->iw + ix];
}

/* Both packers (portable, and AVX-512 when the CPU has it): the masked-load one takes strides 1 and 2 with
 * runs of up to 32 pixels and at most 16 tap columns; wider slivers, longer runs, more tap columns and
 * other strides go through the general loop with the AVX-512 gather. */
static void patch_packer_matches_im2col(void **state) {
  (void)state;
  /* ih, iw, kh, kw, sh, sw, dh, dw, ph, pw, channels */
  static const int64_t geoms[][11] = {
      {5, 1, 3, 1, 1, 1, 1, 1, 1, 0, 2},     /* one output column: a run per pixel */
      {80, 1, 3, 1, 1, 1, 1, 1, 1, 0, 3},    /* 80 x 1 outputs: more runs than MAX_RUNS (32) in a 128-wide sliver */
      {7, 9, 3, 3, 2, 2, 1, 1, 1, 1, 3},     /* stride 2 gathers */
      {6, 5, 2, 2, 1, 1, 2, 2, 1, 2, 2},     /* dilation with pads wider than the input edge */
      {1, 40, 1, 5, 1, 3, 1, 1, 0, 4, 2},    /* 1-D, stride 3 */
      {12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 4},
      {30, 75, 7, 7, 2, 2, 1, 1, 3, 3, 2},   /* the stem: 7x7 stride 2 pad 3, output rows wider than a sliver */
      {9, 70, 3, 3, 1, 2, 1, 2, 1, 4, 2},    /* stride 2 with dilation 2, pads past the first taps */
      {3, 50, 1, 18, 1, 1, 1, 1, 0, 9, 2},   /* 18 tap columns: more than the mask table holds */
      {2, 37, 2, 3, 1, 1, 1, 1, 0, 0, 3},    /* no pads: every lane inside the row */
      {4, 6, 3, 3, 1, 2, 1, 1, 5, 5, 1},     /* pads wider than the input: rows and runs all padding */
  };
  static const int widths[] = {4, 16, 32, 128};
  bool has_avx512 = tb_gemm_path_for(tb_convert_hardware_features()) == TB_GEMM_AVX512;
  for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++)
    for (int avx512 = 0; avx512 <= (int)has_avx512; avx512++) {
      const int64_t *q = geoms[gi];
      tb_conv_geom g = {.spatial = 2, .batch = 1, .in_c = q[10], .out_c = 1, .group = 1, .ih = q[0], .iw = q[1],
                        .kh = q[2], .kw = q[3], .sh = q[4], .sw = q[5], .dh = q[6], .dw = q[7], .ph = q[8], .pw = q[9]};
      g.oh = (g.ih + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
      g.ow = (g.iw + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
      int64_t k = tb_conv_k(&g), n = tb_conv_pixels(&g);
      float *x = malloc((size_t)(g.in_c * g.ih * g.iw) * sizeof *x), *dst = malloc((size_t)(k * (n + 128)) * sizeof *dst);
      assert_true(x && dst);
      fill(x, g.in_c * g.ih * g.iw, 40 + gi);
      for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (int64_t col0 = 0; col0 <= 3 && col0 < n; col0 += 3)
          for (int split = 0; split < 3; split++) {
            int width = widths[wi];
            int64_t o0 = split == 2 ? 1 : 0, outer = n - col0 - o0, p0 = split == 0 ? 0 : k / 2 + split - 1;
            int64_t kc = split == 0 ? k : k - p0;
            if (outer <= 0 || kc <= 0) continue;
            tb_conv_patches patches = {&g, x, col0, avx512 != 0};
            int64_t slivers = (outer + width - 1) / width;
            for (int64_t i = 0; i < slivers * kc * width; i++) dst[i] = NAN;
            tb_conv_pack_patches(&patches, o0, outer, p0, kc, width, dst);
            for (int64_t sl = 0; sl < slivers; sl++)
              for (int64_t p = 0; p < kc; p++)
                for (int o = 0; o < width; o++) {
                  int64_t j = sl * width + o;
                  float want = j < outer ? im2col_at(&g, x, p0 + p, col0 + o0 + j) : 0.0f;
                  float got = dst[(sl * kc + p) * width + o];
                  if (!(got == want))
                    fail_msg("%s packer, geometry %zu width %d col0 %lld o0 %lld p0 %lld: (k %lld, pixel %lld) is %g, "
                             "expected %g", avx512 ? "avx512" : "portable", gi, width, (long long)col0, (long long)o0,
                             (long long)p0, (long long)(p0 + p), (long long)(col0 + o0 + j), got, want);
                }
          }
      free(x);
      free(dst);
    }
}

/* An error status naming the node n0, with `words` in the sentence. */
static void expect_error(toh *t, const tb_kernel *k, tb_status want, const char *words) {
  tb_tensor *out = NULL;
  tb_status st = run_kernel(t, k, PREP_CONST_W, NULL, &out);
  assert_int_equal(st, want);
  TB_ASSERT_CONTAINS(tb_last_error(), "n0");
  TB_ASSERT_CONTAINS(tb_last_error(), words);
  tb_tensor_destroy(out);
}

static void wrong_shapes_are_errors_naming_the_node(void **state) {
  (void)state;
  const conv_case base = {"errors", 1, 4, 5, 5, 6, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true};
  for (int p = 0; p < n_paths(); p++) {
    toh t;
    setup(&t, true, &base, &acts[1], true);
    make_inputs(&t, &base, 5);
    int64_t w_bad[4] = {6, 3, 3, 3}, b_bad[1] = {5}, r_bad[4] = {1, 6, 5, 4}, x_bad[2] = {4, 5};
    tb_tensor *w = t.in[1], *b = t.in[2], *x = t.in[0];
    t.in[3] = random_tensor(&t, 4, (const int64_t[]){1, 6, 5, 5}, 3);
    t.in[1] = random_tensor(&t, 4, w_bad, 1); /* 3 channels per group for 4 input channels */
    expect_error(&t, fused_entries[p], TB_ERR_MODEL, "does not fit 4 input channels");
    tb_tensor_destroy(t.in[1]);
    t.in[1] = w;
    t.in[2] = random_tensor(&t, 1, b_bad, 2);
    expect_error(&t, fused_entries[p], TB_ERR_MODEL, "bias B must be 1-D with 6 values");
    tb_tensor_destroy(t.in[2]);
    t.in[2] = b;
    tb_tensor_destroy(t.in[3]);
    t.in[3] = random_tensor(&t, 4, r_bad, 3);
    expect_error(&t, fused_entries[p], TB_ERR_INVALID_ARGUMENT, "residual input's shape [1, 6, 5, 4] differs");
    t.in[0] = random_tensor(&t, 2, x_bad, 4);
    expect_error(&t, fused_entries[p], TB_ERR_MODEL, "rank");
    tb_tensor_destroy(t.in[0]);
    t.in[0] = x;
    toh_teardown(&t);
  }
  /* an unknown activation is refused when the node's parameters are parsed (no kernel sees it), and a
   * float64 input handed to the float32 kernel is an error */
  toh t;
  act_case bad = {"Swish", 0, 0, 0, 0};
  setup(&t, true, &base, &bad, false);
  assert_int_equal(tb_node_parse_params(t.graph, toh_node(&t)), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute activation is 'Swish'; expected Relu");
  toh_teardown(&t);
  setup(&t, false, &base, &no_act, false);
  make_inputs(&t, &base, 7);
  double xd[100] = {0};
  tb_tensor_destroy(t.in[0]);
  t.in[0] = toh_host_tensor(t.cpu, TB_DTYPE_F64, 4, (const int64_t[]){1, 4, 5, 5}, xd);
  expect_error(&t, &tb_kernel_conv_f32_portable, TB_ERR_INTERNAL, "float32");
  toh_teardown(&t);
}

static uint64_t features_with_mask(const char *mask) {
  if (mask) setenv("TB_CPU_FEATURES", mask, 1);
  else unsetenv("TB_CPU_FEATURES");
  uint64_t f = tb_convert_features();
  unsetenv("TB_CPU_FEATURES");
  return f;
}

/* The kernel the executor would pick at `level` for a case under a mask, with X of this dtype and rank. */
static const tb_kernel *pick(bool fused, tb_dtype dtype, size_t rank, int level, const char *mask) {
  toh t;
  const conv_case c = {"pick", 1, 4, 8, 8, 4, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true};
  setup(&t, fused, &c, &no_act, false);
  const int64_t d[5] = {1, 4, 8, 8, 8}, wd[5] = {4, 4, 3, 3, 3};
  tb_value_type x = toh_type(dtype, rank, d), w = toh_type(dtype, rank, wd), b = toh_type(dtype, 1, d + 1);
  const tb_value_type *in[3] = {&x, &w, &b};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, features_with_mask(mask));
  toh_teardown(&t);
  return k;
}

static void kernel_choice_follows_mask(void **state) {
  (void)state;
  tb_gemm_path best = tb_gemm_path_for(tb_convert_hardware_features());
  for (int f = 0; f < 2; f++) {
    const tb_kernel *const *e = f ? fused_entries : conv_entries;
    if (best == TB_GEMM_AVX512) assert_ptr_equal(pick(f, TB_DTYPE_F32, 4, 2, NULL), e[TB_GEMM_AVX512]);
    if (best >= TB_GEMM_AVX2) assert_ptr_equal(pick(f, TB_DTYPE_F32, 4, 2, "-avx512f"), e[TB_GEMM_AVX2]);
    assert_ptr_equal(pick(f, TB_DTYPE_F32, 3, 2, "-avx2"), e[TB_GEMM_PORTABLE]);
    const tb_kernel *ref = f ? &tb_kernel_fused_conv : &tb_kernel_conv;
    assert_ptr_equal(pick(f, TB_DTYPE_F32, 4, 1, NULL), ref); /* O1 keeps the reference */
    assert_ptr_equal(pick(f, TB_DTYPE_F64, 4, 2, NULL), ref); /* float32 only */
    assert_ptr_equal(pick(f, TB_DTYPE_F32, 5, 2, NULL), ref); /* 3-D convolutions stay on the reference */
    const tb_kernel *const *b16 = f ? fused_bf16_entries : conv_bf16_entries;
    assert_ptr_equal(pick(f, TB_DTYPE_F32, 4, 3, NULL), b16[cpu_has(TB_GEMM_BF16_AMX)          ? TB_GEMM_BF16_AMX
                                                                : cpu_has(TB_GEMM_BF16_AVX512BF16) ? TB_GEMM_BF16_AVX512BF16
                                                                                                   : TB_GEMM_BF16_PORTABLE]); /* O3: bf16 */
    assert_ptr_equal(pick(f, TB_DTYPE_F32, 4, 3, "-avx512bf16"), b16[0]);
    assert_ptr_equal(pick(f, TB_DTYPE_F32, 5, 3, NULL), ref);
  }
}

/* ResNet-18's convolution shapes (batch 1, 224x224 input) on the best path and the two-thread pool, as
 * FusedConv with bias, residual (where the block has one) and Relu; 2000 sampled outputs each against a
 * double-precision direct convolution. */
static void resnet18_layers_correct(void **state) {
  (void)state;
  static const conv_case layers[] = {
      {"stem 7x7/2", 1, 3, 224, 224, 64, 7, 7, 1, 2, 1, {3, 3, 3, 3}, NULL, true},
      {"layer1 3x3", 1, 64, 56, 56, 64, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
      {"layer2 3x3/2", 1, 64, 56, 56, 128, 3, 3, 1, 2, 1, {1, 1, 1, 1}, NULL, true},
      {"layer2 downsample 1x1/2", 1, 64, 56, 56, 128, 1, 1, 1, 2, 1, {0}, NULL, true},
      {"layer3 3x3", 1, 256, 14, 14, 256, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
      {"layer4 3x3", 1, 512, 7, 7, 512, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
  };
  int best = n_paths() - 1;
  for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
    const conv_case *c = &layers[l];
    bool residual = c->stride == 1;
    toh t;
    setup(&t, true, c, &acts[1], residual);
    make_inputs(&t, c, 11 + l);
    int64_t oh = (c->h + c->pads[0] + c->pads[2] - c->kh) / c->stride + 1, ow = (c->w + c->pads[1] + c->pads[3] - c->kw) / c->stride + 1;
    int64_t ys[4] = {1, c->m, oh, ow};
    if (residual) t.in[3] = random_tensor(&t, 4, ys, 12 + l);
    tb_tensor *y = NULL;
    TB_ASSERT_OK(run_kernel(&t, fused_entries[best], PREP_CONST_W, pool2, &y));
    toh_assert_shape(y, 4, ys);
    const float *x = tb_tensor_host_data(t.in[0]), *w = tb_tensor_host_data(t.in[1]), *b = tb_tensor_host_data(t.in[2]);
    const float *r = residual ? tb_tensor_host_data(t.in[3]) : NULL, *py = tb_tensor_host_data(y);
    uint64_t s = 12345 + l;
    for (int i = 0; i < 2000; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      int64_t e = (int64_t)((s >> 33) % (uint64_t)(c->m * oh * ow)), m = e / (oh * ow), oy = e / ow % oh, ox = e % ow;
      double acc = b[m];
      for (int64_t ch = 0; ch < c->c; ch++)
        for (int64_t ky = 0; ky < c->kh; ky++)
          for (int64_t kx = 0; kx < c->kw; kx++) {
            int64_t iy = oy * c->stride - c->pads[0] + ky, ix = ox * c->stride - c->pads[1] + kx;
            if (iy >= 0 && iy < c->h && ix >= 0 && ix < c->w)
              acc += (double)x[(ch * c->h + iy) * c->w + ix] * w[((m * c->c + ch) * c->kh + ky) * c->kw + kx];
          }
      if (r) acc += r[e];
      acc = acc < 0 ? 0 : acc;
      if (!(fabs(py[e] - acc) <= 1e-4 + 1e-4 * fabs(acc)))
        fail_msg("%s (%s path): output %lld is %.9g, expected %.9g", c->what, path_names[best], (long long)e, py[e], acc);
    }
    tb_tensor_destroy(y);
    toh_teardown(&t);
  }
}

/* Prepare and run the bundled CNN at this level and precision under a TB_CPU_FEATURES mask; *r gets the
 * number of nodes prepare put in reduced precision and whether one of them is a convolution in bf16. */
static tb_tensor *run_cnn(tb_model *m, tb_backend *b, tb_tensor *x, tb_opt_level level, const char *mask,
                          size_t *reduced, bool *conv_bf16) {
  const char *outer = getenv("TB_CPU_FEATURES"); /* the run's own mask (scripts/test_isa.sh), kept after */
  char *before = outer ? strdup(outer) : NULL;
  if (mask) setenv("TB_CPU_FEATURES", mask, 1);
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  if (before) setenv("TB_CPU_FEATURES", before, 1);
  else unsetenv("TB_CPU_FEATURES");
  free(before);
  *reduced = r->reduced_precision_nodes;
  *conv_bf16 = false;
  for (size_t i = 0; i < r->reduced_precision_nodes; i++)
    if (strstr(r->node_precisions[i], "Conv") && strstr(r->node_precisions[i], "bf16")) *conv_bf16 = true;
  const char *names[] = {"input"};
  tb_tensor *y = NULL;
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &x, 1, NULL, &y));
  tb_prepared_destroy(p);
  return y;
}

/* The bundled CNN at O2 (fp32, each mask) within the validate table's O2 tolerance (rtol 1e-4, atol 1e-5)
 * of O0, and at O3 (its convolutions in bf16) within the bf16 entry (rtol 1e-2, atol 1e-2). */
static void cnn_model_o2_o3_match_o0(void **state) {
  (void)state;
  tbt_tensor_env();
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &m));
  tb_tensor *x = NULL;
  TB_ASSERT_OK(tb_npy_load(MODELS "cnn_small/inputs/input.npy", b, &x));
  size_t reduced;
  bool conv_bf16;
  tb_tensor *ref = run_cnn(m, b, x, TB_LEVEL_O0, NULL, &reduced, &conv_bf16);
  const char *masks[] = {NULL, "-avx512f", "-avx2"};
  for (int mi = 0; mi < 4; mi++) {
    bool o3 = mi == 3;
    tb_tensor *y = run_cnn(m, b, x, o3 ? TB_LEVEL_O3 : TB_LEVEL_O2, o3 ? NULL : masks[mi], &reduced, &conv_bf16);
    if (o3) assert_int_equal(conv_bf16, tbt_cpu_has_bf16()); /* O3 is fp32 on a CPU without AVX512-BF16 */
    else assert_int_equal(reduced, 0);
    assert_int_equal(tb_tensor_numel(y), tb_tensor_numel(ref));
    const float *g = tb_tensor_host_data(y), *r = tb_tensor_host_data(ref);
    double rtol = o3 ? 1e-2 : 1e-4, atol = o3 ? 1e-2 : 1e-5;
    for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
      if (!(fabs((double)g[i] - r[i]) <= atol + rtol * fabs((double)r[i])))
        fail_msg("cnn_small %s (mask %s) element %lld: %.9g vs O0 %.9g", o3 ? "O3" : "O2",
                 !o3 && masks[mi] ? masks[mi] : "none", (long long)i, g[i], r[i]);
    tb_tensor_destroy(y);
  }
  tb_tensor_destroy(ref);
  tb_tensor_destroy(x);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}

static int group_setup(void **state) {
  (void)state;
  return tb_pool_create(2, &pool2) == TB_OK ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  tb_pool_destroy(pool2);
  return 0;
}

int main(void) {
  /* O3 runs bf16 wherever a kernel exists (no timing trial, whose choice depends on the machine): these tests
   * check the bf16 kernels' results through tb_model_prepare */
  setenv("TB_BF16_TRIAL", "off", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(patch_packer_matches_im2col),
      cmocka_unit_test(conv_gemm_paths_match_reference),
      cmocka_unit_test(conv_depthwise_matches_reference),
      cmocka_unit_test(fused_conv_each_activation_and_residual),
      cmocka_unit_test(block_act_whole_planes_same_bits_as_rows),
      cmocka_unit_test(bf16_entries_match_reference),
      cmocka_unit_test(wrong_shapes_are_errors_naming_the_node),
      cmocka_unit_test(kernel_choice_follows_mask),
      cmocka_unit_test(resnet18_layers_correct),
      cmocka_unit_test(cnn_model_o2_o3_match_o0),
  };
  /* Twice: the AVX-512 entries take the direct convolution where it fits (test_conv_direct.c covers it on
   * its own), so the first pass keeps every case on the implicit GEMM with conv_algo gemm. Winograd
   * (test_conv_winograd.c) is off in both: its bf16 rounds transformed values, not X and W. The kernels
   * get the option in ctx->conv_algo; the whole-model test gets it as the prepare options' default from
   * TB_CONV_WINOGRAD / TB_CONV_DIRECT. */
  tconv_conv_algo = TB_CONV_ALGO_GEMM;
  setenv("TB_CONV_WINOGRAD", "off", 1);
  setenv("TB_CONV_DIRECT", "off", 1);
  int failed = cmocka_run_group_tests_name("implicit GEMM (conv_algo gemm)", tests, group_setup, group_teardown);
  unsetenv("TB_CONV_DIRECT");
  tconv_conv_algo = TB_CONV_ALGO_DIRECT;
  return failed + cmocka_run_group_tests_name("direct convolution where it fits", tests, group_setup, group_teardown);
}
