/* cpuid dumps as pure data: parsing the TB_CPUID_FILE format (and every way it can be wrong),
 * decoding identity and features (with the XCR0 rules), and the microarchitecture table. */
#include "test_cpu_helpers.h"
#include "core/cpuid.h"
#include "discover/cpu_uarch.h"

static tb_cpuid_dump dump;

static void parse_ok(const char *text) {
  tb_cpuid_error err;
  if (!tb_cpuid_parse(text, &dump, &err)) fail_msg("parse failed at line %d: %s", err.line, err.message);
}

static void load_fixture(const char *rel) {
  tb_cpuid_error err;
  if (!tb_cpuid_load_file(cpu_fixture_file(rel), &dump, &err)) fail_msg("%s line %d: %s", rel, err.line, err.message);
}

static void parse_format(void **state) {
  (void)state;
  parse_ok("# a comment line\r\n"
           "0x00000000 0x0 0x00000007 756e6547 6c65746e 49656e69   # leaf 0, with 0x prefixes and a comment\r\n"
           "\n"
           "1 0 806F8 00800800 7ffefbff bfebfbff\n"
           "7 0 0 F3BFBFEF FB417FFE FFDD4430\n"
           "xcr0 0x602e7\n"
           "amx_permission denied EPERM"); /* no final newline */
  assert_int_equal(dump.count, 3);
  uint32_t regs[4];
  assert_true(tb_cpuid_get(&dump, 1, 0, regs));
  assert_int_equal(regs[TB_EAX], 0x806f8);
  assert_int_equal(regs[TB_EDX], 0xbfebfbff);
  assert_false(tb_cpuid_get(&dump, 7, 1, regs));
  assert_int_equal(regs[TB_EAX], 0);
  assert_true(dump.has_xcr0);
  assert_int_equal(dump.xcr0, 0x602e7);
  assert_int_equal(dump.amx, TB_AMX_RECORD_DENIED);
  assert_string_equal(dump.amx_errno, "EPERM");
  parse_ok("0 0 1 756e6547 6c65746e 49656e69\n1 0 806f8 0 0 0\namx_permission granted\n");
  assert_int_equal(dump.amx, TB_AMX_RECORD_GRANTED);
  assert_false(dump.has_xcr0); /* allowed: leaf 1 does not say OSXSAVE */
}

