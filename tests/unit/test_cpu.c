/* The CPU probe end to end: the real CPU of this machine, and recorded machines (a cpuid dump through
 * TB_CPUID_FILE plus a /sys and /proc tree through TB_FSROOT) with every value known; malformed
 * cpuid files fall back to the real cpuid with a check naming the file and line. */
#include <cpuid.h>
#include <sched.h>
#include "test_cpu_helpers.h"
#include <errno.h>
#include "discover/capability.h"
#include "discover/cpu_amx.h"

static int affinity_count(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
  return CPU_COUNT(&set);
}

static uint64_t prop_u64(const tb_device_info *d, const char *key) {
  const char *v = tb_device_property(d, key);
  if (!v) fail_msg("property %s missing", key);
  return strtoull(v, NULL, 10);
}

/* This machine, whatever x86-64 CPU it has: the features agree with the compiler's own cpuid reading. */
static void real_cpu(void **state) {
  (void)state;
  cpu_env(NULL, NULL);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_true(strlen(d->name) > 0);
  assert_true(strlen(d->vendor) > 0);
  TB_ASSERT_CONTAINS(d->arch_id, "x86_64 family ");
  assert_string_equal(d->capability_source, "cpuid");
  assert_string_equal(d->memory_type, "system");
  ASSERT_PROP(d, "cpuid_source", "cpuid instruction");
  /* Whatever this x86-64 CPU has (AVX2 only, AVX-512, AVX512-BF16), the compiler's own cpuid reading agrees. */
  __builtin_cpu_init();
  assert_true(d->features & F(SSE4_2));
  assert_int_equal(!!(d->features & F(SSE4_2)), !!__builtin_cpu_supports("sse4.2"));
  assert_int_equal(!!(d->features & F(AVX2)), !!__builtin_cpu_supports("avx2"));
  assert_int_equal(!!(d->features & F(FMA)), !!__builtin_cpu_supports("fma"));
  assert_int_equal(!!(d->features & F(AVX512F)), !!__builtin_cpu_supports("avx512f"));
  assert_int_equal(!!(d->features & F(AVX512BW)), !!__builtin_cpu_supports("avx512bw"));
  assert_int_equal(!!(d->features & F(AVX512VL)), !!__builtin_cpu_supports("avx512vl"));
  assert_int_equal(!!(d->features & F(AVX512VNNI)), !!__builtin_cpu_supports("avx512vnni"));
  assert_int_equal(!!(d->features & F(AVX512BF16)), !!__builtin_cpu_supports("avx512bf16"));
  const char *amx = tb_device_property(d, "amx_permission");
  assert_non_null(amx);
  if (d->features & AMX_ALL) assert_string_equal(amx, "granted");
  else if (strcmp(amx, "not supported by this CPU") != 0) TB_ASSERT_CONTAINS(amx, "denied: ");
  assert_true(d->memory_total_known);
  assert_true(d->memory_total > GIB);
  assert_true(d->memory_free_known);
  assert_true(d->memory_free <= d->memory_total);
  assert_true(prop_u64(d, "l2_cache_bytes") > 0);
  assert_true(prop_u64(d, "threads") >= 1);
  assert_true(prop_u64(d, "cores") >= 1);
  assert_int_equal(d->compute_units, affinity_count());
  assert_int_equal(d->dtypes, tb_capability_cpu_dtypes(d->features)); /* bf16 with AVX512-BF16 or AMX */
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CPU);
  assert_true(r->available);
  TB_ASSERT_CONTAINS(r->summary, d->name);
  ASSERT_CHECK(list, "cpuid instruction", 1, "highest leaf");
  tb_device_list_destroy(list);
}

