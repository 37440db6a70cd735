/* The level-2 vectorised elementwise kernels (src/backend/cpu/kernels/fast/vec/vec_unary.c, vec_binary.c) on
 * their AVX-512, AVX2 and portable entries, each without and with a 2-thread pool, against the level-0
 * reference kernels: odd sizes (1, 15, 17, 33, 100003: never a multiple of 16, the last split over the
 * pool), NaN, +-inf, +-0 and overflow inputs, the broadcasts accepted (equal shapes, scalars, bias
 * vectors, [N, 1] columns, [C, 1, 1] per-channel) and declined (both operands broadcasting, a broadcast
 * dim between covered ones, opset 6's axis broadcast), which entry the executor picks under masks, and
 * preallocated outputs, in-place runs and strided input views.
 *
 * Tolerances: Relu, Neg, Sqrt, Reciprocal and the four arithmetic ops are exact (IEEE operations the
 * reference also does in fp32, NaN positions included). Exp, Sigmoid, Tanh, Erf: rtol 1e-5 (the vector
 * polynomials are within 3 ulp of the true value, test_vec_math.c, the reference's libm within 1) and atol
 * 1e-40 for results in the subnormal range. tb::Gelu: rtol 1e-5, atol 1e-14: its reference computes
 * 0.5 x (1 + erf) in double, whose cancellation leaves an absolute error near 1e-16 |x| in the left tail
 * (the vector form computes that tail through erfc and stays relatively accurate). */
#include "test_vec_util.h"

static const float specials[] = {NAN,     INFINITY,  -INFINITY, 0.0f,    -0.0f, 1e-30f,
                                 -1e-30f, 0x1p-140f, 88.8f,     -104.0f, 50.0f, -50.0f};
enum { N_SPECIAL = sizeof specials / sizeof specials[0] };

typedef struct unary_case {
  const char *op;
  const tb_kernel *entries[3];
  float lo, hi;
  double rtol, atol;
} unary_case;

static void unary_check(const char *op, const tb_kernel *const *entries, const tb_attr *attrs, size_t n_attrs,
                        float lo, float hi, double rtol, double atol) {
  static const int64_t sizes[] = {1, 15, 17, 33, 100003};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    toh t;
    toh_begin(&t, NULL);
    if (strcmp(op, "Gelu") == 0 || strcmp(op, "Silu") == 0 || strcmp(op, "Mish") == 0)
      vt_add_tb(&t, op, 1, 1, attrs, n_attrs);
    else
      toh_add(&t, op, strcmp(op, "HardSwish") == 0 ? 14 : 13, 1, 0, 1, 0, attrs, n_attrs);
    const int64_t shape[2] = {1, sizes[s]};
    tb_tensor *in[1] = {vt_random(&t, 2, shape, (uint64_t)s + 3, lo, hi)};
    float *x = vt_data(in[0]);
    for (int64_t i = 0; i < sizes[s] && i < N_SPECIAL; i++) x[sizes[s] - 1 - i] = specials[i]; /* in the tails */
    if (s == 0) vt_assert_picks(&t, in, entries);
    char what[128];
    snprintf(what, sizeof what, "%s, %lld elements", op, (long long)sizes[s]);
    vt_check(&t, entries, in, rtol, atol, what);
    toh_clear(in, 1);
    toh_teardown(&t);
  }
}

static void unary_exact_ops(void **state) {
  (void)state;
  const tb_kernel *relu[3] = VT_ENTRIES(relu), *neg[3] = VT_ENTRIES(neg), *sq[3] = VT_ENTRIES(sqrt),
                      *rc[3] = VT_ENTRIES(reciprocal);
  unary_check("Relu", relu, NULL, 0, -5, 5, 0, 0);
  unary_check("Neg", neg, NULL, 0, -5, 5, 0, 0);
  unary_check("Sqrt", sq, NULL, 0, -1, 1e4f, 0, 0);
  unary_check("Reciprocal", rc, NULL, 0, -10, 10, 0, 0);
}

