/* The level-2 fp32 sequence kernels (src/backend/cpu/kernels/fast/seq/seq_*.c) on every path this CPU has
 * (AVX-512, AVX2, portable), each against the level-0 reference kernel: LSTM and GRU forward, reverse and
 * bidirectional, both layouts, sequence_lens (0 and full included), initial states, peepholes, clip,
 * input_forget, linear_before_reset 0 and 1, non-default activations, odd batch/sequence/hidden sizes and
 * a batch large enough to split the gate rows over the pool; weights constant (packed by prepare) and
 * not, outputs preallocated and not, with and without a 2-thread pool. tb::Attention with and without
 * a mask (broadcast and causal with -inf, at an odd length too), scale multiplied and divided, batch
 * broadcast, odd lengths.
 * The level-3 bf16 LSTM (AVX512-BF16 when the CPU has it, and portable) on the same LSTM cases. An LSTM
 * graph through the executor at levels 0, 2 and 3 (weights packed when it places the node). On AVX-512
 * the fp32 and AVX512-BF16 LSTM entries run the fused step (16-unit blocks x 8-row chunks, the cases
 * include partial blocks and chunks, rows ending inside a chunk and steps split over the pool; one or two
 * rows left in a chunk take the wide tile, fp32 and bf16, as on AVX2's fp32 step). Every
 * LSTM/GRU case also gives the same bits on 1, 2 and 3 threads. The kernel choice under TB_CPU_FEATURES
 * masks, the vector math (and the fused cell's division-free sigmoid/tanh) against libm, and errors on
 * bad shapes.
 *
 * Tolerance against the reference (which sums in double): |fast - ref| <= 1e-5 + 1e-4 |ref|. The fp32
 * GEMMs differ from the double sums by about k * 2^-24 relative per product, the vector exp/tanh by a
 * few ulp; through the <= 7 recurrent steps here the largest difference measured is below 1e-6.
 * The bf16 LSTM uses the validate tolerance table's bf16 row (src/tools/tolerance.c): 1e-2 + 1e-2 |ref|. */
#include <float.h>
#include <math.h>
#include "model/params.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/fast/seq/seq_vec.h"
#include "backend/cpu/kernels/fast/seq/seq_vec_x86.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_engine_util.h"

#define ATOL 1e-5
#define RTOL 1e-4
#define BF16_ATOL 1e-2
#define BF16_RTOL 1e-2

extern const tb_kernel tb_kernel_lstm_f32_avx512, tb_kernel_lstm_f32_avx2, tb_kernel_lstm_f32_portable;
extern const tb_kernel tb_kernel_gru_f32_avx512, tb_kernel_gru_f32_avx2, tb_kernel_gru_f32_portable;
extern const tb_kernel tb_kernel_attention_f32_avx512, tb_kernel_attention_f32_avx2,
    tb_kernel_attention_f32_portable;
extern const tb_kernel tb_kernel_lstm_bf16_avx512bf16, tb_kernel_lstm_bf16_portable;
extern const tb_kernel tb_kernel_attention_bf16_avx512bf16;
extern const tb_kernel tb_kernel_lstm, tb_kernel_gru, tb_kernel_fused_attention;

static const tb_kernel *const lstm_entries[3] = {&tb_kernel_lstm_f32_portable, &tb_kernel_lstm_f32_avx2,
                                                     &tb_kernel_lstm_f32_avx512};
static const tb_kernel *const gru_entries[3] = {&tb_kernel_gru_f32_portable, &tb_kernel_gru_f32_avx2,
                                                    &tb_kernel_gru_f32_avx512};
static const tb_kernel *const attn_entries[3] = {&tb_kernel_attention_f32_portable, &tb_kernel_attention_f32_avx2,
                                                     &tb_kernel_attention_f32_avx512};
static const tb_kernel *const lstm_bf16_entries[2] = {&tb_kernel_lstm_bf16_portable,
                                                          &tb_kernel_lstm_bf16_avx512bf16};
static const char *const path_names[3] = {"portable", "avx2", "avx512"};
static const char *const bf16_path_names[2] = {"bf16 portable", "avx512bf16"};

/* The paths this CPU can run: portable always, AVX2 and AVX-512 when cpuid has them. */
static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1; }
/* portable, and AVX512-BF16 when the CPU has it (these entries have no AMX path of their own) */
static int n_bf16_paths(void) { return tbt_cpu_has_bf16_path() ? 2 : 1; }

/* Entries to compare, one per path, with their names and tolerance. */
typedef struct entry_set {
  const tb_kernel *const *entries;
  const char *const *names;
  int count;
  double atol, rtol;
} entry_set;

static entry_set f32_set(const tb_kernel *const *entries) {
  return (entry_set){entries, path_names, n_paths(), ATOL, RTOL};
}

