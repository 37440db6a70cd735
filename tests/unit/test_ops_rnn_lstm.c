/* LSTM: one step computed by hand (gate order i, o, f, c; peepholes i, o, f), input_forget, and the
 * walk over time: forward / reverse / bidirectional agree with each other, layout 1 is layout 0
 * transposed, sequence_lens stops each row, optional outputs. */
#include "test_ops_rnn_util.h"

/* The 1-step case: X [1,1,2], W [1,4,2], R [1,4,1], B [1,8], initial_h/c [1,1,1], P [1,3]. */
static const float X1[] = {1, 2};
static const float W1[] = {0.1f, 0.2f, 0.3f, -0.1f, -0.2f, 0.4f, 0.5f, 0.5f};
static const float R1[] = {0.6f, -0.5f, 0.2f, 0.1f};
static const float B1[] = {0.01f, 0.02f, 0.03f, 0.04f, 0.05f, 0.06f, 0.07f, 0.08f};
static const float H1[] = {0.5f}, C1[] = {0.25f}, P1[] = {0.1f, 0.2f, 0.3f};

static void run_one_step(bool input_forget, tb_tensor **outs) {
  toh t;
  tb_attr attrs[] = {TOH_INT("hidden_size", 1), TOH_INT("input_forget", input_forget)};
  toh_setup(&t, "LSTM", 7, 8, 1u << 4, 3, attrs, 2);
  toh_in in[8] = {{TB_DTYPE_F32, 3, {1, 1, 2}, X1}, {TB_DTYPE_F32, 3, {1, 4, 2}, W1}, {TB_DTYPE_F32, 3, {1, 4, 1}, R1},
                 {TB_DTYPE_F32, 2, {1, 8}, B1},    {TOH_NONE, 0, {0}, NULL},          {TB_DTYPE_F32, 3, {1, 1, 1}, H1},
                 {TB_DTYPE_F32, 3, {1, 1, 1}, C1}, {TB_DTYPE_F32, 2, {1, 3}, P1}};
  TB_ASSERT_OK(toh_run(&t, in, outs));
  toh_teardown(&t);
}

static void test_lstm_one_step_by_hand(void **state) {
  (void)state;
  /* i = s(0.1*1 + 0.2*2 + 0.6*0.5 + 0.01 + 0.05 + 0.1*0.25), f = s(-0.2 + 0.8 + 0.2*0.5 + 0.03 + 0.07 + 0.3*0.25),
   * c~ = tanh(0.5 + 1.0 + 0.1*0.5 + 0.04 + 0.08), C = f*0.25 + i*c~,
   * o = s(0.3 - 0.2 - 0.5*0.5 + 0.02 + 0.06 + 0.2*C), H = o * tanh(C). */
  double i = rt_sigmoid(0.885), f = rt_sigmoid(0.875), cand = tanh(1.67);
  double c = f * 0.25 + i * cand;
  double h = rt_sigmoid(-0.07 + 0.2 * c) * tanh(c);
  tb_tensor *outs[3];
  run_one_step(false, outs);
  rt_assert_f32(outs[0], 4, (const int64_t[]){1, 1, 1, 1}, (const double[]){h});
  rt_assert_f32(outs[1], 3, (const int64_t[]){1, 1, 1}, (const double[]){h});
  rt_assert_f32(outs[2], 3, (const int64_t[]){1, 1, 1}, (const double[]){c});
  toh_free_outs(outs, 3);
}

static void test_lstm_input_forget(void **state) {
  (void)state;
  double i = rt_sigmoid(0.885), f = 1.0 - i, cand = tanh(1.67); /* forget = 1 - input */
  double c = f * 0.25 + i * cand;
  double h = rt_sigmoid(-0.07 + 0.2 * c) * tanh(c);
  tb_tensor *outs[3];
  run_one_step(true, outs);
  rt_assert_f32(outs[1], 3, (const int64_t[]){1, 1, 1}, (const double[]){h});
  rt_assert_f32(outs[2], 3, (const int64_t[]){1, 1, 1}, (const double[]){c});
  toh_free_outs(outs, 3);
}

