/* CPU memory and topology from recorded trees: cgroup v1 and v2 limits (nested, namespaced, garbage),
 * a /proc/meminfo with junk, the /proc/cpuinfo fallback, garbage sysfs files, and the parsers. */
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include "test_cpu_helpers.h"
#include "discover/cpu_memory.h"
#include "discover/cpu_topology.h"

/* Every memory test uses a recorded cpuid, so the device's identity is fixed too. */
static const tb_device_info *probe_tree(const char *fixture, tb_device_list **list) {
  cpu_env(fixture, "cpu_skylake_laptop/cpuid.txt");
  return cpu_probe(list);
}

/* Docker on cgroup v2 with its own namespace: "0::/" and the limit in the root's memory.max. */
static void cgroup_v2_namespaced(void **state) {
  (void)state;
  tb_device_list *list;
  const tb_device_info *d = probe_tree("cpu_cgroup_v2_docker", &list);
  assert_true(d->memory_total_known);
  assert_int_equal(d->memory_total, 2 * GIB);
  assert_int_equal(d->memory_free, 1536ull * 1024 * 1024);
  ASSERT_PROP(d, "cgroup", "v2 /");
  ASSERT_PROP(d, "cgroup_memory_limit_bytes", "2147483648");
  ASSERT_PROP(d, "memory_available_bytes", "1610612736");
  ASSERT_NO_PROP(d, "cgroup_memory_note");
  ASSERT_CHECK(list, "/sys/fs/cgroup/memory.max", 1, "limit 2147483648 bytes");
  /* No sysfs CPU tree and no /proc/cpuinfo here: counts unknown, said so; NUMA counted as 1. */
  ASSERT_NO_PROP(d, "cores");
  ASSERT_NO_PROP(d, "l2_cache_bytes");
  ASSERT_PROP(d, "numa_nodes", "1");
  ASSERT_CHECK(list, "/sys/devices/system/cpu", 0, "cores and sockets unknown");
  ASSERT_CHECK(list, "/sys/devices/system/cpu/cpu0/cache", 0, "missing");
  ASSERT_CHECK(list, "/sys/devices/system/node", 1, "counted as 1 node");
  tb_device_list_destroy(list);
}

/* /proc/self/cgroup is garbage: every line ignored with a note; memory from /proc/meminfo. */
static void cgroup_file_garbage(void **state) {
  (void)state;
  tb_device_list *list;
  const tb_device_info *d = probe_tree("cpu_cgroup_garbage", &list);
  assert_int_equal(d->memory_total, 8029424ull * 1024);
  assert_int_equal(d->memory_free, 6012345ull * 1024);
  ASSERT_NO_PROP(d, "cgroup_memory_limit_bytes");
  ASSERT_NO_PROP(d, "cgroup");
  ASSERT_PROP_CONTAINS(d, "cgroup_memory_note", "/proc/self/cgroup line 1 'this is not a cgroup file' is not 'id:controllers:/path'");
  ASSERT_PROP_CONTAINS(d, "cgroup_memory_note", "line 2 '7:memory'");
  ASSERT_PROP_CONTAINS(d, "cgroup_memory_note", "line 3 '::'");
  ASSERT_CHECK(list, "/proc/self/cgroup", 0, "no memory cgroup line");
  tb_device_list_destroy(list);
}

/* MemTotal is junk and MemAvailable is missing: sysinfo(2) gives them, noted. The v1 limit overflows
 * 64 bits: ignored, noted. Topology comes from /proc/cpuinfo, as there is no sysfs CPU tree. */
