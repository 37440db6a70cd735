/* Discovery and backend creation any number of times in one process, from several threads at once, with
 * the fake vendor runtimes loaded. Each fake aborts when its constructor runs a second time in the process
 * (tests/fakes/fake_once.h), as HIP does for real ("LLVM ERROR: Option registered more than once"), so a
 * runtime unloaded and loaded again ends the test. Also: a vendor runtime is not opened at all when
 * nothing on the PCI bus or in sysfs can use it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tensorbridge/backend.h>
#include "core/dl.h"
#include "test_util.h"

#define ROUNDS 12
#define THREADS 4
#define THREAD_ROUNDS 6

typedef struct vendor_case {
  const char *fixture, *device, *lib_var, *fake, *lib_var2, *fake2, *mark, *mark2;
  tb_backend_kind kind;
  size_t count; /* devices of `kind` the fixture and the fake show */
} vendor_case;

static const vendor_case vendors[] = {
    {"h100x8", "cuda:1", "TB_CUDA_LIB", "fake_cuda", "TB_NVML_LIB", "fake_nvml", "FAKE_LOADED_CUDA", "FAKE_LOADED_NVML",
     TB_BACKEND_CUDA, 8},
    {"mi300x", "rocm:2", "TB_HIP_LIB", "fake_hip", "TB_ROCM_SMI_LIB", "fake_rocm_smi", "FAKE_LOADED_HIP",
     "FAKE_LOADED_ROCM_SMI", TB_BACKEND_ROCM, 8},
    {"intel_max", "xpu:3", "TB_ZE_LIB", "fake_ze", NULL, NULL, "FAKE_LOADED_ZE", NULL, TB_BACKEND_XPU, 4},
};

/* The fixture, the vendor's fakes, and the fake OpenCL and Vulkan loaders (which are opened on every
 * machine: they are generic). */
static void use_vendor(const vendor_case *v) {
  tbt_clear_env();
  tbt_no_vendor_libs();
  unsetenv("FAKE_ZE_MODE");
  unsetenv("TBT_FAKE_OPENCL");
  setenv("FAKE_ZE_DEVICES", "max4", 1);
  tbt_use_fixture(v->fixture);
  setenv(v->lib_var, tbt_fake(v->fake), 1);
  if (v->lib_var2) setenv(v->lib_var2, tbt_fake(v->fake2), 1);
  setenv("TB_OPENCL_LIB", tbt_fake("fake_opencl"), 1);
  setenv("TB_VULKAN_LIB", tbt_fake("fake_vulkan"), 1);
}

/* This process's id when the fake's constructor ran in it (fake_once.h), "" when it never did. */
static const char *loaded_here(const char *mark, char *pid, size_t cap) {
  snprintf(pid, cap, "%ld", (long)getpid());
  const char *v = getenv(mark);
  return v && strcmp(v, pid) == 0 ? pid : "";
}

