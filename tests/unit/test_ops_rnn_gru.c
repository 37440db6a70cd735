/* GRU and RNN: one step computed by hand (GRU gate order z, r, h with linear_before_reset 0 and 1), every
 * activation with its alpha/beta (and the defaults), clip, and float64. */
#include "test_ops_rnn_util.h"

static const float X1[] = {1, 2};
static const float GW[] = {0.1f, 0.2f, 0.3f, -0.1f, 0.5f, 0.5f}; /* z, r, h rows of [1, 3, 2] */
static const float GR[] = {0.6f, -0.5f, 0.4f};
static const float GB[] = {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f}; /* Wb z r h, Rb z r h */
static const float H0[] = {0.5f};

static void run_gru(int linear_before_reset, tb_tensor **outs) {
  toh t;
  tb_attr attrs[] = {TOH_INT("hidden_size", 1), TOH_INT("linear_before_reset", linear_before_reset)};
  toh_setup(&t, "GRU", 7, 6, 1u << 4, 2, attrs, 2);
  toh_in in[6] = {{TB_DTYPE_F32, 3, {1, 1, 2}, X1}, {TB_DTYPE_F32, 3, {1, 3, 2}, GW}, {TB_DTYPE_F32, 3, {1, 3, 1}, GR},
                 {TB_DTYPE_F32, 2, {1, 6}, GB},    {TOH_NONE, 0, {0}, NULL},          {TB_DTYPE_F32, 3, {1, 1, 1}, H0}};
  TB_ASSERT_OK(toh_run(&t, in, outs));
  toh_teardown(&t);
}

static void test_gru_one_step_by_hand(void **state) {
  (void)state;
  /* z = s(0.1 + 0.4 + 0.6*0.5 + 0.01 + 0.04), r = s(0.3 - 0.2 - 0.5*0.5 + 0.02 + 0.05) */
  double z = rt_sigmoid(0.85), r = rt_sigmoid(-0.08);
  /* linear_before_reset 0: h~ = tanh(0.5 + 1.0 + 0.4*(r*0.5) + 0.06 + 0.03) */
  double h0 = (1 - z) * tanh(1.59 + 0.2 * r) + z * 0.5;
  /* linear_before_reset 1: h~ = tanh(0.5 + 1.0 + 0.03 + r*(0.4*0.5 + 0.06)) */
  double h1 = (1 - z) * tanh(1.53 + 0.26 * r) + z * 0.5;
  tb_tensor *outs[2];
  run_gru(0, outs);
  rt_assert_f32(outs[0], 4, (const int64_t[]){1, 1, 1, 1}, (const double[]){h0});
  rt_assert_f32(outs[1], 3, (const int64_t[]){1, 1, 1}, (const double[]){h0});
  toh_free_outs(outs, 2);
  run_gru(1, outs);
  rt_assert_f32(outs[1], 3, (const int64_t[]){1, 1, 1}, (const double[]){h1});
  assert_true(fabs(h0 - h1) > 1e-4);
  toh_free_outs(outs, 2);
}

static void test_rnn_one_step_by_hand(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "RNN", 7, 6, 1u << 4, 2, NULL, 0);
  const float w[] = {0.1f, 0.2f}, r[] = {0.6f}, b[] = {0.01f, 0.02f};
  toh_in in[6] = {{TB_DTYPE_F32, 3, {1, 1, 2}, X1}, {TB_DTYPE_F32, 3, {1, 1, 2}, w}, {TB_DTYPE_F32, 3, {1, 1, 1}, r},
                 {TB_DTYPE_F32, 2, {1, 2}, b},     {TOH_NONE, 0, {0}, NULL},         {TB_DTYPE_F32, 3, {1, 1, 1}, H0}};
  tb_tensor *outs[2];
  TB_ASSERT_OK(toh_run(&t, in, outs));
  double h = tanh(0.1 + 0.4 + 0.6 * 0.5 + 0.03); /* the default activation is Tanh */
  rt_assert_f32(outs[0], 4, (const int64_t[]){1, 1, 1, 1}, (const double[]){h});
  toh_free_outs(outs, 2);
  toh_teardown(&t);
}

/* An RNN with W = 1, R = 0 over x = -1.5, 0.3, 2.0 gives Y = f(x) at each step. */
static const float XS[] = {-1.5f, 0.3f, 2.0f};

static void run_activation(const tb_attr *attrs, size_t n_attrs, tb_dtype dtype, tb_tensor **y) {
  toh t;
  toh_setup(&t, "RNN", 7, 3, 0, 1, attrs, n_attrs);
  const float one[] = {1.0f}, zero[] = {0.0f};
  const double xd[] = {-1.5, 0.3, 2.0}, oned[] = {1.0}, zerod[] = {0.0};
  bool f64 = dtype == TB_DTYPE_F64;
  toh_in in[3] = {{dtype, 3, {3, 1, 1}, f64 ? (const void *)xd : XS},
                 {dtype, 3, {1, 1, 1}, f64 ? (const void *)oned : one},
                 {dtype, 3, {1, 1, 1}, f64 ? (const void *)zerod : zero}};
  TB_ASSERT_OK(toh_run(&t, in, y));
  toh_teardown(&t);
}

