/* tb::FusedMatMul's bias, residual and Gelu epilogue on every kernel path. The transformer's chains
 * (MatMul -> Add(bias) [-> Add(residual)] [-> Gelu]) are built unfused, fused by activation_fusion, and
 * both run by the executor:
 *  - O1 (reference kernels): the fused graph gives the unfused graph's bits;
 *  - O2 (fast fp32) under each TB_CPU_FEATURES path (AVX-512, AVX2, portable) on 1 and 2 threads: within
 *    the O2 tolerance (1e-5 absolute + 1e-4 relative) of O0, and the same bits as the unfused graph at O2
 *    (the bias and residual are added after the products, each add rounded as the Add kernel rounds it, and
 *    the Gelu is the same vec_ops loop as the unfused Gelu kernel's); 1 and 2 threads give the same bits;
 *  - O3 (bf16 GEMM) under each path: within the bf16 tolerance (1e-2 + 1e-2 relative) of O0, and the same
 *    bits as the unfused graph at O3 wherever the fused epilogue's vec_ops table is the unfused kernels'
 *    (the adds and the Gelu run after the products, as the separate kernels run them);
 * for a batch of A against a constant 2-D B (one tall GEMM, BERT's case) and against a batched computed B
 * (a GEMM per batch, the residual offset per batch). Bad input reaching the kernels directly (a bias of the
 * wrong length, a residual of the wrong shape) is an error naming the node, the length and the expected
 * one; inference rejects the same with the shapes; the kernel choice follows the feature mask. */
#include "model/params.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "pass_test.h"
#include "test_op_harness.h"

extern const tb_kernel tb_kernel_fused_matmul, tb_kernel_fused_matmul_f32_avx512, tb_kernel_fused_matmul_f32_avx2,
    tb_kernel_fused_matmul_f32_portable, tb_kernel_fused_matmul_bf16_avx512bf16, tb_kernel_fused_matmul_bf16_portable;

/* ---- the graphs ---- */

typedef struct chain_case {
  const char *name;
  bool batched_b; /* B a computed [2, K, N] input instead of constant weights */
  bool bias, residual;
  const char *gelu; /* NULL: no activation; else approximate */
  int64_t n;        /* the output's columns (0: N) */
} chain_case;

static const chain_case *cur;
enum { BATCH = 2, ROWS = 37, K = 96, N = 80 };

static void build_chain(tb_graph *g) {
  int64_t n = cur->n ? cur->n : N;
  int64_t a[3] = {BATCH, ROWS, K}, w[2] = {K, n}, wb[3] = {BATCH, K, n}, r[3] = {BATCH, ROWS, n};
  tbt_input(g, "A", TB_DTYPE_F32, 3, a, NULL);
  if (cur->batched_b) tbt_input(g, "W", TB_DTYPE_F32, 3, wb, NULL);
  else pt_const_rand(g, "W", 2, w, 80, -0.1f, 0.1f);
  tbt_node(g, "MatMul", "mm", "A,W", "y");
  const char *v = "y";
  if (cur->bias) {
    pt_const_rand(g, "bias", 1, &n, 81, -1.0f, 1.0f);
    tbt_node(g, "Add", "add_bias", "bias,y", "z");
    v = "z";
  }
  if (cur->residual) {
    tbt_input(g, "R", TB_DTYPE_F32, 3, r, NULL);
    char in[32];
    snprintf(in, sizeof in, "%s,R", v);
    tbt_node(g, "Add", "add_res", in, "s");
    v = "s";
  }
  if (cur->gelu) {
    int node = tbt_node(g, "Gelu", "gelu", v, "g");
    g->nodes[node].domain = tb_graph_strdup(g, "tb");
    pt_attr_string(g, node, "approximate", cur->gelu);
    v = "g";
  }
  tbt_node(g, "Identity", "out", v, "Y");
  tbt_output(g, "Y");
}

static const chain_case cases[] = {
    {"bias + residual + Gelu", false, true, true, "none", 0},
    {"bias + Gelu (tanh)", false, true, false, "tanh", 0},
    {"bias + residual", false, true, true, NULL, 0},
    {"Gelu only", false, false, false, "none", 0},
    {"residual only (input 2 omitted)", false, false, true, NULL, 0},
    {"batched B: bias + residual + Gelu", true, true, true, "none", 0},
    /* 19 column slivers of 32: the bf16 epilogue's groups of 8 slivers and a short last one, on 1 and 2 threads */
    {"600 columns: bias + residual + Gelu", false, true, true, "none", 600},
};

/* ---- running graphs ---- */