static bool fake_is_loaded(const char *fake) {
  void *h = dlopen(tbt_fake(fake), RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return false;
  dlclose(h); /* drops the reference RTLD_NOLOAD took; the library stays loaded */
  return true;
}

/* One round: every backend discovered, the vendor's device and the OpenCL device opened and closed.
 * Returns NULL on success, else what went wrong (static text; the threads cannot use cmocka's asserts). */
static const char *one_round(const vendor_case *v) {
  tb_device_list *list = NULL;
  if (tb_discover(NULL, &list) != TB_OK) return "tb_discover failed";
  size_t n = tbt_count(list, v->kind), cl = tbt_count(list, TB_BACKEND_OPENCL), vk = tbt_count(list, TB_BACKEND_VULKAN);
  tb_device_list_destroy(list);
  if (n != v->count) return "the vendor's device count changed";
  if (cl != 5) return "the fake OpenCL loader's 5 devices were not all listed";
  if (vk != 3) return "the fake Vulkan loader's 3 devices were not all listed";
  tb_backend *b = NULL;
  if (tb_backend_create(v->device, &b) != TB_OK) return "the vendor backend could not be created";
  tb_backend_destroy(b);
  b = NULL;
  if (tb_backend_create("opencl:0", &b) != TB_OK) return "the OpenCL backend could not be created";
  tb_backend_destroy(b);
  return NULL;
}

/* The vendor runtimes are not opened (not even loaded) on machines without their hardware. Runs first,
 * while nothing is loaded yet: h100x8 has no AMD and no Intel GPU, mi300x no NVIDIA GPU and no NVIDIA
 * driver. */
static void runtimes_not_opened_without_hardware(void **state) {
  (void)state;
  use_vendor(&vendors[0]);
  setenv("TB_HIP_LIB", tbt_fake("fake_hip"), 1);
  setenv("TB_ROCM_SMI_LIB", tbt_fake("fake_rocm_smi"), 1);
  setenv("TB_ZE_LIB", tbt_fake("fake_ze"), 1);
  tb_device_list *list = tbt_discover((1u << TB_BACKEND_ROCM) | (1u << TB_BACKEND_XPU));
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 0);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 0);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_ROCM), "dlopen libamdhip64.so",
                             "not opened: no AMD GPU in the KFD topology or on the PCI bus"));
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_XPU), "dlopen libze_loader",
                             "not opened: no Intel display function on the PCI bus"));
  tb_device_list_destroy(list);
  assert_false(fake_is_loaded("fake_hip"));
  assert_false(fake_is_loaded("fake_rocm_smi"));
  assert_false(fake_is_loaded("fake_ze"));

  use_vendor(&vendors[1]);
  setenv("TB_CUDA_LIB", tbt_fake("fake_cuda"), 1);
  setenv("TB_NVML_LIB", tbt_fake("fake_nvml"), 1);
  list = tbt_discover(1u << TB_BACKEND_CUDA);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_true(tbt_report_has(r, "dlopen libcuda", "not opened: no NVIDIA function on the PCI bus and no /proc/driver/nvidia"));
  assert_string_equal(r->summary, "no NVIDIA GPU found: no NVIDIA display, 3D or accelerator function on the PCI bus, "
                                  "and no NVIDIA kernel driver (/proc/driver/nvidia)");
  assert_string_equal(r->fix, "");
  tb_device_list_destroy(list);
  assert_false(fake_is_loaded("fake_cuda"));
  assert_false(fake_is_loaded("fake_nvml"));
}

/* Discovery and backend creation in a loop: each runtime's constructor runs once, and no handle is
 * opened again after the first round (core/dl.c returns the one it keeps). */
static void discovery_and_backends_in_a_loop(void **state) {
  (void)state;
  char pid[24];
  for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++) {
    const vendor_case *v = &vendors[i];
    use_vendor(v);
    const char *why = one_round(v);
    if (why) fail_msg("%s, round 1: %s: %s", v->fixture, why, tb_last_error());
    size_t kept = tb_dl_kept_count();
    for (int round = 2; round <= ROUNDS; round++) {
      why = one_round(v);
      if (why) fail_msg("%s, round %d: %s: %s", v->fixture, round, why, tb_last_error());
    }
    assert_int_equal(tb_dl_kept_count(), kept);
    assert_string_equal(loaded_here(v->mark, pid, sizeof pid), pid);
    if (v->mark2) assert_string_equal(loaded_here(v->mark2, pid, sizeof pid), pid);
  }
  assert_string_equal(loaded_here("FAKE_LOADED_OPENCL", pid, sizeof pid), pid);
  assert_string_equal(loaded_here("FAKE_LOADED_VULKAN", pid, sizeof pid), pid);
}

typedef struct worker {
  pthread_t thread;
  const vendor_case *vendor;
  const char *failure;
  int round;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (w->round = 1; w->round <= THREAD_ROUNDS && !w->failure; w->round++) w->failure = one_round(w->vendor);
  return NULL;
}

/* The same from several threads at once, on each vendor's machine in turn. */
static void discovery_and_backends_from_threads(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++) {
    use_vendor(&vendors[i]);
    worker workers[THREADS] = {{0}};
    for (int t = 0; t < THREADS; t++) {
      workers[t].vendor = &vendors[i];
      assert_int_equal(pthread_create(&workers[t].thread, NULL, work, &workers[t]), 0);
    }
    for (int t = 0; t < THREADS; t++) assert_int_equal(pthread_join(workers[t].thread, NULL), 0);
    for (int t = 0; t < THREADS; t++)
      if (workers[t].failure) fail_msg("%s, thread %d, round %d: %s", vendors[i].fixture, t, workers[t].round - 1, workers[t].failure);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runtimes_not_opened_without_hardware),
      cmocka_unit_test(discovery_and_backends_in_a_loop),
      cmocka_unit_test(discovery_and_backends_from_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