/* The multi-step case: seq 4, batch 2, input 2, hidden 3; deterministic weights. */
enum { SEQ = 4, BATCH = 2, IN = 2, HID = 3, G = 4 };
static float xs[SEQ * BATCH * IN], ws[2][G * HID * IN], rs[2][G * HID * HID], bs[2][2 * G * HID];

static void fill_data(void) {
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) xs[i] = (float)sin(0.7 * (double)i + 0.3);
  for (int d = 0; d < 2; d++) {
    for (size_t i = 0; i < G * HID * IN; i++) ws[d][i] = (float)(0.4 * cos(1.3 * (double)i + d));
    for (size_t i = 0; i < G * HID * HID; i++) rs[d][i] = (float)(0.3 * sin(0.9 * (double)i - d));
    for (size_t i = 0; i < 2 * G * HID; i++) bs[d][i] = (float)(0.05 * (double)((int)i % 5 - 2) + 0.01 * d);
  }
}

/* Run an LSTM over xs (layout 0) in `direction` with the weights of direction d0 (and d0+1 when
 * bidirectional); outs: Y, Y_h, Y_c. */
static void run_seq(const char *direction, int layout, const float *x, const int32_t *lens, tb_tensor **outs) {
  fill_data();
  int dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  int d0 = strcmp(direction, "reverse") == 0 ? 1 : 0;
  float w[2 * G * HID * IN], r[2 * G * HID * HID], b[2 * 2 * G * HID];
  for (int d = 0; d < dirs; d++) {
    memcpy(w + d * G * HID * IN, ws[d0 + d], sizeof ws[0]);
    memcpy(r + d * G * HID * HID, rs[d0 + d], sizeof rs[0]);
    memcpy(b + d * 2 * G * HID, bs[d0 + d], sizeof bs[0]);
  }
  toh t;
  tb_attr attrs[] = {TOH_STR("direction", direction), TOH_INT("layout", layout)};
  toh_setup(&t, "LSTM", 14, 5, lens ? 0 : 1u << 4, 3, attrs, 2);
  toh_in in[5] = {{TB_DTYPE_F32, 3, {SEQ, BATCH, IN}, x},
                 {TB_DTYPE_F32, 3, {dirs, G * HID, IN}, w},
                 {TB_DTYPE_F32, 3, {dirs, G * HID, HID}, r},
                 {TB_DTYPE_F32, 2, {dirs, 2 * G * HID}, b},
                 {TB_DTYPE_I32, 1, {BATCH}, lens}};
  if (layout == 1) {
    in[0].shape[0] = BATCH;
    in[0].shape[1] = SEQ;
  }
  if (!lens) in[4].dtype = TOH_NONE;
  TB_ASSERT_OK(toh_run(&t, in, outs));
  toh_teardown(&t);
}

static void test_lstm_bidirectional_is_forward_and_reverse(void **state) {
  (void)state;
  fill_data();
  tb_tensor *fw[3], *rv[3], *bi[3];
  run_seq("forward", 0, xs, NULL, fw);
  run_seq("reverse", 0, xs, NULL, rv);
  run_seq("bidirectional", 0, xs, NULL, bi);
  toh_assert_shape(bi[0], 4, (const int64_t[]){SEQ, 2, BATCH, HID});
  toh_assert_shape(bi[1], 3, (const int64_t[]){2, BATCH, HID});
  for (int s = 0; s < SEQ; s++)
    for (int k = 0; k < BATCH * HID; k++) {
      assert_float_equal(rt_at(bi[0], (s * 2 + 0) * BATCH * HID + k), rt_at(fw[0], s * BATCH * HID + k), 1e-7);
      assert_float_equal(rt_at(bi[0], (s * 2 + 1) * BATCH * HID + k), rt_at(rv[0], s * BATCH * HID + k), 1e-7);
    }
  for (int k = 0; k < BATCH * HID; k++) {
    /* forward ends at the last step, reverse at the first */
    assert_float_equal(rt_at(fw[1], k), rt_at(fw[0], (SEQ - 1) * BATCH * HID + k), 1e-7);
    assert_float_equal(rt_at(rv[1], k), rt_at(rv[0], k), 1e-7);
    assert_float_equal(rt_at(bi[1], k), rt_at(fw[1], k), 1e-7);
    assert_float_equal(rt_at(bi[1], BATCH * HID + k), rt_at(rv[1], k), 1e-7);
    assert_float_equal(rt_at(bi[2], BATCH * HID + k), rt_at(rv[2], k), 1e-7);
  }
  /* the reverse direction is not the forward one: the test would pass vacuously otherwise */
  assert_true(fabs(rt_at(rv[1], 0) - rt_at(fw[1], 0)) > 1e-3);
  toh_free_outs(fw, 3);
  toh_free_outs(rv, 3);
  toh_free_outs(bi, 3);
}

