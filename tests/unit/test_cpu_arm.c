/* aarch64 on any machine: the /proc/cpuinfo parser on a recorded Graviton3 (Neoverse V1), the
 * Features-line and hwcap decoders, and the describe step the probe runs on aarch64. The getauxval
 * call itself only runs on aarch64 hardware (see docs/cpu.md). */
#include "test_cpu_helpers.h"
#include "discover/cpu_arm.h"

static char *read_cpuinfo(const char *fixture) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s/proc/cpuinfo", TB_TEST_FIXTURES, fixture);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char *text = calloc(1, 65536);
  assert_non_null(text);
  size_t n = fread(text, 1, 65535, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

static void graviton3_cpuinfo(void **state) {
  (void)state;
  char *text = read_cpuinfo("cpu_arm_graviton3");
  tb_cpu_arm_ident id;
  assert_true(tb_cpu_arm_parse_cpuinfo(text, &id));
  assert_true(id.has_ids);
  assert_int_equal(id.implementer, 0x41);
  assert_int_equal(id.part, 0xd40);
  assert_int_equal(id.variant, 1);
  assert_int_equal(id.revision, 1);
  assert_string_equal(id.model_name, "");
  TB_ASSERT_CONTAINS(id.flags, "fp asimd evtstrm");
  /* sve and asimd are words of their own; svei8mm and svebf16 do not count as sme or anything else. */
  assert_int_equal(tb_cpu_arm_features_from_flags(id.flags), F(NEON) | F(SVE));
  assert_string_equal(tb_cpu_arm_vendor(id.implementer), "ARM");
  assert_string_equal(tb_cpu_arm_core(id.implementer, id.part), "Neoverse V1");
  free(text);
}

static void features_line(void **state) {
  (void)state;
  assert_int_equal(tb_cpu_arm_features_from_flags("fp asimd sve sve2 sme sme2"), F(NEON) | F(SVE) | F(SME));
  assert_int_equal(tb_cpu_arm_features_from_flags("fp asimdhp asimddp svebf16 smefa64"), 0);
  assert_int_equal(tb_cpu_arm_features_from_flags("sme"), F(SME));
  assert_int_equal(tb_cpu_arm_features_from_flags(""), 0);
  /* Bits from arch/arm64/include/uapi/asm/hwcap.h: HWCAP_ASIMD 1<<1, HWCAP_SVE 1<<22, HWCAP2_SME 1<<23. */
  assert_int_equal(tb_cpu_arm_features_from_hwcap(1ul << 1, 0), F(NEON));
  assert_int_equal(tb_cpu_arm_features_from_hwcap((1ul << 1) | (1ul << 22), 1ul << 23), F(NEON) | F(SVE) | F(SME));
  assert_int_equal(tb_cpu_arm_features_from_hwcap(~((1ul << 1) | (1ul << 22)), ~(1ul << 23)), 0);
  char v[64];
  assert_true(tb_cpuinfo_field("model name\t: Foo  \nFeatures\t: a b\n", "Features", v, sizeof v));
  assert_string_equal(v, "a b");
  assert_true(tb_cpuinfo_field("model name\t: Foo  \n", "model name", v, sizeof v));
  assert_string_equal(v, "Foo");
  assert_false(tb_cpuinfo_field("model\t\t: 85\n", "model name", v, sizeof v));
  assert_false(tb_cpuinfo_field("Features a b\n", "Features", v, sizeof v));
  tb_cpu_arm_ident id;
  assert_false(tb_cpu_arm_parse_cpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n", &id));
  assert_false(tb_cpu_arm_parse_cpuinfo("CPU implementer\t: 0x4e\nCPU part\t: 0xzz\n", &id));
  assert_false(id.has_ids);
}

static void describe(void **state) {
  (void)state;
  char *text = read_cpuinfo("cpu_arm_graviton3");
  tb_device_list *list = tb_devlist_new();
  assert_non_null(list);
  tb_device_info *dev = tb_devlist_add(list, TB_BACKEND_CPU);
  assert_non_null(dev);
  uint64_t features = 0;
  /* hwcaps as a Graviton3 kernel reports them: ASIMD and SVE, no SME. */
  tb_cpu_arm_describe(list, dev, text, true, (1ul << 1) | (1ul << 22), 0, &features);
  assert_int_equal(features, F(NEON) | F(SVE));
  assert_string_equal(dev->vendor, "ARM");
  assert_string_equal(dev->name, "ARM Neoverse V1");
  assert_string_equal(dev->architecture, "Neoverse V1");
  assert_string_equal(dev->arch_id, "aarch64 implementer 0x41 part 0xd40 r1p1");
  assert_string_equal(dev->capability_source, "hwcap");
  ASSERT_PROP(dev, "amx_permission", "not supported by this CPU");
  ASSERT_CHECK(list, "/proc/cpuinfo", 1, "implementer 0x41 part 0xd40");
  /* Without hwcaps, the Features line decides. */
  tb_device_info *dev2 = tb_devlist_add(list, TB_BACKEND_CPU);
  tb_cpu_arm_describe(list, dev2, text, false, 0, 0, &features);
  assert_int_equal(features, F(NEON) | F(SVE));
  assert_string_equal(dev2->capability_source, "/proc/cpuinfo Features");
  /* An unknown core, and no cpuinfo at all. */
  tb_device_info *dev3 = tb_devlist_add(list, TB_BACKEND_CPU);
  tb_cpu_arm_describe(list, dev3, "CPU implementer\t: 0x99\nCPU part\t: 0x123\nFeatures\t: fp asimd sme\n", false, 0, 0, &features);
  assert_int_equal(features, F(NEON) | F(SME));
  assert_string_equal(dev3->vendor, "implementer 0x99");
  assert_string_equal(dev3->name, "implementer 0x99 part 0x123");
  assert_string_equal(dev3->architecture, "");
  ASSERT_PROP(dev3, "architecture_note", "implementer 0x99 part 0x123 is not in TensorBridge's Arm core table");
  tb_device_info *dev4 = tb_devlist_add(list, TB_BACKEND_CPU);
  tb_cpu_arm_describe(list, dev4, NULL, true, 1ul << 1, 0, &features);
  assert_int_equal(features, F(NEON));
  assert_string_equal(dev4->name, "aarch64 CPU");
  assert_string_equal(dev4->arch_id, "aarch64");
  ASSERT_PROP(dev4, "architecture_note", "/proc/cpuinfo has no CPU implementer and CPU part");
  ASSERT_CHECK(list, "/proc/cpuinfo", 0, "no CPU implementer");
  tb_device_list_destroy(list);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(graviton3_cpuinfo),
      cmocka_unit_test(features_line),
      cmocka_unit_test(describe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
