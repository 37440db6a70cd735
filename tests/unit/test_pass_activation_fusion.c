/* activation_fusion: Conv/Gemm/MatMul followed by an activation become tb::FusedConv / FusedGemm /
 * FusedMatMul; Conv + Add(residual) [+ activation] becomes FusedConv with the residual as input 3. Relu,
 * LeakyRelu, Clip and the residual add are bit-identical (the same base kernel, the same rounding); the
 * transcendental activations (Sigmoid, Tanh, HardSigmoid, HardSwish) are computed in double and rounded
 * once, so they agree within 1e-5 relative. A Conv whose output is also a graph output is not fused.
 * The transformer's MatMul -> Add(constant bias) [-> Add(residual)] [-> Gelu] becomes one FusedMatMul
 * (bias input 2, residual input 3, activation Gelu with activation_approximate), bit-identical at O1 to
 * the separate reference kernels (O0), float32 and float64, with the counts in the pass's summary; and
 * what must stay apart: a bias that is not a constant or not N values, a constant of the output's whole
 * shape, a residual that broadcasts, a value read twice. The gated activations SiLU (Sigmoid then a Mul of
 * the same input, the Mul's operands in either order) and Mish (Softplus, Tanh, Mul) after Conv, Gemm and
 * MatMul become activation "Silu" / "Mish" (within 1e-5 of the unfused graph), after anything else one
 * tb::Silu / tb::Mish node; a gate read elsewhere, a Mul of another value, or a base output read a third
 * time stay apart. */
#include "pass_test.h"

static void conv_input(tb_graph *g) {
  int64_t x[4] = {1, 2, 5, 5}, w[4] = {3, 2, 3, 3}, m = 3;
  tbt_input(g, "X", TB_DTYPE_F32, 4, x, NULL);
  pt_const_rand(g, "W", 4, w, 40, -1.0f, 1.0f);
  pt_const_rand(g, "B", 1, &m, 41, -0.5f, 0.5f);
  int c = tbt_node(g, "Conv", "conv", "X,W,B", "y");
  const int64_t pads[4] = {1, 1, 1, 1};
  pt_attr_ints(g, c, "pads", 4, pads);
}

static void conv_relu(tb_graph *g) {
  conv_input(g);
  tbt_node(g, "Relu", "relu", "y", "Y");
  tbt_output(g, "Y");
}

static void conv_residual_relu(tb_graph *g) {
  conv_input(g);
  int64_t r[4] = {1, 3, 5, 5};
  tbt_input(g, "R", TB_DTYPE_F32, 4, r, NULL);
  tbt_node(g, "Add", "add", "y,R", "z");
  tbt_node(g, "Relu", "relu", "z", "Y");
  tbt_output(g, "Y");
}

static void gemm_leaky(tb_graph *g) {
  int64_t a[2] = {4, 5}, b[2] = {5, 3}, c = 3;
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 42, -1.0f, 1.0f);
  pt_const_rand(g, "C", 1, &c, 43, -1.0f, 1.0f);
  tbt_node(g, "Gemm", "gemm", "A,Bw,C", "y");
  int l = tbt_node(g, "LeakyRelu", "leaky", "y", "Y");
  pt_attr_float(g, l, "alpha", 0.1f);
  tbt_output(g, "Y");
}

static void matmul_clip(tb_graph *g) {
  int64_t a[3] = {2, 4, 5}, b[2] = {5, 6};
  tbt_input(g, "A", TB_DTYPE_F32, 3, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 44, -1.0f, 1.0f);
  pt_const_scalar(g, "lo", -0.5f);
  pt_const_scalar(g, "hi", 0.75f);
  tbt_node(g, "MatMul", "mm", "A,Bw", "y");
  tbt_node(g, "Clip", "clip", "y,lo,hi", "Y");
  tbt_output(g, "Y");
}