static void parse_errors(void **state) {
  (void)state;
  static const struct { const char *text; int line; const char *message; } cases[] = {
      {"", 0, "end of file: leaf 0 (vendor and highest leaf) is missing"},
      {"0 0 1 756e6547 6c65746e 49656e69\n", 1, "end of file: leaf 1 (family, model and feature flags) is missing"},
      {"0 0 1 2 3\n", 1, "expected 6 hex fields (leaf subleaf eax ebx ecx edx), found 5"},
      {"0 0 1 2 3 4 5\n", 1, "found 7"},
      {"0 0 1 2 3 4 5 6 7 8 9 10\n", 1, "found 9 or more"},
      {"# x\n0 0 1 2 3 g\n", 2, "edx 'g' is not a hex number of at most 8 digits"},
      {"0 0 123456789 2 3 4\n", 1, "eax '123456789' is not a hex number of at most 8 digits"},
      {"0 0 -1 2 3 4\n", 1, "eax '-1' is not a hex number"},
      {"0 0 0x 2 3 4\n", 1, "eax '0x' is not a hex number"},
      {"cpuid 0 1 2 3 4\n", 1, "'cpuid' is neither a leaf number nor xcr0 or amx_permission"},
      {"0 0 1 2 3 4\n0 0 1 2 3 4\n", 2, "leaf 0x00000000 subleaf 0 appears twice"},
      {"xcr0\n", 1, "xcr0 takes one hex value, found 0"},
      {"xcr0 7 7\n", 1, "xcr0 takes one hex value, found 2"},
      {"xcr0 nope\n", 1, "xcr0 value 'nope' is not a hex number of at most 16 digits"},
      {"xcr0 7\nxcr0 7\n", 2, "a second xcr0 line"},
      {"amx_permission\n", 1, "amx_permission must be followed by 'granted' or 'denied [ERRNO_NAME]'"},
      {"amx_permission yes\n", 1, "amx_permission must be followed by 'granted'"},
      {"amx_permission denied eperm\n", 1, "'eperm' is not an errno name such as EPERM"},
      {"amx_permission granted\namx_permission granted\n", 2, "a second amx_permission line"},
      {"0 0 7 756e6547 6c65746e 49656e69\n1 0 806f8 0 0 0\n", 2, "leaf 7 subleaf 0 is missing, but leaf 0 says the highest leaf is 0x7"},
      {"0 0 7 756e6547 6c65746e 49656e69\n1 0 806f8 0 0 0\n7 0 1 0 0 0\n", 3, "leaf 7 subleaf 1 is missing"},
      {"0 0 1 756e6547 6c65746e 49656e69\n1 0 806f8 0 08000000 0\n", 2, "no 'xcr0' line, but leaf 1 says the OS enabled XSAVE"},
      {"0 0 1 756e6547 6c65746e 49656e69\n1 0 806f8 0 0 0\n80000000 0 80000004 0 0 0\n80000002 0 0 0 0 0\n", 4,
       "brand-string leaf 0x80000003 is missing"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_cpuid_error err;
    if (tb_cpuid_parse(cases[i].text, &dump, &err)) fail_msg("case %zu parsed but should fail: %s", i, cases[i].text);
    if (err.line != cases[i].line || !strstr(err.message, cases[i].message))
      fail_msg("case %zu: got line %d '%s', expected line %d '%s'", i, err.line, err.message, cases[i].line, cases[i].message);
  }
  /* A line too long to be a dump line, and more leaves than the dump holds. */
  char text[1200];
  memset(text, 'a', 600);
  text[600] = '\0';
  tb_cpuid_error err;
  assert_false(tb_cpuid_parse(text, &dump, &err));
  assert_int_equal(err.line, 1);
  TB_ASSERT_CONTAINS(err.message, "line longer than");
  size_t cap = 32 * (TB_CPUID_MAX_LEAVES + 2);
  char *many = malloc(cap), *p = many;
  assert_non_null(many);
  for (int i = 0; i < TB_CPUID_MAX_LEAVES + 1; i++) p += sprintf(p, "%x 0 0 0 0 0\n", 0x40000000 + i);
  assert_false(tb_cpuid_parse(many, &dump, &err));
  assert_int_equal(err.line, TB_CPUID_MAX_LEAVES + 1);
  TB_ASSERT_CONTAINS(err.message, "more than 256 leaves");
  free(many);
  /* Quoted junk is shortened and made printable. */
  assert_false(tb_cpuid_parse("\x01\x02\x03zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz 0 0 0 0 0\n", &dump, &err));
  TB_ASSERT_CONTAINS(err.message, "'???zzzzzzzzzzzzzzzzzzzzz...' is neither a leaf number");
}

static void load_file_errors(void **state) {
  (void)state;
  tb_cpuid_error err;
  assert_false(tb_cpuid_load_file("/nonexistent/cpuid.txt", &dump, &err));
  assert_int_equal(err.line, 0);
  TB_ASSERT_CONTAINS(err.message, "cannot open it: No such file or directory");
  assert_false(tb_cpuid_load_file("/tmp", &dump, &err)); /* a directory: fopen works, fread fails */
  assert_int_equal(err.line, 0);
  /* Larger than any dump. */
  size_t big = TB_CPUID_FILE_MAX_BYTES + 10;
  char *text = malloc(big);
  assert_non_null(text);
  memset(text, '#', big);
  char *path = cpu_temp_file(text, big);
  assert_false(tb_cpuid_load_file(path, &dump, &err));
  TB_ASSERT_CONTAINS(err.message, "larger than 262144 bytes");
  unlink(path);
  free(path);
  free(text);
}

static void decode_sapphire_rapids(void **state) {
  (void)state;
  load_fixture("cpu_spr/cpuid.txt");
  tb_cpu_ident id;
  tb_cpuid_decode(&dump, &id);
  assert_string_equal(id.vendor_id, "GenuineIntel");
  assert_string_equal(tb_cpu_vendor_name(id.vendor_id), "Intel");
  assert_string_equal(id.brand, "Intel(R) Xeon(R) Gold 5415+");
  assert_int_equal(id.family, 6);
  assert_int_equal(id.model, 0x8f);
  assert_int_equal(id.stepping, 8);
  assert_true(id.osxsave);
  assert_int_equal(id.cpuid_features, SPR_FEATURES);
  assert_int_equal(id.features, SPR_FEATURES);
  assert_int_equal(dump.amx, TB_AMX_RECORD_GRANTED);
}

static void decode_zen5_and_skylake(void **state) {
  (void)state;
  tb_cpu_ident id;
  load_fixture("cpu_zen5_epyc/cpuid.txt");
  tb_cpuid_decode(&dump, &id);
  assert_string_equal(id.vendor_id, "AuthenticAMD");
  assert_string_equal(tb_cpu_vendor_name(id.vendor_id), "AMD");
  assert_string_equal(id.brand, "AMD EPYC");
  assert_int_equal(id.family, 26); /* base 0xF + extended 0x0B */
  assert_int_equal(id.model, 2);
  assert_int_equal(id.stepping, 1);
  assert_int_equal(id.features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C) | F(AVX512F) | F(AVX512BW) | F(AVX512VL) |
                                    F(AVX512VNNI) | F(AVX512BF16));
  load_fixture("cpu_skylake_laptop/cpuid.txt");
  tb_cpuid_decode(&dump, &id);
  assert_string_equal(id.brand, "Intel(R) Core(TM) i7-6500U CPU @ 2.50GHz");
  assert_int_equal(id.family, 6);
  assert_int_equal(id.model, 0x4e); /* base 0xE + extended 0x4 << 4 */
  assert_int_equal(id.stepping, 3);
  assert_int_equal(id.features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C));
}