static void unary_transcendental_ops(void **state) {
  (void)state;
  const tb_kernel *ex[3] = VT_ENTRIES(exp), *sg[3] = VT_ENTRIES(sigmoid), *th[3] = VT_ENTRIES(tanh),
                      *ef[3] = VT_ENTRIES(erf);
  unary_check("Exp", ex, NULL, 0, -110, 95, 1e-5, 1e-40);
  unary_check("Sigmoid", sg, NULL, 0, -100, 100, 1e-5, 1e-40);
  unary_check("Tanh", th, NULL, 0, -12, 12, 1e-5, 1e-40);
  unary_check("Erf", ef, NULL, 0, -5, 5, 1e-5, 1e-40);
}

/* The piecewise-linear activations with parameters: the reference computes alpha x + beta (and x / 6 +
 * 1/2) with a separate multiply and add, the vector loops with one FMA where the ISA has it, so the clamp's
 * argument differs by at most one rounding (atol 1e-6 for values near the clamp's ends, |x| <= 8). */
static void unary_piecewise_ops(void **state) {
  (void)state;
  const tb_kernel *lr[3] = VT_ENTRIES(leaky_relu), *hs[3] = VT_ENTRIES(hard_sigmoid), *hw[3] = VT_ENTRIES(hard_swish);
  unary_check("LeakyRelu", lr, NULL, 0, -8, 8, 0, 0);
  unary_check("LeakyRelu", lr, (tb_attr[]){TOH_FLOAT("alpha", 0.3f)}, 1, -8, 8, 0, 0);
  unary_check("HardSigmoid", hs, NULL, 0, -8, 8, 1e-6, 1e-6);
  unary_check("HardSigmoid", hs, (tb_attr[]){TOH_FLOAT("alpha", 0.125f), TOH_FLOAT("beta", 0.25f)}, 2, -8, 8, 1e-6, 1e-6);
  unary_check("HardSwish", hw, NULL, 0, -8, 8, 1e-6, 1e-6);
}

/* tb::Silu and tb::Mish against their reference (double, rounded once): SiLU within 3 ulp (the sigmoid's
 * 2.5 and the product), Mish within 4 (test_vec_math.c); atol 1e-40 for the subnormal left tail. */
static void gated_ops(void **state) {
  (void)state;
  const tb_kernel *si[3] = VT_ENTRIES(silu), *mi[3] = VT_ENTRIES(mish);
  unary_check("Silu", si, NULL, 0, -90, 30, 1e-5, 1e-40);
  unary_check("Mish", mi, NULL, 0, -90, 30, 1e-5, 1e-40);
}

static void gelu_both_forms(void **state) {
  (void)state;
  const tb_kernel *ge[3] = VT_ENTRIES(gelu);
  unary_check("Gelu", ge, NULL, 0, -15, 10, 1e-5, 1e-14);
  unary_check("Gelu", ge, (tb_attr[]){TOH_STR("approximate", "none")}, 1, -15, 10, 1e-5, 1e-14);
  unary_check("Gelu", ge, (tb_attr[]){TOH_STR("approximate", "tanh")}, 1, -15, 10, 1e-5, 1e-14);
  /* an unknown form is refused when the node's parameters are parsed: no kernel is found */
  toh t;
  toh_begin(&t, NULL);
  vt_add_tb(&t, "Gelu", 1, 1, (tb_attr[]){TOH_STR("approximate", "cubic")}, 1);
  const int64_t shape[1] = {4};
  tb_tensor *in[1] = {vt_random(&t, 1, shape, 1, -1, 1)};
  assert_null(vt_pick(&t, in, 2, NULL));
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute approximate is 'cubic'; expected 'none' or 'tanh'");
  toh_clear(in, 1);
  toh_teardown(&t);
}

/* Unary entries decline what is not float32 (the reference takes doubles). */
static void unary_declines_f64(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "Exp", 13, 1, 0, 1, NULL, 0);
  const double d[3] = {1, 2, 3};
  const int64_t shape[1] = {3};
  tb_tensor *in[1] = {toh_host_tensor(t.cpu, TB_DTYPE_F64, 1, shape, d)};
  assert_int_equal(vt_pick(&t, in, 2, NULL)->level, 0);
  toh_clear(in, 1);
  toh_teardown(&t);
}

typedef struct bin_case {
  size_t na, nb;
  int64_t a[4], b[4];
  bool accepted;
} bin_case;