static void sapphire_rapids(void **state) {
  (void)state;
  cpu_env("cpu_spr", "cpu_spr/cpuid.txt");
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_string_equal(d->vendor, "Intel");
  assert_string_equal(d->name, "Intel(R) Xeon(R) Gold 5415+");
  assert_string_equal(d->architecture, "Sapphire Rapids");
  assert_string_equal(d->arch_id, "x86_64 family 6 model 143 stepping 8");
  assert_string_equal(d->capability_source, "cpuid");
  assert_int_equal(d->features, SPR_FEATURES);
  ASSERT_PROP(d, "amx_permission", "granted");
  ASSERT_PROP(d, "xcr0", "0x602e7");
  ASSERT_PROP(d, "cores", "16");
  ASSERT_PROP(d, "threads", "32");
  ASSERT_PROP(d, "sockets", "2");
  ASSERT_PROP(d, "numa_nodes", "2");
  ASSERT_PROP(d, "l1d_cache_bytes", "49152");
  ASSERT_PROP(d, "l2_cache_bytes", "2097152");
  ASSERT_PROP(d, "l3_cache_bytes", "23592960");
  /* cgroup v2: the service has memory.max "max", its parent system.slice 64 GiB with 8 GiB used. */
  assert_true(d->memory_total_known);
  assert_int_equal(d->memory_total, 64 * GIB);
  assert_true(d->memory_free_known);
  assert_int_equal(d->memory_free, 56 * GIB);
  ASSERT_PROP(d, "cgroup_memory_limit_bytes", "68719476736");
  ASSERT_PROP(d, "memory_available_bytes", "60129542144");
  ASSERT_PROP(d, "cgroup", "v2 /system.slice/tb-train.service");
  ASSERT_NO_PROP(d, "cgroup_memory_note");
  ASSERT_NO_PROP(d, "features_disabled_by_os");
  assert_int_equal(d->dtypes, tb_capability_cpu_dtypes(d->features));
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F16));
  assert_int_equal(d->compute_units, affinity_count());
  ASSERT_CHECK(list, "TB_CPUID_FILE", 1, "cpu_spr/cpuid.txt");
  ASSERT_CHECK(list, "ARCH_REQ_XCOMP_PERM", 1, "granted");
  ASSERT_CHECK(list, "/sys/fs/cgroup/system.slice/memory.max", 1, "68719476736");
  ASSERT_CHECK(list, "/sys/fs/cgroup/system.slice/tb-train.service/memory.max", 1, "no limit");
  tb_device_list_destroy(list);
}

/* cpuid and XCR0 say AMX, but the kernel refused ARCH_REQ_XCOMP_PERM: AMX is not reported. */
static void sapphire_rapids_amx_denied(void **state) {
  (void)state;
  cpu_env("cpu_spr", "cpu_spr/cpuid_amx_denied.txt");
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_int_equal(d->features, SPR_FEATURES & ~AMX_ALL);
  ASSERT_PROP(d, "amx_permission", "denied: EPERM");
  ASSERT_NO_PROP(d, "features_disabled_by_os");
  ASSERT_CHECK(list, "ARCH_REQ_XCOMP_PERM", 0, "denied: EPERM");
  assert_string_equal(d->architecture, "Sapphire Rapids");
  tb_device_list_destroy(list);
}