/* Features need the OS to have enabled their register state in XCR0. */
static void decode_xcr0_rules(void **state) {
  (void)state;
  static const char base[] = "0 0 7 756e6547 6c65746e 49656e69\n"
                             "1 0 806f8 0 %x 0\n"
                             "7 0 1 f3bfbfef fb417ffe ffdd4430\n"
                             "7 1 1c30 0 0 0\n"
                             "%s\n";
  char text[512];
  tb_cpu_ident id;
  /* OSXSAVE set, XCR0 = x87|SSE|AVX only: AVX2/FMA/F16C stay, AVX-512 and AMX go. */
  snprintf(text, sizeof text, base, 0x7ffefbffu, "xcr0 7");
  parse_ok(text);
  tb_cpuid_decode(&dump, &id);
  assert_int_equal(id.cpuid_features, SPR_FEATURES);
  assert_int_equal(id.features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C));
  /* XCR0 with AMX but not AVX-512 state. */
  snprintf(text, sizeof text, base, 0x7ffefbffu, "xcr0 60007");
  parse_ok(text);
  tb_cpuid_decode(&dump, &id);
  assert_int_equal(id.features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C) | AMX_ALL);
  /* No OSXSAVE: no AVX state at all, whatever the xcr0 line says; SSE4.2 needs none. */
  snprintf(text, sizeof text, base, 0x7ffefbffu & ~(1u << 27), "xcr0 602e7");
  parse_ok(text);
  tb_cpuid_decode(&dump, &id);
  assert_int_equal(id.features, F(SSE4_2));
  /* Leaf 0 says the highest leaf is 1: leaf 7 is ignored even though it is recorded. */
  parse_ok("0 0 1 756e6547 6c65746e 49656e69\n1 0 806f8 0 7ffefbff 0\n7 0 0 ffffffff ffffffff ffffffff\nxcr0 602e7\n");
  tb_cpuid_decode(&dump, &id);
  assert_int_equal(id.features, F(SSE4_2) | F(FMA) | F(F16C));
}