static void fuses_exactly(void (*build)(tb_graph *), const char *before, const char *after, size_t absorbed) {
  pt_pair p = pt_build(13, build);
  pt_assert_ops(p.after, "before:", before);
  tb_pass_stats st = pt_run_pass(p.after, "activation_fusion");
  pt_assert_ops(p.after, "after:", after);
  assert_int_equal(st.changed, 1);
  assert_int_equal(st.nodes_fused, absorbed);
  pt_compare(p.before, p.after, 50, 0.0);
  pt_free(&p);
}

static void test_conv_relu(void **state) {
  (void)state;
  fuses_exactly(conv_relu, "Conv,Relu", "tb::FusedConv", 1);
}

static void test_conv_residual_relu(void **state) {
  (void)state;
  fuses_exactly(conv_residual_relu, "Conv,Add,Relu", "tb::FusedConv", 2);
}

static void test_gemm_leaky_relu(void **state) {
  (void)state;
  fuses_exactly(gemm_leaky, "Gemm,LeakyRelu", "tb::FusedGemm", 1);
}

static void test_matmul_clip(void **state) {
  (void)state;
  fuses_exactly(matmul_clip, "MatMul,Clip", "tb::FusedMatMul", 1);
}

/* MatMul followed by each transcendental activation. */
static const char *act_name;
static void matmul_act(tb_graph *g) {
  int64_t a[2] = {3, 4}, b[2] = {4, 5};
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 45, -1.0f, 1.0f);
  tbt_node(g, "MatMul", "mm", "A,Bw", "y");
  tbt_node(g, act_name, "act", "y", "Y");
  tbt_output(g, "Y");
}

