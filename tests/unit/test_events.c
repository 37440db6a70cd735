/* Events on the backends that are real here — the CPU (host events), OpenCL (PoCL: native markers) and
 * Vulkan (lavapipe, host events) — through the public API: record, synchronize, query and elapsed time
 * around a large copy, with the times ordered and bounded by the host's clock; every bad use with its
 * message; and events destroyed after their backend, with nothing leaked. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tensorbridge/backend.h>
#include <tensorbridge/tensor.h>
#include "test_util.h"

static const char *const backends[] = {"cpu", "opencl:0", "vulkan:0"};
#define NBACKENDS (sizeof backends / sizeof backends[0])
#define COPY_BYTES ((size_t)32 << 20)

static tb_backend *open_backend(const char *name) {
  tb_backend *b = NULL;
  tb_status st = tb_backend_create(name, &b);
  if (st != TB_OK) fail_msg("tb_backend_create(%s): %s: %s", name, tb_status_str(st), tb_last_error());
  return b;
}

static double host_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int setup(void **state) {
  (void)state;
  tbt_clear_env(); /* the real machine: PoCL and lavapipe */
  return 0;
}

/* Three events around two large copies (host to device, device to host): every event is done after the
 * last is synchronized, the times are >= 0, add up, and fit inside what the host clock saw. */
static void events_time_a_large_copy(void **state) {
  (void)state;
  unsigned char *in = malloc(COPY_BYTES), *out = malloc(COPY_BYTES);
  assert_non_null(in);
  assert_non_null(out);
  for (size_t i = 0; i < COPY_BYTES; i++) in[i] = (unsigned char)(i * 7u + 3u);
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    const int64_t shape[1] = {(int64_t)COPY_BYTES};
    tb_tensor *t = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_U8, 1, shape, &t));
    tb_event *ev[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; i++) TB_ASSERT_OK(tb_event_create(b, &ev[i]));
    double before = host_ms();
    TB_ASSERT_OK(tb_event_record(ev[0]));
    TB_ASSERT_OK(tb_tensor_copy_from_host(t, in, COPY_BYTES));
    TB_ASSERT_OK(tb_event_record(ev[1]));
    memset(out, 0, COPY_BYTES);
    TB_ASSERT_OK(tb_tensor_copy_to_host(t, out, COPY_BYTES));
    TB_ASSERT_OK(tb_event_record(ev[2]));
    TB_ASSERT_OK(tb_event_synchronize(ev[2]));
    double after = host_ms();
    assert_memory_equal(in, out, COPY_BYTES);
    for (int i = 0; i < 3; i++) {
      bool done = false;
      TB_ASSERT_OK(tb_event_query(ev[i], &done));
      if (!done) fail_msg("%s: event %d not done after the last was synchronized", backends[k], i);
    }
    double up = -1, down = -1, all = -1, self = -1;
    TB_ASSERT_OK(tb_event_elapsed_ms(ev[0], ev[1], &up));
    TB_ASSERT_OK(tb_event_elapsed_ms(ev[1], ev[2], &down));
    TB_ASSERT_OK(tb_event_elapsed_ms(ev[0], ev[2], &all));
    TB_ASSERT_OK(tb_event_elapsed_ms(ev[1], ev[1], &self));
    if (!(up >= 0 && down >= 0 && all >= up && all >= down))
      fail_msg("%s: times out of order: up %g, down %g, all %g ms", backends[k], up, down, all);
    assert_true(self == 0.0);
    assert_true(all - (up + down) < 1e-6 && (up + down) - all < 1e-6);
    if (all > after - before + 1e-3) fail_msg("%s: %g ms between events, but only %g ms passed", backends[k], all, after - before);
    /* 64 MiB moved: more than nothing, however fast the machine */
    if (!(all > 0.0)) fail_msg("%s: two 32 MiB copies took %g ms", backends[k], all);
    /* the reverse order is the negative */
    double back = 0;
    TB_ASSERT_OK(tb_event_elapsed_ms(ev[2], ev[0], &back));
    assert_true(back + all < 1e-6 && -(back + all) < 1e-6);
    for (int i = 0; i < 3; i++) tb_event_destroy(ev[i]);
    tb_tensor_destroy(t);
    tb_backend_destroy(b);
  }
  free(in);
  free(out);
}

