/* Events through the public API on the backends this machine lacks, with the fake drivers: CUDA on the
 * recorded 8x H100 node, HIP on the 8x MI300X node, Level Zero on the 4x Data Center GPU Max node, and
 * OpenCL's marker path on the fake ICD. The native calls happen (the fakes count them) on the right
 * stream, device or command list; an event reports not-ready, then ready; elapsed time is the driver's
 * (CUDA, HIP, OpenCL with profiling) or the host's (Level Zero); driver errors come back with the code and
 * its name; and events outlive the backend handle without leaking anything in the driver. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/backend.h>
#include "test_amd_tree.h"
#include "test_intel_tree.h"
#include "test_util.h"

static void *fake_symbol(const char *fake, const char *name) {
  void *h = dlopen(tbt_fake(fake), RTLD_NOW);
  if (!h) fail_msg("cannot load %s: %s", fake, dlerror());
  void *sym = dlsym(h, name);
  if (!sym) fail_msg("%s does not export %s", fake, name);
  return sym; /* the reference is kept on purpose, so counts survive the library closing its handle */
}

/* How many times the fake saw `call`. */
static unsigned long long calls(const char *fake, const char *call) {
  char name[64];
  snprintf(name, sizeof name, "%s_event_calls", fake);
  unsigned long long (*fn)(const char *) = (unsigned long long (*)(const char *))fake_symbol(fake, name);
  return fn(call);
}

static int fake_count(const char *fake, const char *name) {
  int (*fn)(void) = (int (*)(void))fake_symbol(fake, name);
  return fn();
}

static tb_backend *open_backend(const char *request) {
  tb_backend *b = NULL;
  tb_status st = tb_backend_create(request, &b);
  if (st != TB_OK) fail_msg("tb_backend_create(%s): %s: %s", request, tb_status_str(st), tb_last_error());
  return b;
}

static void use_cuda(void) {
  tbt_setup_clean_nvidia(NULL);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  unsetenv("FAKE_CUDA_EVENT");
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
}

static void use_hip(void) {
  amd_use_fakes();
  unsetenv("FAKE_HIP_FAIL");
  unsetenv("FAKE_HIP_FAIL_CODE");
  unsetenv("FAKE_HIP_EVENT");
}

static void use_ze(void) {
  xpu_env("intel_max");
  xpu_use_fake("max4", "ok");
  unsetenv("FAKE_ZE_FAIL");
  unsetenv("FAKE_ZE_FAIL_CODE");
  unsetenv("FAKE_ZE_EVENT_NOT_READY");
}

static void use_opencl(void) {
  tbt_clear_env();
  unsetenv("TBT_FAKE_OPENCL");
  unsetenv("TBT_FAKE_OPENCL_NOT_READY");
  setenv("TB_OPENCL_LIB", tbt_fake("fake_opencl"), 1);
}

/* Record start and end, wait on end, and check both are done; returns the elapsed time. */
static double time_two(tb_event *start, tb_event *end) {
  TB_ASSERT_OK(tb_event_record(start));
  TB_ASSERT_OK(tb_event_record(end));
  TB_ASSERT_OK(tb_event_synchronize(end));
  bool done = false;
  TB_ASSERT_OK(tb_event_query(start, &done));
  assert_true(done);
  double ms = -1.0;
  TB_ASSERT_OK(tb_event_elapsed_ms(start, end, &ms));
  return ms;
}

/* ---- CUDA ---------------------------------------------------------------------------------------- */