static void test_matmul_transcendental(void **state) {
  (void)state;
  const char *acts[] = {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish"};
  for (size_t i = 0; i < 4; i++) {
    act_name = acts[i];
    pt_pair p = pt_build(14, matmul_act); /* HardSwish is opset 14 */
    tb_pass_stats st = pt_run_pass(p.after, "activation_fusion");
    pt_assert_ops(p.after, act_name, "tb::FusedMatMul");
    assert_int_equal(st.changed, 1);
    const char *s = NULL;
    TB_ASSERT_OK(tb_attr_string(p.after, &p.after->nodes[0], "activation", NULL, &s));
    assert_string_equal(s, act_name);
    pt_compare(p.before, p.after, 51, 1e-5);
    pt_free(&p);
  }
}

static void conv_relu_shared(tb_graph *g) {
  conv_relu(g);
  tbt_output(g, "y");
}

static void test_shared_not_fused(void **state) {
  (void)state;
  pt_assert_kept(13, conv_relu_shared, "activation_fusion", "Conv,Relu", PT_NO_COMPARE);
}

/* ---- MatMul -> Add(bias) [-> Add(residual)] [-> Gelu]: the transformer's projections and FFN ---- */

/* A [1, 6, 16] x W [16, 12] -> y, and a constant bias [12]. */
static void mm_base(tb_graph *g) {
  int64_t a[3] = {1, 6, 16}, w[2] = {16, 12}, n = 12;
  tbt_input(g, "A", TB_DTYPE_F32, 3, a, NULL);
  pt_const_rand(g, "W", 2, w, 60, -0.5f, 0.5f);
  pt_const_rand(g, "bias", 1, &n, 61, -1.0f, 1.0f);
  tbt_node(g, "MatMul", "mm", "A,W", "y");
}

/* A tb::Gelu node (approximate "none" or "tanh"). */
static void gelu_node(tb_graph *g, const char *name, const char *in, const char *out, const char *approx) {
  int n = tbt_node(g, "Gelu", name, in, out);
  g->nodes[n].domain = tb_graph_strdup(g, "tb");
  if (approx) pt_attr_string(g, n, "approximate", approx);
}

static void mm_bias(tb_graph *g) { /* the Q/K/V projection: bias first, as PyTorch exports it */
  mm_base(g);
  tbt_node(g, "Add", "add_bias", "bias,y", "Y");
  tbt_output(g, "Y");
}

static void mm_bias_gelu(tb_graph *g) {
  mm_base(g);
  tbt_node(g, "Add", "add_bias", "y,bias", "z");
  gelu_node(g, "gelu", "z", "Y", NULL);
  tbt_output(g, "Y");
}

static void residual_input(tb_graph *g) {
  int64_t r[3] = {1, 6, 12};
  tbt_input(g, "R", TB_DTYPE_F32, 3, r, NULL);
}

static void mm_bias_residual(tb_graph *g) { /* the attention's output projection */
  mm_base(g);
  residual_input(g);
  tbt_node(g, "Add", "add_bias", "bias,y", "z");
  tbt_node(g, "Add", "add_res", "R,z", "Y");
  tbt_output(g, "Y");
}

static void mm_bias_residual_gelu_tanh(tb_graph *g) {
  mm_base(g);
  residual_input(g);
  tbt_node(g, "Add", "add_bias", "y,bias", "z");
  tbt_node(g, "Add", "add_res", "z,R", "r");
  gelu_node(g, "gelu", "r", "Y", "tanh");
  tbt_output(g, "Y");
}

static void ffn(tb_graph *g) { /* MatMul, bias, Gelu, MatMul, bias, residual (A) */
  mm_base(g);
  int64_t w2[2] = {12, 16}, n2 = 16;
  pt_const_rand(g, "W2", 2, w2, 62, -0.5f, 0.5f);
  pt_const_rand(g, "bias2", 2, (int64_t[]){1, n2}, 63, -1.0f, 1.0f); /* [1, N]: a bias too */
  tbt_node(g, "Add", "add_bias", "bias,y", "z");
  gelu_node(g, "gelu", "z", "h", "none");
  tbt_node(g, "MatMul", "mm2", "h,W2", "y2");
  tbt_node(g, "Add", "add_bias2", "y2,bias2", "z2");
  tbt_node(g, "Add", "add_res", "z2,A", "Y");
  tbt_output(g, "Y");
}

static const char *act_string(const tb_graph *g, const char *attr) {
  const char *s = NULL;
  TB_ASSERT_OK(tb_attr_string(g, &g->nodes[0], attr, NULL, &s));
  return s;
}

/* The pass fuses build's chain into ops, absorbing that many nodes, with `summary` in its report; the
 * fused graph at O0 gives the separate kernels' bits. */
static tb_graph *fuses(pt_pair *p, void (*build)(tb_graph *), const char *after, size_t absorbed, const char *summary) {
  *p = pt_build(17, build);
  tb_pass_stats st = pt_run_pass(p->after, "activation_fusion");
  pt_assert_ops(p->after, "after:", after);
  assert_int_equal(st.nodes_fused, absorbed);
  TB_ASSERT_CONTAINS(st.summary, summary);
  pt_compare(p->before, p->after, 70, 0.0);
  return p->after;
}

static void test_matmul_bias(void **state) {
  (void)state;
  pt_pair p;
  tb_graph *g = fuses(&p, mm_bias, "tb::FusedMatMul", 1, "fused 1 activation/residual epilogue into Conv/Gemm/MatMul (0 with a residual Add, 1 with a bias Add, 0 GELU, 0 SiLU/Mish)");
  assert_int_equal(g->nodes[0].n_inputs, 3);
  assert_string_equal(g->values[g->nodes[0].inputs[2]].name, "bias");
  assert_null(act_string(g, "activation"));
  pt_free(&p);
}

static void test_matmul_bias_gelu(void **state) {
  (void)state;
  pt_pair p;
  tb_graph *g = fuses(&p, mm_bias_gelu, "tb::FusedMatMul", 2, "(0 with a residual Add, 1 with a bias Add, 1 GELU, 0 SiLU/Mish)");
  assert_string_equal(act_string(g, "activation"), "Gelu");
  assert_string_equal(act_string(g, "activation_approximate"), "none");
  pt_free(&p);
}

static void test_matmul_bias_residual(void **state) {
  (void)state;
  pt_pair p;
  tb_graph *g = fuses(&p, mm_bias_residual, "tb::FusedMatMul", 2, "(1 with a residual Add, 1 with a bias Add, 0 GELU, 0 SiLU/Mish)");
  assert_int_equal(g->nodes[0].n_inputs, 4);
  assert_string_equal(g->values[g->nodes[0].inputs[3]].name, "R");
  assert_string_equal(g->values[g->nodes[0].outputs[0]].name, "Y");
  pt_free(&p);
}

static void test_matmul_bias_residual_gelu_tanh(void **state) {
  (void)state;
  pt_pair p;
  tb_graph *g = fuses(&p, mm_bias_residual_gelu_tanh, "tb::FusedMatMul", 3, "(1 with a residual Add, 1 with a bias Add, 1 GELU, 0 SiLU/Mish)");
  assert_string_equal(act_string(g, "activation_approximate"), "tanh");
  pt_free(&p);
}

static void test_ffn(void **state) {
  (void)state;
  pt_pair p;
  fuses(&p, ffn, "tb::FusedMatMul,tb::FusedMatMul", 4,
        "fused 2 activation/residual epilogues into Conv/Gemm/MatMul (1 with a residual Add, 2 with a bias Add, 1 GELU, 0 SiLU/Mish)");
  pt_free(&p);
}

/* float64 end to end (Cast in and out so the comparison sees float32): fused and exact. */
static void mm_f64(tb_graph *g) {
  int64_t a[2] = {5, 16}, w[2] = {16, 12}, n = 12;
  double wd[16 * 12], bd[12];
  uint32_t seed = 64;
  for (int i = 0; i < 16 * 12; i++) wd[i] = pt_rand(&seed, -0.5f, 0.5f) + 1e-9 * i; /* not float-exact */
  for (int i = 0; i < 12; i++) bd[i] = pt_rand(&seed, -1.0f, 1.0f) + 1e-10;
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  tbt_const(g, "W", TB_DTYPE_F64, 2, w, wd);
  tbt_const(g, "bias", TB_DTYPE_F64, 1, &n, bd);
  pt_attr_int(g, tbt_node(g, "Cast", "to64", "A", "a64"), "to", 11); /* ONNX DOUBLE */
  tbt_node(g, "MatMul", "mm", "a64,W", "y");
  tbt_node(g, "Add", "add_bias", "y,bias", "z");
  gelu_node(g, "gelu", "z", "g", NULL);
  pt_attr_int(g, tbt_node(g, "Cast", "to32", "g", "Y"), "to", 1); /* ONNX FLOAT */
  tbt_output(g, "Y");
}

static void test_matmul_f64(void **state) {
  (void)state;
  pt_pair p;
  fuses(&p, mm_f64, "Cast,tb::FusedMatMul,Cast", 2, "1 with a bias Add, 1 GELU");
  pt_free(&p);
}

/* ---- what must not fuse ---- */

static void bias_not_constant(tb_graph *g) {
  int64_t a[3] = {1, 6, 16}, w[2] = {16, 12}, n = 12;
  tbt_input(g, "A", TB_DTYPE_F32, 3, a, NULL);
  tbt_input(g, "bias", TB_DTYPE_F32, 1, &n, NULL);
  pt_const_rand(g, "W", 2, w, 60, -0.5f, 0.5f);
  tbt_node(g, "MatMul", "mm", "A,W", "y");
  tbt_node(g, "Add", "add_bias", "y,bias", "Y");
  tbt_output(g, "Y");
}

static void bias_of_whole_shape(tb_graph *g) { /* a constant [M, N]: neither a bias nor a skip connection */
  int64_t a[2] = {6, 16}, w[2] = {16, 12}, mn[2] = {6, 12};
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  pt_const_rand(g, "W", 2, w, 60, -0.5f, 0.5f);
  pt_const_rand(g, "bias", 2, mn, 65, -1.0f, 1.0f);
  tbt_node(g, "MatMul", "mm", "A,W", "y");
  tbt_node(g, "Add", "add_bias", "bias,y", "Y");
  tbt_output(g, "Y");
}

static void bias_per_row(tb_graph *g) { /* [6, 1]: broadcasts along the rows, not the columns */
  int64_t a[2] = {6, 16}, w[2] = {16, 12}, m1[2] = {6, 1};
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  pt_const_rand(g, "W", 2, w, 60, -0.5f, 0.5f);
  pt_const_rand(g, "bias", 2, m1, 66, -1.0f, 1.0f);
  tbt_node(g, "MatMul", "mm", "A,W", "y");
  tbt_node(g, "Add", "add_bias", "y,bias", "Y");
  tbt_output(g, "Y");
}

static void matmul_read_twice(tb_graph *g) { /* y is also a graph output */
  mm_bias(g);
  tbt_output(g, "y");
}

static void add_of_itself(tb_graph *g) { /* Add(y, y): y used twice by one node */
  mm_base(g);
  tbt_node(g, "Add", "add", "y,y", "Y");
  tbt_output(g, "Y");
}

static void test_not_fused(void **state) {
  (void)state;
  pt_assert_kept(17, bias_not_constant, "activation_fusion", "MatMul,Add", 71);
  pt_assert_kept(17, bias_of_whole_shape, "activation_fusion", "MatMul,Add", 72);
  pt_assert_kept(17, bias_per_row, "activation_fusion", "MatMul,Add", 73);
  pt_assert_kept(17, matmul_read_twice, "activation_fusion", "MatMul,Add", PT_NO_COMPARE);
  pt_assert_kept(17, add_of_itself, "activation_fusion", "MatMul,Add", 74);
}

static void residual_broadcast(tb_graph *g) { /* R [1, 1, 12] broadcasts: only the bias is fused */
  mm_base(g);
  int64_t r[3] = {1, 1, 12};
  tbt_input(g, "R", TB_DTYPE_F32, 3, r, NULL);
  tbt_node(g, "Add", "add_bias", "bias,y", "z");
  tbt_node(g, "Add", "add_res", "z,R", "Y");
  tbt_output(g, "Y");
}

static void biased_read_twice(tb_graph *g) { /* z feeds the Gelu and is an output: the fused node ends at z */
  mm_bias_gelu(g);
  tbt_output(g, "z");
}

static void test_partly_fused(void **state) {
  (void)state;
  pt_pair p;
  fuses(&p, residual_broadcast, "tb::FusedMatMul,Add", 1, "(0 with a residual Add, 1 with a bias Add, 0 GELU, 0 SiLU/Mish)");
  pt_free(&p);
  fuses(&p, biased_read_twice, "tb::FusedMatMul,tb::Gelu", 1, "(0 with a residual Add, 1 with a bias Add, 0 GELU, 0 SiLU/Mish)");
  pt_free(&p);
}

/* Gelu is fused into MatMul and Gemm, never into Conv (whose fast kernels have no Gelu); the schema says so. */
static void conv_gelu(tb_graph *g) {
  conv_input(g);
  gelu_node(g, "gelu", "y", "Y", NULL);
  tbt_output(g, "Y");
}

static void test_conv_gelu_not_fused(void **state) {
  (void)state;
  pt_assert_kept(13, conv_gelu, "activation_fusion", "Conv,tb::Gelu", 75);
}

/* ---- The gated activations: SiLU x * Sigmoid(x), Mish x * Tanh(Softplus(x)) ---- */

static void conv_silu(tb_graph *g) { /* torch's SiLU at opset 17 */
  conv_input(g);
  tbt_node(g, "Sigmoid", "sig", "y", "s");
  tbt_node(g, "Mul", "mul", "y,s", "Y");
  tbt_output(g, "Y");
}

static void conv_silu_swapped(tb_graph *g) { /* Mul(Sigmoid(y), y) */
  conv_input(g);
  tbt_node(g, "Sigmoid", "sig", "y", "s");
  tbt_node(g, "Mul", "mul", "s,y", "Y");
  tbt_output(g, "Y");
}

static void conv_residual_silu(tb_graph *g) { /* Conv + Add(residual), then SiLU of the sum */
  conv_input(g);
  int64_t r[4] = {1, 3, 5, 5};
  tbt_input(g, "R", TB_DTYPE_F32, 4, r, NULL);
  tbt_node(g, "Add", "add", "y,R", "z");
  tbt_node(g, "Sigmoid", "sig", "z", "s");
  tbt_node(g, "Mul", "mul", "z,s", "Y");
  tbt_output(g, "Y");
}

static void gemm_mish(tb_graph *g) {
  int64_t a[2] = {4, 5}, b[2] = {5, 3}, c = 3;
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 42, -3.0f, 3.0f);
  pt_const_rand(g, "C", 1, &c, 43, -1.0f, 1.0f);
  tbt_node(g, "Gemm", "gemm", "A,Bw,C", "y");
  tbt_node(g, "Softplus", "sp", "y", "p");
  tbt_node(g, "Tanh", "tanh", "p", "t");
  tbt_node(g, "Mul", "mul", "t,y", "Y");
  tbt_output(g, "Y");
}