/* Graph inputs: A in [-2, 2), a batched W in [-0.1, 0.1), R in [-2, 2), all seeded. */
static void make_inputs(tb_backend *cpu, const tb_graph *g, tb_tensor **in) {
  pt_inputs(cpu, g, 90, in);
  for (size_t i = 0; i < g->n_inputs; i++)
    if (strcmp(g->values[g->inputs[i]].name, "W") == 0) {
      float *p = tb_tensor_host_data(in[i]);
      for (int64_t k = 0; k < tb_tensor_numel(in[i]); k++) p[k] *= 0.05f;
    }
}

static tb_tensor *exec(tb_backend *cpu, const tb_graph *g, int level, uint64_t features, int threads, tb_tensor **in) {
  tb_exec *e = NULL;
  tb_tensor *out[1] = {NULL};
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, level, features, threads, &e));
  TB_ASSERT_OK(tb_exec_run(e, in, out));
  tb_exec_destroy(e);
  return out[0];
}

static void assert_same_bits(const tb_tensor *x, const tb_tensor *y, const char *what) {
  assert_int_equal(tb_tensor_numel(x), tb_tensor_numel(y));
  const float *a = tb_tensor_host_data(x), *b = tb_tensor_host_data(y);
  for (int64_t i = 0; i < tb_tensor_numel(x); i++)
    if (memcmp(&a[i], &b[i], sizeof(float)) != 0) fail_msg("%s: element %lld is %.9g and %.9g", what, (long long)i, a[i], b[i]);
}

