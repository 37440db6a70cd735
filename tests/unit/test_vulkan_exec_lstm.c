/* The Vulkan LSTM kernel (src/backend/vulkan/kernels/vk_lstm.c) on vulkan:0 (lavapipe, validation layer
 * on) against the level-0 CPU LSTM within 1e-5 + 1e-4 * |ref|: forward, reverse and bidirectional, with and
 * without B and initial states, odd sizes, batch 1, some outputs omitted; the cases it declines (find_kernel
 * returns NULL: sequence_lens, peepholes, clip, input_forget, activations, layout 1, float64); and a
 * 2-layer LSTM model shaped as the bench set's lstm.onnx prepared on vulkan:0 with every node on the
 * device, compared with CPU O0. */
#include <math.h>
#include "test_vulkan_exec_util.h"
#include "test_lstm_util.h"

static tb_backend *vk, *cpu;

static int open_backends(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_CACHE_DIR", "off", 1);
  vk = vkx_open();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  return 0;
}

static int close_backends(void **state) {
  (void)state;
  tb_backend_destroy(cpu);
  vkx_close(vk);
  unsetenv("TB_CACHE_DIR");
  return 0;
}

/* The LSTM node of test_lstm_util.h with this file's generator. */
static void lstm_node(toh *t, const char *direction, int64_t seq, int64_t batch, int64_t input, int64_t hidden, unsigned with,
                      unsigned omit_out, unsigned seed) {
  tlstm_node(t, cpu, vkx_fill, direction, seq, batch, input, hidden, with, omit_out, seed);
}

static void check_lstm(const char *direction, int64_t seq, int64_t batch, int64_t input, int64_t hidden, unsigned with, unsigned omit_out,
                       unsigned seed) {
  for (int prealloc = 0; prealloc < 2; prealloc++) {
    toh t;
    lstm_node(&t, direction, seq, batch, input, hidden, with, omit_out, seed);
    vkx_check(&t, vk, prealloc, VKX_RTOL, VKX_ATOL);
    toh_teardown(&t);
  }
  vkx_assert_quiet(vk);
}

static void forward(void **state) {
  (void)state;
  check_lstm("forward", 5, 3, 7, 9, WITH_B, 0, 1);
  check_lstm("forward", 6, 2, 5, 11, WITH_B | WITH_H0 | WITH_C0, 0, 2);
  check_lstm("forward", 4, 1, 3, 17, 0, 0, 3); /* batch 1, no B */
}

static void reverse(void **state) {
  (void)state;
  check_lstm("reverse", 5, 3, 7, 9, WITH_B, 0, 4);
  check_lstm("reverse", 7, 1, 13, 5, WITH_B | WITH_H0 | WITH_C0, 0, 5);
  check_lstm("reverse", 3, 2, 4, 6, WITH_H0, 0, 6); /* initial_h without initial_c */
}

static void bidirectional(void **state) {
  (void)state;
  check_lstm("bidirectional", 5, 3, 7, 9, WITH_B, 0, 7);
  check_lstm("bidirectional", 9, 1, 6, 19, WITH_B | WITH_H0 | WITH_C0, 0, 8);
  check_lstm("bidirectional", 4, 5, 33, 20, WITH_C0, 0, 9); /* initial_c without initial_h */
  check_lstm("bidirectional", 1, 2, 3, 4, WITH_B | WITH_H0, 0, 10); /* one step */
}

/* Y omitted (h runs through a scratch tensor), or Y_h and Y_c omitted (c runs through scratch). */
static void omitted_outputs(void **state) {
  (void)state;
  check_lstm("bidirectional", 6, 3, 5, 7, WITH_B | WITH_H0 | WITH_C0, 1u, 11);
  check_lstm("forward", 6, 3, 5, 7, WITH_B, 6u, 12);
  check_lstm("reverse", 6, 3, 5, 7, WITH_C0, 5u, 13);
}

/* find_kernel with this node's input types. */
static const tb_kernel *find(toh *t) {
  tb_node *n = toh_node(t);
  tb_value_type types[TOH_MAX];
  const tb_value_type *ptypes[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++) {
    if (!t->in[i]) continue;
    types[i] = toh_type_of(t->in[i]);
    ptypes[i] = &types[i];
  }
  return tbt_backend_kernel_find(vk, t->graph, n, ptypes);
}

