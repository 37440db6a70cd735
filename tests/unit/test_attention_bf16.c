/* The level-3 bf16 tb::Attention (src/backend/cpu/kernels/fast/seq/seq_attention_bf16.c) against the level-0
 * reference and against a double-precision emulation of its bf16 steps: sequence lengths 1, 7, 128 and
 * 130, head dims 64 and odd (1, 13, 33), value dims 64 and odd, with and without a mask (a full one, a
 * broadcast padding row, a strided column, a causal -inf one), the scale multiplied and divided, batch
 * broadcast between Q, K_T and V; the same bits on 1, 2 and 3 threads (a single entry splits its query
 * rows); NaN in a row of Q, in a column of K_T and a fully masked row (NaN exactly where the reference has
 * it); the kernel choice under TB_CPU_FEATURES (level 3 falls back to the fp32 kernels without
 * AVX512-BF16); an attention graph through tb_model_prepare at O3 listing the node as bf16; and errors
 * naming the node. The bf16 cases skip (with a message) on a CPU without AVX512-BF16.
 *
 * Tolerances. Against the fp32 reference: the validate table's bf16 row (rtol 1e-2, atol 1e-2 scaled by
 * S = max(1, largest |ref|), docs/validation.md). Against the emulation (Q, K_T, V and the softmax
 * numerators rounded to bf16 the same way, sums in double): 1e-3 S + 1e-3 |ref|: the kernel's fp32 sums
 * and vector exp differ by ~d 2^-24 relative, which now and then moves a numerator across a bf16 rounding
 * boundary (one ulp, 2^-8 of that weight). */
#include <float.h>
#include <math.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "backend/cpu/kernels/fast/seq/seq_attention.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_engine_util.h"

extern const tb_kernel tb_kernel_attention_bf16_avx512bf16, tb_kernel_attention_f32_avx512,
    tb_kernel_attention_f32_avx2, tb_kernel_attention_f32_portable, tb_kernel_fused_attention;

#define BF16_TOL 1e-2
#define EMU_TOL 1e-3

static bool have_bf16(void) { return tbt_cpu_has_bf16_path(); }
#define NO_BF16 "this CPU (or valgrind) lacks the AVX512-BF16 path's features, so the bf16 kernel never runs"