static void meminfo_junk(void **state) {
  (void)state;
  tb_device_list *list;
  const tb_device_info *d = probe_tree("cpu_meminfo_junk", &list);
  struct sysinfo si;
  assert_int_equal(sysinfo(&si), 0);
  assert_true(d->memory_total_known);
  assert_int_equal(d->memory_total, (uint64_t)si.totalram * si.mem_unit);
  assert_true(d->memory_free_known);
  assert_true(d->memory_free > 0 && d->memory_free <= d->memory_total);
  ASSERT_PROP_CONTAINS(d, "memory_note", "/proc/meminfo MemTotal: 'lots kB' is not a number of kB; used sysinfo(2)");
  ASSERT_PROP_CONTAINS(d, "memory_note", "/proc/meminfo has no MemAvailable: line");
  ASSERT_PROP(d, "cgroup_memory_note", "/sys/fs/cgroup/memory/memory.limit_in_bytes: '92233720368547758070' is not a number; ignored");
  ASSERT_NO_PROP(d, "cgroup_memory_limit_bytes");
  ASSERT_CHECK(list, "/proc/meminfo", 0, "'lots kB'");
  ASSERT_CHECK(list, "/proc/cpuinfo", 1, "4 processors, 1 packages, 2 cores");
  ASSERT_PROP(d, "threads", "4");
  ASSERT_PROP(d, "cores", "2");
  ASSERT_PROP(d, "sockets", "1");
  tb_device_list_destroy(list);
}

/* The memory struct directly, on the nested v2 tree. */
static void memory_probe_struct(void **state) {
  (void)state;
  cpu_env("cpu_spr_amx_off", NULL);
  tb_device_list *list = tb_devlist_new();
  assert_non_null(list);
  tb_cpu_memory m;
  tb_cpu_memory_probe(list, &m);
  assert_int_equal(m.cgroup_version, 2);
  TB_ASSERT_CONTAINS(m.cgroup_path, "/kubepods.slice/");
  assert_true(m.limited);
  assert_int_equal(m.cgroup_limit, 12 * GIB);
  assert_int_equal(m.total, 12 * GIB);
  assert_int_equal(m.available, 6 * GIB);
  assert_string_equal(m.meminfo_note, "");
  tb_device_list_destroy(list);
  assert_true(tb_cgroup_v1_unlimited(9223372036854771712ull));
  assert_true(tb_cgroup_v1_unlimited(0x7fffffffffff0000ull)); /* 64 KiB pages */
  assert_false(tb_cgroup_v1_unlimited(4 * GIB));
}

/* Garbage and truncated sysfs files: skipped with a check each, the rest still counted. */
static void sysfs_garbage(void **state) {
  (void)state;
  char *dir = tbt_fixture_copy("cpu_skylake_laptop");
  tbt_tree_write(dir, "sys/devices/system/cpu/cpu0/cache/index0/size", "48Q\n");
  tbt_tree_write(dir, "sys/devices/system/cpu/cpu0/cache/index3/level", "");
  tbt_tree_write(dir, "sys/devices/system/cpu/cpu1/topology/physical_package_id", "socket zero\n");
  tbt_tree_write(dir, "sys/devices/system/cpu/cpu2/topology/core_cpus_list", "0,2-\n");
  tbt_tree_write(dir, "proc/self/cgroup", "4:memory:/../../etc\n");
  cpu_env(NULL, "cpu_skylake_laptop/cpuid.txt");
  setenv("TB_FSROOT", dir, 1);
  tb_device_list *list;
  const tb_device_info *d = cpu_probe(&list);
  ASSERT_NO_PROP(d, "l1d_cache_bytes");
  ASSERT_NO_PROP(d, "l3_cache_bytes");
  ASSERT_PROP(d, "l2_cache_bytes", "262144");
  ASSERT_CHECK(list, "cpu0/cache/index0", 0, "size '48Q'");
  ASSERT_CHECK(list, "cpu0/cache/index3", 0, "unreadable");
  ASSERT_PROP(d, "threads", "4");
  ASSERT_NO_PROP(d, "sockets");
  ASSERT_NO_PROP(d, "cores");
  ASSERT_CHECK(list, "cpu1/topology/physical_package_id", 0, "sockets not counted");
  ASSERT_PROP_CONTAINS(d, "cgroup_memory_note", "path '/../../etc' is not a plain cgroup path");
  assert_int_equal(d->memory_total, 16247028ull * 1024);
  tb_device_list_destroy(list);
  /* An online list that is not a list: every cpuN directory counts. */
  tbt_tree_write(dir, "sys/devices/system/cpu/online", "zero to three\n");
  d = cpu_probe(&list);
  ASSERT_PROP(d, "threads", "4");
  ASSERT_CHECK(list, "/sys/devices/system/cpu/online", 0, "'zero to three' is not a CPU list");
  tb_device_list_destroy(list);
  /* An offline CPU is not counted. */
  tbt_tree_write(dir, "sys/devices/system/cpu/online", "0-2\n");
  d = cpu_probe(&list);
  ASSERT_PROP(d, "threads", "3");
  tb_device_list_destroy(list);
  tbt_tree_remove(dir);
}