static void test_lstm_layout_1_is_transposed(void **state) {
  (void)state;
  fill_data();
  float xt[SEQ * BATCH * IN];
  for (int s = 0; s < SEQ; s++)
    for (int b = 0; b < BATCH; b++)
      for (int i = 0; i < IN; i++) xt[(b * SEQ + s) * IN + i] = xs[(s * BATCH + b) * IN + i];
  tb_tensor *l0[3], *l1[3];
  run_seq("bidirectional", 0, xs, NULL, l0);
  run_seq("bidirectional", 1, xt, NULL, l1);
  toh_assert_shape(l1[0], 4, (const int64_t[]){BATCH, SEQ, 2, HID});
  toh_assert_shape(l1[1], 3, (const int64_t[]){BATCH, 2, HID});
  for (int s = 0; s < SEQ; s++)
    for (int d = 0; d < 2; d++)
      for (int b = 0; b < BATCH; b++)
        for (int h = 0; h < HID; h++)
          assert_float_equal(rt_at(l1[0], ((b * SEQ + s) * 2 + d) * HID + h), rt_at(l0[0], ((s * 2 + d) * BATCH + b) * HID + h), 1e-7);
  for (int d = 0; d < 2; d++)
    for (int b = 0; b < BATCH; b++)
      for (int h = 0; h < HID; h++) {
        assert_float_equal(rt_at(l1[1], (b * 2 + d) * HID + h), rt_at(l0[1], (d * BATCH + b) * HID + h), 1e-7);
        assert_float_equal(rt_at(l1[2], (b * 2 + d) * HID + h), rt_at(l0[2], (d * BATCH + b) * HID + h), 1e-7);
      }
  toh_free_outs(l0, 3);
  toh_free_outs(l1, 3);
}

static void test_lstm_sequence_lens(void **state) {
  (void)state;
  fill_data();
  const int32_t lens[BATCH] = {SEQ, 2};
  tb_tensor *full[3], *cut[3];
  run_seq("bidirectional", 0, xs, NULL, full);
  run_seq("bidirectional", 0, xs, lens, cut);
  for (int s = 0; s < SEQ; s++)
    for (int h = 0; h < HID; h++) {
      /* row 0 runs the whole sequence; row 1 stops after 2 steps and is zero after */
      assert_float_equal(rt_at(cut[0], ((s * 2 + 0) * BATCH + 0) * HID + h), rt_at(full[0], ((s * 2 + 0) * BATCH + 0) * HID + h), 1e-7);
      if (s >= 2) {
        assert_float_equal(rt_at(cut[0], ((s * 2 + 0) * BATCH + 1) * HID + h), 0.0f, 0.0);
        assert_float_equal(rt_at(cut[0], ((s * 2 + 1) * BATCH + 1) * HID + h), 0.0f, 0.0);
      }
    }
  for (int h = 0; h < HID; h++) {
    /* forward Y_h of row 1 is its step 1; forward step 0 matches the uncut run (same history) */
    assert_float_equal(rt_at(cut[1], (0 * BATCH + 1) * HID + h), rt_at(cut[0], ((1 * 2 + 0) * BATCH + 1) * HID + h), 1e-7);
    assert_float_equal(rt_at(cut[0], ((0 * 2 + 0) * BATCH + 1) * HID + h), rt_at(full[0], ((0 * 2 + 0) * BATCH + 1) * HID + h), 1e-7);
    /* reverse Y_h of row 1 is its step 0, which started at step 1 (not at the sequence's end) */
    assert_float_equal(rt_at(cut[1], (1 * BATCH + 1) * HID + h), rt_at(cut[0], ((0 * 2 + 1) * BATCH + 1) * HID + h), 1e-7);
  }
  assert_true(fabs(rt_at(cut[1], (1 * BATCH + 1) * HID) - rt_at(full[1], (1 * BATCH + 1) * HID)) > 1e-4);
  toh_free_outs(full, 3);
  toh_free_outs(cut, 3);
}