static void cuda_events_are_native(void **state) {
  (void)state;
  use_cuda();
  tb_backend *b = open_backend("cuda:3");
  unsigned long long c0 = calls("fake_cuda", "cuEventCreate"), r0 = calls("fake_cuda", "cuEventRecord"),
                     s0 = calls("fake_cuda", "cuEventSynchronize"), q0 = calls("fake_cuda", "cuEventQuery"),
                     e0 = calls("fake_cuda", "cuEventElapsedTime"), d0 = calls("fake_cuda", "cuEventDestroy_v2");
  int live0 = fake_count("fake_cuda", "fake_cuda_live_events");
  tb_event *start = NULL, *end = NULL;
  TB_ASSERT_OK(tb_event_create(b, &start));
  TB_ASSERT_OK(tb_event_create(b, &end));
  assert_int_equal(calls("fake_cuda", "cuEventCreate") - c0, 2);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_events") - live0, 2);
  /* the fake counts 0.25 ms per record between the two: adjacent records are 0.25 ms apart */
  assert_true(time_two(start, end) == 0.25);
  assert_int_equal(calls("fake_cuda", "cuEventRecord") - r0, 2); /* on the backend's stream, in its context */
  assert_int_equal(calls("fake_cuda", "cuEventSynchronize") - s0, 1);
  assert_int_equal(calls("fake_cuda", "cuEventQuery") - q0, 1); /* start; end is known complete */
  assert_int_equal(calls("fake_cuda", "cuEventElapsedTime") - e0, 1);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_context_depth"), 0); /* pushed and popped */
  tb_event_destroy(start);
  tb_event_destroy(end);
  assert_int_equal(calls("fake_cuda", "cuEventDestroy_v2") - d0, 2);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_events"), live0);
  tb_backend_destroy(b);
}

static void cuda_query_is_not_ready_then_ready(void **state) {
  (void)state;
  use_cuda();
  setenv("FAKE_CUDA_EVENT", "not_ready_once", 1);
  tb_backend *b = open_backend("cuda:0");
  tb_event *start = NULL, *end = NULL;
  TB_ASSERT_OK(tb_event_create(b, &start));
  TB_ASSERT_OK(tb_event_create(b, &end));
  TB_ASSERT_OK(tb_event_record(start));
  TB_ASSERT_OK(tb_event_record(end));
  bool done = true;
  TB_ASSERT_OK(tb_event_query(end, &done)); /* 600 CUDA_ERROR_NOT_READY is not an error */
  assert_false(done);
  TB_ASSERT_OK(tb_event_query(end, &done));
  assert_true(done);
  /* start has not been seen complete: its first query says not ready, so timing is refused */
  double ms = 1.0;
  assert_int_equal(tb_event_elapsed_ms(start, end, &ms), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "the start event on cuda:0 has not completed yet");
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_event_synchronize");
  assert_true(ms == 0.0);
  TB_ASSERT_OK(tb_event_elapsed_ms(start, end, &ms)); /* now seen complete */
  assert_true(ms == 0.25);
  tb_event_destroy(start);
  tb_event_destroy(end);
  tb_backend_destroy(b);
  unsetenv("FAKE_CUDA_EVENT");
}

static void cuda_record_error_names_the_code(void **state) {
  (void)state;
  use_cuda();
  tb_backend *b = open_backend("cuda:1");
  tb_event *e = NULL;
  TB_ASSERT_OK(tb_event_create(b, &e));
  setenv("FAKE_CUDA_FAIL", "record", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(tb_event_record(e), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:1: cuEventRecord failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  /* the failed record left nothing to wait for */
  assert_int_equal(tb_event_synchronize(e), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "never recorded");
  TB_ASSERT_OK(tb_event_record(e));
  TB_ASSERT_OK(tb_event_synchronize(e));
  tb_event_destroy(e);
  tb_backend_destroy(b);
}

/* The event keeps the backend (context, stream) alive after the handle is destroyed. */
static void cuda_event_outlives_the_backend(void **state) {
  (void)state;
  use_cuda();
  int live0 = fake_count("fake_cuda", "fake_cuda_live_events");
  tb_backend *b = open_backend("cuda:0");
  tb_event *e = NULL;
  TB_ASSERT_OK(tb_event_create(b, &e));
  tb_backend_destroy(b);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_contexts"), 1);
  TB_ASSERT_OK(tb_event_record(e));
  TB_ASSERT_OK(tb_event_synchronize(e));
  tb_event_destroy(e);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_events"), live0);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_contexts"), 0);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_streams"), 0);
}

