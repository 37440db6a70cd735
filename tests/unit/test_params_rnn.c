/* The recurrent operators' parse functions (ops/rnn/rnn_params.h): direction, hidden_size, activations with
 * their alphas and betas (consumed in order by the activations that take them), clip, layout, input_forget,
 * linear_before_reset, the defaults per cell, and every rejection with its status and message. */
#include "ops/rnn/rnn_params.h"
#include "test_params_util.h"

#define PARSE(fn, op, opset, p, attrs) tpp_parse(fn, op, opset, 3, 2, attrs, &(p), sizeof(p))

static void test_lstm(void **state) {
  (void)state;
  tb_rnn_params p;
  TB_ASSERT_OK(PARSE(tb_lstm_parse, "LSTM", 14, p,
                     TPP_ATTRS(TOH_STR("direction", "bidirectional"), TOH_INT("hidden_size", 5), TOH_FLOAT("clip", 3.0f),
                               TOH_INT("layout", 1), TOH_INT("input_forget", 1),
                               TOH_STRS("activations", "HardSigmoid", "tanh", "Affine", "Sigmoid", "LeakyRelu", "Tanh"),
                               TOH_FLOATS("activation_alpha", 0.3f, 2.0f, 0.1f), TOH_FLOATS("activation_beta", 0.6f))));
  assert_int_equal(p.cell, TB_RNN_CELL_LSTM);
  assert_int_equal(p.num_directions, 2);
  assert_false(p.reverse);
  assert_int_equal(p.hidden_size, 5);
  assert_true(p.has_clip && p.clip == 3.0f);
  assert_int_equal(p.layout, 1);
  assert_true(p.input_forget);
  assert_int_equal(p.acts_per_direction, 3);
  assert_int_equal(p.acts[0].kind, TB_RNN_ACT_HARD_SIGMOID);
  assert_true(p.acts[0].alpha == 0.3f && p.acts[0].beta == 0.6f);
  assert_int_equal(p.acts[1].kind, TB_RNN_ACT_TANH); /* names match without regard to case */
  assert_int_equal(p.acts[2].kind, TB_RNN_ACT_AFFINE);
  assert_true(p.acts[2].alpha == 2.0f && p.acts[2].beta == 0.0f); /* the betas ran out: Affine's default */
  assert_int_equal(p.acts[4].kind, TB_RNN_ACT_LEAKY_RELU);
  assert_true(p.acts[4].alpha == 0.1f);
  assert_string_equal(tb_rnn_act_name(p.acts[4].kind), "LeakyRelu");
  assert_int_equal(p.n_alpha, 3);
  assert_int_equal(p.n_beta, 1);

  TB_ASSERT_OK(PARSE(tb_lstm_parse, "LSTM", 7, p, TPP_NO_ATTRS));
  assert_int_equal(p.num_directions, 1);
  assert_int_equal(p.hidden_size, -1);
  assert_false(p.has_clip || p.input_forget);
  assert_int_equal(p.layout, 0);
  assert_int_equal(p.acts[0].kind, TB_RNN_ACT_SIGMOID);
  assert_int_equal(p.acts[1].kind, TB_RNN_ACT_TANH);
  assert_int_equal(p.acts[2].kind, TB_RNN_ACT_TANH);
}

static void test_gru_rnn(void **state) {
  (void)state;
  tb_rnn_params p;
  TB_ASSERT_OK(PARSE(tb_gru_parse, "GRU", 7, p, TPP_ATTRS(TOH_STR("direction", "reverse"), TOH_INT("linear_before_reset", 1))));
  assert_int_equal(p.cell, TB_RNN_CELL_GRU);
  assert_true(p.reverse);
  assert_int_equal(p.num_directions, 1);
  assert_true(p.linear_before_reset);
  assert_int_equal(p.acts_per_direction, 2);
  assert_int_equal(p.acts[0].kind, TB_RNN_ACT_SIGMOID);
  assert_int_equal(p.acts[1].kind, TB_RNN_ACT_TANH);
  TB_ASSERT_OK(PARSE(tb_rnn_parse, "RNN", 7, p, TPP_ATTRS(TOH_STRS("activations", "Relu"))));
  assert_int_equal(p.cell, TB_RNN_CELL_RNN);
  assert_int_equal(p.acts_per_direction, 1);
  assert_int_equal(p.acts[0].kind, TB_RNN_ACT_RELU);
  TB_ASSERT_OK(PARSE(tb_rnn_parse, "RNN", 7, p, TPP_NO_ATTRS));
  assert_int_equal(p.acts[0].kind, TB_RNN_ACT_TANH);
}

static void test_rejections(void **state) {
  (void)state;
  tb_rnn_params p;
  TPP_REJECTS(TB_ERR_MODEL, "LSTM", "direction 'both' is not one of forward, reverse, bidirectional",
              PARSE(tb_lstm_parse, "LSTM", 7, p, TPP_ATTRS(TOH_STR("direction", "both"))));
  TPP_REJECTS(TB_ERR_MODEL, "GRU", "'activations' has 1 names, expected 2",
              PARSE(tb_gru_parse, "GRU", 7, p, TPP_ATTRS(TOH_STRS("activations", "Sigmoid"))));
  TPP_REJECTS(TB_ERR_MODEL, "RNN", "unknown activation 'Gelu'",
              PARSE(tb_rnn_parse, "RNN", 7, p, TPP_ATTRS(TOH_STRS("activations", "Gelu"))));
  TPP_REJECTS(TB_ERR_MODEL, "RNN", "attribute 'activations' must be a list of strings",
              PARSE(tb_rnn_parse, "RNN", 7, p, TPP_ATTRS(TOH_STR("activations", "Tanh"))));
  TPP_REJECTS(TB_ERR_MODEL, "LSTM", "hidden_size must be positive (got 0)",
              PARSE(tb_lstm_parse, "LSTM", 7, p, TPP_ATTRS(TOH_INT("hidden_size", 0))));
  TPP_REJECTS(TB_ERR_MODEL, "LSTM", "layout must be 0 or 1 (got 2)",
              PARSE(tb_lstm_parse, "LSTM", 14, p, TPP_ATTRS(TOH_INT("layout", 2))));
  TPP_REJECTS(TB_ERR_MODEL, "GRU", "attribute 'layout' needs opset 14 or later (the model imports 7)",
              PARSE(tb_gru_parse, "GRU", 7, p, TPP_ATTRS(TOH_INT("layout", 1))));
  TPP_REJECTS(TB_ERR_MODEL, "LSTM", "clip must be a non-negative number (got -1)",
              PARSE(tb_lstm_parse, "LSTM", 7, p, TPP_ATTRS(TOH_FLOAT("clip", -1.0f))));
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lstm),
      cmocka_unit_test(test_gru_rnn),
      cmocka_unit_test(test_rejections),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