static const bin_case bin_cases[] = {
    {3, 3, {3, 5, 17}, {3, 5, 17}, true},  /* equal shapes */
    {3, 0, {2, 7, 33}, {0}, true},         /* scalar b */
    {1, 2, {1}, {9, 19}, true},            /* scalar-like a [1] */
    {3, 1, {2, 7, 33}, {33}, true},        /* bias vector */
    {1, 3, {33}, {2, 7, 33}, true},        /* bias vector first (Sub, Div order) */
    {4, 3, {2, 3, 5, 7}, {3, 1, 1}, true}, /* per-channel [C, 1, 1] */
    {2, 2, {9, 19}, {9, 1}, true},         /* column */
    {3, 2, {2, 3, 4}, {3, 1}, true},       /* middle dim: [P, M, Q] = [2, 3, 4] */
    {2, 1, {64, 1031}, {1031}, true},      /* large: split over the pool */
    {2, 2, {5, 1}, {1, 7}, false},         /* both broadcast */
    {3, 3, {2, 3, 4}, {2, 1, 4}, false},   /* a broadcast dim between covered ones */
};

static void binary_op(const char *op, const tb_kernel *const *entries) {
  for (size_t c = 0; c < sizeof bin_cases / sizeof bin_cases[0]; c++) {
    const bin_case *bc = &bin_cases[c];
    toh t;
    toh_setup(&t, op, 14, 2, 0, 1, NULL, 0);
    tb_tensor *in[2] = {vt_random(&t, bc->na, bc->a, c + 1, -3, 3), vt_random(&t, bc->nb, bc->b, c + 50, -3, 3)};
    float *a = vt_data(in[0]), *b = vt_data(in[1]);
    int64_t nb = tb_tensor_numel(in[1]), na = tb_tensor_numel(in[0]);
    if (na > 3) a[0] = NAN, a[1] = INFINITY, a[2] = -INFINITY, a[3] = 0;
    if (nb > 3) b[0] = 0, b[1] = INFINITY, b[2] = NAN, b[3] = -0.0f;
    const tb_kernel *k = vt_pick(&t, in, 2, NULL);
    if (bc->accepted)
      vt_assert_picks(&t, in, entries);
    else
      assert_int_equal(k->level, 0);
    char what[128];
    snprintf(what, sizeof what, "%s case %zu%s", op, c, bc->accepted ? "" : " (declined: run falls back)");
    vt_check(&t, entries, in, 0, 0, what); /* run() on a declined shape must fall back, not fail */
    toh_clear(in, 2);
    toh_teardown(&t);
  }
}

static void binary_ops_match_reference(void **state) {
  (void)state;
  const tb_kernel *add[3] = VT_ENTRIES(add), *sub[3] = VT_ENTRIES(sub), *mul[3] = VT_ENTRIES(mul),
                      *dv[3] = VT_ENTRIES(div);
  binary_op("Add", add);
  binary_op("Sub", sub);
  binary_op("Mul", mul);
  binary_op("Div", dv);
}

/* Opset 6's Add with broadcast=1 and axis is the legacy broadcast: declined, and run() falls back. */
static void binary_declines_legacy_broadcast(void **state) {
  (void)state;
  const tb_kernel *add[3] = VT_ENTRIES(add);
  toh t;
  toh_setup(&t, "Add", 6, 2, 0, 1, (tb_attr[]){TOH_INT("broadcast", 1), TOH_INT("axis", 1)}, 2);
  const int64_t as[3] = {2, 3, 4}, bs[1] = {3};
  tb_tensor *in[2] = {vt_random(&t, 3, as, 1, -1, 1), vt_random(&t, 1, bs, 2, -1, 1)};
  assert_int_equal(vt_pick(&t, in, 2, NULL)->level, 0);
  vt_check(&t, add, in, 0, 0, "opset-6 Add with axis broadcast");
  toh_clear(in, 2);
  toh_teardown(&t);
}

