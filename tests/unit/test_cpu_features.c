/* TB_CPU_FEATURES: the mask parser as a function (dependencies, groups, "+name" that cannot add,
 * every malformed item) and through the probe (features, dtypes, property and report checks). */
#include "test_cpu_helpers.h"
#include "discover/capability.h"
#include "core/cpu_features.h"

#define SKL_FEATURES (F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C))

typedef struct notes {
  int count[3];
  char last[3][1024];
} notes;

static void record(void *ctx, tb_cpu_mask_outcome outcome, const char *item, const char *detail) {
  notes *n = ctx;
  (void)item;
  n->count[outcome]++;
  snprintf(n->last[outcome], sizeof n->last[outcome], "%s", detail);
}

static tb_cpu_mask_result mask(uint64_t hardware, const char *spec, notes *n) {
  memset(n, 0, sizeof *n);
  return tb_cpu_features_apply_mask(hardware, spec, record, n);
}

static void removal_and_dependents(void **state) {
  (void)state;
  notes n;
  tb_cpu_mask_result r = mask(SPR_FEATURES, "-amx", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~AMX_ALL);
  assert_int_equal(r.removed, AMX_ALL);
  assert_int_equal(n.count[TB_CPU_MASK_APPLIED], 1);
  TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_APPLIED], "'-amx' removed amx_tile,amx_bf16,amx_int8");
  /* avx512f takes the other AVX-512 features with it, not AMX. */
  r = mask(SPR_FEATURES, "-avx512f", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~AVX512_ALL);
  /* avx2 takes every AVX-512 feature too. */
  r = mask(SPR_FEATURES, "-avx2", &n);
  assert_int_equal(r.features, F(SSE4_2) | F(FMA) | F(F16C) | AMX_ALL);
  /* amx_tile takes amx_bf16 and amx_int8. */
  r = mask(SPR_FEATURES, "-amx_tile", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~AMX_ALL);
  /* A leaf feature goes alone. */
  r = mask(SPR_FEATURES, "-avx512bf16", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~F(AVX512BF16));
  r = mask(SPR_FEATURES, "-avx512", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~AVX512_ALL);
  /* The example from the docs, case-insensitive, with spaces. */
  r = mask(SPR_FEATURES, " -AMX , -Avx512F ", &n);
  assert_int_equal(r.features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C));
  assert_int_equal(r.invalid_items + r.ignored_items, 0);
  assert_int_equal(n.count[TB_CPU_MASK_APPLIED], 2);
  /* Removing what is not there is fine. */
  r = mask(SKL_FEATURES, "-amx,-avx512f", &n);
  assert_int_equal(r.features, SKL_FEATURES);
  assert_int_equal(r.removed, 0);
  TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_APPLIED], "removed nothing (not present)");
  /* aarch64 dependencies. */
  r = mask(F(NEON) | F(SVE) | F(SME), "-neon", &n);
  assert_int_equal(r.features, 0);
  r = mask(F(NEON) | F(SVE) | F(SME), "-sve", &n);
  assert_int_equal(r.features, F(NEON) | F(SME));
}

static void adding_back(void **state) {
  (void)state;
  notes n;
  /* "+name" the hardware lacks is ignored: the mask only removes. */
  tb_cpu_mask_result r = mask(SKL_FEATURES, "+amx_tile", &n);
  assert_int_equal(r.features, SKL_FEATURES);
  assert_int_equal(r.ignored_items, 1);
  TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_IGNORED], "'+amx_tile' ignored: this CPU does not have amx_tile");
  r = mask(SKL_FEATURES, "+avx512", &n);
  assert_int_equal(r.features, SKL_FEATURES);
  TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_IGNORED], "does not have avx512f,avx512bw,avx512vl,avx512vnni,avx512bf16,avx512fp16");
  /* Put back after removing, left to right. */
  r = mask(SPR_FEATURES, "-avx512,+avx512f,+avx512bw", &n);
  assert_int_equal(r.features, (SPR_FEATURES & ~AVX512_ALL) | F(AVX512F) | F(AVX512BW));
  assert_int_equal(r.ignored_items, 0);
  /* A feature whose prerequisite was removed stays off. */
  r = mask(SPR_FEATURES, "-avx512f,+avx512bw", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~AVX512_ALL);
  assert_int_equal(r.ignored_items, 1);
  TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_IGNORED], "'+avx512bw' ignored: avx512bw needs avx512f, removed earlier");
  /* A group puts back what it can. */
  r = mask(SPR_FEATURES, "-avx2,+avx512", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~(AVX512_ALL | F(AVX2)));
  assert_int_equal(r.ignored_items, 1);
  /* "+name" of something present changes nothing and is fine. */
  r = mask(SPR_FEATURES, "+fma", &n);
  assert_int_equal(r.features, SPR_FEATURES);
  assert_int_equal(r.ignored_items + r.invalid_items, 0);
}