/* AMX in cpuid, XCR0 without the tile state (Linux 5.15): AMX not usable; garbage cgroup v2 files. */
static void sapphire_rapids_old_kernel(void **state) {
  (void)state;
  cpu_env("cpu_spr_amx_off", "cpu_spr_amx_off/cpuid.txt");
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_string_equal(d->name, "Intel(R) Xeon(R) Platinum 8488C");
  assert_string_equal(d->architecture, "Sapphire Rapids");
  assert_int_equal(d->features, SPR_FEATURES & ~AMX_ALL);
  ASSERT_PROP(d, "features_disabled_by_os", "amx_tile,amx_bf16,amx_int8");
  ASSERT_PROP_CONTAINS(d, "amx_permission", "denied: ");
  ASSERT_PROP_CONTAINS(d, "amx_permission", "XCR0 bits 17 and 18");
  ASSERT_PROP(d, "xcr0", "0x2e7");
  ASSERT_CHECK(list, "AMX tile state in XCR0", 0, "0x2e7");
  /* The recorded "denied EINVAL" is not consulted: the OS never enabled the state. */
  assert_false(cpu_check(list, "ARCH_REQ_XCOMP_PERM", -1, NULL));
  ASSERT_PROP(d, "cores", "4");
  ASSERT_PROP(d, "threads", "8");
  ASSERT_PROP(d, "sockets", "1");
  ASSERT_PROP(d, "numa_nodes", "1");
  ASSERT_PROP(d, "l3_cache_bytes", "110100480");
  /* Limits: the scope's memory.max is "lots" (ignored), the pod 12 GiB (its usage "-5" ignored),
   * kubepods.slice 16 GiB with 10 GiB used. */
  assert_int_equal(d->memory_total, 12 * GIB);
  assert_int_equal(d->memory_free, 6 * GIB);
  ASSERT_PROP(d, "cgroup_memory_limit_bytes", "12884901888");
  ASSERT_PROP_CONTAINS(d, "cgroup_memory_note", "cri-containerd-9af1b2c3.scope/memory.max: 'lots' is not a number or 'max'");
  ASSERT_PROP_CONTAINS(d, "cgroup_memory_note", "pod1c2d7e3f.slice/memory.current: '-5' is not a number");
  ASSERT_CHECK(list, "cri-containerd-9af1b2c3.scope/memory.max", 0, "'lots'");
  tb_device_list_destroy(list);
}

/* AVX2 laptop (no AVX-512) in a docker container with a 4 GiB cgroup v1 limit. */
static void skylake_laptop(void **state) {
  (void)state;
  cpu_env("cpu_skylake_laptop", "cpu_skylake_laptop/cpuid.txt");
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_string_equal(d->vendor, "Intel");
  assert_string_equal(d->name, "Intel(R) Core(TM) i7-6500U CPU @ 2.50GHz");
  assert_string_equal(d->architecture, "Skylake");
  assert_string_equal(d->arch_id, "x86_64 family 6 model 78 stepping 3");
  assert_int_equal(d->features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C));
  ASSERT_PROP(d, "amx_permission", "not supported by this CPU");
  ASSERT_PROP(d, "cores", "2");
  ASSERT_PROP(d, "threads", "4");
  ASSERT_PROP(d, "sockets", "1");
  ASSERT_PROP(d, "l1d_cache_bytes", "32768");
  ASSERT_PROP(d, "l2_cache_bytes", "262144");
  ASSERT_PROP(d, "l3_cache_bytes", "4194304");
  assert_int_equal(d->memory_total, 4 * GIB);
  assert_int_equal(d->memory_free, 3 * GIB);
  ASSERT_PROP(d, "cgroup_memory_limit_bytes", "4294967296");
  TB_ASSERT_CONTAINS(tb_device_property(d, "cgroup"), "v1 /docker/3f2a9c81");
  assert_false(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
  assert_int_equal(d->dtypes, tb_capability_cpu_dtypes(d->features));
  /* The container's own cgroup is the root of its mount: the host path does not exist and is skipped. */
  ASSERT_CHECK(list, "/sys/fs/cgroup/memory/memory.limit_in_bytes", 1, "4294967296");
  tb_device_list_destroy(list);
}