static void fill(float *x, int64_t n, uint64_t seed, float scale) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 11;
  for (int64_t i = 0; i < n; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    x[i] = scale * (float)((double)((s * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
}

static tb_tensor *rand_f32(toh *t, size_t ndim, const int64_t *shape, uint64_t seed, float scale) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= shape[i];
  float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
  assert_non_null(x);
  fill(x, n, seed, scale);
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, ndim, shape, x);
  free(x);
  return r;
}

static void assert_close(const tb_tensor *got, const tb_tensor *ref, const char *what, const entry_set *set, int path,
                         int variant) {
  assert_non_null(got);
  assert_int_equal(tb_tensor_dtype(got), TB_DTYPE_F32);
  toh_assert_shape(got, tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (!(fabs((double)g[i] - r[i]) <= set->atol + set->rtol * fabs((double)r[i])))
      fail_msg("%s, %s path, variant %d: element %lld is %.9g, reference %.9g", what, set->names[path], variant,
               (long long)i, g[i], r[i]);
}

/* Make the node's input i (already in t->in[i]) a constant of the graph (an initializer), as the executor
 * sees weights: prepare() packs only those. */
static void make_constant(toh *t, size_t i) {
  void *bytes = NULL;
  tb_tensor *x = t->in[i];
  int v = toh_node(t)->inputs[i];
  tb_ir_tensor *c = tb_graph_new_tensor(t->graph, t->graph->values[v].name, tb_tensor_dtype(x), tb_tensor_ndim(x),
                                        tb_tensor_shape(x), &bytes);
  assert_non_null(c);
  if (tb_tensor_nbytes(x)) TB_ASSERT_OK(tb_tensor_copy_to_host(x, bytes, tb_tensor_nbytes(x)));
  t->graph->values[v].constant = c;
  t->graph->values[v].is_initializer = true;
}

/* Run entry k on t's node: prepare with the inputs in `constant` (bits; the others NULL), then run with
 * every input (outputs preallocated like the reference's when prealloc), then release. */
static tb_status run_fast(toh *t, const tb_kernel *k, tb_tensor **in, unsigned constant, tb_pool *pool,
                          const tb_tensor *const *like, bool prealloc, tb_tensor **out) {
  tb_tensor *cin[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++)
    if ((constant >> i) & 1u) cin[i] = in[i];
  void *state = NULL;
  tb_kernel_ctx pctx = {.graph = t->graph,
                        .node = toh_node(t),
                        .n_inputs = t->n_in,
                        .inputs = cin,
                        .n_outputs = t->n_out,
                        .outputs = NULL,
                        .backend = t->cpu,
                        .threads = tb_pool_threads(pool),
                        .pool = pool};
  (void)tbt_kernel_bind(&pctx, t->graph, toh_node(t), NULL);
  if (k->prepare) {
    tb_status st = k->prepare(&pctx, &state);
    if (st != TB_OK) return st;
  }
  for (size_t o = 0; o < t->n_out; o++) {
    out[o] = NULL;
    if (prealloc && like && like[o])
      TB_ASSERT_OK(tb_tensor_create(t->cpu, TB_DTYPE_F32, tb_tensor_ndim(like[o]), tb_tensor_shape(like[o]), &out[o]));
  }
  tb_kernel_ctx ctx = pctx;
  ctx.inputs = in;
  ctx.outputs = out;
  ctx.state = state;
  tb_status st = k->run(&ctx);
  if (k->release) k->release(state);
  return st;
}

/* Every path x {weights per run, weights constant} x {serial, 2-thread pool} against ref. */
static void check_all_paths(toh *t, const entry_set *set, tb_tensor **in, unsigned constant, tb_tensor **ref,
                            const char *what) {
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  for (int p = 0; p < set->count; p++)
    for (int variant = 0; variant < 4; variant++) {
      tb_tensor *out[TOH_MAX] = {0};
      TB_ASSERT_OK(run_fast(t, set->entries[p], in, variant & 1 ? constant : 0u, variant & 2 ? pool : NULL,
                            (const tb_tensor *const *)ref, variant == 1 || variant == 2, out));
      for (size_t o = 0; o < t->n_out; o++)
        if (ref[o])
          assert_close(out[o], ref[o], what, set, p, variant);
        else
          assert_null(out[o]);
      toh_clear(out, t->n_out);
    }
  tb_pool_destroy(pool);
}

/* Every path gives the same bits serially and on pools of 2 and 3 threads (weights constant). */
static void check_same_bits_any_threads(toh *t, const entry_set *set, tb_tensor **in, unsigned constant,
                                        const char *what) {
  tb_pool *pools[3] = {NULL};
  TB_ASSERT_OK(tb_pool_create(2, &pools[1]));
  TB_ASSERT_OK(tb_pool_create(3, &pools[2]));
  for (int p = 0; p < set->count; p++) {
    tb_tensor *first[TOH_MAX] = {0};
    TB_ASSERT_OK(run_fast(t, set->entries[p], in, constant, NULL, NULL, false, first));
    for (int i = 1; i < 3; i++) {
      tb_tensor *out[TOH_MAX] = {0};
      TB_ASSERT_OK(run_fast(t, set->entries[p], in, constant, pools[i], NULL, false, out));
      for (size_t o = 0; o < t->n_out; o++) {
        if (!first[o]) continue;
        assert_int_equal(tb_tensor_nbytes(out[o]), tb_tensor_nbytes(first[o]));
        if (memcmp(tb_tensor_host_data(out[o]), tb_tensor_host_data(first[o]), tb_tensor_nbytes(first[o])) != 0)
          fail_msg("%s, %s path: output %zu on %d threads differs from 1 thread", what, set->names[p], o, i + 1);
      }
      toh_clear(out, t->n_out);
    }
    toh_clear(first, t->n_out);
  }
  tb_pool_destroy(pools[1]);
  tb_pool_destroy(pools[2]);
}

/* ---- LSTM and GRU ---- */

enum { IN_B = 3, IN_LENS = 4, IN_H0 = 5, IN_C0 = 6, IN_P = 7 };
#define HAS(i) (1u << (i))
#define ALL_OPTIONAL (HAS(IN_B) | HAS(IN_LENS) | HAS(IN_H0) | HAS(IN_C0) | HAS(IN_P))

typedef struct rnn_case {
  const char *op; /* "LSTM" or "GRU" */
  const char *direction;
  int layout;
  int64_t seq, batch, input, hidden;
  unsigned present; /* HAS() bits of the optional inputs */
  const int32_t *lens;
  float clip; /* 0: none */
  int input_forget, linear_before_reset;
  bool other_acts; /* HardSigmoid / Softsign / Elu instead of the defaults */
} rnn_case;

static void check_rnn(const rnn_case *c) {
  bool lstm = strcmp(c->op, "LSTM") == 0;
  int64_t dirs = strcmp(c->direction, "bidirectional") == 0 ? 2 : 1, gates = lstm ? 4 : 3;
  static const char *const lstm_acts[] = {"HardSigmoid", "Softsign", "Elu", "HardSigmoid", "Softsign", "Elu"};
  static const char *const gru_acts[] = {"HardSigmoid", "Softsign", "HardSigmoid", "Softsign"};
  tb_attr attrs[8];
  size_t na = 0;
  attrs[na++] = TOH_STR("direction", c->direction);
  attrs[na++] = TOH_INT("hidden_size", c->hidden);
  attrs[na++] = TOH_INT("layout", c->layout);
  if (c->clip > 0) attrs[na++] = TOH_FLOAT("clip", c->clip);
  if (lstm)
    attrs[na++] = TOH_INT("input_forget", c->input_forget);
  else
    attrs[na++] = TOH_INT("linear_before_reset", c->linear_before_reset);
  if (c->other_acts)
    attrs[na++] = (tb_attr){.name = "activations",
                            .type = TB_ATTR_STRINGS,
                            .strings = lstm ? lstm_acts : gru_acts,
                            .count = (size_t)(dirs * (lstm ? 3 : 2))};
  size_t n_in = lstm ? 8 : 6, n_out = lstm ? 3 : 2;
  unsigned omit = 0;
  for (size_t i = 3; i < n_in; i++)
    if (!(c->present & HAS(i))) omit |= 1u << i;
  toh t;
  toh_setup(&t, c->op, 14, n_in, omit, n_out, attrs, na);
  int64_t h = c->hidden, gh = gates * h;
  const int64_t x_shape[3] = {c->layout ? c->batch : c->seq, c->layout ? c->seq : c->batch, c->input};
  const int64_t w_shape[3] = {dirs, gh, c->input}, r_shape[3] = {dirs, gh, h}, b_shape[2] = {dirs, 2 * gh};
  const int64_t s_shape[3] = {c->layout ? c->batch : dirs, c->layout ? dirs : c->batch, h}, p_shape[2] = {dirs, 3 * h};
  t.in[0] = rand_f32(&t, 3, x_shape, 1, 1.0f);
  t.in[1] = rand_f32(&t, 3, w_shape, 2, 0.6f);
  /* R's scale shrinks as 1 / sqrt(H) past 64 (as trained weights do), so the recurrent sums keep the size
   * they have at 64 and the bf16 entries' error stays within their tolerance */
  t.in[2] = rand_f32(&t, 3, r_shape, 3, h > 64 ? 0.6f * sqrtf(64.0f / (float)h) : 0.6f);
  if (c->present & HAS(IN_B)) t.in[IN_B] = rand_f32(&t, 2, b_shape, 4, 0.5f);
  if (c->present & HAS(IN_LENS)) toh_input(&t, IN_LENS, TB_DTYPE_I32, 1, &c->batch, c->lens);
  if (c->present & HAS(IN_H0)) t.in[IN_H0] = rand_f32(&t, 3, s_shape, 5, 0.8f);
  if (lstm && (c->present & HAS(IN_C0))) t.in[IN_C0] = rand_f32(&t, 3, s_shape, 6, 0.8f);
  if (lstm && (c->present & HAS(IN_P))) t.in[IN_P] = rand_f32(&t, 2, p_shape, 7, 0.5f);
  for (size_t i = 1; i <= IN_B; i++)
    if (t.in[i]) make_constant(&t, i);
  tb_tensor *ref[TOH_MAX] = {0};
  TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
  char what[160];
  snprintf(what, sizeof what, "%s %s layout %d seq %lld batch %lld input %lld hidden %lld", c->op, c->direction,
           c->layout, (long long)c->seq, (long long)c->batch, (long long)c->input, (long long)c->hidden);
  entry_set set = f32_set(lstm ? lstm_entries : gru_entries);
  check_all_paths(&t, &set, t.in, HAS(1) | HAS(2) | HAS(IN_B), ref, what);
  check_same_bits_any_threads(&t, &set, t.in, HAS(1) | HAS(2) | HAS(IN_B), what);
  if (lstm) {
    entry_set bf16 = {lstm_bf16_entries, bf16_path_names, n_bf16_paths(), BF16_ATOL, BF16_RTOL};
    check_all_paths(&t, &bf16, t.in, HAS(1) | HAS(2), ref, what);
    check_same_bits_any_threads(&t, &bf16, t.in, HAS(1) | HAS(2), what);
  }
  toh_clear(ref, n_out);
  toh_teardown(&t);
}

static const int32_t lens4[] = {5, 0, 3, 1}, lens3[] = {2, 5, 1}, lens4b[] = {3, 1, 0, 4}, lens5[] = {4, 4, 2, 3, 1};
static const int32_t lens9b[] = {3, 0, 2, 3, 1, 3, 2, 1, 2}, lens6[] = {4, 2, 0, 3, 4, 1};
static const int32_t lens10[] = {3, 1, 3, 0, 2, 3, 1, 3, 2, 1};
static const int32_t lens9[] = {4, 0, 2, 4, 1, 3, 4, 2, 1}, lens16[] = {3, 1, 0, 2, 3, 3, 1, 2, 0, 3, 2, 1, 3, 3, 2, 1};

static void lstm_matches_reference(void **state) {
  (void)state;
  const rnn_case cases[] = {
      {"LSTM", "forward", 0, 7, 5, 11, 9, HAS(IN_B), NULL, 0, 0, 0, false},
      {"LSTM", "reverse", 0, 6, 3, 4, 17, HAS(IN_B) | HAS(IN_H0) | HAS(IN_C0) | HAS(IN_P), NULL, 2.5f, 0, 0, false},
      {"LSTM", "bidirectional", 1, 5, 4, 7, 16, ALL_OPTIONAL, lens4, 0, 0, 0, false},
      {"LSTM", "bidirectional", 0, 5, 3, 6, 33, HAS(IN_LENS) | HAS(IN_C0), lens3, 0, 1, 0, false},
      {"LSTM", "forward", 1, 1, 1, 1, 1, HAS(IN_B) | HAS(IN_H0), NULL, 0, 0, 0, false},
      {"LSTM", "bidirectional", 0, 4, 5, 3, 7, HAS(IN_B) | HAS(IN_LENS) | HAS(IN_P), lens5, 1.5f, 0, 0, true},
      {"LSTM", "forward", 0, 3, 33, 40, 64, HAS(IN_B) | HAS(IN_H0), NULL, 0, 0, 0, false}, /* rows over the pool */
      /* the fused AVX-512 step: 16-unit blocks (48 = 3 full, 20 = one full and 4 lanes, 176 = 11) and 8-row
       * chunks (9 = 8 + 1, 16 = 8 + 8) with rows stopping at their length inside a chunk; the last two
       * split each step over the pool (max(batch, 4) x 4H x H >= 2^20: 9 x 4 x 176^2 and 4 x 4 x 256^2) */
      {"LSTM", "forward", 0, 4, 9, 5, 48, HAS(IN_B) | HAS(IN_LENS) | HAS(IN_H0) | HAS(IN_C0), lens9, 0, 1, 0, false},
      {"LSTM", "reverse", 1, 3, 16, 6, 20, ALL_OPTIONAL, lens16, 3.0f, 0, 0, true},
      {"LSTM", "bidirectional", 0, 5, 8, 12, 64, HAS(IN_B) | HAS(IN_P), NULL, 0, 0, 0, false},
      {"LSTM", "forward", 0, 3, 9, 5, 176, ALL_OPTIONAL, lens9b, 0, 0, 0, false},
      {"LSTM", "reverse", 1, 2, 1, 3, 256, HAS(IN_B) | HAS(IN_H0), NULL, 0, 0, 0, false},
      /* the AVX2 step's tiles for one and two rows left (6 = 4 + 2, 2, and CRNN's batch 1 at hidden 40) */
      {"LSTM", "bidirectional", 0, 4, 6, 5, 24, HAS(IN_B) | HAS(IN_LENS) | HAS(IN_H0), lens6, 0, 0, 0, false},
      {"LSTM", "forward", 1, 5, 2, 7, 33, HAS(IN_B) | HAS(IN_P) | HAS(IN_C0), NULL, 0, 0, 0, false},
      {"LSTM", "bidirectional", 0, 6, 1, 9, 40, HAS(IN_B), NULL, 0, 0, 0, false},
      /* the AVX-512 step's wide tile for one and two rows left (10 = 8 + 2 with rows ending inside the
       * pair, 2 rows split over the pool at hidden 256, clip and peepholes on one row) */
      {"LSTM", "forward", 0, 3, 10, 6, 40, HAS(IN_B) | HAS(IN_LENS) | HAS(IN_H0) | HAS(IN_C0), lens10, 0, 0, 0,
       false},
      {"LSTM", "bidirectional", 0, 3, 2, 5, 256, HAS(IN_B) | HAS(IN_H0), NULL, 0, 0, 0, false},
      {"LSTM", "forward", 1, 4, 1, 4, 24, HAS(IN_B) | HAS(IN_P) | HAS(IN_C0), NULL, 2.0f, 0, 0, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_rnn(&cases[i]);
}

static void gru_matches_reference(void **state) {
  (void)state;
  const rnn_case cases[] = {
      {"GRU", "forward", 0, 7, 5, 11, 9, HAS(IN_B), NULL, 0, 0, 0, false},
      {"GRU", "forward", 0, 7, 5, 11, 9, HAS(IN_B) | HAS(IN_H0), NULL, 0, 0, 1, false},
      {"GRU", "reverse", 0, 4, 4, 5, 17, HAS(IN_B) | HAS(IN_LENS) | HAS(IN_H0), lens4b, 1.5f, 0, 0, false},
      {"GRU", "bidirectional", 1, 5, 4, 3, 16, HAS(IN_B) | HAS(IN_LENS) | HAS(IN_H0), lens4, 0, 0, 1, false},
      {"GRU", "bidirectional", 1, 3, 2, 5, 6, 0, NULL, 0, 0, 0, true},
      {"GRU", "reverse", 0, 1, 1, 1, 1, HAS(IN_B), NULL, 0, 0, 1, false},
      {"GRU", "forward", 1, 3, 33, 24, 96, HAS(IN_B), NULL, 0, 0, 0, false}, /* rows over the pool */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_rnn(&cases[i]);
}

/* Y_h of a row with sequence length 0 is its initial state, its Y is zero (values, not only the match). */
static void zero_length_rows_keep_initial_state(void **state) {
  (void)state;
  toh t;
  tb_attr attrs[] = {TOH_INT("hidden_size", 3)};
  toh_setup(&t, "GRU", 14, 6, 0x8u, 2, attrs, 1);
  const int64_t xs[3] = {2, 2, 2}, ws[3] = {1, 9, 2}, rs[3] = {1, 9, 3}, ss[3] = {1, 2, 3}, nb = 2;
  const int32_t lens[2] = {0, 2};
  const float h0[6] = {0.25f, -0.5f, 0.75f, 0.1f, 0.2f, 0.3f};
  t.in[0] = rand_f32(&t, 3, xs, 1, 1.0f);
  t.in[1] = rand_f32(&t, 3, ws, 2, 1.0f);
  t.in[2] = rand_f32(&t, 3, rs, 3, 1.0f);
  toh_input(&t, 4, TB_DTYPE_I32, 1, &nb, lens);
  toh_input(&t, 5, TB_DTYPE_F32, 3, ss, h0);
  for (int p = 0; p < n_paths(); p++) {
    tb_tensor *out[2] = {0};
    TB_ASSERT_OK(run_fast(&t, gru_entries[p], t.in, 0x6u, NULL, NULL, false, out));
    const float *y = tb_tensor_host_data(out[0]), *yh = tb_tensor_host_data(out[1]);
    for (int k = 0; k < 3; k++) {
      assert_true(yh[k] == h0[k]);
      assert_true(y[k] == 0.0f && y[6 + k] == 0.0f); /* Y[t, 0, row 0] for t = 0, 1 */
    }
    assert_true(yh[3] != h0[3] && y[9 + 0] == yh[3]); /* row 1 ran both steps: Y[1, 0, 1] is its Y_h */
    toh_clear(out, 2);
  }
  toh_teardown(&t);
}

/* prepare() makes state (packed W and R) only when both are constants of the graph; a run without the
 * state packs R itself and gives the same values. */
static void prepare_packs_only_constants(void **state) {
  (void)state;
  toh t;
  tb_attr attrs[] = {TOH_INT("hidden_size", 4)};
  toh_setup(&t, "LSTM", 14, 3, 0, 3, attrs, 1);
  const int64_t xs[3] = {3, 2, 5}, ws[3] = {1, 16, 5}, rs[3] = {1, 16, 4};
  t.in[0] = rand_f32(&t, 3, xs, 1, 1.0f);
  t.in[1] = rand_f32(&t, 3, ws, 2, 0.6f);
  t.in[2] = rand_f32(&t, 3, rs, 3, 0.6f);
  for (int p = 0; p < n_paths(); p++) {
    const tb_kernel *k = lstm_entries[p];
    tb_kernel_ctx ctx = {.graph = t.graph,
                         .node = toh_node(&t),
                         .n_inputs = 3,
                         .inputs = t.in,
                         .n_outputs = 3,
                         .backend = t.cpu,
                         .threads = 1};
    (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
    void *st = &ctx;
    TB_ASSERT_OK(k->prepare(&ctx, &st));
    assert_null(st); /* W and R are graph inputs here: nothing packed */
  }
  make_constant(&t, 1);
  for (int p = 0; p < n_paths(); p++) {
    tb_kernel_ctx ctx = {.graph = t.graph,
                         .node = toh_node(&t),
                         .n_inputs = 3,
                         .inputs = t.in,
                         .n_outputs = 3,
                         .backend = t.cpu,
                         .threads = 1};
    (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
    void *st = NULL;
    TB_ASSERT_OK(lstm_entries[p]->prepare(&ctx, &st));
    assert_null(st); /* R still not constant */
  }
  make_constant(&t, 2);
  tb_tensor *ref[3] = {0};
  TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
  for (int p = 0; p < n_paths(); p++) {
    tb_kernel_ctx ctx = {.graph = t.graph,
                         .node = toh_node(&t),
                         .n_inputs = 3,
                         .inputs = t.in,
                         .n_outputs = 3,
                         .backend = t.cpu,
                         .threads = 1};
    (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
    void *st = NULL;
    TB_ASSERT_OK(lstm_entries[p]->prepare(&ctx, &st));
    assert_non_null(st);
    tb_tensor *out[3] = {0};
    ctx.outputs = out;
    ctx.state = st;
    TB_ASSERT_OK(lstm_entries[p]->run(&ctx));
    entry_set set = f32_set(lstm_entries);
    for (int o = 0; o < 3; o++) assert_close(out[o], ref[o], "LSTM with packed constants", &set, p, 0);
    lstm_entries[p]->release(st);
    toh_clear(out, 3);
  }
  toh_clear(ref, 3);
  toh_teardown(&t);
}

/* Through the executor: W, R, B initializers packed when tb_exec_place prepares the node, two runs
 * with the same state, levels 2 (fp32) and 3 (bf16) against level 0. */
static void executor_places_and_runs_lstm(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(m, NULL, "lstm");
  const int64_t xd[3] = {5, 3, 6}, wd[3] = {2, 28, 6}, rd[3] = {2, 28, 7}, bd[2] = {2, 56};
  float w[2 * 28 * 6], r[2 * 28 * 7], b[2 * 56], x[5 * 3 * 6];
  fill(w, 2 * 28 * 6, 31, 0.6f);
  fill(r, 2 * 28 * 7, 32, 0.6f);
  fill(b, 2 * 56, 33, 0.5f);
  fill(x, 5 * 3 * 6, 34, 1.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 3, xd, NULL);
  tbt_const_f32(g, "W", 3, wd, w);
  tbt_const_f32(g, "R", 3, rd, r);
  tbt_const_f32(g, "B", 2, bd, b);
  int node = tbt_node(g, "LSTM", "lstm", "x,W,R,B", "y,yh,yc");
  static tb_attr attrs[2];
  attrs[0] = TOH_STR("direction", "bidirectional");
  attrs[1] = TOH_INT("hidden_size", 7);
  g->nodes[node].attrs = attrs;
  g->nodes[node].n_attrs = 2;
  tbt_output(g, "y");
  tbt_output(g, "yh");
  tbt_output(g, "yc");
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_tensor *in = tbt_f32(cpu, 3, xd, x), *ref[3] = {0};
  const int levels[3] = {0, 2, 3};
  for (int l = 0; l < 3; l++) {
    tb_exec *e = NULL;
    TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
    TB_ASSERT_OK(tb_exec_create(g, cpu, levels[l], tb_convert_features(), 2, &e));
    TB_ASSERT_OK(tb_exec_place(e, NULL, NULL, false));
    const tb_exec_placement *pl = tb_exec_placement_of(e, (size_t)tbt_node_pos(g, "lstm"));
    assert_non_null(pl);
    if (levels[l] == 3)
      assert_string_equal(pl->precision, "bf16");
    else
      assert_null(pl->precision);
    assert_int_equal(tb_exec_uses_fast_kernels(e), levels[l] > 0);
    for (int run = 0; run < 2; run++) {
      tb_tensor *out[3] = {0};
      TB_ASSERT_OK(tb_exec_run(e, &in, out));
      if (levels[l] == 0 && run == 0) {
        memcpy(ref, out, sizeof out);
        continue;
      }
      entry_set set = {NULL, levels[l] == 3 ? bf16_path_names : path_names, 0, levels[l] == 3 ? BF16_ATOL : ATOL,
                       levels[l] == 3 ? BF16_RTOL : RTOL};
      int shown = levels[l] == 3 ? n_bf16_paths() - 1 : n_paths() - 1;
      for (int o = 0; o < 3; o++) assert_close(out[o], ref[o], "LSTM through the executor", &set, shown, run);
      toh_clear(out, 3);
    }
    tb_exec_destroy(e);
  }
  toh_clear(ref, 3);
  tb_tensor_destroy(in);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* ---- attention ---- */

static void attn_setup(toh *t, size_t n_in, const tb_attr *attrs, size_t n_attrs) {
  toh_begin(t, NULL);
  toh_add_op(t, "tb", "Attention", 1, n_in, 0, 1, 0, attrs, n_attrs);
}

typedef struct attn_case {
  size_t nq, nk, nv, nm; /* ranks; nm 0: no mask */
  int64_t q[4], k[4], v[4], m[4];
  int scale;   /* 0 none, 1 multiply by 0.35, 2 divide by 2.75 */
  bool causal; /* the mask is 0 on and below the diagonal, -inf above */
} attn_case;

static void check_attention(const attn_case *c) {
  tb_attr attrs[2] = {TOH_FLOAT("scale", c->scale == 1 ? 0.35f : 2.75f), TOH_INT("scale_divide", c->scale == 2)};
  toh t;
  attn_setup(&t, c->nm ? 4 : 3, attrs, c->scale ? 2 : 0);
  t.in[0] = rand_f32(&t, c->nq, c->q, 21, 1.0f);
  t.in[1] = rand_f32(&t, c->nk, c->k, 22, 1.0f);
  t.in[2] = rand_f32(&t, c->nv, c->v, 23, 1.0f);
  if (c->nm && !c->causal) t.in[3] = rand_f32(&t, c->nm, c->m, 24, 2.0f);
  if (c->causal) {
    int64_t rows = c->m[0], cols = c->m[1];
    float *m = malloc((size_t)(rows * cols) * sizeof(float));
    assert_non_null(m);
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) m[i * cols + j] = j <= i ? 0.0f : -INFINITY;
    toh_input(&t, 3, TB_DTYPE_F32, 2, c->m, m);
    free(m);
  }
  tb_tensor *ref[1] = {NULL};
  TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
  char what[96];
  snprintf(what, sizeof what, "Attention Q rank %zu [.., %lld, %lld] mask rank %zu scale %d", c->nq,
           (long long)c->q[c->nq - 2], (long long)c->q[c->nq - 1], c->nm, c->scale);
  entry_set set = f32_set(attn_entries);
  check_all_paths(&t, &set, t.in, 0, ref, what);
  toh_clear(ref, 1);
  toh_teardown(&t);
}

static void attention_matches_reference(void **state) {
  (void)state;
  const attn_case cases[] = {
      {4, 4, 4, 0, {2, 3, 5, 8}, {2, 3, 8, 7}, {2, 3, 7, 6}, {0}, 0, false},
      {4, 4, 4, 4, {2, 3, 5, 8}, {2, 3, 8, 7}, {2, 3, 7, 6}, {1, 1, 5, 7}, 1, false},
      {4, 4, 4, 2, {2, 3, 13, 19}, {2, 3, 19, 37}, {2, 3, 37, 5}, {13, 37}, 2, false},
      {4, 3, 4, 4, {2, 1, 5, 8}, {3, 8, 7}, {1, 3, 7, 4}, {2, 1, 1, 7}, 1, false}, /* batch and padding-mask broadcast
                                                                                    */
      {2, 2, 2, 0, {1, 8}, {8, 1}, {1, 3}, {0}, 0, false}, /* one entry: the pool to the GEMMs */
      {2, 2, 2, 2, {9, 16}, {16, 11}, {11, 20}, {9, 11}, 2, false},
      {4, 4, 4, 2, {1, 4, 64, 32}, {1, 4, 32, 64}, {1, 4, 64, 32}, {64, 64}, 1, true},
      /* causal at an odd length: rows of 1 to 37 live keys, full vectors and a partial one on both paths */
      {4, 4, 4, 2, {1, 3, 37, 24}, {1, 3, 24, 37}, {1, 3, 37, 11}, {37, 37}, 2, true},
      /* rows of 150 scores (vectors and a masked tail): a mask row shared by every query, and a mask
       * column broadcast along the row (a strided mask in the row step) */
      {3, 3, 3, 2, {2, 13, 24}, {2, 24, 150}, {2, 150, 9}, {1, 150}, 2, false},
      {3, 3, 3, 2, {2, 13, 24}, {2, 24, 150}, {2, 150, 9}, {13, 1}, 1, false},
      /* rows of 300: the AVX-512 row sums 256 elements in fp32 lanes, then the rest */
      {3, 3, 3, 2, {2, 5, 16}, {2, 16, 300}, {2, 300, 7}, {1, 300}, 2, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_attention(&cases[i]);
}

/* ---- kernel choice ---- */

static uint64_t features_with_mask(const char *mask) {
  if (mask)
    setenv("TB_CPU_FEATURES", mask, 1);
  else
    unsetenv("TB_CPU_FEATURES");
  uint64_t f = tb_convert_features();
  unsetenv("TB_CPU_FEATURES");
  return f;
}

static const tb_kernel *pick_rnn(const char *op, tb_dtype dtype, int level, const char *mask) {
  toh t;
  toh_setup(&t, op, 14, 3, 0, 2, NULL, 0);
  const int64_t d[3] = {2, 2, 2};
  tb_value_type ty = toh_type(dtype, 3, d);
  const tb_value_type *in[3] = {&ty, &ty, &ty};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, features_with_mask(mask));
  toh_teardown(&t);
  return k;
}

static const tb_kernel *pick_attention(tb_dtype dtype, int level, const char *mask) {
  toh t;
  attn_setup(&t, 3, NULL, 0);
  const int64_t d[3] = {2, 4, 4};
  tb_value_type ty = toh_type(dtype, 3, d);
  const tb_value_type *in[3] = {&ty, &ty, &ty};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, features_with_mask(mask));
  toh_teardown(&t);
  return k;
}

static void kernel_choice_follows_mask(void **state) {
  (void)state;
  int top = n_paths() - 1;
  const char *masks[3] = {"-avx2", "-avx512f", NULL};
  for (int p = 0; p <= top; p++) {
    assert_ptr_equal(pick_rnn("LSTM", TB_DTYPE_F32, 2, masks[p]), lstm_entries[p]);
    assert_ptr_equal(pick_rnn("GRU", TB_DTYPE_F32, 2, masks[p]), gru_entries[p]);
    assert_ptr_equal(pick_attention(TB_DTYPE_F32, 2, masks[p]), attn_entries[p]);
  }
  assert_ptr_equal(pick_rnn("LSTM", TB_DTYPE_F32, 1, NULL), &tb_kernel_lstm); /* O1 keeps the reference */
  assert_ptr_equal(pick_rnn("LSTM", TB_DTYPE_F64, 2, NULL), &tb_kernel_lstm); /* f32 only */
  assert_ptr_equal(pick_rnn("GRU", TB_DTYPE_F16, 2, NULL), &tb_kernel_gru);
  assert_ptr_equal(pick_attention(TB_DTYPE_F64, 2, NULL), &tb_kernel_fused_attention);
  /* level 3 (O3 / precision bf16): the bf16 LSTM, AVX512-BF16 first; GRU stays fp32; attention in bf16 on
   * AVX512-BF16 (test_attention_bf16.c), else the fp32 kernel */
  if (n_bf16_paths() > 1) assert_ptr_equal(pick_rnn("LSTM", TB_DTYPE_F32, 3, NULL), &tb_kernel_lstm_bf16_avx512bf16);
  assert_ptr_equal(pick_rnn("LSTM", TB_DTYPE_F32, 3, "-avx512bf16"), &tb_kernel_lstm_bf16_portable);
  assert_string_equal(tb_kernel_lstm_bf16_portable.precision, "bf16");
  assert_null(tb_kernel_lstm_f32_portable.precision);
  assert_ptr_equal(pick_rnn("GRU", TB_DTYPE_F32, 3, NULL), gru_entries[top]);
  assert_ptr_equal(pick_attention(TB_DTYPE_F32, 3, NULL),
                   n_bf16_paths() > 1 ? &tb_kernel_attention_bf16_avx512bf16 : attn_entries[top]);
  assert_ptr_equal(pick_attention(TB_DTYPE_F32, 3, "-avx512bf16"), attn_entries[top]);
}

/* ---- vector math ---- */

static void vector_math_matches_libm(void **state) {
  (void)state;
  enum { N = 4099 };
  static float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = -110.0f + 220.0f * (float)i / (N - 1);
  const tb_rnn_act sig = {TB_RNN_ACT_SIGMOID, 0, 0}, th = {TB_RNN_ACT_TANH, 0, 0};
  for (int p = 0; p < n_paths(); p++) {
    for (int fn = 0; fn < 3; fn++) {
      memcpy(y, x, sizeof y);
      if (fn == 0)
        tb_seq_vec_exp((tb_gemm_path)p, y, N);
      else
        tb_seq_vec_activate((tb_gemm_path)p, fn == 1 ? &sig : &th, false, 0, y, N);
      for (int i = 0; i < N; i++) {
        double v = x[i], want = fn == 0 ? exp(v) : fn == 1 ? 1.0 / (1.0 + exp(-v)) : tanh(v);
        if (want > FLT_MAX) continue; /* exp overflow: only finite results are checked */
        double tol = fn == 0 ? 4 * FLT_EPSILON * want + 2e-38 : fn == 1 ? 4 * FLT_EPSILON * want + 1e-38 : 4e-7;
        if (!(fabs((double)y[i] - want) <= tol))
          fail_msg("%s path, function %d: f(%.9g) = %.9g, libm %.9g", path_names[p], fn, x[i], y[i], want);
      }
    }
    float special[4] = {NAN, -INFINITY, 0.0f, -0.0f};
    tb_seq_vec_exp((tb_gemm_path)p, special, 4);
    assert_true(isnan(special[0]) && special[1] == 0.0f && special[2] == 1.0f && special[3] == 1.0f);
    float clipped[3] = {-9.0f, 0.5f, 9.0f};
    tb_seq_vec_activate((tb_gemm_path)p, &th, true, 1.0f, clipped, 3);
    assert_true(fabs(clipped[0] + tanh(1.0)) < 4e-7 && fabs(clipped[1] - tanh(0.5)) < 4e-7 &&
                fabs(clipped[2] - tanh(1.0)) < 4e-7);
    float row[5] = {1, 2, 3, -INFINITY, 3};
    tb_seq_vec_softmax((tb_gemm_path)p, row, 5);
    double e = exp(1.0) + exp(2.0) + 2 * exp(3.0);
    assert_true(fabs(row[0] - exp(1.0) / e) < 1e-7 && row[3] == 0.0f && fabs(row[4] - exp(3.0) / e) < 1e-7);
  }
}

#if defined(__x86_64__)
/* y = sigmoid or tanh of x (n a multiple of 16) with the fused LSTM cell's division-free functions */
SEQ_T512 static void cell_math_avx512(bool tanh_fn, const float *x, float *y, int n) {
  for (int i = 0; i < n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    _mm512_storeu_ps(y + i, tanh_fn ? seq_tanh512_rcp(v) : seq_sigmoid512_rcp(v));
  }
}
#endif

/* seq_sigmoid512_rcp / seq_tanh512_rcp (the fused LSTM cell's) within the same bounds as the vector
 * paths above, and at the special values. */
static void cell_math_matches_libm(void **state) {
  (void)state;
#if defined(__x86_64__)
  if (n_paths() < 3) TBT_SKIP("this CPU has no AVX-512: the AVX-512 cell math is never called here");
  enum { N = 4096 };
  static float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = -110.0f + 220.0f * (float)i / (N - 1);
  for (int fn = 0; fn < 2; fn++) {
    cell_math_avx512(fn == 1, x, y, N);
    for (int i = 0; i < N; i++) {
      double v = x[i], want = fn == 0 ? 1.0 / (1.0 + exp(-v)) : tanh(v);
      double tol = fn == 0 ? 4 * FLT_EPSILON * want + 1e-38 : 4e-7;
      if (!(fabs((double)y[i] - want) <= tol))
        fail_msg("%s(%.9g) = %.9g, libm %.9g", fn ? "tanh" : "sigmoid", x[i], y[i], want);
    }
  }
  float special[16] = {NAN, -INFINITY, INFINITY, 0.0f, -0.0f, -88.0f, -89.0f, -200.0f, 200.0f, 1e-30f, -1e-30f};
  float sg[16], th[16];
  cell_math_avx512(false, special, sg, 16);
  cell_math_avx512(true, special, th, 16);
  assert_true(isnan(sg[0]) && sg[1] == 0.0f && sg[2] == 1.0f && sg[3] == 0.5f && sg[4] == 0.5f);
  assert_true(sg[5] > 0.0f && fabs(sg[5] - 1.0 / (1.0 + exp(88.0))) < 1e-38 && sg[6] >= 0.0f && sg[6] < 1e-38f);
  assert_true(sg[7] == 0.0f && sg[8] == 1.0f && sg[9] == 0.5f);
  assert_true(isnan(th[0]) && th[1] == -1.0f && th[2] == 1.0f && th[3] == 0.0f && signbit(th[4]) && th[4] == 0.0f);
  assert_true(th[7] == -1.0f && th[8] == 1.0f && fabs(th[9]) < 4e-7 && fabs(th[10]) < 4e-7); /* absolute bound */
#else
  skip();
#endif
}

/* ---- errors ---- */

static void rnn_error(const char *op, unsigned omit, int64_t r_extra, int64_t x_rank, int32_t len0, int64_t hidden_attr,
                      const char *want) {
  toh t;
  tb_attr attrs[] = {TOH_INT("hidden_size", hidden_attr)};
  bool lstm = strcmp(op, "LSTM") == 0;
  int64_t g = lstm ? 4 : 3;
  toh_setup(&t, op, 14, 5, omit, 2, attrs, 1);
  const int64_t xs[3] = {3, 2, 4}, ws[3] = {1, g * 5, 4}, rs[3] = {1, g * 5, 5 + r_extra}, nb = 2;
  const int32_t lens[2] = {len0, 1};
  t.in[0] = rand_f32(&t, (size_t)x_rank, xs, 1, 1.0f);
  t.in[1] = rand_f32(&t, 3, ws, 2, 1.0f);
  t.in[2] = rand_f32(&t, 3, rs, 3, 1.0f);
  if (!(omit & HAS(IN_LENS))) toh_input(&t, IN_LENS, TB_DTYPE_I32, 1, &nb, lens);
  make_constant(&t, 1);
  make_constant(&t, 2);
  for (int p = 0; p < n_paths(); p++) {
    const tb_kernel *k = lstm ? lstm_entries[p] : gru_entries[p];
    tb_tensor *out[2] = {0};
    tb_status st = run_fast(&t, k, t.in, 0, NULL, NULL, false, out);
    if (st != TB_ERR_MODEL)
      fail_msg("%s %s path: status %s, expected a model error with \"%s\"", op, path_names[p], tb_status_str(st), want);
    TB_ASSERT_CONTAINS(tb_last_error(), "'n0'");
    TB_ASSERT_CONTAINS(tb_last_error(), want);
    toh_clear(out, 2);
    /* the same shapes given as constants fail at prepare, before any run */
    if (r_extra) {
      assert_int_equal(run_fast(&t, k, t.in, HAS(1) | HAS(2), NULL, NULL, false, out), TB_ERR_MODEL);
      TB_ASSERT_CONTAINS(tb_last_error(), "input R has shape [1, ");
      toh_clear(out, 2);
    }
  }
  toh_teardown(&t);
}

static void errors_name_the_node(void **state) {
  (void)state;
  rnn_error("LSTM", HAS(3), 1, 3, 1, 5, "input R has shape");
  rnn_error("GRU", HAS(3), 1, 3, 1, 5, "input R has shape");
  rnn_error("LSTM", HAS(3), 0, 3, 4, 5, "sequence_lens[0] is 4, outside 0..3");
  rnn_error("GRU", HAS(3) | HAS(4), 0, 2, 1, 5, "input X has shape");
  rnn_error("GRU", HAS(3) | HAS(4), 0, 3, 1, 6, "hidden_size 6 does not match");
  /* attention: inner dimensions, a mask that does not broadcast */
  const int64_t q[3] = {2, 5, 8}, k_bad[3] = {2, 7, 6}, k[3] = {2, 8, 6}, v[3] = {2, 6, 4}, m_bad[2] = {5, 3};
  for (int c = 0; c < 2; c++) {
    toh t;
    attn_setup(&t, c ? 4 : 3, NULL, 0);
    t.in[0] = rand_f32(&t, 3, q, 1, 1.0f);
    t.in[1] = rand_f32(&t, 3, c ? k : k_bad, 2, 1.0f);
    t.in[2] = rand_f32(&t, 3, v, 3, 1.0f);
    if (c) t.in[3] = rand_f32(&t, 2, m_bad, 4, 1.0f);
    for (int p = 0; p < n_paths(); p++) {
      tb_tensor *out[1] = {NULL};
      assert_int_equal(run_fast(&t, attn_entries[p], t.in, 0, NULL, NULL, false, out), TB_ERR_MODEL);
      TB_ASSERT_CONTAINS(tb_last_error(), "'n0'");
      TB_ASSERT_CONTAINS(tb_last_error(),
                         c ? "the mask's dimension 1 (3) does not broadcast" : "inner dimensions differ");
      assert_null(out[0]);
    }
    toh_teardown(&t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vector_math_matches_libm),     cmocka_unit_test(cell_math_matches_libm),
      cmocka_unit_test(lstm_matches_reference),
      cmocka_unit_test(gru_matches_reference),        cmocka_unit_test(zero_length_rows_keep_initial_state),
      cmocka_unit_test(prepare_packs_only_constants), cmocka_unit_test(executor_places_and_runs_lstm),
      cmocka_unit_test(attention_matches_reference),  cmocka_unit_test(kernel_choice_follows_mask),
      cmocka_unit_test(errors_name_the_node),
  };
  tbt_clear_env();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