static void assert_within(const tb_tensor *got, const tb_tensor *ref, double atol, double rtol, const char *what) {
  assert_int_equal(tb_tensor_numel(got), tb_tensor_numel(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (!(fabs((double)g[i] - r[i]) <= atol + rtol * fabs((double)r[i])))
      fail_msg("%s: element %lld is %.9g, O0 gives %.9g", what, (long long)i, g[i], r[i]);
}

static uint64_t masked(const char *mask) {
  if (mask) setenv("TB_CPU_FEATURES", mask, 1);
  uint64_t f = tb_convert_features();
  unsetenv("TB_CPU_FEATURES");
  return f;
}

/* The vec_ops table the level-2 elementwise kernels take on these features, and the one the bf16 fused
 * epilogue takes on its path: 2 AVX-512, 1 AVX2, 0 portable. */
static int elementwise_table(uint64_t f) {
  tb_gemm_path p = tb_gemm_path_for(f);
  return p == TB_GEMM_AVX512 ? 2 : p == TB_GEMM_AVX2 ? 1 : 0;
}
static int bf16_epilogue_table(uint64_t f) {
  tb_gemm_bf16_path p = tb_gemm_bf16_path_for(f);
  return p == TB_GEMM_BF16_AVX512BF16 || p == TB_GEMM_BF16_AMX ? 2 : 0;
}

static void check_case(const chain_case *c) {
  cur = c;
  pt_pair p = pt_build(17, build_chain);
  tb_pass_stats st = pt_run_pass(p.after, "activation_fusion");
  assert_int_equal(st.changed, 1);
  pt_assert_ops(p.after, c->name, "tb::FusedMatMul,Identity");
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_tensor *in[4] = {NULL};
  make_inputs(cpu, p.before, in);
  tb_tensor *ref = exec(cpu, p.before, 0, 0, 1, in);
  tb_tensor *o1 = exec(cpu, p.after, 1, 0, 1, in);
  assert_same_bits(o1, ref, "O1 fused against O0 unfused");
  tb_tensor_destroy(o1);
  const char *masks[] = {NULL, "-avx512f", "-avx2"};
  for (int mi = 0; mi < 3; mi++) {
    uint64_t f = masked(masks[mi]);
    char what[160];
    const char *mask = masks[mi] ? masks[mi] : "no mask";
    tb_tensor *o2 = exec(cpu, p.after, 2, f, 1, in), *o2t = exec(cpu, p.after, 2, f, 2, in);
    snprintf(what, sizeof what, "%s at O2 (%s)", c->name, mask);
    assert_within(o2, ref, 1e-5, 1e-4, what);
    assert_same_bits(o2t, o2, what);
    tb_tensor *u2 = exec(cpu, p.before, 2, f, 1, in);
    assert_same_bits(o2, u2, what);
    tb_tensor_destroy(u2);
    tb_tensor *o3 = exec(cpu, p.after, 3, f, 1, in), *o3t = exec(cpu, p.after, 3, f, 2, in);
    snprintf(what, sizeof what, "%s at O3 (%s)", c->name, mask);
    assert_within(o3, ref, 1e-2, 1e-2, what);
    assert_same_bits(o3t, o3, what);
    bool same_table = !c->gelu || elementwise_table(f) == bf16_epilogue_table(f); /* adds are exact in any table */
    if (same_table) {
      tb_tensor *u3 = exec(cpu, p.before, 3, f, 1, in);
      assert_same_bits(o3, u3, what);
      tb_tensor_destroy(u3);
    }
    printf("  %s, %s: O2 and O3 within tolerance; O2 the unfused graph's bits; O3 %s\n", c->name, mask,
           same_table ? "the unfused graph's bits" : "not compared bit for bit (the unfused Gelu takes another table)");
    tb_tensor_destroy(o2);
    tb_tensor_destroy(o2t);
    tb_tensor_destroy(o3);
    tb_tensor_destroy(o3t);
  }
  tb_tensor_destroy(ref);
  toh_clear(in, 4);
  tb_backend_destroy(cpu);
  pt_free(&p);
}

static void every_chain_every_path(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* ---- bad input straight into the kernels ---- */

/* A one-node FusedMatMul graph with inputs in0..in3 (A [2, 3, 8], B [8, 12], bias, residual). */
static void setup_fused(toh *t) {
  toh_begin(t, NULL);
  int ins[4], out = tb_graph_value(t->graph, "out0");
  const char *names[4] = {"in0", "in1", "in2", "in3"};
  for (int i = 0; i < 4; i++) ins[i] = tb_graph_value(t->graph, names[i]);
  tb_attr act[2] = {TOH_STR("activation", "Gelu"), TOH_STR("activation_approximate", "none")};
  t->node = tb_graph_add_node(t->graph, "proj", "FusedMatMul", "tb", ins, 4, &out, 1, act, 2);
  assert_true(t->node >= 0);
  toh_node(t)->opset = 1;
  toh_node(t)->def = tb_op_find("tb", "FusedMatMul", 1);
  assert_non_null(toh_node(t)->def);
  t->n_in = 4;
  t->n_out = 1;
}

static tb_tensor *filled(toh *t, size_t nd, const int64_t *shape) {
  int64_t n = 1;
  for (size_t i = 0; i < nd; i++) n *= shape[i];
  float *x = calloc((size_t)n, sizeof(float));
  for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 7) * 0.25f - 0.5f;
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, nd, shape, x);
  free(x);
  return r;
}

static void bad_inputs_named(void **state) {
  (void)state;
  const tb_kernel *kernels[] = {&tb_kernel_fused_matmul, &tb_kernel_fused_matmul_f32_portable,
                                    &tb_kernel_fused_matmul_f32_avx2, &tb_kernel_fused_matmul_f32_avx512,
                                    &tb_kernel_fused_matmul_bf16_portable, &tb_kernel_fused_matmul_bf16_avx512bf16};
  uint64_t hw = tb_convert_hardware_features();
  toh t;
  setup_fused(&t);
  const int64_t as[3] = {2, 3, 8}, bs[2] = {8, 12}, bad_bias[1] = {5}, res[3] = {2, 3, 12}, bad_res[3] = {2, 12, 3};
  const int64_t good_bias[1] = {12};
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
    if ((kernels[k]->cpu_features & hw) != kernels[k]->cpu_features) continue; /* a path this CPU lacks */
    for (int which = 0; which < 2; which++) {
      tb_tensor *in[4] = {filled(&t, 3, as), filled(&t, 2, bs), which ? filled(&t, 1, good_bias) : filled(&t, 1, bad_bias),
                          which ? filled(&t, 3, bad_res) : filled(&t, 3, res)};
      tb_tensor *out[1] = {NULL};
      tb_kernel_ctx ctx = {.graph = t.graph, .node = toh_node(&t), .n_inputs = 4, .inputs = in, .n_outputs = 1,
                           .outputs = out, .backend = t.cpu, .threads = 1};
      (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
      assert_int_equal(kernels[k]->run(&ctx), TB_ERR_INVALID_ARGUMENT);
      printf("  %s: %s\n", kernels[k]->precision ? "bf16" : kernels[k]->level ? "fast fp32" : "reference", tb_last_error());
      TB_ASSERT_CONTAINS(tb_last_error(), "'proj'");
      if (which == 0) {
        TB_ASSERT_CONTAINS(tb_last_error(), "the bias (input 2) has 5 values");
        TB_ASSERT_CONTAINS(tb_last_error(), "expected 12, the output's last dimension");
      } else {
        TB_ASSERT_CONTAINS(tb_last_error(), "the residual (input 3) has shape [2, 12, 3]; expected the output's [2, 3, 12]");
      }
      tb_tensor_destroy(out[0]);
      toh_clear(in, 4);
    }
  }
  toh_teardown(&t);
}

/* Inference: the bias's shape and dtype, the residual's shape, Gelu's approximate. */
static void inference_checks(void **state) {
  (void)state;
  toh t;
  setup_fused(&t);
  const int64_t as[3] = {2, 3, 8}, bs[2] = {8, 12}, bias_ok[3] = {1, 1, 12}, bias_bad[2] = {3, 12}, res[3] = {2, 3, 12};
  const int64_t res_bad[3] = {1, 3, 12};
  tb_value_type ta = toh_type(TB_DTYPE_F32, 3, as), tw = toh_type(TB_DTYPE_F32, 2, bs), tr = toh_type(TB_DTYPE_F32, 3, res);
  tb_value_type tbias = toh_type(TB_DTYPE_F32, 3, bias_ok), out;
  const tb_value_type *in[4] = {&ta, &tw, &tbias, &tr};
  TB_ASSERT_OK(toh_infer(&t, in, &out));
  toh_assert_type(&out, TB_DTYPE_F32, 3, res);
  tb_value_type bad = toh_type(TB_DTYPE_F32, 2, bias_bad);
  in[2] = &bad;
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the bias (input 2) has shape [3, 12]; expected 12 values along the last axis");
  tb_value_type bias64 = toh_type(TB_DTYPE_F64, 1, bias_ok + 2);
  in[2] = &bias64;
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the bias's dtype f64 differs from the output's f32");
  tb_value_type rb = toh_type(TB_DTYPE_F32, 3, res_bad);
  in[2] = &tbias;
  in[3] = &rb;
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the residual's shape [1, 3, 12] differs from the output's [2, 3, 12]");
  toh_teardown(&t);
  /* an unknown approximate, and Gelu on FusedConv */
  toh_begin(&t, NULL);
  int ins[2] = {tb_graph_value(t.graph, "in0"), tb_graph_value(t.graph, "in1")}, o = tb_graph_value(t.graph, "out0");
  tb_attr act[2] = {TOH_STR("activation", "Gelu"), TOH_STR("activation_approximate", "fast")};
  t.node = tb_graph_add_node(t.graph, "proj", "FusedMatMul", "tb", ins, 2, &o, 1, act, 2);
  toh_node(&t)->def = tb_op_find("tb", "FusedMatMul", 1);
  t.n_in = 2;
  t.n_out = 1;
  in[2] = in[3] = NULL;
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "activation_approximate is 'fast'; expected 'none' or 'tanh'");
  toh_teardown(&t);
}