/* This machine, recorded: the dump was captured from the cpuid instruction here. */
static void zen5_epyc_recorded(void **state) {
  (void)state;
  cpu_env("cpu_zen5_epyc", "cpu_zen5_epyc/cpuid.txt");
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_string_equal(d->vendor, "AMD");
  assert_string_equal(d->name, "AMD EPYC");
  assert_string_equal(d->architecture, "Zen 5");
  assert_string_equal(d->arch_id, "x86_64 family 26 model 2 stepping 1");
  assert_int_equal(d->features, F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C) | F(AVX512F) | F(AVX512BW) | F(AVX512VL) |
                                    F(AVX512VNNI) | F(AVX512BF16));
  ASSERT_PROP(d, "amx_permission", "not supported by this CPU");
  ASSERT_PROP(d, "xcr0", "0x2e7");
  ASSERT_PROP(d, "cores", "2");
  ASSERT_PROP(d, "threads", "2");
  ASSERT_PROP(d, "sockets", "1");
  ASSERT_PROP(d, "numa_nodes", "1");
  ASSERT_PROP(d, "l1d_cache_bytes", "49152");
  ASSERT_PROP(d, "l2_cache_bytes", "1048576");
  ASSERT_PROP(d, "l3_cache_bytes", "33554432");
  /* cgroup v1 without a limit (9223372036854771712 at every level): /proc/meminfo alone. */
  assert_int_equal(d->memory_total, 24684096ull * 1024);
  assert_int_equal(d->memory_free, 24246604ull * 1024);
  ASSERT_NO_PROP(d, "cgroup_memory_limit_bytes");
  ASSERT_NO_PROP(d, "cgroup_memory_note");
  ASSERT_PROP(d, "cgroup", "v1 /process_api/d4ee248b9ff1f8eb59fc76896c32e856");
  ASSERT_CHECK(list, "process_api/memory.limit_in_bytes", 1, "9223372036854771712 (no limit)");
  tb_device_list_destroy(list);
}

/* The features, name and vendor the probe reports without TB_CPUID_FILE. */
typedef struct real_facts {
  uint64_t features;
  char name[128], vendor[32];
} real_facts;

static void real_cpu_facts(real_facts *out) {
  cpu_env(NULL, NULL);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  out->features = d->features;
  snprintf(out->name, sizeof out->name, "%s", d->name);
  snprintf(out->vendor, sizeof out->vendor, "%s", d->vendor);
  tb_device_list_destroy(list);
}

/* A bad TB_CPUID_FILE: cpu:0 is still there, described by the real cpuid, with a failed check. */
static void expect_fallback(const char *file, const char *detail1, const char *detail2) {
  real_facts real;
  real_cpu_facts(&real);
  cpu_env(NULL, NULL);
  setenv("TB_CPUID_FILE", file, 1);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  assert_int_equal(d->features, real.features);
  assert_string_equal(d->name, real.name);
  assert_string_equal(d->vendor, real.vendor);
  ASSERT_PROP(d, "cpuid_source", "cpuid instruction");
  ASSERT_CHECK(list, "TB_CPUID_FILE", 0, file);
  ASSERT_CHECK(list, "TB_CPUID_FILE", 0, detail1);
  if (detail2) ASSERT_CHECK(list, "TB_CPUID_FILE", 0, detail2);
  ASSERT_CHECK(list, "TB_CPUID_FILE", 0, "the file is ignored");
  ASSERT_CHECK(list, "cpuid instruction", 1, NULL);
  tb_device_list_destroy(list);
}