static void matmul_silu(tb_graph *g) {
  int64_t a[3] = {2, 4, 5}, b[2] = {5, 6};
  tbt_input(g, "A", TB_DTYPE_F32, 3, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 44, -2.0f, 2.0f);
  tbt_node(g, "MatMul", "mm", "A,Bw", "y");
  tbt_node(g, "Sigmoid", "sig", "y", "s");
  tbt_node(g, "Mul", "mul", "y,s", "Y");
  tbt_output(g, "Y");
}

/* One fused node of this op with activation `act`, `absorbed` nodes gone, within 1e-5 of the graph before. */
static void fuses_gated(void (*build)(tb_graph *), const char *before, const char *op, const char *act,
                        size_t absorbed) {
  pt_pair p = pt_build(13, build);
  pt_assert_ops(p.after, "before:", before);
  tb_pass_stats st = pt_run_pass(p.after, "activation_fusion");
  pt_assert_ops(p.after, "after:", op);
  assert_int_equal(st.changed, 1);
  assert_int_equal(st.nodes_fused, absorbed);
  assert_non_null(strstr(st.summary, "1 SiLU/Mish"));
  const tb_node *n = NULL;
  for (size_t i = 0; i < p.after->n_nodes; i++)
    if (!p.after->nodes[i].dead) n = &p.after->nodes[i];
  assert_non_null(n);
  const char *s = NULL;
  TB_ASSERT_OK(tb_attr_string(p.after, n, "activation", NULL, &s));
  assert_string_equal(s, act);
  pt_compare(p.before, p.after, 52, 1e-5);
  pt_free(&p);
}