static void bad_items(void **state) {
  (void)state;
  static const struct { const char *spec; const char *detail; } cases[] = {
      {"-warp", "'-warp' skipped: unknown CPU feature 'warp'"},
      {"avx512f", "'avx512f' skipped: each item needs a sign, '-avx512f' to remove or '+avx512f' to keep"},
      {",-fma", "empty item (two commas in a row, or a comma at an end)"},
      {"-amx,,-fma", "empty item"},
      {"-fma,", "empty item"},
      {"-", "'-' skipped: no feature name after the sign"},
      {"+", "'+' skipped: no feature name after the sign"},
      {"-tensor_cores", "'-tensor_cores' skipped: tensor_cores is not a CPU feature"},
      {"--amx", "unknown CPU feature '-amx'"},
      {"-avx512f;-amx", "unknown CPU feature 'avx512f;-amx'"},
      {"-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "too long to be a feature name"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    notes n;
    tb_cpu_mask_result r = mask(SPR_FEATURES, cases[i].spec, &n);
    if (r.invalid_items != 1) fail_msg("'%s': %zu invalid items, expected 1", cases[i].spec, r.invalid_items);
    TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_INVALID], cases[i].detail);
    TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_INVALID], "valid names: sse4_2, avx2, fma");
    TB_ASSERT_CONTAINS(n.last[TB_CPU_MASK_INVALID], "the groups amx");
  }
  /* The good items around a bad one still apply. */
  notes n;
  tb_cpu_mask_result r = mask(SPR_FEATURES, "-amx,-warp,-avx512fp16", &n);
  assert_int_equal(r.features, SPR_FEATURES & ~(AMX_ALL | F(AVX512FP16)));
  assert_int_equal(r.invalid_items, 1);
  assert_int_equal(n.count[TB_CPU_MASK_APPLIED], 2);
  /* A NULL callback and a NULL mask are fine. */
  r = tb_cpu_features_apply_mask(SPR_FEATURES, "-warp,-amx", NULL, NULL);
  assert_int_equal(r.features, SPR_FEATURES & ~AMX_ALL);
  assert_int_equal(r.invalid_items, 1);
  r = tb_cpu_features_apply_mask(SPR_FEATURES, NULL, NULL, NULL);
  assert_int_equal(r.features, SPR_FEATURES);
}

static void helpers(void **state) {
  (void)state;
  assert_int_equal(tb_cpu_features_with_dependents(F(AVX2)), F(AVX2) | AVX512_ALL);
  assert_int_equal(tb_cpu_features_with_dependents(F(AMX_TILE)), AMX_ALL);
  assert_int_equal(tb_cpu_features_with_dependents(F(SSE4_2)), F(SSE4_2));
  assert_int_equal(tb_cpu_features_consistent(F(AVX512BW) | F(AVX2)), F(AVX2));
  assert_int_equal(tb_cpu_features_consistent(F(AVX512BW) | F(AVX512F)), 0); /* avx512f needs avx2 */
  assert_int_equal(tb_cpu_features_consistent(SPR_FEATURES), SPR_FEATURES);
  assert_int_equal(tb_cpu_features_consistent(F(AMX_BF16)), 0);
  char buf[256];
  tb_cpu_features_format(0, buf, sizeof buf);
  assert_string_equal(buf, "none");
  tb_cpu_features_format(F(AVX2) | F(AMX_INT8), buf, sizeof buf);
  assert_string_equal(buf, "avx2,amx_int8");
  char tiny[8];
  tb_cpu_features_format(F(AVX2) | F(AMX_INT8), tiny, sizeof tiny);
  assert_string_equal(tiny, "avx2");
  /* Every CPU feature name is listed as valid, and is accepted. */
  for (int f = 0; f < TB_FEATURE_COUNT; f++) {
    if (!(TB_FEATURE_BIT(f) & TB_CPU_FEATURE_BITS)) continue;
    TB_ASSERT_CONTAINS(tb_cpu_features_valid_names(), tb_feature_name((tb_feature)f));
    char spec[64];
    snprintf(spec, sizeof spec, "-%s", tb_feature_name((tb_feature)f));
    tb_cpu_mask_result r = tb_cpu_features_apply_mask(TB_CPU_FEATURE_BITS, spec, NULL, NULL);
    assert_int_equal(r.invalid_items, 0);
    assert_false(r.features & TB_FEATURE_BIT(f));
  }
}

