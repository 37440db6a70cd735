/* The OpenCL LSTM kernel (src/backend/opencl/kernels/cl_ops_lstm.c, lstm.cl) on opencl:0 (PoCL) against the
 * level-0 CPU LSTM within 1e-5 + 1e-4 * |ref|, with CLBlast's GEMM and with the built-in one
 * (TB_CLBLAST=off): forward, reverse and bidirectional, with and without B and initial states, odd sizes,
 * batch 1, one time step, some outputs omitted, outputs preallocated or left to the kernel; the cases it
 * declines (find_kernel returns NULL: sequence_lens, peepholes, clip, input_forget, other activations,
 * activation_alpha, layout 1, float64) and the default activations spelled out (taken); and a 2-layer LSTM
 * model shaped as the bench set's lstm.onnx prepared on opencl:0 at O0..O2 with every node on the device,
 * compared with CPU O0. */
#include "test_opencl_exec_util.h"
#include "test_lstm_util.h"

static tb_backend *cpu;

static int open_backends(void **state) {
  clx_setup(state);
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  return 0;
}

static int close_backends(void **state) {
  tb_backend_destroy(cpu);
  unsetenv("TB_CLBLAST");
  unsetenv("TB_CACHE_DIR");
  return clx_teardown(state);
}

/* The LSTM node of test_lstm_util.h with this file's generator. */
static void lstm_node(toh *t, const char *direction, int64_t seq, int64_t batch, int64_t input, int64_t hidden, unsigned with,
                      unsigned omit_out, unsigned seed) {
  tlstm_node(t, cpu, clx_fill, direction, seq, batch, input, hidden, with, omit_out, seed);
}

/* Every present output of the device run equals the reference's. */
static void compare_run(toh *t, bool prealloc) {
  tb_tensor *ref[TOH_MAX] = {0}, *dev[TOH_MAX] = {0};
  TB_ASSERT_OK(toh_run_tensors(t, t->in, ref, true));
  const tb_kernel *k = NULL;
  tb_status st = clx_run_device(t, t->in, dev, prealloc, &k);
  if (st != TB_OK) fail_msg("LSTM on opencl:0: %s", tb_last_error());
  assert_string_equal(k->name, "LSTM");
  size_t checked = 0;
  for (size_t o = 0; o < t->n_out; o++) {
    if (toh_node(t)->outputs[o] < 0) { /* omitted: never made by the kernel (the harness may preallocate it) */
      if (!prealloc) assert_null(dev[o]);
      continue;
    }
    assert_non_null(ref[o]);
    assert_non_null(dev[o]);
    toh_assert_shape(dev[o], tb_tensor_ndim(ref[o]), tb_tensor_shape(ref[o]));
    float *a = clx_read(dev[o]), *b = clx_read(ref[o]);
    for (int64_t i = 0; i < tb_tensor_numel(ref[o]); i++)
      if (!(fabs((double)a[i] - (double)b[i]) <= CLX_ATOL + CLX_RTOL * fabs((double)b[i])))
        fail_msg("LSTM output %zu element %lld: device %.9g, reference %.9g", o, (long long)i, a[i], b[i]);
    free(a);
    free(b);
    checked++;
  }
  assert_true(checked > 0);
  toh_clear(ref, TOH_MAX);
  toh_clear(dev, TOH_MAX);
}

/* The node with CLBlast and without, outputs preallocated and not. */
static void check_lstm(const char *direction, int64_t seq, int64_t batch, int64_t input, int64_t hidden, unsigned with,
                       unsigned omit_out, unsigned seed) {
  for (int blas = 0; blas < 2; blas++) {
    if (blas) unsetenv("TB_CLBLAST");
    else setenv("TB_CLBLAST", "off", 1);
    for (int prealloc = 0; prealloc < 2; prealloc++) {
      toh t;
      lstm_node(&t, direction, seq, batch, input, hidden, with, omit_out, seed);
      compare_run(&t, prealloc);
      toh_teardown(&t);
    }
  }
  unsetenv("TB_CLBLAST");
}