static void fill(float *x, int64_t n, uint64_t seed, float scale) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 11;
  for (int64_t i = 0; i < n; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    x[i] = scale * (float)((double)((s * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
}

static int64_t numel(size_t ndim, const int64_t *shape) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

static void attn_setup(toh *t, size_t n_in, const tb_attr *attrs, size_t n_attrs) {
  toh_begin(t, NULL);
  toh_add_op(t, "tb", "Attention", 1, n_in, 0, 1, 0, attrs, n_attrs);
}

static tb_status run_kernel(toh *t, const tb_kernel *k, tb_pool *pool, tb_tensor **out) {
  *out = NULL;
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = t->in, .n_outputs = 1,
                       .outputs = out, .backend = t->cpu, .threads = tb_pool_threads(pool), .pool = pool};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  return k->run(&ctx);
}

/* One case: shapes (ranks 2..4, nm 0: no mask), the scale (0 none, 1 multiply by 0.125, 2 divide by 8, 3
 * divide by 2.75) and the mask kind. */
typedef enum { MASK_NONE, MASK_RANDOM, MASK_CAUSAL } mask_kind;
typedef struct attn_case {
  size_t nq, nk, nv, nm;
  int64_t q[4], k[4], v[4], m[4];
  int scale;
  mask_kind mask;
} attn_case;

static void case_inputs(toh *t, const attn_case *c) {
  const int64_t *shapes[4] = {c->q, c->k, c->v, c->m};
  const size_t ranks[4] = {c->nq, c->nk, c->nv, c->nm};
  for (int i = 0; i < (c->mask == MASK_NONE ? 3 : 4); i++) {
    int64_t n = numel(ranks[i], shapes[i]);
    float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
    assert_non_null(x);
    fill(x, n, 41 + (uint64_t)i, i == 3 ? 2.0f : 1.0f);
    if (i == 3 && c->mask == MASK_CAUSAL) /* [.., rows, cols]: -inf above the diagonal */
      for (int64_t e = 0; e < n; e++) {
        int64_t cols = shapes[i][ranks[i] - 1], rows = shapes[i][ranks[i] - 2];
        x[e] = e % cols <= e / cols % rows ? 0.0f : -INFINITY;
      }
    toh_input(t, (size_t)i, TB_DTYPE_F32, ranks[i], shapes[i], x);
    free(x);
  }
}

static void case_setup(toh *t, const attn_case *c) {
  static tb_attr attrs[2];
  attrs[0] = TOH_FLOAT("scale", c->scale == 1 ? 0.125f : c->scale == 2 ? 8.0f : 2.75f);
  attrs[1] = TOH_INT("scale_divide", c->scale >= 2);
  attn_setup(t, c->mask == MASK_NONE ? 3 : 4, attrs, c->scale ? 2 : 0);
  case_inputs(t, c);
}

static double bf16(float x) { return (double)tb_bf16_to_float(tb_bf16_round(x)); }

/* The bf16 kernel's steps in double: Q, K_T, V rounded to bf16; S rounded to fp32 then scaled and masked
 * in fp32; the softmax numerators exp(s - max) rounded to bf16; Y = (E V) / sum of the numerators. Batch entries as the reference broadcasts them; the mask
 * through the same broadcast rule (right-aligned). */
static float *emulate(toh *t) {
  const tb_tensor *q = t->in[0], *k = t->in[1], *v = t->in[2], *mk = t->n_in > 3 ? t->in[3] : NULL;
  const tb_node *n = toh_node(t);
  float scale = 1.0f;
  int64_t divide = 0;
  TB_ASSERT_OK(tb_attr_float(t->graph, n, "scale", 1.0f, &scale));
  TB_ASSERT_OK(tb_attr_int(t->graph, n, "scale_divide", 0, &divide));
  bool has_scale = tb_node_attr(n, "scale") != NULL;
  size_t nq = tb_tensor_ndim(q), nk = tb_tensor_ndim(k), nv = tb_tensor_ndim(v);
  size_t nb = nq - 2 > nk - 2 ? nq - 2 : nk - 2;
  if (nv - 2 > nb) nb = nv - 2;
  int64_t batch[4] = {1, 1, 1, 1};
  const tb_tensor *ops[3] = {q, k, v};
  for (int i = 0; i < 3; i++) {
    size_t r = tb_tensor_ndim(ops[i]) - 2;
    for (size_t b = 0; b < r; b++)
      if (tb_tensor_shape(ops[i])[b] != 1) batch[nb - r + b] = tb_tensor_shape(ops[i])[b];
  }
  int64_t lq = tb_tensor_shape(q)[nq - 2], d = tb_tensor_shape(q)[nq - 1], lk = tb_tensor_shape(k)[nk - 1];
  int64_t dv = tb_tensor_shape(v)[nv - 1], entries = numel(nb, batch);
  float *y = calloc((size_t)(entries * lq * dv + 1), sizeof(float));
  double *p = malloc((size_t)(lk + 1) * sizeof(double));
  assert_true(y && p);
  int64_t bidx[4] = {0};
  for (int64_t e = 0; e < entries; e++) {
    int64_t full[6];
    memcpy(full, bidx, nb * sizeof(int64_t));
    const float *qe = (const float *)tb_tensor_host_data(q) + tb_nn_bcast_offset(nb, bidx, nq - 2, tb_tensor_shape(q)) * lq * d;
    const float *ke = (const float *)tb_tensor_host_data(k) + tb_nn_bcast_offset(nb, bidx, nk - 2, tb_tensor_shape(k)) * d * lk;
    const float *ve = (const float *)tb_tensor_host_data(v) + tb_nn_bcast_offset(nb, bidx, nv - 2, tb_tensor_shape(v)) * lk * dv;
    for (int64_t i = 0; i < lq; i++) {
      double mx = -INFINITY, sum = 0.0;
      for (int64_t j = 0; j < lk; j++) {
        double acc = 0.0;
        for (int64_t c = 0; c < d; c++) acc += bf16(qe[i * d + c]) * bf16(ke[c * lk + j]);
        float x = (float)acc;
        if (has_scale) x = divide ? x / scale : x * scale;
        if (mk) {
          full[nb] = i;
          full[nb + 1] = j;
          x += ((const float *)tb_tensor_host_data(mk))[tb_nn_bcast_offset(nb + 2, full, tb_tensor_ndim(mk), tb_tensor_shape(mk))];
        }
        p[j] = x;
        if (x > mx) mx = x;
      }
      for (int64_t j = 0; j < lk; j++) sum += (p[j] = exp(p[j] - mx));
      for (int64_t j = 0; j < lk; j++) p[j] = bf16((float)p[j]);
      for (int64_t c = 0; c < dv; c++) {
        double acc = 0.0;
        for (int64_t j = 0; j < lk; j++) acc += p[j] * bf16(ve[j * dv + c]);
        y[(e * lq + i) * dv + c] = (float)(acc / sum);
      }
    }
    tb_kernel_next_index(nb, batch, bidx);
  }
  free(p);
  return y;
}

/* |got - want| <= atol * S + rtol |want|, S = max(1, largest |want|); NaN only where want is NaN. */
static double within(const float *got, const float *want, int64_t n, double atol, double rtol, const char *what) {
  double s = 1.0, worst = 0.0;
  for (int64_t i = 0; i < n; i++)
    if (isfinite(want[i]) && fabs(want[i]) > s) s = fabs(want[i]);
  for (int64_t i = 0; i < n; i++) {
    if (isnan(want[i]) || isnan(got[i])) {
      if (isnan(want[i]) != isnan(got[i])) fail_msg("%s: element %lld is %.9g, expected %.9g", what, (long long)i, got[i], want[i]);
      continue;
    }
    double diff = fabs((double)got[i] - want[i]);
    if (!(diff <= atol * s + rtol * fabs((double)want[i])))
      fail_msg("%s: element %lld is %.9g, expected %.9g (atol %g x %g, rtol %g)", what, (long long)i, got[i], want[i],
               atol, s, rtol);
    if (diff > worst) worst = diff;
  }
  return worst;
}

/* The bf16 kernel against the fp32 reference and the emulation, serially and on 2 threads. Returns the
 * largest difference from the fp32 reference. */
static double check_case(toh *t, const char *what) {
  tb_tensor *ref[1] = {NULL}, *got = NULL;
  TB_ASSERT_OK(toh_run_tensors(t, t->in, ref, false));
  float *emu = emulate(t);
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  double worst = 0.0;
  for (int threads = 1; threads <= 2; threads++) {
    TB_ASSERT_OK(run_kernel(t, &tb_kernel_attention_bf16_avx512bf16, threads > 1 ? pool : NULL, &got));
    toh_assert_shape(got, tb_tensor_ndim(ref[0]), tb_tensor_shape(ref[0]));
    char msg[200];
    snprintf(msg, sizeof msg, "%s, %d thread(s), vs the fp32 reference", what, threads);
    worst = within(tb_tensor_host_data(got), tb_tensor_host_data(ref[0]), tb_tensor_numel(got), BF16_TOL, BF16_TOL, msg);
    snprintf(msg, sizeof msg, "%s, %d thread(s), vs the bf16 emulation", what, threads);
    within(tb_tensor_host_data(got), emu, tb_tensor_numel(got), EMU_TOL, EMU_TOL, msg);
    tb_tensor_destroy(got);
  }
  tb_pool_destroy(pool);
  free(emu);
  toh_clear(ref, 1);
  return worst;
}

static void matches_reference_and_emulation(void **state) {
  (void)state;
  if (!have_bf16()) TBT_SKIP(NO_BF16); /* the level-3 choice is then the fp32 kernel (tested below) */
  const int64_t lens[4] = {1, 7, 128, 130}, dims[4][2] = {{64, 64}, {13, 7}, {1, 33}, {33, 64}};
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      for (int dd = 0; dd < 4; dd++) {
        int64_t lq = lens[a], lk = lens[b], d = dims[dd][0], dv = dims[dd][1];
        mask_kind mk = (mask_kind)((a + b + dd) % 3);
        if (mk == MASK_CAUSAL && lq != lk) mk = MASK_RANDOM;
        attn_case c = {4, 4, 4, 2, {1, 3, lq, d}, {1, 3, d, lk}, {1, 3, lk, dv}, {lq, lk}, (a + dd) % 4, mk};
        toh t;
        case_setup(&t, &c);
        char what[128];
        snprintf(what, sizeof what, "lq %lld lk %lld d %lld dv %lld mask %d scale %d", (long long)lq, (long long)lk,
                 (long long)d, (long long)dv, (int)mk, c.scale);
        double worst = check_case(&t, what);
        /* the products really are bf16: a 64-deep sum of rounded values differs from fp32 */
        if (d == 64 && lk >= 128 && worst < 1e-5) fail_msg("%s: identical to fp32 (%g); not computed in bf16", what, worst);
        toh_teardown(&t);
      }
}

/* Broadcast batches, a padding-row mask, a strided mask column, rank-2 operands. */
static void broadcasts_and_mask_layouts(void **state) {
  (void)state;
  if (!have_bf16()) TBT_SKIP(NO_BF16);
  const attn_case cases[] = {
      {4, 3, 4, 4, {2, 1, 130, 64}, {3, 64, 130}, {1, 3, 130, 64}, {2, 1, 1, 130}, 2, MASK_RANDOM},
      {3, 3, 3, 2, {2, 13, 24}, {2, 24, 150}, {2, 150, 9}, {13, 1}, 3, MASK_RANDOM},
      {2, 2, 2, 0, {7, 64}, {64, 7}, {7, 64}, {0}, 0, MASK_NONE},
      {2, 2, 2, 2, {128, 64}, {64, 128}, {128, 64}, {128, 128}, 2, MASK_CAUSAL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    toh t;
    case_setup(&t, &cases[i]);
    char what[64];
    snprintf(what, sizeof what, "broadcast case %zu", i);
    check_case(&t, what);
    toh_teardown(&t);
  }
}

/* The same bits on 1, 2 and 3 threads: twelve heads (split by entry), and one head of 130 rows (split by
 * query rows). */
static void same_bits_on_any_thread_count(void **state) {
  (void)state;
  if (!have_bf16()) TBT_SKIP(NO_BF16);
  const attn_case cases[] = {
      {4, 4, 4, 2, {1, 12, 128, 64}, {1, 12, 64, 128}, {1, 12, 128, 64}, {128, 128}, 2, MASK_RANDOM},
      {2, 2, 2, 0, {130, 33}, {33, 130}, {130, 64}, {0}, 1, MASK_NONE},
      {3, 3, 3, 0, {5, 7, 64}, {5, 64, 7}, {5, 7, 13}, {0}, 1, MASK_NONE},
  };
  tb_pool *pools[3] = {NULL};
  TB_ASSERT_OK(tb_pool_create(2, &pools[1]));
  TB_ASSERT_OK(tb_pool_create(3, &pools[2]));
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    toh t;
    case_setup(&t, &cases[i]);
    tb_tensor *first = NULL;
    TB_ASSERT_OK(run_kernel(&t, &tb_kernel_attention_bf16_avx512bf16, NULL, &first));
    for (int p = 1; p < 3; p++) {
      tb_tensor *out = NULL;
      TB_ASSERT_OK(run_kernel(&t, &tb_kernel_attention_bf16_avx512bf16, pools[p], &out));
      assert_int_equal(tb_tensor_nbytes(out), tb_tensor_nbytes(first));
      if (memcmp(tb_tensor_host_data(out), tb_tensor_host_data(first), tb_tensor_nbytes(first)) != 0)
        fail_msg("case %zu: %d threads differ from 1", i, p + 1);
      tb_tensor_destroy(out);
    }
    tb_tensor_destroy(first);
    toh_teardown(&t);
  }
  tb_pool_destroy(pools[1]);
  tb_pool_destroy(pools[2]);
}

/* NaN in one row of Q: that output row is NaN, the others are finite and match. NaN in one column of K_T:
 * every row is NaN. A mask row of -inf everywhere: that row NaN, as the reference (exp(-inf - -inf)). */
static void nan_goes_where_the_reference_puts_it(void **state) {
  (void)state;
  if (!have_bf16()) TBT_SKIP(NO_BF16);
  for (int kind = 0; kind < 3; kind++) {
    attn_case c = {3, 3, 3, 2, {2, 130, 64}, {2, 64, 130}, {2, 130, 64}, {130, 130}, 2,
                   kind == 2 ? MASK_RANDOM : MASK_NONE};
    toh t;
    case_setup(&t, &c);
    float *x = tb_tensor_host_data(t.in[kind == 2 ? 3 : kind]);
    if (kind == 0) x[(130 + 5) * 64 + 17] = NAN; /* entry 1, row 5 */
    if (kind == 1) x[(64 + 3) * 130 + 129] = NAN; /* entry 1, column 129 */
    if (kind == 2)
      for (int64_t j = 0; j < 130; j++) x[9 * 130 + j] = -INFINITY; /* row 9 of every entry */
    tb_tensor *ref[1] = {NULL}, *got = NULL;
    TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
    TB_ASSERT_OK(run_kernel(&t, &tb_kernel_attention_bf16_avx512bf16, NULL, &got));
    const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref[0]);
    int64_t nans = 0;
    for (int64_t i = 0; i < tb_tensor_numel(got); i++) {
      if (isnan(g[i]) != isnan(r[i])) fail_msg("kind %d: element %lld is %g, reference %g", kind, (long long)i, g[i], r[i]);
      nans += isnan(g[i]);
    }
    const int64_t want[3] = {64, 130 * 64, 2 * 64};
    assert_int_equal(nans, want[kind]);
    char what[32];
    snprintf(what, sizeof what, "NaN kind %d", kind);
    within(g, r, tb_tensor_numel(got), BF16_TOL, BF16_TOL, what);
    tb_tensor_destroy(got);
    toh_clear(ref, 1);
    toh_teardown(&t);
  }
}

/* Dividing by 8 runs as multiplying by 0.125 (tb_seq_attention_exact_inverse): the same bits as the model
 * written with * 0.125, on every fp32 path and the bf16 one; 2.75 has no exact inverse. */
static void divide_by_power_of_two_is_exact(void **state) {
  (void)state;
  float inverse;
  assert_true(tb_seq_attention_exact_inverse(8.0f, &inverse) && inverse == 0.125f);
  assert_true(tb_seq_attention_exact_inverse(0.0625f, &inverse) && inverse == 16.0f);
  assert_false(tb_seq_attention_exact_inverse(2.75f, &inverse));
  assert_false(tb_seq_attention_exact_inverse(0.0f, &inverse));
  assert_false(tb_seq_attention_exact_inverse(1e-40f, &inverse)); /* subnormal */
  assert_false(tb_seq_attention_exact_inverse(INFINITY, &inverse));
  const tb_kernel *kernels[4] = {&tb_kernel_attention_f32_portable, &tb_kernel_attention_f32_avx2,
                                     &tb_kernel_attention_f32_avx512, &tb_kernel_attention_bf16_avx512bf16};
  int paths = (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1;
  attn_case c = {3, 3, 3, 2, {2, 130, 64}, {2, 64, 130}, {2, 130, 64}, {130, 130}, 2, MASK_RANDOM};
  for (int k = 0; k < 4; k++) {
    if (k < 3 ? k >= paths : !have_bf16()) continue;
    enum { N = 2 * 130 * 64 };
    static float y[2][N];
    for (int form = 0; form < 2; form++) {
      c.scale = form ? 1 : 2; /* / 8, then * 0.125 */
      toh t;
      case_setup(&t, &c);
      tb_tensor *out = NULL;
      TB_ASSERT_OK(run_kernel(&t, kernels[k], NULL, &out));
      assert_int_equal(tb_tensor_numel(out), N);
      memcpy(y[form], tb_tensor_host_data(out), sizeof y[form]);
      tb_tensor_destroy(out);
      toh_teardown(&t);
    }
    if (memcmp(y[0], y[1], sizeof y[0]) != 0) fail_msg("kernel %d: / 8 and * 0.125 differ", k);
  }
}

/* The kernel chosen under exactly `mask` (NULL: none, whatever mask the test run has; that one is kept). */
static const tb_kernel *pick(int level, const char *mask) {
  const char *outer = getenv("TB_CPU_FEATURES");
  char *before = outer ? strdup(outer) : NULL;
  if (mask) setenv("TB_CPU_FEATURES", mask, 1);
  else unsetenv("TB_CPU_FEATURES");
  uint64_t f = tb_convert_features();
  if (before) setenv("TB_CPU_FEATURES", before, 1);
  else unsetenv("TB_CPU_FEATURES");
  free(before);
  toh t;
  attn_setup(&t, 3, NULL, 0);
  const int64_t d[3] = {2, 4, 4};
  tb_value_type ty = toh_type(TB_DTYPE_F32, 3, d);
  const tb_value_type *in[3] = {&ty, &ty, &ty};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, f);
  toh_teardown(&t);
  return k;
}

/* Level 3 takes the bf16 kernel when the CPU has AVX512-BF16, else the best fp32 one; level 2 stays fp32. */
static void kernel_choice_follows_mask(void **state) {
  (void)state;
  uint64_t hw = tb_convert_hardware_features();
  bool avx512 = tb_gemm_path_for(hw) == TB_GEMM_AVX512, avx2 = tb_gemm_path_for(hw) >= TB_GEMM_AVX2;
  assert_string_equal(tb_kernel_attention_bf16_avx512bf16.precision, "bf16");
  assert_int_equal(tb_kernel_attention_bf16_avx512bf16.level, 3);
  assert_null(tb_kernel_attention_f32_avx512.precision);
  if (have_bf16()) assert_ptr_equal(pick(3, NULL), &tb_kernel_attention_bf16_avx512bf16);
  const tb_kernel *best_f32 = avx512 ? &tb_kernel_attention_f32_avx512
                                  : avx2 ? &tb_kernel_attention_f32_avx2
                                         : &tb_kernel_attention_f32_portable;
  assert_ptr_equal(pick(3, "-avx512bf16"), best_f32);
  assert_ptr_equal(pick(3, "-avx512f"), avx2 ? &tb_kernel_attention_f32_avx2 : &tb_kernel_attention_f32_portable);
  assert_ptr_equal(pick(3, "-avx512bw"), best_f32);
  assert_ptr_equal(pick(2, NULL), best_f32);
  assert_ptr_equal(pick(1, NULL), &tb_kernel_fused_attention);
}

/* Q K^T / 8 + mask -> Softmax -> @ V as separate ONNX nodes, prepared at O3: the pattern pass makes one
 * tb::Attention, the result lists it in bf16 (fp32 under -avx512bf16), and the output is within the bf16
 * tolerance of O0. */
static void o3_lists_attention_as_bf16(void **state) {
  (void)state;
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "attn");
  const int64_t qd[3] = {4, 128, 64}, kd[3] = {4, 64, 128}, vd[3] = {4, 128, 64}, md[2] = {128, 128}, sd[1] = {1};
  float *mask = malloc(128 * 128 * sizeof(float)), eight = 8.0f;
  assert_non_null(mask);
  fill(mask, 128 * 128, 7, 1.0f);
  tbt_input(g, "q", TB_DTYPE_F32, 3, qd, NULL);
  tbt_input(g, "kt", TB_DTYPE_F32, 3, kd, NULL);
  tbt_input(g, "v", TB_DTYPE_F32, 3, vd, NULL);
  tbt_const_f32(g, "mask", 2, md, mask);
  tbt_const_f32(g, "eight", 0, sd, &eight);
  tbt_node(g, "MatMul", "qk", "q,kt", "s");
  tbt_node(g, "Div", "scaled", "s,eight", "sd");
  tbt_node(g, "Add", "masked", "sd,mask", "sm");
  int sm = tbt_node(g, "Softmax", "softmax", "sm", "p");
  static tb_attr axis[1];
  axis[0] = TOH_INT("axis", -1);
  g->nodes[sm].attrs = axis;
  g->nodes[sm].n_attrs = 1;
  tbt_node(g, "MatMul", "pv", "p,v", "y");
  tbt_output(g, "y");
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
  tb_model *m = tbt_model_of(ir);
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  float *data[3];
  tb_tensor *x[3];
  const int64_t *shapes[3] = {qd, kd, vd};
  for (int i = 0; i < 3; i++) {
    data[i] = malloc(4 * 128 * 64 * sizeof(float));
    assert_non_null(data[i]);
    fill(data[i], 4 * 128 * 64, 60 + (uint64_t)i, 1.0f);
    x[i] = tbt_f32(b, 3, shapes[i], data[i]);
    free(data[i]);
  }
  const char *names[3] = {"q", "kt", "v"};
  const char *masks[2] = {NULL, "-avx512bf16"};
  for (int mi = 0; mi < 2; mi++) {
    tb_tensor *y[2] = {NULL, NULL};
    for (int l = 0; l < 2; l++) {
      if (masks[mi]) setenv("TB_CPU_FEATURES", masks[mi], 1);
      tb_prepare_options o = {.size = sizeof o, .level = l ? TB_LEVEL_O3 : TB_LEVEL_O0, .threads = 2};
      tb_prepared *p = NULL;
      const tb_prepare_result *r = NULL;
      TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
      unsetenv("TB_CPU_FEATURES");
      if (l && mi == 0 && have_bf16()) {
        assert_int_equal(r->reduced_precision_nodes, 1);
        assert_string_equal(r->node_precisions[0], "Attention (softmax): bf16");
      } else {
        assert_int_equal(r->reduced_precision_nodes, 0);
      }
      TB_ASSERT_OK(tb_prepared_run(p, 3, names, x, 1, NULL, &y[l]));
      tb_prepared_destroy(p);
    }
    within(tb_tensor_host_data(y[1]), tb_tensor_host_data(y[0]), tb_tensor_numel(y[0]), BF16_TOL, BF16_TOL,
           "O3 vs O0 through tb_model_prepare");
    tb_tensor_destroy(y[0]);
    tb_tensor_destroy(y[1]);
  }
  free(mask);
  for (int i = 0; i < 3; i++) tb_tensor_destroy(x[i]);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}

