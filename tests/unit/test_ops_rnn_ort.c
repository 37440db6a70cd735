/* LSTM, GRU and RNN against onnxruntime's outputs (test_ops_rnn_ort_data.h, made by
 * test_ops_rnn_ort_gen.py) for the features the ONNX 1.12 conformance data leaves out: bidirectional
 * with sequence_lens, initial states and peepholes together, input_forget, clip, activations with
 * alpha/beta consumed in order, GRU linear_before_reset 1, reverse. */
#include "test_ops_rnn_ort_data.h"
#include "test_ops_rnn_util.h"

enum { SEQ = 3, BATCH = 2, IN = 2, HID = 2 };

/* Within 1e-5 absolute + 1e-4 relative of onnxruntime (float32 there, double here). */
static void assert_close(const tb_tensor *t, size_t ndim, const int64_t *shape, const double *want) {
  toh_assert_shape(t, ndim, shape);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++) {
    double got = rt_at(t, i);
    if (!(fabs(got - want[i]) <= 1e-5 + 1e-4 * fabs(want[i])))
      fail_msg("element %lld: got %.9g, onnxruntime %.9g", (long long)i, got, want[i]);
  }
}

static void run_case(const char *op, const tb_attr *attrs, size_t n_attrs, const toh_in *in, size_t n_in, size_t n_out,
                     const double *const *want, const int64_t *const *shapes) {
  toh t;
  unsigned omit = 0;
  for (size_t i = 0; i < n_in; i++)
    if (in[i].dtype == TOH_NONE) omit |= 1u << i;
  toh_setup(&t, op, 14, n_in, omit, n_out, attrs, n_attrs);
  tb_tensor *outs[3];
  TB_ASSERT_OK(toh_run(&t, in, outs));
  for (size_t o = 0; o < n_out; o++) assert_close(outs[o], o == 0 ? 4 : 3, shapes[o], want[o]);
  toh_free_outs(outs, n_out);
  toh_teardown(&t);
}

#define F32(ndim, ...) TB_DTYPE_F32, ndim, {__VA_ARGS__}
#define NONE {TOH_NONE, 0, {0}, NULL}

static void test_lstm_bidirectional_all_inputs(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_INT("hidden_size", HID), TOH_STR("direction", "bidirectional")};
  toh_in in[8] = {{F32(3, SEQ, BATCH, IN), lstm_bidi_X},      {F32(3, 2, 4 * HID, IN), lstm_bidi_W},
                 {F32(3, 2, 4 * HID, HID), lstm_bidi_R},     {F32(2, 2, 8 * HID), lstm_bidi_B},
                 {TB_DTYPE_I32, 1, {BATCH}, lstm_bidi_sequence_lens}, {F32(3, 2, BATCH, HID), lstm_bidi_initial_h},
                 {F32(3, 2, BATCH, HID), lstm_bidi_initial_c}, {F32(2, 2, 3 * HID), lstm_bidi_P}};
  const double *want[] = {lstm_bidi_out_Y, lstm_bidi_out_Y_h, lstm_bidi_out_Y_c};
  const int64_t *shapes[] = {lstm_bidi_shape_Y, lstm_bidi_shape_Y_h, lstm_bidi_shape_Y_c};
  run_case("LSTM", attrs, 2, in, 8, 3, want, shapes);
}

static void test_lstm_input_forget_clip_activations(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_INT("hidden_size", HID), TOH_INT("input_forget", 1), TOH_FLOAT("clip", 0.7f),
                     TOH_STRS("activations", "HardSigmoid", "LeakyRelu", "Softsign"),
                     TOH_FLOATS("activation_alpha", 0.3f, 0.05f), TOH_FLOATS("activation_beta", 0.4f)};
  toh_in in[4] = {{F32(3, SEQ, BATCH, IN), lstm_opts_X}, {F32(3, 1, 4 * HID, IN), lstm_opts_W},
                 {F32(3, 1, 4 * HID, HID), lstm_opts_R}, {F32(2, 1, 8 * HID), lstm_opts_B}};
  const double *want[] = {lstm_opts_out_Y, lstm_opts_out_Y_h, lstm_opts_out_Y_c};
  const int64_t *shapes[] = {lstm_opts_shape_Y, lstm_opts_shape_Y_h, lstm_opts_shape_Y_c};
  run_case("LSTM", attrs, 6, in, 4, 3, want, shapes);
}

static void test_gru_bidirectional_linear_before_reset(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_INT("hidden_size", HID), TOH_STR("direction", "bidirectional"), TOH_INT("linear_before_reset", 1)};
  toh_in in[6] = {{F32(3, SEQ, BATCH, IN), gru_bidi_X},   {F32(3, 2, 3 * HID, IN), gru_bidi_W},
                 {F32(3, 2, 3 * HID, HID), gru_bidi_R},  {F32(2, 2, 6 * HID), gru_bidi_B},
                 {TB_DTYPE_I32, 1, {BATCH}, gru_bidi_sequence_lens}, {F32(3, 2, BATCH, HID), gru_bidi_initial_h}};
  const double *want[] = {gru_bidi_out_Y, gru_bidi_out_Y_h};
  const int64_t *shapes[] = {gru_bidi_shape_Y, gru_bidi_shape_Y_h};
  run_case("GRU", attrs, 3, in, 6, 2, want, shapes);
}

static void test_gru_reverse_scaled_tanh_clip(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_INT("hidden_size", HID), TOH_STR("direction", "reverse"), TOH_STRS("activations", "Sigmoid", "ScaledTanh"),
                     TOH_FLOATS("activation_alpha", 1.2f), TOH_FLOATS("activation_beta", 0.8f), TOH_FLOAT("clip", 1.5f)};
  toh_in in[4] = {{F32(3, SEQ, BATCH, IN), gru_rev_X}, {F32(3, 1, 3 * HID, IN), gru_rev_W},
                 {F32(3, 1, 3 * HID, HID), gru_rev_R}, {F32(2, 1, 6 * HID), gru_rev_B}};
  const double *want[] = {gru_rev_out_Y, gru_rev_out_Y_h};
  const int64_t *shapes[] = {gru_rev_shape_Y, gru_rev_shape_Y_h};
  run_case("GRU", attrs, 6, in, 4, 2, want, shapes);
}

static void test_rnn_bidirectional_relu_tanh(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_INT("hidden_size", HID), TOH_STR("direction", "bidirectional"), TOH_STRS("activations", "Relu", "Tanh"),
                     TOH_FLOAT("clip", 1.0f)};
  toh_in in[6] = {{F32(3, SEQ, BATCH, IN), rnn_bidi_X}, {F32(3, 2, HID, IN), rnn_bidi_W},
                 {F32(3, 2, HID, HID), rnn_bidi_R},    {F32(2, 2, 2 * HID), rnn_bidi_B},
                 {TB_DTYPE_I32, 1, {BATCH}, rnn_bidi_sequence_lens}, {F32(3, 2, BATCH, HID), rnn_bidi_initial_h}};
  const double *want[] = {rnn_bidi_out_Y, rnn_bidi_out_Y_h};
  const int64_t *shapes[] = {rnn_bidi_shape_Y, rnn_bidi_shape_Y_h};
  run_case("RNN", attrs, 4, in, 6, 2, want, shapes);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lstm_bidirectional_all_inputs),
      cmocka_unit_test(test_lstm_input_forget_clip_activations),
      cmocka_unit_test(test_gru_bidirectional_linear_before_reset),
      cmocka_unit_test(test_gru_reverse_scaled_tanh_clip),
      cmocka_unit_test(test_rnn_bidirectional_relu_tanh),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