static void decode_brand_and_vendor(void **state) {
  (void)state;
  /* "   Intel(R) Xeon(R) CPU  E5-2680 v4" with leading spaces and a double space, as older CPUs write it. */
  parse_ok("0 0 1 756e6547 6c65746e 49656e69\n1 0 406f1 0 0 0\n80000000 0 80000004 0 0 0\n"
           "80000002 0 49202020 6c65746e 20295228 6e6f6558\n"
           "80000003 0 20295228 20555043 2d354520 30383632\n"
           "80000004 0 00347620 00000000 00000000 00000000\n");
  tb_cpu_ident id;
  tb_cpuid_decode(&dump, &id);
  assert_string_equal(id.brand, "Intel(R) Xeon(R) CPU E5-2680 v4");
  assert_int_equal(id.family, 6);
  assert_int_equal(id.model, 0x4f);
  assert_string_equal(tb_cpu_vendor_name("HygonGenuine"), "HygonGenuine");
  assert_string_equal(tb_cpu_vendor_name("GenuineIntel"), "Intel");
  /* Family 0xF with extended family: 0xF + 0x8 = 0x17 (AMD Zen 2, model 0x31). */
  parse_ok("0 0 1 68747541 444d4163 69746e65\n1 0 830f10 0 0 0\n");
  tb_cpuid_decode(&dump, &id);
  assert_string_equal(id.vendor_id, "AuthenticAMD");
  assert_int_equal(id.family, 0x17);
  assert_int_equal(id.model, 0x31);
  assert_int_equal(id.stepping, 0);
  assert_string_equal(id.brand, ""); /* no extended leaves */
}

static const char *uarch(const char *vendor, unsigned family, unsigned model, unsigned stepping) {
  const tb_cpu_uarch *row = tb_cpu_uarch_lookup(vendor, family, model, stepping);
  return row ? row->name : "";
}

static void microarchitecture_table(void **state) {
  (void)state;
  assert_string_equal(uarch("GenuineIntel", 6, 0x55, 4), "Skylake-SP");
  assert_string_equal(uarch("GenuineIntel", 6, 0x55, 7), "Cascade Lake");
  assert_string_equal(uarch("GenuineIntel", 6, 0x55, 11), "Cooper Lake");
  assert_string_equal(uarch("GenuineIntel", 6, 0x55, 8), ""); /* no such stepping shipped */
  assert_string_equal(uarch("GenuineIntel", 6, 0x6a, 6), "Ice Lake-SP");
  assert_string_equal(uarch("GenuineIntel", 6, 0x8f, 8), "Sapphire Rapids");
  assert_string_equal(uarch("GenuineIntel", 6, 0xcf, 2), "Emerald Rapids");
  assert_string_equal(uarch("GenuineIntel", 6, 0xad, 1), "Granite Rapids");
  assert_string_equal(uarch("GenuineIntel", 6, 0x97, 2), "Alder Lake");
  assert_string_equal(uarch("GenuineIntel", 6, 0xb7, 1), "Raptor Lake");
  assert_string_equal(uarch("GenuineIntel", 6, 0xaa, 4), "Meteor Lake");
  assert_string_equal(uarch("GenuineIntel", 6, 0x4e, 3), "Skylake");
  assert_string_equal(uarch("AuthenticAMD", 0x17, 0x31, 0), "Zen 2");
  assert_string_equal(uarch("AuthenticAMD", 0x17, 0x01, 2), "Zen");
  assert_string_equal(uarch("AuthenticAMD", 0x19, 0x01, 1), "Zen 3");
  assert_string_equal(uarch("AuthenticAMD", 0x19, 0x21, 0), "Zen 3");
  assert_string_equal(uarch("AuthenticAMD", 0x19, 0x11, 1), "Zen 4");
  assert_string_equal(uarch("AuthenticAMD", 0x19, 0x61, 2), "Zen 4");
  assert_string_equal(uarch("AuthenticAMD", 0x1a, 0x02, 1), "Zen 5");
  assert_string_equal(uarch("AuthenticAMD", 0x1a, 0x44, 0), "Zen 5");
  assert_string_equal(uarch("AuthenticAMD", 0x1a, 0x50, 0), ""); /* Zen 6: not in the table yet */
  assert_string_equal(uarch("GenuineIntel", 0x1a, 0x02, 1), ""); /* vendor matters */
  assert_string_equal(uarch("CentaurHauls", 6, 0x0f, 0), "");
  assert_true(tb_cpu_uarch_count() >= 30);
  for (size_t i = 0; i < tb_cpu_uarch_count(); i++) {
    const tb_cpu_uarch *r = tb_cpu_uarch_at(i);
    assert_true(strlen(r->name) > 0);
    assert_true(strlen(r->source) > 10);
    assert_true(r->model_lo <= r->model_hi);
    assert_true(r->stepping_lo <= r->stepping_hi);
  }
  assert_null(tb_cpu_uarch_at(tb_cpu_uarch_count()));
}