/* A shape mismatch is the reference's error (same status and message), through the fallback. */
static void binary_mismatch_is_reference_error(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "Mul", 14, 2, 0, 1, NULL, 0);
  const int64_t as[2] = {2, 3}, bs[1] = {4};
  tb_tensor *in[2] = {vt_random(&t, 2, as, 1, -1, 1), vt_random(&t, 1, bs, 2, -1, 1)};
  tb_tensor *out[1] = {NULL};
  tb_status ref = toh_run_tensors(&t, in, out, false);
  assert_int_not_equal(ref, TB_OK);
  char msg[512];
  snprintf(msg, sizeof msg, "%s", tb_last_error());
  TB_ASSERT_CONTAINS(msg, "n0");
  toh_clear(out, 1);
  tb_kernel_ctx ctx = {.graph = t.graph,
                       .node = toh_node(&t),
                       .n_inputs = 2,
                       .inputs = in,
                       .n_outputs = 1,
                       .outputs = out,
                       .backend = t.cpu,
                       .threads = 1};
  (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
  assert_int_equal(tb_kernel_vec_mul_avx2.run(&ctx), ref);
  assert_string_equal(tb_last_error(), msg);
  toh_clear(out, 1);
  toh_clear(in, 2);
  toh_teardown(&t);
}

/* The executor's situations: a preallocated output (written, not replaced), the output aliasing the input
 * (in place), and a strided view as input (handed to the reference, so the result is the reference's). */
static void preallocated_in_place_and_views(void **state) {
  (void)state;
  const tb_kernel *entries[3] = VT_ENTRIES(tanh);
  const int64_t shape[2] = {6, 40}, vshape[2] = {6, 17}, vstrides[2] = {40, 2};
  for (int p = 0; p < 3; p++) {
    if (!vt_runnable(entries[p])) continue;
    toh t;
    toh_setup(&t, "Tanh", 13, 1, 0, 1, NULL, 0);
    tb_tensor *x = vt_random(&t, 2, shape, 5, -3, 3), *ref[1] = {NULL};
    tb_tensor *in[1] = {x};
    TB_ASSERT_OK(toh_run_tensors(&t, in, ref, false));
    tb_tensor *pre = NULL;
    TB_ASSERT_OK(tb_tensor_create(t.cpu, TB_DTYPE_F32, 2, shape, &pre));
    tb_tensor *out[1] = {pre};
    tb_kernel_ctx ctx = {.graph = t.graph, .node = toh_node(&t), .n_inputs = 1, .inputs = in, .n_outputs = 1,
                         .outputs = out, .backend = t.cpu, .threads = 1};
    (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
    TB_ASSERT_OK(entries[p]->run(&ctx));
    assert_ptr_equal(out[0], pre);
    vt_assert_close(pre, ref[0], 1e-5, 1e-40, "Tanh into a preallocated output");
    out[0] = x; /* in place */
    TB_ASSERT_OK(entries[p]->run(&ctx));
    vt_assert_close(x, ref[0], 1e-5, 1e-40, "Tanh in place");
    toh_clear(ref, 1);
    tb_tensor *view = NULL;
    TB_ASSERT_OK(tb_tensor_view(pre, 2, vshape, vstrides, 1, &view));
    assert_false(tb_tensor_is_contiguous(view));
    in[0] = view;
    TB_ASSERT_OK(toh_run_tensors(&t, in, ref, false));
    tb_tensor *got[1];
    vt_run(&t, entries[p], in, got, NULL);
    vt_assert_close(got[0], ref[0], 0, 0, "Tanh of a strided view (the reference)");
    toh_clear(got, 1);
    toh_clear(ref, 1);
    tb_tensor_destroy(view);
    tb_tensor_destroy(pre);
    tb_tensor_destroy(x);
    toh_teardown(&t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unary_exact_ops),
      cmocka_unit_test(unary_transcendental_ops),
      cmocka_unit_test(unary_piecewise_ops),
      cmocka_unit_test(gated_ops),
      cmocka_unit_test(gelu_both_forms),
      cmocka_unit_test(unary_declines_f64),
      cmocka_unit_test(binary_ops_match_reference),
      cmocka_unit_test(binary_declines_legacy_broadcast),
      cmocka_unit_test(binary_mismatch_is_reference_error),
      cmocka_unit_test(preallocated_in_place_and_views),
  };
  return cmocka_run_group_tests(tests, vt_setup, vt_teardown);
}