static void declined_case(const tb_attr *extra, size_t n_extra, int extra_input) {
  toh t;
  toh_begin(&t, cpu);
  tb_attr attrs[4] = {TOH_STR("direction", "forward"), TOH_INT("hidden_size", 3)};
  for (size_t i = 0; i < n_extra; i++) attrs[2 + i] = extra[i];
  unsigned omit = (1u << 3) | (1u << 4) | (1u << 5) | (1u << 6) | (1u << 7);
  if (extra_input >= 0) omit &= ~(1u << extra_input);
  toh_add(&t, "LSTM", 14, 8, omit, 3, 0, attrs, 2 + n_extra);
  float data[64] = {0};
  int64_t xs[3] = {2, 1, 2}, ws[3] = {1, 12, 2}, rs[3] = {1, 12, 3}, ps[2] = {1, 9}, ls[1] = {1};
  int32_t lens[1] = {2};
  toh_input(&t, 0, TB_DTYPE_F32, 3, xs, data);
  toh_input(&t, 1, TB_DTYPE_F32, 3, ws, data);
  toh_input(&t, 2, TB_DTYPE_F32, 3, rs, data);
  if (extra_input == 4) toh_input(&t, 4, TB_DTYPE_I32, 1, ls, lens);
  if (extra_input == 7) toh_input(&t, 7, TB_DTYPE_F32, 2, ps, data);
  if (!n_extra && extra_input < 0) {
    assert_non_null(find(&t)); /* the plain node is taken */
  } else if (find(&t)) {
    fail_msg("find_kernel took an LSTM with %s", n_extra ? extra[0].name : extra_input == 4 ? "sequence_lens" : "peepholes");
  }
  toh_teardown(&t);
}

static void declined(void **state) {
  (void)state;
  declined_case(NULL, 0, -1);
  declined_case(NULL, 0, 4); /* sequence_lens */
  declined_case(NULL, 0, 7); /* P */
  tb_attr clip = TOH_FLOAT("clip", 3.0f), forget = TOH_INT("input_forget", 1), layout = TOH_INT("layout", 1);
  tb_attr acts = TOH_STRS("activations", "Relu", "Tanh", "Tanh");
  tb_attr alpha = TOH_FLOATS("activation_alpha", 0.5f);
  declined_case(&clip, 1, -1);
  declined_case(&forget, 1, -1);
  declined_case(&layout, 1, -1);
  declined_case(&acts, 1, -1);
  declined_case(&alpha, 1, -1);
  /* float64 */
  toh t;
  toh_begin(&t, cpu);
  tb_attr attrs[1] = {TOH_INT("hidden_size", 2)};
  toh_add(&t, "LSTM", 14, 3, 0, 1, 0, attrs, 1);
  double d[32] = {0};
  int64_t xs[3] = {1, 1, 2}, ws[3] = {1, 8, 2}, rs[3] = {1, 8, 2};
  toh_input(&t, 0, TB_DTYPE_F64, 3, xs, d);
  toh_input(&t, 1, TB_DTYPE_F64, 3, ws, d);
  toh_input(&t, 2, TB_DTYPE_F64, 3, rs, d);
  assert_null(find(&t));
  toh_teardown(&t);
}

/* A model shaped as the bench set's lstm.onnx (2 LSTM layers, seq 64, batch 8, input 128, hidden 256; built
 * by test_lstm_util.h, so it runs on a clean clone): all on vulkan:0, as CPU O0. */
static void lstm_model(void **state) {
  (void)state;
  tb_model *m = NULL;
  tb_tensor *x = NULL;
  tlstm_model_and_input(vkx_fill, cpu, &m, &x);
  tb_tensor *want = tlstm_run_model(m, cpu, cpu, false, "cpu", TB_LEVEL_O0, x);
  for (tb_opt_level level = TB_LEVEL_O0; level <= TB_LEVEL_O2; level++) {
    tb_tensor *got = tlstm_run_model(m, vk, cpu, true, "vulkan:0", level, x);
    tlstm_assert_close(got, want, "vulkan:0", tb_opt_level_name(level));
    tb_tensor_destroy(got);
  }
  vkx_assert_quiet(vk);
  tb_tensor_destroy(want);
  tb_tensor_destroy(x);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(forward),         cmocka_unit_test(reverse),  cmocka_unit_test(bidirectional),
      cmocka_unit_test(omitted_outputs), cmocka_unit_test(declined), cmocka_unit_test(lstm_model),
  };
  return cmocka_run_group_tests(tests, open_backends, close_backends);
}