/* ---- HIP ----------------------------------------------------------------------------------------- */

static void hip_events_are_native_on_the_device(void **state) {
  (void)state;
  use_hip();
  tb_backend *b = open_backend("rocm:5");
  unsigned long long c0 = calls("fake_hip", "hipEventCreate"), r0 = calls("fake_hip", "hipEventRecord"),
                     s0 = calls("fake_hip", "hipEventSynchronize"), e0 = calls("fake_hip", "hipEventElapsedTime"),
                     d0 = calls("fake_hip", "hipEventDestroy");
  int live0 = fake_count("fake_hip", "fake_hip_live_events");
  tb_event *start = NULL, *end = NULL;
  TB_ASSERT_OK(tb_event_create(b, &start));
  TB_ASSERT_OK(tb_event_create(b, &end));
  assert_int_equal(calls("fake_hip", "hipEventCreate") - c0, 2);
  /* the fake refuses a record on another device than the event's: both ran on rocm:5 */
  assert_true(time_two(start, end) == 0.5);
  assert_int_equal(calls("fake_hip", "hipEventRecord") - r0, 2);
  assert_int_equal(calls("fake_hip", "hipEventSynchronize") - s0, 1);
  assert_int_equal(calls("fake_hip", "hipEventElapsedTime") - e0, 1);
  assert_int_equal(fake_count("fake_hip", "fake_hip_current_device"), 0); /* the thread's device put back */
  tb_event_destroy(start);
  tb_event_destroy(end);
  assert_int_equal(calls("fake_hip", "hipEventDestroy") - d0, 2);
  assert_int_equal(fake_count("fake_hip", "fake_hip_live_events"), live0);
  tb_backend_destroy(b);
}

static void hip_query_and_errors(void **state) {
  (void)state;
  use_hip();
  setenv("FAKE_HIP_EVENT", "not_ready_once", 1);
  tb_backend *b = open_backend("rocm:0");
  tb_event *e = NULL;
  TB_ASSERT_OK(tb_event_create(b, &e));
  TB_ASSERT_OK(tb_event_record(e));
  unsigned long long q0 = calls("fake_hip", "hipEventQuery");
  bool done = true;
  TB_ASSERT_OK(tb_event_query(e, &done)); /* 600 hipErrorNotReady */
  assert_false(done);
  TB_ASSERT_OK(tb_event_query(e, &done));
  assert_true(done);
  TB_ASSERT_OK(tb_event_query(e, &done)); /* known complete: no driver call */
  assert_true(done);
  assert_int_equal(calls("fake_hip", "hipEventQuery") - q0, 2);
  unsetenv("FAKE_HIP_EVENT");
  setenv("FAKE_HIP_FAIL", "record", 1);
  setenv("FAKE_HIP_FAIL_CODE", "700", 1);
  assert_int_equal(tb_event_record(e), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "rocm:0: hipEventRecord failed with 700 hipErrorIllegalAddress");
  unsetenv("FAKE_HIP_FAIL");
  unsetenv("FAKE_HIP_FAIL_CODE");
  tb_backend_destroy(b);
  tb_event_destroy(e); /* after the backend */
  assert_int_equal(fake_count("fake_hip", "fake_hip_live_events"), 0);
}

/* ---- Level Zero ---------------------------------------------------------------------------------- */