static void parsers(void **state) {
  (void)state;
  uint64_t v;
  assert_true(tb_cpu_parse_cache_size("48K", &v));
  assert_int_equal(v, 49152);
  assert_true(tb_cpu_parse_cache_size("32768K", &v));
  assert_int_equal(v, 32ull * 1024 * 1024);
  assert_true(tb_cpu_parse_cache_size("2M", &v));
  assert_int_equal(v, 2ull * 1024 * 1024);
  assert_true(tb_cpu_parse_cache_size("1G", &v));
  assert_int_equal(v, GIB);
  assert_true(tb_cpu_parse_cache_size("512", &v));
  assert_int_equal(v, 512);
  static const char *const bad_sizes[] = {"", "K", "48KB", "-48K", " 48K", "48 K", "4.5M", "99999999999999999999K", "18014398509481984K"};
  for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++)
    if (tb_cpu_parse_cache_size(bad_sizes[i], &v)) fail_msg("'%s' parsed as a cache size", bad_sizes[i]);
  unsigned n;
  bool in;
  assert_true(tb_cpu_list_count("0-3,8,10-11", &n));
  assert_int_equal(n, 7);
  assert_true(tb_cpu_list_count("", &n));
  assert_int_equal(n, 0);
  assert_true(tb_cpu_list_contains("0-7,16-23", 17, &in));
  assert_true(in);
  assert_true(tb_cpu_list_contains("0-7,16-23", 8, &in));
  assert_false(in);
  static const char *const bad_lists[] = {"3-1", "0-", "-1", "0,,1", "0,", "a", "0-3 ", "99999999"};
  for (size_t i = 0; i < sizeof bad_lists / sizeof bad_lists[0]; i++)
    if (tb_cpu_list_count(bad_lists[i], &n)) fail_msg("'%s' parsed as a CPU list", bad_lists[i]);
  assert_false(tb_cpu_list_count(NULL, &n));
}

/* The topology struct directly, on the two-socket tree. */
static void topology_struct(void **state) {
  (void)state;
  cpu_env("cpu_spr", NULL);
  tb_device_list *list = tb_devlist_new();
  assert_non_null(list);
  tb_cpu_topology t;
  tb_cpu_topology_probe(list, &t);
  assert_int_equal(t.threads, 32);
  assert_int_equal(t.cores, 16);
  assert_int_equal(t.sockets, 2);
  assert_int_equal(t.numa_nodes, 2);
  assert_int_equal(t.l1d_bytes, 48 * 1024);
  assert_int_equal(t.l2_bytes, 2048 * 1024);
  assert_int_equal(t.l3_bytes, 23040 * 1024);
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cgroup_v2_namespaced),
      cmocka_unit_test(cgroup_file_garbage),
      cmocka_unit_test(meminfo_junk),
      cmocka_unit_test(memory_probe_struct),
      cmocka_unit_test(sysfs_garbage),
      cmocka_unit_test(parsers),
      cmocka_unit_test(topology_struct),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
