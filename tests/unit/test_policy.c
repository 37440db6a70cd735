/* Policies derived from a device: optimization level names, configuration presets, the AMP policy,
 * and the ONNX Runtime execution providers for a request. Devices are built by hand. */
#include "test_select_helpers.h"

typedef struct machine {
  tb_device_list *list;
  const tb_device_info *h100, *v100, *t4, *mi300x, *pvc, *tpu, *zen5, *spr, *old_cpu, *lavapipe, *radv, *dead;
} machine;

static machine m;

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  tb_device_list *l = tb_devlist_new();
  const tb_dtype_set base = TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_I8) | TB_DTYPE_BIT(TB_DTYPE_I32);
  const tb_dtype_set f16 = TB_DTYPE_BIT(TB_DTYPE_F16), bf16 = TB_DTYPE_BIT(TB_DTYPE_BF16);
  m.h100 = sel_add_h100(l, "0000:18:00.0");
  tb_device_info *d = sel_add(l, TB_BACKEND_CUDA, "Tesla V100-SXM2-16GB", "NVIDIA", "Volta", TB_DEVICE_DISCRETE_GPU, 7, 0, 16, 80, "0000:19:00.0");
  d->dtypes = base | f16;
  d->features = TB_FEATURE_BIT(TB_FEATURE_TENSOR_CORES);
  m.v100 = d;
  d = sel_add(l, TB_BACKEND_CUDA, "Tesla T4", "NVIDIA", "Turing", TB_DEVICE_DISCRETE_GPU, 7, 5, 16, 40, "0000:1a:00.0");
  d->dtypes = base | f16;
  d->features = TB_FEATURE_BIT(TB_FEATURE_TENSOR_CORES);
  m.t4 = d;
  d = sel_add(l, TB_BACKEND_ROCM, "AMD Instinct MI300X", "AMD", "CDNA3", TB_DEVICE_DISCRETE_GPU, 9, 4, 192, 304, "0000:0c:00.0");
  d->dtypes = base | f16 | bf16;
  d->features = TB_FEATURE_BIT(TB_FEATURE_MATRIX_CORES);
  m.mi300x = d;
  d = sel_add(l, TB_BACKEND_XPU, "Intel(R) Data Center GPU Max 1550", "Intel", "Xe-HPC", TB_DEVICE_DISCRETE_GPU, 0, 0, 128, 1024, "0000:29:00.0");
  d->dtypes = base | f16 | bf16;
  d->features = TB_FEATURE_BIT(TB_FEATURE_XMX);
  m.pvc = d;
  d = sel_add(l, TB_BACKEND_TPU, "TPU v5 lite", "Google", "TPU v5e", TB_DEVICE_TPU, 0, 0, 16, 1, "0000:00:04.0");
  d->dtypes = base | bf16;
  d->features = TB_FEATURE_BIT(TB_FEATURE_MXU);
  m.tpu = d;
  m.zen5 = sel_add_cpu(l);
  d = sel_add(l, TB_BACKEND_CPU, "Intel(R) Xeon(R) Platinum 8480+", "Intel", "Sapphire Rapids", TB_DEVICE_CPU, 0, 0, 512, 112, NULL);
  d->dtypes = base | bf16 | f16;
  d->features = TB_FEATURE_BIT(TB_FEATURE_AVX512BF16) | TB_FEATURE_BIT(TB_FEATURE_AMX_TILE) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16) |
                TB_FEATURE_BIT(TB_FEATURE_AVX512FP16);
  m.spr = d;
  d = sel_add(l, TB_BACKEND_CPU, "Intel(R) Core(TM) i7-8700", "Intel", "Coffee Lake", TB_DEVICE_CPU, 0, 0, 32, 12, NULL);
  d->dtypes = base;
  d->features = TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA);
  m.old_cpu = d;
  d = sel_add(l, TB_BACKEND_VULKAN, "llvmpipe (LLVM 15.0.6, 256 bits)", "Mesa", "", TB_DEVICE_CPU, 0, 0, 16, 0, NULL);
  d->dtypes = base | f16;
  m.lavapipe = d;
  d = sel_add(l, TB_BACKEND_VULKAN, "AMD Radeon RX 6600 (RADV NAVI23)", "AMD", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 8, 28, "0000:05:00.0");
  d->dtypes = base | f16;
  m.radv = d;
  d = sel_add(l, TB_BACKEND_CUDA, "NVIDIA A100-SXM4-40GB", "NVIDIA", "Ampere", TB_DEVICE_DISCRETE_GPU, 8, 0, 40, 108, "0000:1b:00.0");
  d->dtypes = base | f16 | bf16;
  tb_dev_unusable(l, d, "reboot", "cuDeviceGet returned CUDA_ERROR_ECC_UNCORRECTABLE (214)");
  m.dead = d;
  m.list = sel_finish(l);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_device_list_destroy(m.list);
  return 0;
}