static void ze_events_signal_from_the_command_list(void **state) {
  (void)state;
  use_ze();
  tb_backend *b = open_backend("xpu:2");
  unsigned long long p0 = calls("fake_ze", "zeEventPoolCreate"), c0 = calls("fake_ze", "zeEventCreate"),
                     h0 = calls("fake_ze", "zeEventHostReset"), a0 = calls("fake_ze", "zeCommandListAppendSignalEvent"),
                     s0 = calls("fake_ze", "zeEventHostSynchronize"), q0 = calls("fake_ze", "zeEventQueryStatus");
  tb_event *start = NULL, *end = NULL;
  TB_ASSERT_OK(tb_event_create(b, &start));
  TB_ASSERT_OK(tb_event_create(b, &end));
  assert_int_equal(calls("fake_ze", "zeEventPoolCreate") - p0, 2); /* host-visible: the fake checks the flag */
  assert_int_equal(calls("fake_ze", "zeEventCreate") - c0, 2);
  assert_int_equal(fake_count("fake_ze", "fake_ze_live_event_pools"), 2);
  double ms = time_two(start, end);
  assert_true(ms >= 0.0 && ms < 1000.0); /* host time stamps */
  assert_int_equal(calls("fake_ze", "zeEventHostReset") - h0, 2);
  assert_int_equal(calls("fake_ze", "zeCommandListAppendSignalEvent") - a0, 2);
  /* each record looks once (both were complete at once), so neither synchronize nor query asked again */
  assert_int_equal(calls("fake_ze", "zeEventQueryStatus") - q0, 2);
  assert_int_equal(calls("fake_ze", "zeEventHostSynchronize") - s0, 0);
  /* recording again resets the event first: the fake refuses a second signal without a reset */
  TB_ASSERT_OK(tb_event_record(start));
  assert_int_equal(calls("fake_ze", "zeEventHostReset") - h0, 3);
  tb_event_destroy(start);
  tb_event_destroy(end);
  assert_int_equal(fake_count("fake_ze", "fake_ze_live_events"), 0);
  assert_int_equal(fake_count("fake_ze", "fake_ze_live_event_pools"), 0);
  tb_backend_destroy(b);
}

static void ze_not_ready_then_ready_and_errors(void **state) {
  (void)state;
  use_ze();
  setenv("FAKE_ZE_EVENT_NOT_READY", "2", 1); /* the look right after recording, then the caller's query */
  tb_backend *b = open_backend("xpu:0");
  tb_event *e = NULL;
  TB_ASSERT_OK(tb_event_create(b, &e));
  TB_ASSERT_OK(tb_event_record(e));
  bool done = true;
  TB_ASSERT_OK(tb_event_query(e, &done));
  assert_false(done);
  unsigned long long s0 = calls("fake_ze", "zeEventHostSynchronize");
  TB_ASSERT_OK(tb_event_synchronize(e));
  assert_int_equal(calls("fake_ze", "zeEventHostSynchronize") - s0, 1);
  TB_ASSERT_OK(tb_event_query(e, &done));
  assert_true(done);
  unsetenv("FAKE_ZE_EVENT_NOT_READY");
  setenv("FAKE_ZE_FAIL", "signal", 1);
  setenv("FAKE_ZE_FAIL_CODE", "0x70000001", 1);
  assert_int_equal(tb_event_record(e), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "xpu:0: zeCommandListAppendSignalEvent failed with 0x70000001 ZE_RESULT_ERROR_DEVICE_LOST");
  unsetenv("FAKE_ZE_FAIL");
  unsetenv("FAKE_ZE_FAIL_CODE");
  tb_backend_destroy(b);
  tb_event_destroy(e);
  assert_int_equal(fake_count("fake_ze", "fake_ze_live_events"), 0);
  assert_int_equal(fake_count("fake_ze", "fake_ze_live_event_pools"), 0);
  assert_int_equal(fake_count("fake_ze", "fake_ze_live_contexts"), 0);
}

/* ---- OpenCL markers on the fake ICD --------------------------------------------------------------- */

static int cl_calls(const char *call) {
  int (*fn)(const char *) = (int (*)(const char *))fake_symbol("fake_opencl", "fake_opencl_calls");
  return fn(call);
}