static void test_gated_fused(void **state) {
  (void)state;
  fuses_gated(conv_silu, "Conv,Sigmoid,Mul", "tb::FusedConv", "Silu", 2);
  fuses_gated(conv_silu_swapped, "Conv,Sigmoid,Mul", "tb::FusedConv", "Silu", 2);
  fuses_gated(conv_residual_silu, "Conv,Add,Sigmoid,Mul", "tb::FusedConv", "Silu", 3);
  fuses_gated(gemm_mish, "Gemm,Softplus,Tanh,Mul", "tb::FusedGemm", "Mish", 3);
  fuses_gated(matmul_silu, "MatMul,Sigmoid,Mul", "tb::FusedMatMul", "Silu", 2);
}

static void gate_is_output(tb_graph *g) { /* s is also a graph output */
  conv_silu(g);
  tbt_output(g, "s");
}

static void base_read_thrice(tb_graph *g) { /* y also feeds a Relu */
  conv_silu(g);
  tbt_node(g, "Relu", "relu", "y", "Z");
  tbt_output(g, "Z");
}

static void mul_of_other(tb_graph *g) { /* Mul(Sigmoid(y), X2): not a SiLU */
  conv_input(g);
  int64_t r[4] = {1, 3, 5, 5};
  tbt_input(g, "X2", TB_DTYPE_F32, 4, r, NULL);
  tbt_node(g, "Sigmoid", "sig", "y", "s");
  tbt_node(g, "Mul", "mul", "s,X2", "Y");
  tbt_output(g, "Y");
}