static void forward(void **state) {
  (void)state;
  check_lstm("forward", 5, 3, 7, 9, WITH_B, 0, 1);
  check_lstm("forward", 6, 2, 5, 11, WITH_B | WITH_H0 | WITH_C0, 0, 2);
  check_lstm("forward", 4, 1, 3, 17, 0, 0, 3); /* batch 1, no B */
  check_lstm("forward", 3, 4, 40, 33, WITH_B, 0, 14); /* past one GEMM tile */
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

/* Y omitted, or Y_h and Y_c omitted (the states then run through scratch tensors). */
static void omitted_outputs(void **state) {
  (void)state;
  check_lstm("bidirectional", 6, 3, 5, 7, WITH_B | WITH_H0 | WITH_C0, 1u, 11);
  check_lstm("forward", 6, 3, 5, 7, WITH_B, 6u, 12);
  check_lstm("reverse", 6, 3, 5, 7, WITH_C0, 5u, 13);
}

/* find_kernel with the node's input types. */
static const tb_kernel *find(toh *t) {
  tb_value_type types[TOH_MAX];
  const tb_value_type *ptypes[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++) {
    if (!t->in[i]) continue;
    types[i] = toh_type_of(t->in[i]);
    ptypes[i] = &types[i];
  }
  return tbt_backend_kernel_find(clx_dev, t->graph, toh_node(t), ptypes);
}

/* A forward LSTM with these extra attributes and, when extra_input is 4 or 7, sequence_lens or P. */
static const tb_kernel *find_case(const tb_attr *extra, size_t n_extra, int extra_input) {
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
  const tb_kernel *k = find(&t);
  toh_teardown(&t);
  return k;
}

static void declined(void **state) {
  (void)state;
  const tb_kernel *plain = find_case(NULL, 0, -1);
  assert_non_null(plain);
  assert_string_equal(plain->name, "LSTM");
  tb_attr defaults = TOH_STRS("activations", "Sigmoid", "Tanh", "Tanh");
  assert_ptr_equal(find_case(&defaults, 1, -1), plain); /* the defaults spelled out are taken */
  assert_null(find_case(NULL, 0, 4));                  /* sequence_lens */
  assert_null(find_case(NULL, 0, 7));                  /* peepholes P */
  tb_attr declined_attrs[] = {
      TOH_FLOAT("clip", 3.0f), TOH_INT("input_forget", 1), TOH_INT("layout", 1),
      TOH_STRS("activations", "Relu", "Tanh", "Tanh"), TOH_STRS("activations", "Sigmoid", "Tanh", "Relu"),
      TOH_FLOATS("activation_alpha", 0.5f), TOH_FLOATS("activation_beta", 0.5f), TOH_STR("direction", "sideways"),
  };
  for (size_t i = 0; i < sizeof declined_attrs / sizeof declined_attrs[0]; i++) {
    const tb_kernel *k = NULL;
    if (strcmp(declined_attrs[i].name, "direction") == 0) { /* replaces "forward" rather than adding */
      toh t;
      toh_begin(&t, cpu);
      tb_attr attrs[1] = {declined_attrs[i]};
      toh_add(&t, "LSTM", 14, 3, 0, 3, 0, attrs, 1);
      float data[64] = {0};
      int64_t xs[3] = {2, 1, 2}, ws[3] = {1, 12, 2}, rs[3] = {1, 12, 3};
      toh_input(&t, 0, TB_DTYPE_F32, 3, xs, data);
      toh_input(&t, 1, TB_DTYPE_F32, 3, ws, data);
      toh_input(&t, 2, TB_DTYPE_F32, 3, rs, data);
      k = find(&t);
      toh_teardown(&t);
    } else {
      k = find_case(&declined_attrs[i], 1, -1);
    }
    if (k) fail_msg("find_kernel took an LSTM with attribute %s", declined_attrs[i].name);
  }
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
 * by test_lstm_util.h, so it runs on a clean clone): all on opencl:0, as CPU O0,
 * with CLBlast and with the built-in GEMM. */
static void lstm_model(void **state) {
  (void)state;
  tb_model *m = NULL;
  tb_tensor *x = NULL;
  tlstm_model_and_input(clx_fill, cpu, &m, &x);
  tb_tensor *want = tlstm_run_model(m, cpu, cpu, false, "cpu", TB_LEVEL_O0, x);
  for (int blas = 0; blas < 2; blas++) {
    if (blas) unsetenv("TB_CLBLAST");
    else setenv("TB_CLBLAST", "off", 1);
    for (tb_opt_level level = TB_LEVEL_O0; level <= TB_LEVEL_O2; level++) {
      tb_tensor *got = tlstm_run_model(m, clx_dev, cpu, true, "opencl:0", level, x);
      char what[64];
      snprintf(what, sizeof what, "%s (%s)", tb_opt_level_name(level), blas ? "CLBlast" : "TB_CLBLAST=off");
      tlstm_assert_close(got, want, "opencl:0", what);
      tb_tensor_destroy(got);
    }
  }
  unsetenv("TB_CLBLAST");
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