static void check_activation(const char *name, const float *alpha, const float *beta, double (*want)(double)) {
  tb_attr attrs[3] = {{.name = "activations", .type = TB_ATTR_STRINGS, .strings = (const char *const[]){name}, .count = 1}};
  size_t n = 1;
  if (alpha) attrs[n++] = (tb_attr){.name = "activation_alpha", .type = TB_ATTR_FLOATS, .floats = alpha, .count = 1};
  if (beta) attrs[n++] = (tb_attr){.name = "activation_beta", .type = TB_ATTR_FLOATS, .floats = beta, .count = 1};
  tb_tensor *y = NULL;
  run_activation(attrs, n, TB_DTYPE_F32, &y);
  double expect[3];
  for (int i = 0; i < 3; i++) expect[i] = want((double)XS[i]);
  print_message("activation %s\n", name);
  rt_assert_f32(y, 4, (const int64_t[]){3, 1, 1, 1}, expect);
  tb_tensor_destroy(y);
}

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double relu(double x) { return x > 0 ? x : 0; }
static double affine(double x) { return 2.0 * x + 0.5; }
static double leaky(double x) { return x < 0 ? 0.1 * x : x; }
static double leaky_default(double x) { return x < 0 ? 0.01 * x : x; }
static double thresholded(double x) { return x > 0.5 ? x : 0; }
static double scaled_tanh(double x) { return 1.5 * tanh(0.5 * x); }
static double hard_sigmoid(double x) { return fmin(1.0, fmax(0.0, 0.3 * x + 0.4)); }
static double hard_sigmoid_default(double x) { return fmin(1.0, fmax(0.0, 0.2 * x + 0.5)); }
static double elu(double x) { return x < 0 ? 0.7 * (exp(x) - 1) : x; }
static double softsign(double x) { return x / (1 + fabs(x)); }
static double softplus(double x) { return log(1 + exp(x)); }

static void test_rnn_activations(void **state) {
  (void)state;
  const float a2 = 2.0f, b05 = 0.5f, a01 = 0.1f, a15 = 1.5f, a03 = 0.3f, b04 = 0.4f, a07 = 0.7f;
  check_activation("Sigmoid", NULL, NULL, sigmoid);
  check_activation("Tanh", NULL, NULL, tanh);
  check_activation("tanh", NULL, NULL, tanh); /* names match without regard to case */
  check_activation("Relu", NULL, NULL, relu);
  check_activation("Affine", &a2, &b05, affine);
  check_activation("LeakyRelu", &a01, NULL, leaky);
  check_activation("LeakyRelu", NULL, NULL, leaky_default);
  check_activation("ThresholdedRelu", &b05, NULL, thresholded);
  check_activation("ScaledTanh", &a15, &b05, scaled_tanh);
  check_activation("HardSigmoid", &a03, &b04, hard_sigmoid);
  check_activation("HardSigmoid", NULL, NULL, hard_sigmoid_default);
  check_activation("Elu", &a07, NULL, elu);
  check_activation("Softsign", NULL, NULL, softsign);
  check_activation("Softplus", NULL, NULL, softplus);
}


/* alpha values are consumed in order by the activations that take them: for GRU (LeakyRelu, Affine)
 * alphas {0.2, 3} go to LeakyRelu then Affine, beta {1} to Affine. */
static void test_gru_alpha_order(void **state) {
  (void)state;
  toh t;
  tb_attr attrs[] = {TOH_STRS("activations", "LeakyRelu", "Affine"), TOH_FLOATS("activation_alpha", 0.2f, 3.0f),
                     TOH_FLOATS("activation_beta", 1.0f)};
  toh_setup(&t, "GRU", 7, 3, 0, 2, attrs, 3);
  /* W: z row 1, r row 0, h row 1; R = 0; x = -2: z = leaky(-2) = -0.4, h~ = affine(-2) = 3*-2 + 1 = -5,
   * H = (1 - z) h~ + z * 0 = 1.4 * -5 = -7 */
  const float x[] = {-2.0f}, w[] = {1.0f, 0.0f, 1.0f}, r[] = {0.0f, 0.0f, 0.0f};
  toh_in in[3] = {{TB_DTYPE_F32, 3, {1, 1, 1}, x}, {TB_DTYPE_F32, 3, {1, 3, 1}, w}, {TB_DTYPE_F32, 3, {1, 3, 1}, r}};
  tb_tensor *outs[2];
  TB_ASSERT_OK(toh_run(&t, in, outs));
  rt_assert_f32(outs[1], 3, (const int64_t[]){1, 1, 1}, (const double[]){-7.0});
  toh_free_outs(outs, 2);
  toh_teardown(&t);
}

static void test_rnn_clip(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_STRS("activations", "Affine"), TOH_FLOAT("clip", 0.5f)};
  tb_tensor *y = NULL;
  run_activation(attrs, 2, TB_DTYPE_F32, &y);
  rt_assert_f32(y, 4, (const int64_t[]){3, 1, 1, 1}, (const double[]){-0.5, 0.3, 0.5});
  tb_tensor_destroy(y);
}

static void test_rnn_float64(void **state) {
  (void)state;
  tb_tensor *y = NULL;
  run_activation(NULL, 0, TB_DTYPE_F64, &y);
  toh_assert_shape(y, 4, (const int64_t[]){3, 1, 1, 1});
  assert_int_equal(tb_tensor_dtype(y), TB_DTYPE_F64);
  const double *got = tb_tensor_host_data(y);
  assert_float_equal(got[0], tanh(-1.5), 1e-15);
  assert_float_equal(got[2], tanh(2.0), 1e-15);
  tb_tensor_destroy(y);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gru_one_step_by_hand), cmocka_unit_test(test_rnn_one_step_by_hand),
      cmocka_unit_test(test_rnn_activations),      cmocka_unit_test(test_gru_alpha_order),
      cmocka_unit_test(test_rnn_clip),             cmocka_unit_test(test_rnn_float64),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