static void opencl_markers_time_with_profiling(void **state) {
  (void)state;
  use_opencl();
  setenv("TBT_FAKE_OPENCL", "profiling", 1);
  tb_backend *b = open_backend("opencl:0");
  int m0 = cl_calls("clEnqueueMarkerWithWaitList"), p0 = cl_calls("clGetEventProfilingInfo");
  tb_event *start = NULL, *end = NULL;
  TB_ASSERT_OK(tb_event_create(b, &start));
  TB_ASSERT_OK(tb_event_create(b, &end));
  assert_true(time_two(start, end) == 0.25); /* CL_PROFILING_COMMAND_END: 250000 ns per marker */
  assert_int_equal(cl_calls("clEnqueueMarkerWithWaitList") - m0, 2);
  assert_int_equal(cl_calls("clGetEventProfilingInfo") - p0, 2);
  tb_event_destroy(start);
  tb_event_destroy(end);
  tb_backend_destroy(b);
  unsetenv("TBT_FAKE_OPENCL");
}

static void opencl_not_ready_and_errors(void **state) {
  (void)state;
  use_opencl();
  setenv("TBT_FAKE_OPENCL", "profiling", 1); /* a profiling queue: recording does not wait */
  setenv("TBT_FAKE_OPENCL_NOT_READY", "1", 1);
  tb_backend *b = open_backend("opencl:1");
  tb_event *e = NULL;
  TB_ASSERT_OK(tb_event_create(b, &e));
  int w0 = cl_calls("clWaitForEvents");
  TB_ASSERT_OK(tb_event_record(e));
  bool done = true;
  TB_ASSERT_OK(tb_event_query(e, &done)); /* CL_QUEUED */
  assert_false(done);
  TB_ASSERT_OK(tb_event_query(e, &done));
  assert_true(done);
  assert_int_equal(cl_calls("clWaitForEvents") - w0, 0);
  unsetenv("TBT_FAKE_OPENCL_NOT_READY");
  /* without profiling, recording waits for its marker (host time stamps) */
  unsetenv("TBT_FAKE_OPENCL");
  TB_ASSERT_OK(tb_event_record(e));
  assert_int_equal(cl_calls("clWaitForEvents") - w0, 1);
  setenv("TBT_FAKE_OPENCL", "marker_error", 1);
  assert_int_equal(tb_event_record(e), TB_ERR_OUT_OF_MEMORY); /* as for every OpenCL call answering -5 */
  TB_ASSERT_CONTAINS(tb_last_error(), "clEnqueueMarkerWithWaitList failed with -5 CL_OUT_OF_RESOURCES");
  unsetenv("TBT_FAKE_OPENCL");
  TB_ASSERT_OK(tb_event_record(e));
  setenv("TBT_FAKE_OPENCL", "event_failed", 1);
  assert_int_equal(tb_event_query(e, &done), TB_ERR_DRIVER); /* the marker reports the error of what came before */
  TB_ASSERT_CONTAINS(tb_last_error(), "CL_EVENT_COMMAND_EXECUTION_STATUS");
  TB_ASSERT_CONTAINS(tb_last_error(), "-14");
  unsetenv("TBT_FAKE_OPENCL");
  tb_backend_destroy(b);
  tb_event_destroy(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cuda_events_are_native),
      cmocka_unit_test(cuda_query_is_not_ready_then_ready),
      cmocka_unit_test(cuda_record_error_names_the_code),
      cmocka_unit_test(cuda_event_outlives_the_backend),
      cmocka_unit_test(hip_events_are_native_on_the_device),
      cmocka_unit_test(hip_query_and_errors),
      cmocka_unit_test(ze_events_signal_from_the_command_list),
      cmocka_unit_test(ze_not_ready_then_ready_and_errors),
      cmocka_unit_test(opencl_markers_time_with_profiling),
      cmocka_unit_test(opencl_not_ready_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