/* Recording again moves the mark: the second interval starts at the new record. */
static void recording_again_moves_the_mark(void **state) {
  (void)state;
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    tb_event *a = NULL, *z = NULL;
    TB_ASSERT_OK(tb_event_create(b, &a));
    TB_ASSERT_OK(tb_event_create(b, &z));
    TB_ASSERT_OK(tb_event_record(a));
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
    TB_ASSERT_OK(tb_event_record(z));
    TB_ASSERT_OK(tb_event_synchronize(z));
    double first = 0, second = 0;
    TB_ASSERT_OK(tb_event_elapsed_ms(a, z, &first));
    if (first < 19.0) fail_msg("%s: %g ms across a 20 ms sleep", backends[k], first);
    TB_ASSERT_OK(tb_event_record(a)); /* now after z */
    TB_ASSERT_OK(tb_event_synchronize(a));
    TB_ASSERT_OK(tb_event_elapsed_ms(z, a, &second));
    if (!(second >= 0.0 && second < first)) fail_msg("%s: re-recorded: %g ms (first %g)", backends[k], second, first);
    tb_event_destroy(a);
    tb_event_destroy(z);
    tb_backend_destroy(b);
  }
}

static void bad_uses_say_what_is_wrong(void **state) {
  (void)state;
  tb_backend *cpu = open_backend("cpu"), *other = open_backend("cpu");
  tb_event *e = (tb_event *)1, *f = NULL, *g = NULL;
  assert_int_equal(tb_event_create(NULL, &e), TB_ERR_INVALID_ARGUMENT);
  assert_null(e);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_event_create: backend must not be NULL");
  assert_int_equal(tb_event_create(cpu, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "out_event must not be NULL");
  assert_int_equal(tb_event_record(NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_event_synchronize(NULL), TB_ERR_INVALID_ARGUMENT);
  bool done = true;
  assert_int_equal(tb_event_query(NULL, &done), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_event_query: event must not be NULL");
  TB_ASSERT_OK(tb_event_create(cpu, &e));
  TB_ASSERT_OK(tb_event_create(cpu, &f));
  TB_ASSERT_OK(tb_event_create(other, &g));
  assert_int_equal(tb_event_query(e, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "out_done must not be NULL");
  /* never recorded */
  assert_int_equal(tb_event_synchronize(e), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_event_synchronize: the event on cpu:0 was never recorded");
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_event_record");
  assert_int_equal(tb_event_query(e, &done), TB_ERR_INVALID_ARGUMENT);
  assert_false(done);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_event_query: the event on cpu:0 was never recorded");
  double ms = 5.0;
  TB_ASSERT_OK(tb_event_record(f));
  assert_int_equal(tb_event_elapsed_ms(e, f, &ms), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "the start event on cpu:0 was never recorded");
  assert_true(ms == 0.0);
  assert_int_equal(tb_event_elapsed_ms(f, e, &ms), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "the end event on cpu:0 was never recorded");
  /* different backend handles, even of one kind */
  TB_ASSERT_OK(tb_event_record(g));
  assert_int_equal(tb_event_elapsed_ms(f, g, &ms), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "different backend handles");
  assert_int_equal(tb_event_elapsed_ms(NULL, g, &ms), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "start must not be NULL");
  assert_int_equal(tb_event_elapsed_ms(f, NULL, &ms), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "end must not be NULL");
  assert_int_equal(tb_event_elapsed_ms(f, f, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "out_ms must not be NULL");
  /* an event pins its backend to its device, as a tensor does */
  assert_int_equal(tb_backend_set_device(cpu, 1), TB_ERR_INVALID_ARGUMENT);
  tb_event_destroy(NULL);
  tb_event_destroy(e);
  tb_event_destroy(f);
  tb_event_destroy(g);
  tb_backend_destroy(cpu);
  tb_backend_destroy(other);
}

/* Destroying the backend handle first is safe on every backend: the event keeps it until it goes. */
static void events_outlive_their_backend(void **state) {
  (void)state;
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    tb_event *recorded = NULL, *fresh = NULL;
    TB_ASSERT_OK(tb_event_create(b, &recorded));
    TB_ASSERT_OK(tb_event_create(b, &fresh));
    TB_ASSERT_OK(tb_event_record(recorded));
    tb_backend_destroy(b);
    TB_ASSERT_OK(tb_event_synchronize(recorded));
    TB_ASSERT_OK(tb_event_record(fresh)); /* the device is still open */
    double ms = -1;
    TB_ASSERT_OK(tb_event_synchronize(fresh));
    TB_ASSERT_OK(tb_event_elapsed_ms(recorded, fresh, &ms));
    assert_true(ms >= 0.0);
    tb_event_destroy(recorded);
    tb_event_destroy(fresh); /* the last reference: the backend closes here (ASan/valgrind check the rest) */
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(events_time_a_large_copy),
      cmocka_unit_test(recording_again_moves_the_mark),
      cmocka_unit_test(bad_uses_say_what_is_wrong),
      cmocka_unit_test(events_outlive_their_backend),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