static void opt_levels(void **state) {
  (void)state;
  static const struct { const char *name; tb_opt_level level; } ok[] = {
      {"O0", TB_LEVEL_O0}, {"o1", TB_LEVEL_O1}, {"2", TB_LEVEL_O2}, {"O3", TB_LEVEL_O3}, {"none", TB_LEVEL_O0},
      {"Conservative", TB_LEVEL_O1}, {"BALANCED", TB_LEVEL_O2}, {"aggressive", TB_LEVEL_O3}, {"0", TB_LEVEL_O0}, {"3", TB_LEVEL_O3}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    tb_opt_level level = (tb_opt_level)-1;
    TB_ASSERT_OK(tb_opt_level_parse(ok[i].name, &level));
    assert_int_equal(level, ok[i].level);
  }
  static const char *const bad[] = {"O4", "4", "-1", "", "O", "fast", "O01", " O1", "00"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tb_opt_level level = TB_LEVEL_O2;
    assert_int_equal(tb_opt_level_parse(bad[i], &level), TB_ERR_NOT_FOUND);
    assert_int_equal(level, TB_LEVEL_O2);
    TB_ASSERT_CONTAINS(tb_last_error(), "valid levels are O0 (none), O1 (conservative), O2 (balanced), O3 (aggressive)");
  }
  tb_opt_level level;
  assert_int_equal(tb_opt_level_parse(NULL, &level), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_opt_level_parse("O1", NULL), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_opt_level_name(TB_LEVEL_O2), "O2");
  assert_string_equal(tb_opt_level_name((tb_opt_level)9), "?");
}

static void preset_names(void **state) {
  (void)state;
  tb_preset p;
  TB_ASSERT_OK(tb_preset_parse("Training", &p));
  assert_int_equal(p, TB_PRESET_TRAINING);
  TB_ASSERT_OK(tb_preset_parse("inference", &p));
  assert_int_equal(p, TB_PRESET_INFERENCE);
  TB_ASSERT_OK(tb_preset_parse("DEV", &p));
  assert_int_equal(p, TB_PRESET_DEVELOPMENT);
  assert_int_equal(tb_preset_parse("production", &p), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "valid presets are training (train), inference (infer), development (dev)");
  assert_int_equal(tb_preset_parse(NULL, &p), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_preset_name(TB_PRESET_INFERENCE), "inference");
  assert_string_equal(tb_preset_name((tb_preset)7), "?");
}

static tb_config config_for(tb_preset preset, const tb_device_info *d) {
  tb_config c = {.size = sizeof c};
  TB_ASSERT_OK(tb_config_for_preset(preset, d, &c));
  assert_int_equal(c.size, sizeof c);
  assert_int_equal(c.preset, preset);
  assert_non_null(c.rationale);
  return c;
}

