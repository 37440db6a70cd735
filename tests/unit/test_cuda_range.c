/* Range on cuda:0 (kernels/cuda_ops_range.c) on the fake libcuda: with start, limit and delta model constants the
 * values are made and uploaded once, at prepare, and each run copies them on the device (no host copy: the run is
 * captured as a graph and replayed), for float32, float64, int64 and int32, an empty range, values equal to the
 * CPU's bit for bit; with a computed start (a graph input: the executor reads it on the host) the values go up per
 * run, the model is not captured, and says why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_module.h"
#include "core/error.h"
#include "model/prepared.h"
#include "model/replay.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_util.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];

static const char *const more_vars[] = {"FAKE_CUDA_LAUNCH_FAIL_AT", "TB_CUDA_STAGING"};

static int setup(void **state) { return tcv_setup_fakes(state, cache_dir, "tb_curange", more_vars, 2); }

static int teardown(void **state) {
  (void)state;
  tcu_cache_remove(cache_dir);
  return 0;
}

/* y = Range(start, limit, delta) and z = Identity(x) (an input, so each run copies something from the host); the
 * three scalars constants of dtype dt, or start a graph input when `computed`. */
static tb_model *range_model(tb_dtype dt, const void *start, const void *limit, const void *delta, bool computed) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "range");
  const int64_t two = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &two, NULL);
  if (computed) tbt_input(g, "start", dt, 0, NULL, NULL);
  else tbt_const(g, "start", dt, 0, NULL, start);
  tbt_const(g, "limit", dt, 0, NULL, limit);
  tbt_const(g, "delta", dt, 0, NULL, delta);
  tbt_node(g, "Range", "range", "start,limit,delta", "y");
  tbt_node(g, "Identity", "echo", "x", "z");
  tbt_output(g, "y");
  tbt_output(g, "z");
  return tbt_model_of(ir);
}

/* Three runs on the CPU at O0 and on cuda:0 at O0: y's bytes equal; the copies from the host. */
static void expect_range(tb_dtype dt, const void *start, const void *limit, const void *delta, int64_t count, bool computed) {
  tb_model *m = range_model(dt, start, limit, delta, computed);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &o, &pc, NULL));
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, &rg));
  assert_int_equal(rg->cpu_fallback_nodes, 0);
  const int64_t two = 2;
  const float x[2] = {1, 2};
  tb_tensor *in[2] = {tbt_f32(cpu, 1, &two, x), NULL};
  if (computed) {
    TB_ASSERT_OK(tb_tensor_create(cpu, dt, 0, NULL, &in[1]));
    TB_ASSERT_OK(tb_tensor_copy_from_host(in[1], start, tb_dtype_size(dt)));
  }
  const char *names[2] = {"x", "start"};
  size_t n_in = computed ? 2 : 1, elem = tb_dtype_size(dt);
  tcu_call_log_reset();
  for (int run = 0; run < 3; run++) {
    tb_tensor *want[2] = {NULL}, *got[2] = {NULL};
    TB_ASSERT_OK(tb_prepared_run(pc, n_in, names, in, 2, NULL, want));
    if (tb_prepared_run(pg, n_in, names, in, 2, NULL, got) != TB_OK) fail_msg("run %d on cuda:0: %s", run, tb_last_error());
    assert_int_equal(tb_tensor_numel(want[0]), count);
    assert_int_equal(tb_tensor_numel(got[0]), count);
    assert_int_equal(tb_tensor_dtype(got[0]), dt);
    unsigned char a[256], b[256];
    assert_true((size_t)count * elem <= sizeof a);
    TB_ASSERT_OK(tb_tensor_copy_to_host(want[0], a, (size_t)count * elem));
    TB_ASSERT_OK(tb_tensor_copy_to_host(got[0], b, (size_t)count * elem));
    assert_memory_equal(a, b, (size_t)count * elem);
    for (int k = 0; k < 2; k++) {
      tb_tensor_destroy(want[k]);
      tb_tensor_destroy(got[k]);
    }
  }
  const char *why = NULL;
  bool captured = tb_prepared_graph_capture(pg, &why);
  if (!computed) {
    if (!captured) fail_msg("not captured: %s", why ? why : "");
    tb_replay_counts rc = tb_replay_counts_of(pg->replay);
    assert_int_equal(rc.captures, 1);
    assert_int_equal(rc.replays, 2);
    assert_int_equal(tcu_uploads(), 3); /* x of each run: the values came at prepare */
  } else {
    assert_false(captured);
    print_message("computed start: %s\n", why ? why : "");
    TB_ASSERT_CONTAINS(why, "range");
    assert_int_equal(tcu_uploads(), 3 * (count > 0 ? 2 : 1)); /* x, and the values, each run */
  }
  for (size_t k = 0; k < n_in; k++) tb_tensor_destroy(in[k]);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
}

static void constant_ranges_are_made_at_prepare_and_captured(void **state) {
  (void)state;
  const float f_start = 0.1f, f_limit = 7.3f, f_delta = 0.7f;
  expect_range(TB_DTYPE_F32, &f_start, &f_limit, &f_delta, 11, false);
  const double d_start = 10, d_limit = -3.25, d_delta = -1.5;
  expect_range(TB_DTYPE_F64, &d_start, &d_limit, &d_delta, 9, false);
  const int64_t l_start = -5, l_limit = 40, l_delta = 3;
  expect_range(TB_DTYPE_I64, &l_start, &l_limit, &l_delta, 15, false);
  const int32_t i_start = 7, i_limit = -8, i_delta = -2;
  expect_range(TB_DTYPE_I32, &i_start, &i_limit, &i_delta, 8, false);
  const int32_t e_start = 4, e_limit = 4, e_delta = 1; /* empty */
  expect_range(TB_DTYPE_I32, &e_start, &e_limit, &e_delta, 0, false);
}

static void a_computed_range_is_uploaded_per_run(void **state) {
  (void)state;
  const float f_start = -2.5f, f_limit = 3.0f, f_delta = 0.5f;
  expect_range(TB_DTYPE_F32, &f_start, &f_limit, &f_delta, 11, true);
  const int64_t l_start = 3, l_limit = 12, l_delta = 4;
  expect_range(TB_DTYPE_I64, &l_start, &l_limit, &l_delta, 3, true);
}

/* Out of device memory while prepare uploads the values: the status and the sentence, nothing left behind. */
static void out_of_memory_at_prepare(void **state) {
  (void)state;
  const int64_t start = 0, limit = 100000, delta = 1;
  tb_model *m = range_model(TB_DTYPE_I64, &start, &limit, &delta, false);
  setenv("FAKE_CUDA_MEM_CAPACITY", "65536", 1); /* 800000 bytes of values */
  tb_backend *cuda = open_cuda0();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pg = NULL;
  assert_int_equal(tb_model_prepare(m, cuda, &o, &pg, NULL), TB_ERR_OUT_OF_MEMORY);
  assert_null(pg);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'range' (Range)");
  TB_ASSERT_CONTAINS(tb_last_error(), "out of memory allocating");
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(constant_ranges_are_made_at_prepare_and_captured, setup, teardown),
      cmocka_unit_test_setup_teardown(a_computed_range_is_uploaded_per_run, setup, teardown),
      cmocka_unit_test_setup_teardown(out_of_memory_at_prepare, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
