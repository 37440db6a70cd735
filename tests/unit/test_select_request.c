/* Selection by name: TB_BACKEND and explicit requests (backends, aliases, devices), the errors for
 * unknown and unavailable names, bad arguments, and the JSON rendering of a selection. */
#include <cjson/cJSON.h>
#include "select/request.h"
#include "test_select_helpers.h"

/* Two H100s, an NVIDIA GPU without a driver is not here; plus the CPU. */
static tb_device_list *two_h100(void) {
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add_h100(l, "0000:18:00.0");
  sel_add_h100(l, "0000:2a:00.0");
  return sel_finish(l);
}

static tb_device_list *no_driver(void) {
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add_nvidia_no_driver(l, "0000:3b:00.0");
  return sel_finish(l);
}

static void tb_backend_unavailable_names_the_reason(void **state) {
  (void)state;
  tb_device_list *l = no_driver();
  setenv("TB_BACKEND", "cuda", 1);
  tb_selection *sel = (tb_selection *)1;
  assert_int_equal(tb_select(l, NULL, &sel), TB_ERR_UNAVAILABLE);
  assert_null(sel);
  const char *msg = tb_last_error();
  TB_ASSERT_CONTAINS(msg, "TB_BACKEND=cuda requested, but CUDA is unavailable: ");
  TB_ASSERT_CONTAINS(msg, "NVIDIA GPU at 0000:3b:00.0 present but libcuda.so.1 not found in the loader path");
  TB_ASSERT_CONTAINS(msg, "fix: install the NVIDIA driver (nvidia-driver package) or set TB_CUDA_LIB");
  /* An explicit argument says so instead of naming TB_BACKEND; no silent fallback to the CPU. */
  assert_int_equal(tb_select(l, "nvidia", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "request 'nvidia' requested, but CUDA is unavailable");
  tb_device_list_destroy(l);
}

static void unavailable_without_devices_uses_report(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  tb_report_set(l, TB_BACKEND_ROCM, "install ROCm (amdgpu-dkms and rocm-hip-runtime)", "no AMD GPU in /sys/class/kfd");
  sel_finish(l);
  tb_selection *sel = NULL;
  assert_int_equal(tb_select(l, "AMD", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "ROCm is unavailable: no AMD GPU in /sys/class/kfd; fix: install ROCm");
  assert_int_equal(tb_select(l, "tpu", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "TPU is unavailable: it was not probed");
  tb_device_list_destroy(l);
}

static void tb_backend_any_case_when_available(void **state) {
  (void)state;
  tb_device_list *l = two_h100();
  setenv("TB_BACKEND", "CuDa", 1);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  assert_string_equal(tb_selection_source(sel), "TB_BACKEND");
  assert_string_equal(tb_selection_request(sel), "CuDa");
  /* Only the named backend's devices are candidates. */
  assert_int_equal(tb_selection_candidate_count(sel), 2);
  TB_ASSERT_CONTAINS(tb_selection_explain(sel), "selected cuda:0 (NVIDIA H100 80GB HBM3, Hopper) from request 'CuDa' (TB_BACKEND)\n");
  tb_selection_destroy(sel);
  /* An explicit argument wins over TB_BACKEND. */
  sel = sel_select_ok(l, "cpu");
  assert_string_equal(tb_selection_device(sel)->device, "cpu:0");
  assert_string_equal(tb_selection_source(sel), "argument");
  tb_selection_destroy(sel);
  /* Surrounding white space is ignored. */
  setenv("TB_BACKEND", " nvidia ", 1);
  sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void tb_backend_unknown_lists_names(void **state) {
  (void)state;
  tb_device_list *l = two_h100();
  setenv("TB_BACKEND", "warp", 1);
  tb_selection *sel = (tb_selection *)1;
  assert_int_equal(tb_select(l, NULL, &sel), TB_ERR_NOT_FOUND);
  assert_null(sel);
  TB_ASSERT_CONTAINS(tb_last_error(), "TB_BACKEND=warp is not a backend; valid names are auto, cpu, cuda (nvidia), rocm (amd, hip)");
  TB_ASSERT_CONTAINS(tb_last_error(), "vulkan, opencl, or one device such as cuda:0");
  assert_int_equal(tb_select(l, "metal", &sel), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "'metal' is not a backend; valid names are auto");
  tb_device_list_destroy(l);
}

static void tb_backend_empty_is_unset(void **state) {
  (void)state;
  tb_device_list *l = two_h100();
  setenv("TB_BACKEND", "", 1);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_source(sel), "default");
  assert_string_equal(tb_selection_request(sel), "auto");
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  tb_selection_destroy(sel);
  setenv("TB_BACKEND", "   ", 1);
  sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_source(sel), "default");
  tb_selection_destroy(sel);
  setenv("TB_BACKEND", "AUTO", 1);
  sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_source(sel), "TB_BACKEND");
  assert_int_equal(tb_selection_candidate_count(sel), 3);
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

/* The public view of the request tb_select and tb_backend_create read: the text and where it comes from. */
static void request_effective_names_the_source(void **state) {
  (void)state;
  const char *text = NULL;
  assert_int_equal(tb_request_effective(NULL, &text), TB_REQUEST_DEFAULT);
  assert_string_equal(text, "auto");
  setenv("TB_BACKEND", "nvidia", 1);
  assert_int_equal(tb_request_effective(NULL, &text), TB_REQUEST_ENVIRONMENT);
  assert_string_equal(text, "nvidia");
  /* the argument (the tool's --backend) wins over TB_BACKEND */
  assert_int_equal(tb_request_effective("cpu", &text), TB_REQUEST_ARGUMENT);
  assert_string_equal(text, "cpu");
  assert_int_equal(tb_request_effective("cpu", NULL), TB_REQUEST_ARGUMENT);
  /* white space only: still TB_BACKEND's text, which selects as the default */
  setenv("TB_BACKEND", " \t", 1);
  assert_int_equal(tb_request_effective(NULL, &text), TB_REQUEST_ENVIRONMENT);
  assert_string_equal(text, " \t");
  setenv("TB_BACKEND", "", 1);
  assert_int_equal(tb_request_effective(NULL, &text), TB_REQUEST_DEFAULT);
  assert_string_equal(text, "auto");
}

/* One parse gives discovery its probe mask: only the named backend, all for auto and for other names. */
static void parsed_request_probe_mask(void **state) {
  (void)state;
  static const struct {
    const char *request;
    uint32_t mask;
  } cases[] = {
      {"cpu", 1u << TB_BACKEND_CPU},     {" Nvidia:1 ", 1u << TB_BACKEND_CUDA}, {"hip", 1u << TB_BACKEND_ROCM},
      {"level_zero:0", 1u << TB_BACKEND_XPU}, {"auto", 0},                  {"pci:0000:3b:00.0", 0},
      {"bogus", 0},                     {"", 0},
  };
  tb_request_spec spec;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_clear_error();
    tb_request_parse(cases[i].request, &spec);
    assert_int_equal(spec.source, TB_REQUEST_ARGUMENT);
    assert_int_equal(tb_request_probe_mask(&spec), cases[i].mask);
    assert_string_equal(tb_last_error(), ""); /* parsing sets no error: resolving names the problem */
  }
  tb_request_parse("cuda:7", &spec);
  assert_string_equal(spec.name, "cuda:7");
  assert_string_equal(spec.index, "7");
  assert_true(spec.names_backend);
  setenv("TB_BACKEND", "amd", 1);
  tb_request_parse(NULL, &spec);
  assert_int_equal(spec.source, TB_REQUEST_ENVIRONMENT);
  assert_string_equal(tb_request_source_name(spec.source), "TB_BACKEND");
  assert_int_equal(tb_request_probe_mask(&spec), 1u << TB_BACKEND_ROCM);
  setenv("TB_BACKEND", "  ", 1);
  tb_request_parse(NULL, &spec);
  assert_int_equal(spec.origin, TB_REQUEST_ENVIRONMENT);
  assert_int_equal(spec.source, TB_REQUEST_DEFAULT);
  assert_string_equal(spec.text, "auto");
  assert_true(spec.is_auto);
  assert_int_equal(tb_request_probe_mask(&spec), 0);
}

static void device_requests(void **state) {
  (void)state;
  tb_device_list *l = two_h100();
  tb_selection *sel = sel_select_ok(l, "cuda:1");
  assert_string_equal(tb_selection_device(sel)->device, "cuda:1");
  const tb_candidate *c0 = tb_selection_candidate(sel, 0), *c1 = tb_selection_candidate(sel, 1);
  assert_string_equal(c0->device->device, "cuda:1");
  assert_int_equal(c0->rank, 1);
  assert_true(c0->chosen);
  assert_string_equal(c0->verdict, "chosen: requested by name");
  assert_string_equal(c1->device->device, "cuda:0");
  assert_int_equal(c1->rank, 2);
  assert_false(c1->chosen);
  assert_string_equal(c1->verdict, "usable, not requested (the request named cuda:1)");
  tb_selection_destroy(sel);
  sel = sel_select_ok(l, "NVIDIA:1");
  assert_string_equal(tb_selection_device(sel)->device, "cuda:1");
  tb_selection_destroy(sel);
  sel = sel_select_ok(l, "cpu:0");
  assert_string_equal(tb_selection_device(sel)->device, "cpu:0");
  tb_selection_destroy(sel);

  assert_int_equal(tb_select(l, "cuda:7", &sel), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "request cuda:7: no device cuda:7; cuda has only cuda:0, cuda:1");
  /* A device of a backend that has none: why the backend is unavailable. */
  assert_int_equal(tb_select(l, "rocm:0", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "request 'rocm:0' requested, but ROCm is unavailable: it was not probed");
  static const char *const malformed[] = {"cuda:x", "cuda:", "cuda:-1", "cuda:1x", "cuda:99999999999"};
  for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
    assert_int_equal(tb_select(l, malformed[i], &sel), TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(tb_last_error(), "the index after ':' must be a number >= 0, as in cuda:0");
  }
  setenv("TB_BACKEND", "cuda:x", 1);
  assert_int_equal(tb_select(l, NULL, &sel), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "TB_BACKEND=cuda:x: the index");
  assert_int_equal(tb_select(l, "auto:0", &sel), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "auto takes no device index");
  assert_int_equal(tb_select(l, "warp:0", &sel), TB_ERR_NOT_FOUND);
  assert_int_equal(tb_select(l, "", &sel), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "an empty backend request");
  char long_name[300];
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  assert_int_equal(tb_select(l, long_name, &sel), TB_ERR_NOT_FOUND);
  tb_device_list_destroy(l);
}

static void unusable_device_request(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add_h100(l, "0000:18:00.0");
  tb_device_info *bad = sel_add_h100(l, "0000:2a:00.0");
  tb_dev_unusable(l, bad, "reset the GPU with nvidia-smi -r or reboot", "cuDeviceGet(1) returned CUDA_ERROR_ECC_UNCORRECTABLE (214)");
  sel_add_nvidia_no_driver(l, "0000:3b:00.0");
  sel_finish(l);
  tb_selection *sel = NULL;
  assert_int_equal(tb_select(l, "cuda:1", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "request 'cuda:1' requested, but cuda:1 (NVIDIA H100 80GB HBM3) is not usable: "
                                      "cuDeviceGet(1) returned CUDA_ERROR_ECC_UNCORRECTABLE (214); fix: reset the GPU");
  assert_int_equal(tb_select(l, "pci:0000:3b:00.0", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "libcuda.so.1 not found");
  /* The backend as a whole is usable: cuda:0 is chosen; the others are listed as rejected. */
  sel = sel_select_ok(l, "cuda");
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  assert_int_equal(tb_selection_candidate_count(sel), 3);
  assert_string_equal(sel_candidate(sel, "cuda:1")->verdict,
                      "rejected: cuDeviceGet(1) returned CUDA_ERROR_ECC_UNCORRECTABLE (214)");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void null_arguments(void **state) {
  (void)state;
  tb_device_list *l = two_h100();
  tb_selection *sel = (tb_selection *)1;
  assert_int_equal(tb_select(NULL, "auto", &sel), TB_ERR_INVALID_ARGUMENT);
  assert_null(sel);
  TB_ASSERT_CONTAINS(tb_last_error(), "list must not be NULL");
  assert_int_equal(tb_select(l, "auto", NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "out_selection must not be NULL");
  tb_selection_destroy(NULL);
  assert_null(tb_selection_device(NULL));
  assert_string_equal(tb_selection_source(NULL), "");
  assert_string_equal(tb_selection_request(NULL), "");
  assert_string_equal(tb_selection_explain(NULL), "");
  assert_int_equal(tb_selection_candidate_count(NULL), 0);
  assert_null(tb_selection_candidate(NULL, 0));
  char *json = NULL;
  assert_int_equal(tb_selection_to_json(NULL, &json), TB_ERR_INVALID_ARGUMENT);
  sel = sel_select_ok(l, "auto");
  assert_null(tb_selection_candidate(sel, 3));
  assert_int_equal(tb_selection_to_json(sel, NULL), TB_ERR_INVALID_ARGUMENT);
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void json_rendering(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add_h100(l, "0000:18:00.0");
  sel_add(l, TB_BACKEND_VULKAN, "NVIDIA H100 80GB HBM3", "NVIDIA", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 80, 0, "0000:18:00.0");
  sel_add_nvidia_no_driver(l, "0000:3b:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  char *json = NULL;
  TB_ASSERT_OK(tb_selection_to_json(sel, &json));
  cJSON *root = cJSON_Parse(json);
  assert_non_null(root);
  assert_string_equal(cJSON_GetObjectItem(root, "request")->valuestring, "auto");
  assert_string_equal(cJSON_GetObjectItem(root, "source")->valuestring, "default");
  cJSON *selected = cJSON_GetObjectItem(root, "selected");
  assert_string_equal(cJSON_GetObjectItem(selected, "device")->valuestring, "cuda:0");
  assert_string_equal(cJSON_GetObjectItem(selected, "architecture")->valuestring, "Hopper");
  SEL_ASSERT_NEAR(cJSON_GetObjectItem(selected, "memory_total_bytes")->valuedouble, 80.0 * (double)GIB, 1.0);
  cJSON *cands = cJSON_GetObjectItem(root, "candidates");
  assert_int_equal(cJSON_GetArraySize(cands), 4);
  static const struct { const char *device; int rank; bool chosen; const char *outcome; } want[] = {
      {"cuda:0", 1, true, "chosen"},
      {"cpu:0", 2, false, "ranked"},
      {"vulkan:0", 0, false, "same_hardware"},
      {"pci:0000:3b:00.0", 0, false, "unusable"}};
  for (int i = 0; i < 4; i++) {
    cJSON *c = cJSON_GetArrayItem(cands, i);
    assert_string_equal(cJSON_GetObjectItem(c, "device")->valuestring, want[i].device);
    assert_int_equal(cJSON_GetObjectItem(c, "rank")->valueint, want[i].rank);
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(c, "chosen")), want[i].chosen);
    assert_string_equal(cJSON_GetObjectItem(c, "outcome")->valuestring, want[i].outcome);
    assert_string_equal(cJSON_GetObjectItem(c, "verdict")->valuestring, tb_selection_candidate(sel, (size_t)i)->verdict);
  }
  assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(cands, 3), "usable")));
  assert_string_equal(cJSON_GetObjectItem(root, "explanation")->valuestring, tb_selection_explain(sel));
  cJSON_Delete(root);
  tb_free(json);
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(tb_backend_unavailable_names_the_reason, tbt_setup_clean_env),
      cmocka_unit_test_setup(unavailable_without_devices_uses_report, tbt_setup_clean_env),
      cmocka_unit_test_setup(tb_backend_any_case_when_available, tbt_setup_clean_env),
      cmocka_unit_test_setup(tb_backend_unknown_lists_names, tbt_setup_clean_env),
      cmocka_unit_test_setup(tb_backend_empty_is_unset, tbt_setup_clean_env),
      cmocka_unit_test_setup(request_effective_names_the_source, tbt_setup_clean_env),
      cmocka_unit_test_setup(parsed_request_probe_mask, tbt_setup_clean_env),
      cmocka_unit_test_setup(device_requests, tbt_setup_clean_env),
      cmocka_unit_test_setup(unusable_device_request, tbt_setup_clean_env),
      cmocka_unit_test_setup(null_arguments, tbt_setup_clean_env),
      cmocka_unit_test_setup(json_rendering, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