/* An unknown model: architecture "" and a property saying so. */
static void unknown_model_in_probe(void **state) {
  (void)state;
  static const char text[] = "0 0 1 756e6547 6c65746e 49656e69\n1 0 000106a5 0 00100000 0\n";
  char *path = cpu_temp_file(text, sizeof text - 1);
  cpu_env("cpu_cgroup_v2_docker", NULL); /* a tree without /proc/cpuinfo */
  setenv("TB_CPUID_FILE", path, 1);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_string_equal(d->vendor, "Intel");
  /* No brand-string leaves and no /proc/cpuinfo: the name says what is known. */
  assert_string_equal(d->name, "Intel CPU family 6 model 26");
  assert_string_equal(d->architecture, "");
  assert_string_equal(d->arch_id, "x86_64 family 6 model 26 stepping 5");
  ASSERT_PROP(d, "architecture_note", "GenuineIntel family 0x6 model 0x1a stepping 5 is not in TensorBridge's microarchitecture table");
  assert_int_equal(d->features, F(SSE4_2));
  ASSERT_PROP(d, "amx_permission", "not supported by this CPU");
  tb_device_list_destroy(list);
  /* With a /proc/cpuinfo, its "model name" is the name. */
  tbt_use_fixture("cpu_meminfo_junk");
  d = cpu_probe(&list);
  assert_string_equal(d->name, "Intel(R) Core(TM) i7-6500U CPU @ 2.50GHz");
  tb_device_list_destroy(list);
  unlink(path);
  free(path);
}

static void read_host(void **state) {
  (void)state;
  assert_true(tb_cpuid_read_host(&dump));
  uint32_t regs[4];
  assert_true(tb_cpuid_get(&dump, 0, 0, regs));
  assert_true(regs[TB_EAX] >= 7);
  assert_true(tb_cpuid_get(&dump, 1, 0, regs));
  assert_true(tb_cpuid_get(&dump, 7, 0, regs));
  assert_true(dump.has_xcr0);
  assert_int_equal(dump.xcr0 & 0x6, 0x6);
  tb_cpu_ident id;
  tb_cpuid_decode(&dump, &id);
  __builtin_cpu_init();
  assert_int_equal(!!(id.features & F(AVX512F)), !!__builtin_cpu_supports("avx512f"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_format),
      cmocka_unit_test(parse_errors),
      cmocka_unit_test(load_file_errors),
      cmocka_unit_test(decode_sapphire_rapids),
      cmocka_unit_test(decode_zen5_and_skylake),
      cmocka_unit_test(decode_xcr0_rules),
      cmocka_unit_test(decode_brand_and_vendor),
      cmocka_unit_test(microarchitecture_table),
      cmocka_unit_test(unknown_model_in_probe),
      cmocka_unit_test(read_host),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