static void presets(void **state) {
  (void)state;
  tb_config c = config_for(TB_PRESET_TRAINING, m.h100);
  assert_int_equal(c.level, TB_LEVEL_O1);
  assert_int_equal(c.precision, TB_DTYPE_BF16);
  assert_false(c.deterministic);
  assert_false(c.validate);
  SEL_ASSERT_NEAR(c.memory_fraction, 0.9, 1e-12);
  TB_ASSERT_CONTAINS(c.rationale, "bf16 because the device does bf16 arithmetic");
  c = config_for(TB_PRESET_TRAINING, m.v100);
  assert_int_equal(c.precision, TB_DTYPE_F32);
  TB_ASSERT_CONTAINS(c.rationale, "f32 because the device has no bf16 arithmetic");
  c = config_for(TB_PRESET_TRAINING, m.zen5);
  assert_int_equal(c.precision, TB_DTYPE_BF16);

  /* Inference: O3 with bf16 matrix units, else O2; precision from the AMP policy. */
  static const struct { const tb_device_info *const *d; tb_opt_level level; tb_dtype precision; } inf[] = {
      {&m.h100, TB_LEVEL_O3, TB_DTYPE_BF16},  {&m.mi300x, TB_LEVEL_O3, TB_DTYPE_BF16}, {&m.pvc, TB_LEVEL_O3, TB_DTYPE_BF16},
      {&m.tpu, TB_LEVEL_O3, TB_DTYPE_BF16},   {&m.spr, TB_LEVEL_O3, TB_DTYPE_BF16},    {&m.v100, TB_LEVEL_O2, TB_DTYPE_F16},
      {&m.zen5, TB_LEVEL_O2, TB_DTYPE_BF16},  {&m.old_cpu, TB_LEVEL_O2, TB_DTYPE_F32}, {&m.radv, TB_LEVEL_O2, TB_DTYPE_F16}};
  for (size_t i = 0; i < sizeof inf / sizeof inf[0]; i++) {
    c = config_for(TB_PRESET_INFERENCE, *inf[i].d);
    if (c.level != inf[i].level || c.precision != inf[i].precision)
      fail_msg("%s: got %s/%s, want %s/%s", (*inf[i].d)->name, tb_opt_level_name(c.level), tb_dtype_name(c.precision),
               tb_opt_level_name(inf[i].level), tb_dtype_name(inf[i].precision));
    assert_int_equal(c.validate, inf[i].level == TB_LEVEL_O3);
    SEL_ASSERT_NEAR(c.memory_fraction, 0.9, 1e-12);
    TB_ASSERT_CONTAINS(c.rationale, inf[i].level == TB_LEVEL_O3 ? "O3 because the device has bf16 matrix units"
                                                                 : "O2 (fast kernels, f32 numerics kept)");
  }

  c = config_for(TB_PRESET_DEVELOPMENT, m.h100);
  assert_int_equal(c.level, TB_LEVEL_O0);
  assert_int_equal(c.precision, TB_DTYPE_F32);
  assert_true(c.deterministic);
  assert_true(c.validate);
  SEL_ASSERT_NEAR(c.memory_fraction, 0.5, 1e-12);
  TB_ASSERT_CONTAINS(c.rationale, "reproducible");

  /* Bad input. */
  tb_config small = {.size = sizeof small - 1};
  assert_int_equal(tb_config_for_preset(TB_PRESET_TRAINING, m.h100, &small), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "set it to sizeof(tb_config)");
  tb_config ok = {.size = sizeof ok};
  assert_int_equal(tb_config_for_preset((tb_preset)5, m.h100, &ok), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_config_for_preset(TB_PRESET_TRAINING, NULL, &ok), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_config_for_preset(TB_PRESET_TRAINING, m.h100, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_config_for_preset(TB_PRESET_INFERENCE, m.dead, &ok), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_ECC_UNCORRECTABLE");
}

static tb_amp_policy amp_for(const tb_device_info *d) {
  tb_amp_policy p = {.size = sizeof p};
  TB_ASSERT_OK(tb_amp_policy_for_device(d, &p));
  assert_int_equal(p.size, sizeof p);
  assert_non_null(p.reason);
  return p;
}

static void amp_policy(void **state) {
  (void)state;
  static const struct { const tb_device_info *const *d; bool enabled; tb_dtype dtype; bool scaler; const char *why; } cases[] = {
      {&m.h100, true, TB_DTYPE_BF16, false, "bf16 autocast: the device does bf16 arithmetic"},
      {&m.mi300x, true, TB_DTYPE_BF16, false, "no gradient scaler is needed"},
      {&m.pvc, true, TB_DTYPE_BF16, false, "bf16"},
      {&m.tpu, true, TB_DTYPE_BF16, false, "bf16"},
      {&m.v100, true, TB_DTYPE_F16, true, "fp16 autocast with a gradient scaler"},
      {&m.t4, true, TB_DTYPE_F16, true, "loss scaling"},
      {&m.radv, true, TB_DTYPE_F16, true, "fp16"},
      {&m.zen5, true, TB_DTYPE_BF16, false, "this CPU does bf16 arithmetic (AVX512-BF16 or AMX-BF16)"},
      {&m.spr, true, TB_DTYPE_BF16, false, "AMX-BF16"},
      {&m.old_cpu, false, TB_DTYPE_F32, false, "autocast off (f32): this CPU has neither AVX512-BF16 nor AMX-BF16"},
      {&m.lavapipe, false, TB_DTYPE_F32, false, "autocast off"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_amp_policy p = amp_for(*cases[i].d);
    if (p.enabled != cases[i].enabled || p.dtype != cases[i].dtype || p.use_grad_scaler != cases[i].scaler)
      fail_msg("%s: got enabled=%d %s scaler=%d", (*cases[i].d)->name, p.enabled, tb_dtype_name(p.dtype), p.use_grad_scaler);
    TB_ASSERT_CONTAINS(p.reason, cases[i].why);
  }
  tb_amp_policy p = {.size = sizeof p};
  assert_int_equal(tb_amp_policy_for_device(m.dead, &p), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "no AMP policy for cuda:");
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_ECC_UNCORRECTABLE (214)");
  assert_int_equal(tb_amp_policy_for_device(NULL, &p), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_amp_policy_for_device(m.h100, NULL), TB_ERR_INVALID_ARGUMENT);
  p.size = 0;
  assert_int_equal(tb_amp_policy_for_device(m.h100, &p), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "sizeof(tb_amp_policy)");
}

#define ORT_TRT "TensorrtExecutionProvider"
#define ORT_CUDA "CUDAExecutionProvider"
#define ORT_MIGX "MIGraphXExecutionProvider"
#define ORT_ROCM "ROCMExecutionProvider"
#define ORT_OV "OpenVINOExecutionProvider"
#define ORT_COREML "CoreMLExecutionProvider"
#define ORT_CPU "CPUExecutionProvider"

/* Run tb_ort_providers and compare with the NULL-terminated expected list. */
static void expect_providers(const char *request, const char *const *avail, size_t n_avail, const char *const *want) {
  const char *out[16] = {0};
  size_t count = 99;
  tb_status st = tb_ort_providers(request, avail, n_avail, out, 16, &count);
  if (st != TB_OK) fail_msg("tb_ort_providers(%s): %s: %s", request, tb_status_str(st), tb_last_error());
  size_t n_want = 0;
  while (want[n_want]) n_want++;
  assert_int_equal(count, n_want);
  for (size_t i = 0; i < n_want; i++) assert_string_equal(out[i], want[i]);
}

static void ort_providers(void **state) {
  (void)state;
  const char *all[] = {ORT_CPU, ORT_OV, ORT_COREML, ORT_ROCM, ORT_MIGX, ORT_CUDA, ORT_TRT, "AzureExecutionProvider"};
  const char *nvidia_only[] = {ORT_CUDA, ORT_CPU};
  const char *amd[] = {ORT_ROCM, ORT_MIGX, ORT_CPU};
  const char *intel[] = {ORT_OV, ORT_CPU};
  const char *cpu_only[] = {ORT_CPU};
  const char *no_cpu[] = {ORT_CUDA};
  expect_providers("auto", all, 8, (const char *const[]){ORT_TRT, ORT_CUDA, ORT_CPU, NULL});
  expect_providers("AUTO", nvidia_only, 2, (const char *const[]){ORT_CUDA, ORT_CPU, NULL});
  expect_providers("auto", amd, 3, (const char *const[]){ORT_MIGX, ORT_ROCM, ORT_CPU, NULL});
  expect_providers("auto", intel, 2, (const char *const[]){ORT_OV, ORT_CPU, NULL});
  expect_providers("auto", (const char *const[]){ORT_COREML}, 1, (const char *const[]){ORT_COREML, ORT_CPU, NULL});
  expect_providers("auto", cpu_only, 1, (const char *const[]){ORT_CPU, NULL});
  expect_providers("auto", NULL, 0, (const char *const[]){ORT_CPU, NULL});
  expect_providers("cuda", all, 8, (const char *const[]){ORT_TRT, ORT_CUDA, ORT_CPU, NULL});
  expect_providers("nvidia", nvidia_only, 2, (const char *const[]){ORT_CUDA, ORT_CPU, NULL});
  expect_providers("cuda", no_cpu, 1, (const char *const[]){ORT_CUDA, ORT_CPU, NULL}); /* CPU appended anyway */
  expect_providers("cuda", (const char *const[]){"cudaexecutionprovider"}, 1, (const char *const[]){ORT_CUDA, ORT_CPU, NULL});
  expect_providers("rocm", all, 8, (const char *const[]){ORT_MIGX, ORT_ROCM, ORT_CPU, NULL});
  expect_providers("amd", (const char *const[]){ORT_ROCM, ORT_CPU}, 2, (const char *const[]){ORT_ROCM, ORT_CPU, NULL});
  expect_providers("xpu", all, 8, (const char *const[]){ORT_OV, ORT_CPU, NULL});
  expect_providers("intel", intel, 2, (const char *const[]){ORT_OV, ORT_CPU, NULL});
  expect_providers("coreml", all, 8, (const char *const[]){ORT_COREML, ORT_CPU, NULL});
  expect_providers("cpu", all, 8, (const char *const[]){ORT_CPU, NULL});

  const char *out[8];
  size_t count = 99;
  assert_int_equal(tb_ort_providers("cuda", cpu_only, 1, out, 8, &count), TB_ERR_UNAVAILABLE);
  assert_int_equal(count, 0);
  TB_ASSERT_CONTAINS(tb_last_error(), "needs TensorrtExecutionProvider or CUDAExecutionProvider, but onnxruntime reports only: CPUExecutionProvider");
  TB_ASSERT_CONTAINS(tb_last_error(), "onnxruntime-gpu");
  assert_int_equal(tb_ort_providers("rocm", nvidia_only, 2, out, 8, &count), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "MIGraphXExecutionProvider or ROCMExecutionProvider");
  assert_int_equal(tb_ort_providers("xpu", NULL, 0, out, 8, &count), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "onnxruntime reports no providers");
  assert_int_equal(tb_ort_providers("coreml", cpu_only, 1, out, 8, &count), TB_ERR_UNAVAILABLE);
  assert_int_equal(tb_ort_providers("directml", all, 8, out, 8, &count), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown ONNX Runtime request 'directml'; valid requests are auto, cuda (nvidia)");
  assert_int_equal(tb_ort_providers("tpu", all, 8, out, 8, &count), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "ONNX Runtime has no execution provider for tpu");
  /* Capacity: too small is an error that says how many are needed. */
  assert_int_equal(tb_ort_providers("cuda", all, 8, out, 2, &count), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(count, 3);
  TB_ASSERT_CONTAINS(tb_last_error(), "capacity 2 is too small for 3 providers");
  TB_ASSERT_OK(tb_ort_providers("cuda", all, 8, out, 3, &count));
  assert_int_equal(count, 3);
  assert_int_equal(tb_ort_providers("cpu", all, 8, out, 0, &count), TB_ERR_INVALID_ARGUMENT);
  /* NULL arguments. */
  assert_int_equal(tb_ort_providers(NULL, all, 8, out, 8, &count), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_ort_providers("cpu", NULL, 3, out, 8, &count), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_ort_providers("cpu", all, 8, NULL, 8, &count), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_ort_providers("cpu", all, 8, out, 8, NULL), TB_ERR_INVALID_ARGUMENT);
  /* NULL entries inside `available` are skipped. */
  expect_providers("cuda", (const char *const[]){NULL, ORT_CUDA}, 2, (const char *const[]){ORT_CUDA, ORT_CPU, NULL});
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(opt_levels),
      cmocka_unit_test(preset_names),
      cmocka_unit_test(presets),
      cmocka_unit_test(amp_policy),
      cmocka_unit_test(ort_providers),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