/* Bad shapes: an error naming the node, no output. */
static void errors_name_the_node(void **state) {
  (void)state;
  if (!have_bf16()) TBT_SKIP(NO_BF16);
  const int64_t q[3] = {2, 5, 8}, k_bad[3] = {2, 7, 6}, k[3] = {2, 8, 6}, v[3] = {2, 6, 4}, m_bad[2] = {5, 3},
                q1[1] = {8};
  float buf[2 * 8 * 6] = {0};
  for (int c = 0; c < 3; c++) {
    toh t;
    attn_setup(&t, c == 1 ? 4 : 3, NULL, 0);
    toh_input(&t, 0, TB_DTYPE_F32, c == 2 ? 1 : 3, c == 2 ? q1 : q, buf);
    toh_input(&t, 1, TB_DTYPE_F32, 3, c == 0 ? k_bad : k, buf);
    toh_input(&t, 2, TB_DTYPE_F32, 3, v, buf);
    if (c == 1) toh_input(&t, 3, TB_DTYPE_F32, 2, m_bad, buf);
    tb_tensor *out = NULL;
    assert_int_equal(run_kernel(&t, &tb_kernel_attention_bf16_avx512bf16, NULL, &out), TB_ERR_MODEL);
    TB_ASSERT_CONTAINS(tb_last_error(), "'n0'");
    const char *want[3] = {"inner dimensions differ", "the mask's dimension 1 (3) does not broadcast",
                           "input Q has rank 1"};
    TB_ASSERT_CONTAINS(tb_last_error(), want[c]);
    assert_null(out);
    toh_teardown(&t);
  }
}

int main(void) {
  /* O3 runs bf16 wherever a kernel exists (no timing trial, whose choice depends on the machine): these tests
   * check the bf16 kernels' results through tb_model_prepare */
  setenv("TB_BF16_TRIAL", "off", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_reference_and_emulation), cmocka_unit_test(broadcasts_and_mask_layouts),
      cmocka_unit_test(same_bits_on_any_thread_count),   cmocka_unit_test(nan_goes_where_the_reference_puts_it),
      cmocka_unit_test(kernel_choice_follows_mask),      cmocka_unit_test(o3_lists_attention_as_bf16),
      cmocka_unit_test(divide_by_power_of_two_is_exact), cmocka_unit_test(errors_name_the_node),
  };
  tbt_clear_env();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