static char *read_fixture(const char *rel) {
  FILE *f = fopen(cpu_fixture_file(rel), "rb");
  assert_non_null(f);
  char *buf = calloc(1, 65536);
  assert_non_null(buf);
  size_t n = fread(buf, 1, 65535, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* The SPR dump cut after `lines` lines, plus an optional tail. */
static char *spr_prefix(int lines, const char *tail) {
  char *text = read_fixture("cpu_spr/cpuid.txt");
  char *p = text;
  for (int i = 0; i < lines && p; i++) {
    p = strchr(p, '\n');
    if (p) p++;
  }
  if (p) *p = '\0';
  char *out = malloc(strlen(text) + strlen(tail) + 1);
  assert_non_null(out);
  strcpy(out, text);
  strcat(out, tail);
  free(text);
  return out;
}

static void cpuid_file_truncated(void **state) {
  (void)state;
  /* Lines 1-2 are comments, 3 is leaf 0, 4 is leaf 1: leaf 7 (promised by leaf 0) is missing. */
  char *text = spr_prefix(4, "");
  char *path = cpu_temp_file(text, strlen(text));
  expect_fallback(path, "line 4: end of file: leaf 7 subleaf 0 is missing", "highest leaf is 0x20");
  unlink(path);
  free(path);
  free(text);
  /* Cut in the middle of line 5 (leaf 7). */
  text = spr_prefix(4, "00000007 00000000 00000002 f3bf");
  path = cpu_temp_file(text, strlen(text));
  expect_fallback(path, "line 5: expected 6 hex fields (leaf subleaf eax ebx ecx edx), found 4", NULL);
  unlink(path);
  free(path);
  free(text);
  /* Every leaf, but the xcr0 line lost although leaf 1 says OSXSAVE. */
  text = spr_prefix(21, "");
  path = cpu_temp_file(text, strlen(text));
  expect_fallback(path, "line 21: end of file: no 'xcr0' line", NULL);
  unlink(path);
  free(path);
  free(text);
}

static void cpuid_file_garbage(void **state) {
  (void)state;
  static const char junk[] = "hello world\nthis is not a cpuid dump\n";
  char *path = cpu_temp_file(junk, sizeof junk - 1);
  expect_fallback(path, "line 1: 'hello' is neither a leaf number nor xcr0 or amx_permission", NULL);
  unlink(path);
  free(path);
  static const char binary[] = "\x7f" "ELF\x02\x01\x01\0\0\0garbage";
  path = cpu_temp_file(binary, sizeof binary - 1);
  expect_fallback(path, "contains NUL bytes", NULL);
  unlink(path);
  free(path);
  char *text = spr_prefix(3, "00000001 00000000 000806f8 00800800 7ffefbff zzzzzzzz\n");
  path = cpu_temp_file(text, strlen(text));
  expect_fallback(path, "line 4: edx 'zzzzzzzz' is not a hex number", NULL);
  unlink(path);
  free(path);
  free(text);
  text = spr_prefix(21, "xcr0 602e7\namx_permission maybe\n");
  path = cpu_temp_file(text, strlen(text));
  expect_fallback(path, "line 23: amx_permission must be followed by 'granted' or 'denied", NULL);
  unlink(path);
  free(path);
  free(text);
  expect_fallback("/nonexistent/tb-cpuid.txt", "cannot open it: No such file or directory", NULL);
}

/* A file with nothing but a comment. */
static void cpuid_file_without_leaves(void **state) {
  (void)state;
  char *path = cpu_temp_file("# nothing recorded\n", 19);
  expect_fallback(path, "line 1: end of file: leaf 0 (vendor and highest leaf) is missing", NULL);
  unlink(path);
  free(path);
}

/* The real arch_prctl path: on a CPU without AMX the kernel refuses the tile-data request, with
 * EOPNOTSUPP (Linux 5.16 and later: the state component is not supported) or EINVAL (older kernels:
 * unknown arch_prctl code). The probe never asks there; this calls the function directly. */
static void amx_request_without_amx(void **state) {
  (void)state;
  unsigned a, b, c, d;
  /* an AMX machine (cpuid leaf 7 EDX bit 24, AMX-TILE): covered by real_cpu's granted path */
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 24))) TBT_SKIP("this CPU has AMX: real_cpu covers it");
  int err = tb_amx_request_permission();
  if (err != EOPNOTSUPP && err != EINVAL) fail_msg("arch_prctl(ARCH_REQ_XCOMP_PERM) gave errno %d", err);
  char buf[32];
  assert_string_equal(tb_errno_name(err, buf, sizeof buf), err == EINVAL ? "EINVAL" : "EOPNOTSUPP");
  assert_string_equal(tb_errno_name(EINVAL, buf, sizeof buf), "EINVAL");
  assert_string_equal(tb_errno_name(EPERM, buf, sizeof buf), "EPERM");
  assert_string_equal(tb_errno_name(9999, buf, sizeof buf), "errno 9999");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(real_cpu),
      cmocka_unit_test(sapphire_rapids),
      cmocka_unit_test(sapphire_rapids_amx_denied),
      cmocka_unit_test(sapphire_rapids_old_kernel),
      cmocka_unit_test(skylake_laptop),
      cmocka_unit_test(zen5_epyc_recorded),
      cmocka_unit_test(cpuid_file_truncated),
      cmocka_unit_test(cpuid_file_garbage),
      cmocka_unit_test(cpuid_file_without_leaves),
      cmocka_unit_test(amx_request_without_amx),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
