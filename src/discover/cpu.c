/* The CPU probe: one device, "cpu:0", always usable. Identity and features come from cpuid on x86
 * (cpu_x86.c) and from hwcaps and /proc/cpuinfo on aarch64 (cpu_arm.c); TB_CPU_FEATURES masks the
 * features (cpu_features.c); topology, caches and NUMA from sysfs (cpu_topology.c); memory from
 * /proc/meminfo bounded by the memory cgroup (cpu_memory.c). See docs/cpu.md. */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>
#include "core/env.h"
#include "core/fs.h"
#include "discover/capability.h"
#include "discover/cpu_arm.h"
#include "core/cpu_features.h"
#include "discover/cpu_memory.h"
#include "discover/cpu_topology.h"
#include "discover/cpu_x86.h"
#include "discover/probes.h"
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

/* Identity and features on a CPU that cpuid does not describe. */
static void describe_other(tb_device_list *list, tb_device_info *dev, uint64_t *features) {
  enum { CPUINFO_HEAD = 64 * 1024 };
  char *text = malloc(CPUINFO_HEAD);
  bool have = text && tb_fs_read("/proc/cpuinfo", text, CPUINFO_HEAD);
#if defined(__aarch64__) && defined(__linux__)
  tb_cpu_arm_describe(list, dev, have ? text : NULL, true, getauxval(AT_HWCAP), getauxval(AT_HWCAP2), features);
#else
  char name[128] = "";
  *features = 0;
  if (have && !tb_cpuinfo_field(text, "model name", name, sizeof name)) tb_cpuinfo_field(text, "cpu", name, sizeof name);
  tb_dev_set(list, &dev->name, "%s", name[0] ? name : "CPU");
  tb_dev_set(list, &dev->capability_source, "none: TensorBridge reads no feature flags on this architecture");
  tb_report_check(list, TB_BACKEND_CPU, have, "/proc/cpuinfo", "%s", have ? "read the model name" : "missing");
#endif
  free(text);
}

typedef struct mask_notes {
  tb_device_list *list;
} mask_notes;

static void on_mask_item(void *ctx, tb_cpu_mask_outcome outcome, const char *item, const char *detail) {
  (void)item;
  mask_notes *notes = ctx;
  if (outcome != TB_CPU_MASK_APPLIED) tb_report_check(notes->list, TB_BACKEND_CPU, false, "TB_CPU_FEATURES", "%s", detail);
}

static uint64_t apply_mask(tb_device_list *list, tb_device_info *dev, uint64_t hardware) {
  const char *mask = tb_env("TB_CPU_FEATURES");
  if (!mask) return hardware;
  mask_notes notes = {list};
  tb_cpu_mask_result r = tb_cpu_features_apply_mask(hardware, mask, on_mask_item, &notes);
  char removed[256];
  tb_cpu_features_format(r.removed, removed, sizeof removed);
  tb_dev_prop(list, dev, "cpu_features_mask", "%s (removed: %s)", mask, removed);
  tb_report_check(list, TB_BACKEND_CPU, r.invalid_items == 0 && r.ignored_items == 0, "TB_CPU_FEATURES",
                  "'%s' removed %s; %zu item(s) skipped as invalid, %zu ignored", mask, removed, r.invalid_items,
                  r.ignored_items);
  return r.features;
}

/* Logical CPUs this process may run on. */
static int available_cpus(void) {
  for (int n = 1024; n <= 65536; n *= 4) {
    cpu_set_t *set = CPU_ALLOC((size_t)n);
    if (!set) break;
    size_t size = CPU_ALLOC_SIZE((size_t)n);
    CPU_ZERO_S(size, set);
    int count = sched_getaffinity(0, size, set) == 0 ? CPU_COUNT_S(size, set) : -1;
    CPU_FREE(set);
    if (count > 0) return count;
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? (int)online : 0;
}

static void set_topology(tb_device_list *list, tb_device_info *dev) {
  tb_cpu_topology t;
  tb_cpu_topology_probe(list, &t);
  if (t.cores) tb_dev_prop(list, dev, "cores", "%u", t.cores);
  if (t.threads) tb_dev_prop(list, dev, "threads", "%u", t.threads);
  if (t.sockets) tb_dev_prop(list, dev, "sockets", "%u", t.sockets);
  if (t.numa_nodes) tb_dev_prop(list, dev, "numa_nodes", "%u", t.numa_nodes);
  if (t.l1d_bytes) tb_dev_prop(list, dev, "l1d_cache_bytes", "%llu", (unsigned long long)t.l1d_bytes);
  if (t.l2_bytes) tb_dev_prop(list, dev, "l2_cache_bytes", "%llu", (unsigned long long)t.l2_bytes);
  if (t.l3_bytes) tb_dev_prop(list, dev, "l3_cache_bytes", "%llu", (unsigned long long)t.l3_bytes);
  dev->compute_units = available_cpus();
}

static void set_memory(tb_device_list *list, tb_device_info *dev) {
  tb_cpu_memory m;
  tb_cpu_memory_probe(list, &m);
  dev->memory_total = m.total;
  dev->memory_total_known = m.total_known;
  dev->memory_free = m.available;
  dev->memory_free_known = m.available_known;
  tb_dev_set(list, &dev->memory_type, "system");
  if (m.available_known) tb_dev_prop(list, dev, "memory_available_bytes", "%llu", (unsigned long long)m.available);
  if (m.cgroup_version) tb_dev_prop(list, dev, "cgroup", "v%d %s", m.cgroup_version, m.cgroup_path);
  if (m.limited) tb_dev_prop(list, dev, "cgroup_memory_limit_bytes", "%llu", (unsigned long long)m.cgroup_limit);
  if (m.cgroup_note[0]) tb_dev_prop(list, dev, "cgroup_memory_note", "%s", m.cgroup_note);
  if (m.meminfo_note[0]) tb_dev_prop(list, dev, "memory_note", "%s", m.meminfo_note);
}

void tb_probe_cpu(tb_device_list *list) {
  tb_device_info *dev = tb_devlist_add(list, TB_BACKEND_CPU);
  if (!dev) return;
  dev->type = TB_DEVICE_CPU;
  dev->usable = true;
  uint64_t hardware = 0;
  if (!tb_cpu_x86_describe(list, dev, &hardware)) describe_other(list, dev, &hardware);
  dev->features = apply_mask(list, dev, hardware);
  dev->dtypes = tb_capability_cpu_dtypes(dev->features);
  set_topology(list, dev);
  set_memory(list, dev);
  char features[512];
  tb_cpu_features_format(dev->features, features, sizeof features);
  tb_report_set(list, TB_BACKEND_CPU, NULL, "%s: %d logical CPUs available; features %s", dev->name, dev->compute_units,
                features);
}