/* The executor takes the fused fast kernels for a 4-input FusedMatMul, on the path the mask leaves. */
static void kernel_choice_follows_mask(void **state) {
  (void)state;
  toh t;
  setup_fused(&t);
  const int64_t as[3] = {2, 3, 8}, bs[2] = {8, 12}, n[1] = {12}, res[3] = {2, 3, 12};
  tb_value_type ta = toh_type(TB_DTYPE_F32, 3, as), tw = toh_type(TB_DTYPE_F32, 2, bs), tbias = toh_type(TB_DTYPE_F32, 1, n);
  tb_value_type tr = toh_type(TB_DTYPE_F32, 3, res), tr64 = toh_type(TB_DTYPE_F64, 3, res);
  const tb_value_type *in[4] = {&ta, &tw, &tbias, &tr};
  uint64_t hw = tb_convert_hardware_features();
  if (tb_gemm_path_for(hw) == TB_GEMM_AVX512)
    assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 2, hw), &tb_kernel_fused_matmul_f32_avx512);
  if (tb_gemm_path_for(hw) >= TB_GEMM_AVX2)
    assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 2, masked("-avx512f")), &tb_kernel_fused_matmul_f32_avx2);
  assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 2, masked("-avx2")), &tb_kernel_fused_matmul_f32_portable);
  if (tb_gemm_bf16_path_for(hw) == TB_GEMM_BF16_AVX512BF16)
    assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 3, hw), &tb_kernel_fused_matmul_bf16_avx512bf16);
  assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 3, masked("-avx512bf16")), &tb_kernel_fused_matmul_bf16_portable);
  in[3] = &tr64; /* a float64 residual: the fast kernels decline, the reference takes it */
  assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 3, hw), &tb_kernel_fused_matmul);
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(every_chain_every_path, tbt_setup_clean_env),
      cmocka_unit_test_setup(bad_inputs_named, tbt_setup_clean_env),
      cmocka_unit_test_setup(inference_checks, tbt_setup_clean_env),
      cmocka_unit_test_setup(kernel_choice_follows_mask, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