static void mish_gate_shared(tb_graph *g) { /* the Softplus output is read by the Tanh and a graph output */
  gemm_mish(g);
  tbt_output(g, "p");
}

static void input_silu(tb_graph *g) { /* a SiLU of a graph input: one tb::Silu */
  int64_t x[4] = {1, 3, 5, 5};
  tbt_input(g, "X", TB_DTYPE_F32, 4, x, NULL);
  tbt_node(g, "Sigmoid", "sig", "X", "s");
  tbt_node(g, "Mul", "mul", "s,X", "Y");
  tbt_output(g, "Y");
}

static void add_mish(tb_graph *g) { /* a Mish of an Add: one tb::Mish after the Add */
  int64_t x[2] = {6, 7};
  tbt_input(g, "X", TB_DTYPE_F32, 2, x, NULL);
  tbt_input(g, "Z", TB_DTYPE_F32, 2, x, NULL);
  tbt_node(g, "Add", "add", "X,Z", "y");
  tbt_node(g, "Softplus", "sp", "y", "p");
  tbt_node(g, "Tanh", "tanh", "p", "t");
  tbt_node(g, "Mul", "mul", "y,t", "Y");
  tbt_output(g, "Y");
}

static void standalone(void (*build)(tb_graph *), const char *after, size_t absorbed) {
  pt_pair p = pt_build(13, build);
  tb_pass_stats st = pt_run_pass(p.after, "activation_fusion");
  pt_assert_ops(p.after, "after:", after);
  assert_int_equal(st.changed, 1);
  assert_int_equal(st.nodes_fused, absorbed);
  TB_ASSERT_CONTAINS(st.summary, "fused 0 activation/residual epilogues");
  TB_ASSERT_CONTAINS(st.summary, ", 1 SiLU/Mish as tb::Silu/tb::Mish");
  pt_compare(p.before, p.after, 54, 1e-5);
  pt_free(&p);
}