static void test_lstm_only_y_h(void **state) {
  (void)state;
  fill_data();
  toh t;
  toh_begin(&t, NULL);
  toh_add(&t, "LSTM", 7, 3, 0, 2, 1u << 0, NULL, 0); /* outputs ("", Y_h) */
  toh_in in[3] = {{TB_DTYPE_F32, 3, {SEQ, BATCH, IN}, xs},
                 {TB_DTYPE_F32, 3, {1, G * HID, IN}, ws[0]},
                 {TB_DTYPE_F32, 3, {1, G * HID, HID}, rs[0]}};
  tb_tensor *outs[2];
  TB_ASSERT_OK(toh_run(&t, in, outs));
  assert_null(outs[0]);
  toh_assert_shape(outs[1], 3, (const int64_t[]){1, BATCH, HID});
  toh_free_outs(outs, 2);
  toh_teardown(&t);
}

static void test_lstm_infer_shapes(void **state) {
  (void)state;
  toh t;
  tb_attr attrs[] = {TOH_STR("direction", "bidirectional"), TOH_INT("layout", 1), TOH_INT("hidden_size", 4)};
  toh_setup(&t, "LSTM", 14, 3, 0, 3, attrs, 3);
  tb_value_type x = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){3, -1, 2});
  x.dims[1].symbol = 7;
  tb_value_type w = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL), r = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){2, 16, 4});
  const tb_value_type *in[3] = {&x, &w, &r};
  tb_value_type out[3];
  TB_ASSERT_OK(toh_infer(&t, in, out));
  toh_assert_type(&out[0], TB_DTYPE_F32, 4, (const int64_t[]){3, -1, 2, 4});
  assert_int_equal(out[0].dims[1].symbol, 7); /* the sequence symbol carries over */
  toh_assert_type(&out[1], TB_DTYPE_F32, 3, (const int64_t[]){3, 2, 4});
  toh_assert_type(&out[2], TB_DTYPE_F32, 3, (const int64_t[]){3, 2, 4});
  toh_teardown(&t);

  toh_setup(&t, "LSTM", 7, 3, 0, 2, NULL, 0); /* hidden size from W: 12 rows / 4 gates */
  tb_value_type x0 = toh_type(TB_DTYPE_F64, 3, (const int64_t[]){5, 2, 6}), w0 = toh_type(TB_DTYPE_F64, 3, (const int64_t[]){1, 12, 6});
  tb_value_type r0 = toh_type(TB_DTYPE_F64, SIZE_MAX, NULL);
  const tb_value_type *in0[3] = {&x0, &w0, &r0};
  TB_ASSERT_OK(toh_infer(&t, in0, out));
  toh_assert_type(&out[0], TB_DTYPE_F64, 4, (const int64_t[]){5, 1, 2, 3});
  toh_assert_type(&out[1], TB_DTYPE_F64, 3, (const int64_t[]){1, 2, 3});
  toh_teardown(&t);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lstm_one_step_by_hand),
      cmocka_unit_test(test_lstm_input_forget),
      cmocka_unit_test(test_lstm_bidirectional_is_forward_and_reverse),
      cmocka_unit_test(test_lstm_layout_1_is_transposed),
      cmocka_unit_test(test_lstm_sequence_lens),
      cmocka_unit_test(test_lstm_only_y_h),
      cmocka_unit_test(test_lstm_infer_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