/* Through the probe, on the recorded Sapphire Rapids. */
static void probe_masked(void **state) {
  (void)state;
  cpu_env("cpu_spr", "cpu_spr/cpuid.txt");
  setenv("TB_CPU_FEATURES", "-amx,-avx512f", 1);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_int_equal(d->features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C));
  ASSERT_PROP(d, "cpu_features_mask",
              "-amx,-avx512f (removed: avx512f,avx512bw,avx512vl,avx512vnni,avx512bf16,avx512fp16,amx_tile,amx_bf16,amx_int8)");
  ASSERT_PROP(d, "amx_permission", "granted"); /* the kernel's answer; the mask is the user's choice */
  assert_int_equal(d->dtypes, tb_capability_cpu_dtypes(d->features));
  assert_false(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
  assert_false(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F16));
  ASSERT_CHECK(list, "TB_CPU_FEATURES", 1, "'-amx,-avx512f' removed avx512f");
  TB_ASSERT_CONTAINS(tb_device_list_report(list, TB_BACKEND_CPU)->summary, "features sse4_2,avx2,fma,f16c");
  tb_device_list_destroy(list);
}

static void probe_nonsense(void **state) {
  (void)state;
  cpu_env("cpu_spr", "cpu_spr/cpuid.txt");
  setenv("TB_CPU_FEATURES", "-warp,avx512f,,-amx", 1);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_int_equal(d->features, SPR_FEATURES & ~AMX_ALL);
  ASSERT_CHECK(list, "TB_CPU_FEATURES", 0, "'-warp' skipped: unknown CPU feature 'warp'; valid names: sse4_2");
  ASSERT_CHECK(list, "TB_CPU_FEATURES", 0, "'avx512f' skipped: each item needs a sign");
  ASSERT_CHECK(list, "TB_CPU_FEATURES", 0, "empty item");
  ASSERT_CHECK(list, "TB_CPU_FEATURES", 0, "3 item(s) skipped as invalid, 0 ignored");
  ASSERT_PROP(d, "cpu_features_mask", "-warp,avx512f,,-amx (removed: amx_tile,amx_bf16,amx_int8)");
  tb_device_list_destroy(list);
  /* "+amx_tile" on an AVX2 laptop: ignored, reported. */
  cpu_env("cpu_skylake_laptop", "cpu_skylake_laptop/cpuid.txt");
  setenv("TB_CPU_FEATURES", "+amx_tile", 1);
  d = cpu_probe(&list);
  assert_int_equal(d->features, SKL_FEATURES);
  ASSERT_CHECK(list, "TB_CPU_FEATURES", 0, "'+amx_tile' ignored: this CPU does not have amx_tile");
  ASSERT_CHECK(list, "TB_CPU_FEATURES", 0, "0 item(s) skipped as invalid, 1 ignored");
  tb_device_list_destroy(list);
  /* Unset or empty: no mask, no property. */
  cpu_env("cpu_skylake_laptop", "cpu_skylake_laptop/cpuid.txt");
  setenv("TB_CPU_FEATURES", "", 1);
  d = cpu_probe(&list);
  assert_int_equal(d->features, SKL_FEATURES);
  ASSERT_NO_PROP(d, "cpu_features_mask");
  assert_false(cpu_check(list, "TB_CPU_FEATURES", -1, NULL));
  tb_device_list_destroy(list);
}

/* The real CPU, masked: AVX-512 gone, the rest as the hardware says. */
static void probe_real_masked(void **state) {
  (void)state;
  cpu_env(NULL, NULL);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  uint64_t hardware = d->features;
  tb_device_list_destroy(list);
  setenv("TB_CPU_FEATURES", "-avx2", 1);
  d = cpu_probe(&list);
  assert_int_equal(d->features, hardware & ~(F(AVX2) | AVX512_ALL));
  assert_int_equal(d->dtypes, tb_capability_cpu_dtypes(d->features));
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(removal_and_dependents),
      cmocka_unit_test(adding_back),
      cmocka_unit_test(bad_items),
      cmocka_unit_test(helpers),
      cmocka_unit_test(probe_masked),
      cmocka_unit_test(probe_nonsense),
      cmocka_unit_test(probe_real_masked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