static void test_gated_standalone(void **state) {
  (void)state;
  standalone(input_silu, "tb::Silu", 1);
  standalone(add_mish, "Add,tb::Mish", 2);
}

static void test_gated_not_fused(void **state) {
  (void)state;
  pt_assert_kept(13, gate_is_output, "activation_fusion", "Conv,Sigmoid,Mul", PT_NO_COMPARE);
  pt_assert_kept(13, base_read_thrice, "activation_fusion", "Conv,Sigmoid,Mul,Relu", PT_NO_COMPARE);
  pt_assert_kept(13, mish_gate_shared, "activation_fusion", "Gemm,Softplus,Tanh,Mul", PT_NO_COMPARE);
  /* Conv -> Sigmoid has a sole consumer: the Sigmoid alone is fused, the Mul stays */
  pt_pair p = pt_build(13, mul_of_other);
  pt_run_pass(p.after, "activation_fusion");
  pt_assert_ops(p.after, "after:", "tb::FusedConv,Mul");
  pt_compare(p.before, p.after, 53, 1e-5);
  pt_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_conv_relu, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_conv_residual_relu, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_gemm_leaky_relu, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_clip, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_transcendental, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_shared_not_fused, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_bias, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_bias_gelu, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_bias_residual, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_bias_residual_gelu_tanh, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_ffn, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_f64, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_not_fused, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_partly_fused, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_conv_gelu_not_fused, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_gated_fused, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_gated_not_fused, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_gated_standalone, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
