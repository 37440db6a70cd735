/* Unary math, activations, PRelu and Clip: inference (dtype rules, errors naming the node) and the
 * reference kernels on hand-computed values, in f32, f64, f16 and the integer types each op takes. */
#include "test_ops_elementwise_util.h"

/* Run a one-input op on f32 values and compare with want (relative tolerance tol). */
static void check_f32(const char *op, int opset, const tb_attr *attrs, size_t n_attrs, const float *x, size_t n,
                      const double *want, double tol) {
  toh t;
  toh_setup(&t, op, opset, 1, 0, 1, attrs, n_attrs);
  ewt_in ins[] = {{TB_DTYPE_F32, 1, {(int64_t)n}, x, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  int64_t shape[] = {(int64_t)n};
  toh_assert_tensor(t.out[0], TB_DTYPE_F32, 1, shape);
  ewt_assert_near(&t, 0, want, n, tol);
  toh_teardown(&t);
}

static void math_functions(void **state) {
  (void)state;
  float x[] = {0.0f, 1.0f, 4.0f, 0.5f};
  check_f32("Sqrt", 13, NULL, 0, x, 4, (double[]){0, 1, 2, 0.70710678118654752}, 1e-7);
  check_f32("Exp", 13, NULL, 0, x, 4, (double[]){1, 2.718281828459045, 54.598150033144236, 1.6487212707001282}, 1e-7);
  check_f32("Log", 13, NULL, 0, x, 4, (double[]){-INFINITY, 0, 1.3862943611198906, -0.6931471805599453}, 1e-7);
  check_f32("Tanh", 13, NULL, 0, x, 4, (double[]){0, 0.7615941559557649, 0.999329299739067, 0.46211715726000974}, 1e-7);
  check_f32("Erf", 13, NULL, 0, x, 4, (double[]){0, 0.8427007929497149, 0.9999999845827421, 0.5204998778130465}, 1e-7);
  check_f32("Sin", 7, NULL, 0, x, 4, (double[]){0, 0.8414709848078965, -0.7568024953079282, 0.479425538604203}, 1e-7);
  check_f32("Cos", 7, NULL, 0, x, 4, (double[]){1, 0.5403023058681398, -0.6536436208636119, 0.8775825618903728}, 1e-7);
  check_f32("Reciprocal", 13, NULL, 0, x, 4, (double[]){INFINITY, 1, 0.25, 2}, 0);
  float y[] = {-1.5f, -0.5f, 0.5f, 2.5f, -0.0f, NAN};
  check_f32("Floor", 13, NULL, 0, y, 6, (double[]){-2, -1, 0, 2, -0.0, NAN}, 0);
  check_f32("Ceil", 13, NULL, 0, y, 6, (double[]){-1, -0.0, 1, 3, -0.0, NAN}, 0);
  check_f32("Round", 11, NULL, 0, y, 6, (double[]){-2, -0.0, 0, 2, -0.0, NAN}, 0);
  check_f32("Neg", 13, NULL, 0, y, 6, (double[]){1.5, 0.5, -0.5, -2.5, 0, NAN}, 0);
  check_f32("Abs", 13, NULL, 0, y, 6, (double[]){1.5, 0.5, 0.5, 2.5, 0, NAN}, 0);
  check_f32("Sign", 13, NULL, 0, y, 6, (double[]){-1, -1, 1, 1, 0, NAN}, 0);
}

static void integer_unary(void **state) {
  (void)state;
  int8_t x[] = {-128, -3, 0, 7};
  struct {
    const char *op;
    int8_t want[4];
  } cases[] = {{"Neg", {-128, 3, 0, -7}}, {"Abs", {-128, 3, 0, 7}}, {"Sign", {-1, -1, 0, 1}}};
  for (size_t k = 0; k < 3; k++) {
    toh t;
    toh_setup(&t, cases[k].op, 13, 1, 0, 1, NULL, 0);
    ewt_in ins[] = {{TB_DTYPE_I8, 1, {4}, x, false}};
    TB_ASSERT_OK(ewt_run(&t, ins));
    ewt_assert_bytes(&t, 0, cases[k].want, 4);
    toh_teardown(&t);
  }
  int64_t big[] = {INT64_MIN, -5};
  toh t;
  toh_setup(&t, "Abs", 13, 1, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_I64, 1, {2}, big, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  int64_t want[] = {INT64_MIN, 5};
  ewt_assert_bytes(&t, 0, want, 2);
  toh_teardown(&t);
}

static void unary_dtype_rules(void **state) {
  (void)state;
  toh t;
  tb_value_type out;
  int64_t d[] = {2};
  tb_value_type i32 = toh_type(TB_DTYPE_I32, 1, d), u8 = toh_type(TB_DTYPE_U8, 1, d), bf = toh_type(TB_DTYPE_BF16, 1, d);
  const tb_value_type *in_i32[] = {&i32}, *in_u8[] = {&u8}, *in_bf[] = {&bf};

  toh_setup(&t, "Erf", 13, 1, 0, 1, NULL, 0);
  assert_int_equal(toh_infer(&t, in_i32, &out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Erf): Erf on i32 tensors is valid ONNX but not implemented");
  TB_ASSERT_OK(toh_infer(&t, in_bf, &out));
  assert_int_equal(out.dtype, TB_DTYPE_BF16);
  toh_teardown(&t);

  toh_setup(&t, "Sqrt", 13, 1, 0, 1, NULL, 0);
  assert_int_equal(toh_infer(&t, in_i32, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "i32, which Sqrt does not accept");
  toh_teardown(&t);

  toh_setup(&t, "Neg", 13, 1, 0, 1, NULL, 0);
  assert_int_equal(toh_infer(&t, in_u8, &out), TB_ERR_MODEL);
  toh_teardown(&t);

  toh_setup(&t, "IsNaN", 13, 1, 0, 1, NULL, 0);
  TB_ASSERT_OK(toh_infer(&t, in_bf, &out));
  assert_int_equal(out.dtype, TB_DTYPE_BOOL);
  toh_assert_dims(&out, 1, d);
  toh_teardown(&t);

  toh_setup(&t, "Shrink", 9, 1, 0, 1, NULL, 0);
  assert_int_equal(toh_infer(&t, in_i32, &out), TB_ERR_UNSUPPORTED);
  toh_teardown(&t);

  /* Ops newer than the model's opset are unknown. */
  assert_null(tb_op_find("", "Erf", 8));
  assert_null(tb_op_find("", "HardSwish", 13));
  assert_non_null(tb_op_find("", "HardSwish", 14));
}

static void isnan_isinf(void **state) {
  (void)state;
  float x[] = {1, NAN, INFINITY, -INFINITY};
  toh t;
  toh_setup(&t, "IsNaN", 13, 1, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_F32, 1, {4}, x, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  uint8_t want_nan[] = {0, 1, 0, 0};
  toh_assert_tensor(t.out[0], TB_DTYPE_BOOL, 1, (int64_t[]){4});
  ewt_assert_bytes(&t, 0, want_nan, 4);
  toh_teardown(&t);

  tb_attr only_neg[] = {TOH_INT("detect_positive", 0)};
  toh_setup(&t, "IsInf", 10, 1, 0, 1, only_neg, 1);
  TB_ASSERT_OK(ewt_run(&t, ins));
  uint8_t want_inf[] = {0, 0, 0, 1};
  ewt_assert_bytes(&t, 0, want_inf, 4);
  toh_teardown(&t);
}

static void activations(void **state) {
  (void)state;
  float x[] = {-2.0f, -0.5f, 0.0f, 1.0f, 3.0f};
  tb_attr leaky[] = {TOH_FLOAT("alpha", 0.1f)};
  check_f32("LeakyRelu", 16, leaky, 1, x, 5, (double[]){-0.2, -0.05, 0, 1, 3}, 1e-6);
  check_f32("LeakyRelu", 16, NULL, 0, x, 5, (double[]){-0.02, -0.005, 0, 1, 3}, 1e-6);
  check_f32("Sigmoid", 13, NULL, 0, x, 5,
            (double[]){0.11920292202211755, 0.3775406687981454, 0.5, 0.7310585786300049, 0.9525741268224334}, 1e-6);
  check_f32("HardSigmoid", 6, NULL, 0, x, 5, (double[]){0.1, 0.4, 0.5, 0.7, 1}, 1e-6);
  check_f32("HardSwish", 14, NULL, 0, x, 5, (double[]){-0.3333333, -0.2083333, 0, 0.6666667, 3}, 1e-6);
  check_f32("Elu", 6, NULL, 0, x, 5, (double[]){-0.8646647167633873, -0.3934693402873666, 0, 1, 3}, 1e-6);
  check_f32("Selu", 6, NULL, 0, x, 5,
            (double[]){-1.5201664685955162, -0.6917581, 0, 1.0507009873554805, 3.1521029620664414}, 1e-6);
  tb_attr celu[] = {TOH_FLOAT("alpha", 2.0f)};
  check_f32("Celu", 12, celu, 1, x, 5, (double[]){-1.2642411176571153, -0.44239843385, 0, 1, 3}, 1e-6);
  check_f32("Softplus", 1, NULL, 0, x, 5,
            (double[]){0.12692801104297263, 0.47407698418010663, 0.6931471805599453, 1.3132616875182228, 3.048587351573742},
            1e-6);
  tb_attr thr[] = {TOH_FLOAT("alpha", 0.5f)};
  check_f32("ThresholdedRelu", 10, thr, 1, x, 5, (double[]){0, 0, 0, 1, 3}, 0);
  tb_attr shrink[] = {TOH_FLOAT("lambd", 0.75f), TOH_FLOAT("bias", 0.25f)};
  check_f32("Shrink", 9, shrink, 2, x, 5, (double[]){-1.75, 0, 0, 0.75, 2.75}, 0);
  check_f32("Softsign", 1, NULL, 0, x, 5, (double[]){-2.0 / 3, -1.0 / 3, 0, 0.5, 0.75}, 1e-6);
  /* NaN stays NaN through the clamped activations. */
  float nan_in[] = {NAN};
  check_f32("HardSigmoid", 6, NULL, 0, nan_in, 1, (double[]){NAN}, 0);
  check_f32("HardSwish", 14, NULL, 0, nan_in, 1, (double[]){NAN}, 0);
  check_f32("Relu", 14, NULL, 0, nan_in, 1, (double[]){NAN}, 0);
  /* Large inputs stay finite where the naive formulas overflow. */
  float big[] = {-100.0f, 100.0f};
  check_f32("Softplus", 1, NULL, 0, big, 2, (double[]){3.720075976020836e-44, 100}, 1e-3);
  check_f32("Sigmoid", 13, NULL, 0, big, 2, (double[]){3.720075976020836e-44, 1}, 1e-3);
}

static void activations_f64_and_bf16(void **state) {
  (void)state;
  double x[] = {-1.0, 2.0};
  toh t;
  toh_setup(&t, "Elu", 6, 1, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_F64, 1, {2}, x, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  double want[] = {expm1(-1.0), 2.0};
  ewt_assert_bytes(&t, 0, want, 2);
  toh_teardown(&t);

  /* bf16 Sigmoid(0) = 0.5 exactly; sigmoid(1) = 0.7311 rounds to bf16 0.73046875. */
  uint16_t bx[] = {0x0000, 0x3f80};
  toh_setup(&t, "Sigmoid", 13, 1, 0, 1, NULL, 0);
  ewt_in bins[] = {{TB_DTYPE_BF16, 1, {2}, bx, false}};
  TB_ASSERT_OK(ewt_run(&t, bins));
  uint16_t bwant[] = {0x3f00, 0x3f3b};
  ewt_assert_bytes(&t, 0, bwant, 2);
  toh_teardown(&t);
}

static void prelu_broadcasts_slope(void **state) {
  (void)state;
  /* X [1,2,2] NCHW-like, slope [2,1] per channel. */
  float x[] = {-1, 2, -3, 4}, slope[] = {0.5f, 0.25f};
  toh t;
  toh_setup(&t, "PRelu", 16, 2, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_F32, 3, {1, 2, 2}, x, false}, {TB_DTYPE_F32, 2, {2, 1}, slope, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  float want[] = {-0.5f, 2, -0.75f, 4};
  toh_assert_tensor(t.out[0], TB_DTYPE_F32, 3, (int64_t[]){1, 2, 2});
  ewt_assert_bytes(&t, 0, want, 4);

  int64_t xd[] = {1, 2, 2}, sd[] = {3, 1}, sd_big[] = {2, 1, 2, 2};
  tb_value_type xt = toh_type(TB_DTYPE_F32, 3, xd), st = toh_type(TB_DTYPE_F32, 2, sd),
                sbig = toh_type(TB_DTYPE_F32, 4, sd_big), out;
  const tb_value_type *bad[] = {&xt, &st}, *bad2[] = {&xt, &sbig};
  assert_int_equal(toh_infer(&t, bad, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "slope dimension 0 is 3");
  assert_int_equal(toh_infer(&t, bad2, &out), TB_ERR_MODEL);
  toh_teardown(&t);

  /* Opset 6: a 1-D slope runs along the channel dim (1). */
  float x6[] = {-1, -1, -1, -1, -2, -2, -2, -2}, s6[] = {0.5f, 2};
  toh_setup(&t, "PRelu", 6, 2, 0, 1, NULL, 0);
  ewt_in ins6[] = {{TB_DTYPE_F32, 3, {2, 2, 2}, x6, false}, {TB_DTYPE_F32, 1, {2}, s6, false}};
  TB_ASSERT_OK(ewt_run(&t, ins6));
  ewt_assert_bytes(&t, 0, (float[]){-0.5f, -0.5f, -2, -2, -1, -1, -4, -4}, 8);
  int64_t x6d[] = {2, 3, 4}, s6d[] = {3}, s6bad[] = {4};
  tb_value_type x6t = toh_type(TB_DTYPE_F32, 3, x6d), s6t = toh_type(TB_DTYPE_F32, 1, s6d), s6b = toh_type(TB_DTYPE_F32, 1, s6bad);
  const tb_value_type *ok6[] = {&x6t, &s6t}, *bad6[] = {&x6t, &s6b};
  TB_ASSERT_OK(toh_infer(&t, ok6, &out));
  toh_assert_dims(&out, 3, x6d);
  assert_int_equal(toh_infer(&t, bad6, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "3 channels");
  toh_teardown(&t);

  int32_t xi[] = {-4, 5}, si[] = {3};
  toh_setup(&t, "PRelu", 16, 2, 0, 1, NULL, 0);
  ewt_in iins[] = {{TB_DTYPE_I32, 1, {2}, xi, false}, {TB_DTYPE_I32, 1, {1}, si, false}};
  TB_ASSERT_OK(ewt_run(&t, iins));
  int32_t iwant[] = {-12, 5};
  ewt_assert_bytes(&t, 0, iwant, 2);
  toh_teardown(&t);
}

static void clip_attributes_and_inputs(void **state) {
  (void)state;
  float x[] = {-5, -1, 0, 2, 9, NAN};
  tb_attr attrs[] = {TOH_FLOAT("min", -1.5f), TOH_FLOAT("max", 3.0f)};
  check_f32("Clip", 6, attrs, 2, x, 6, (double[]){-1.5, -1, 0, 2, 3, NAN}, 0);
  check_f32("Clip", 6, NULL, 0, x, 6, (double[]){-5, -1, 0, 2, 9, NAN}, 0);

  /* Opset 13: min input only (max omitted). */
  float lo = 0;
  toh t;
  toh_setup(&t, "Clip", 13, 3, 1u << 2, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_F32, 1, {6}, x, false}, {TB_DTYPE_F32, 0, {0}, &lo, false}, {0}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  ewt_assert_near(&t, 0, (double[]){0, 0, 0, 2, 9, NAN}, 6, 0);
  toh_teardown(&t);

  /* int8 with both bounds, min > max gives max everywhere. */
  int8_t xi[] = {-128, 0, 127}, lo_i = 5, hi_i = -5;
  toh_setup(&t, "Clip", 13, 3, 0, 1, NULL, 0);
  ewt_in iins[] = {{TB_DTYPE_I8, 1, {3}, xi, false}, {TB_DTYPE_I8, 0, {0}, &lo_i, false}, {TB_DTYPE_I8, 0, {0}, &hi_i, false}};
  TB_ASSERT_OK(ewt_run(&t, iins));
  int8_t iwant[] = {-5, -5, -5};
  ewt_assert_bytes(&t, 0, iwant, 3);
  /* A non-scalar bound and a bound of another type are model errors. */
  int64_t d3[] = {3}, d2[] = {2};
  tb_value_type xt = toh_type(TB_DTYPE_I8, 1, d3), vec = toh_type(TB_DTYPE_I8, 1, d2), f = toh_type(TB_DTYPE_F32, 0, NULL), out;
  const tb_value_type *bad[] = {&xt, &vec, NULL}, *bad2[] = {&xt, &f, NULL};
  assert_int_equal(toh_infer(&t, bad, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "must be a scalar");
  assert_int_equal(toh_infer(&t, bad2, &out), TB_ERR_MODEL);
  toh_teardown(&t);

  /* Opset 11 takes floats only. */
  toh_setup(&t, "Clip", 11, 1, 0, 1, NULL, 0);
  const tb_value_type *int_in[] = {&xt};
  assert_int_equal(toh_infer(&t, int_in, &out), TB_ERR_MODEL);
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(math_functions),          cmocka_unit_test(integer_unary),
      cmocka_unit_test(unary_dtype_rules),       cmocka_unit_test(isnan_isinf),
      cmocka_unit_test(activations),             cmocka_unit_test(activations_f64_and_bf16),
      cmocka_unit_test(prelu_broadcasts_slope),  cmocka_unit_test(clip_attributes_and_inputs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
