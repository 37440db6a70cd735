/* CPU topology and caches from sysfs (Linux Documentation/ABI/stable/sysfs-devices-system-cpu and
 * Documentation/admin-guide/cputopology.rst), with /proc/cpuinfo as the fallback for counts. */
#include "discover/cpu_topology.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/fs.h"

#define CPU_DIR "/sys/devices/system/cpu"
#define NODE_DIR "/sys/devices/system/node"
#define MAX_SOCKET_IDS 1024

bool tb_cpu_parse_cache_size(const char *text, uint64_t *out) {
  if (!text || !isdigit((unsigned char)*text)) return false;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno) return false;
  uint64_t scale = 1;
  if (*end == 'K') scale = 1024, end++;
  else if (*end == 'M') scale = 1024 * 1024, end++;
  else if (*end == 'G') scale = 1024ull * 1024 * 1024, end++;
  if (*end != '\0' || v > UINT64_MAX / scale) return false;
  *out = (uint64_t)v * scale;
  return true;
}

static bool parse_uint(const char **p, unsigned *out) {
  if (!isdigit((unsigned char)**p)) return false;
  unsigned long v = 0;
  while (isdigit((unsigned char)**p)) {
    v = v * 10 + (unsigned long)(**p - '0');
    if (v > 1u << 24) return false; /* no machine has 16 million CPUs */
    (*p)++;
  }
  *out = (unsigned)v;
  return true;
}

/* Walk a CPU list; count its members and look for `cpu`. */
static bool walk_list(const char *p, unsigned cpu, unsigned *count, bool *contains) {
  *count = 0;
  *contains = false;
  if (*p == '\0') return true;
  for (;;) {
    unsigned lo, hi;
    if (!parse_uint(&p, &lo)) return false;
    hi = lo;
    if (*p == '-') {
      p++;
      if (!parse_uint(&p, &hi) || hi < lo) return false;
    }
    *count += hi - lo + 1;
    if (cpu >= lo && cpu <= hi) *contains = true;
    if (*p == '\0') return true;
    if (*p != ',') return false;
    p++;
  }
}

bool tb_cpu_list_count(const char *text, unsigned *count) {
  bool contains;
  return text && walk_list(text, 0, count, &contains);
}

bool tb_cpu_list_contains(const char *text, unsigned cpu, bool *contains) {
  unsigned count;
  return text && walk_list(text, cpu, &count, contains);
}

/* "cpu12" -> 12; false for cpufreq, cpuidle, ... */
static bool cpu_dir_number(const char *name, unsigned *out) {
  if (strncmp(name, "cpu", 3) != 0 || !isdigit((unsigned char)name[3])) return false;
  const char *p = name + 3;
  return parse_uint(&p, out) && *p == '\0';
}

typedef struct counts {
  unsigned threads, cores, sockets;
  unsigned socket_ids[MAX_SOCKET_IDS];
  bool cores_known, sockets_known;
} counts;

static void add_socket(counts *c, unsigned id) {
  for (unsigned i = 0; i < c->sockets; i++)
    if (c->socket_ids[i] == id) return;
  if (c->sockets < MAX_SOCKET_IDS) c->socket_ids[c->sockets++] = id;
}

/* One online CPU: a thread; the first CPU of its core's sibling list starts a core. */
static void count_cpu(tb_device_list *list, counts *c, unsigned n, unsigned *bad) {
  char path[128], text[256];
  uint64_t package;
  c->threads++;
  snprintf(path, sizeof path, CPU_DIR "/cpu%u/topology/physical_package_id", n);
  if (tb_fs_read_u64(path, &package)) {
    add_socket(c, (unsigned)package);
  } else {
    c->sockets_known = false;
    if ((*bad)++ == 0) tb_report_check(list, TB_BACKEND_CPU, false, path, "missing or not a number; sockets not counted");
  }
  snprintf(path, sizeof path, CPU_DIR "/cpu%u/topology/core_cpus_list", n);
  bool have = tb_fs_read(path, text, sizeof text);
  if (!have) {
    snprintf(path, sizeof path, CPU_DIR "/cpu%u/topology/thread_siblings_list", n);
    have = tb_fs_read(path, text, sizeof text);
  }
  const char *p = text;
  unsigned first;
  bool in_list;
  if (have && tb_cpu_list_contains(text, n, &in_list) && in_list && parse_uint(&p, &first)) {
    if (first == n) c->cores++;
  } else {
    c->cores_known = false;
    if ((*bad)++ == 0)
      tb_report_check(list, TB_BACKEND_CPU, false, path, "'%s' is not a CPU list containing cpu%u; cores not counted", have ? text : "(missing)", n);
  }
}

static bool counts_from_sysfs(tb_device_list *list, counts *c) {
  char **names = NULL, online[4096];
  size_t count = 0;
  if (!tb_fs_list(CPU_DIR, &names, &count)) return false;
  bool have_online = tb_fs_read(CPU_DIR "/online", online, sizeof online);
  unsigned dummy;
  if (have_online && !tb_cpu_list_count(online, &dummy)) {
    tb_report_check(list, TB_BACKEND_CPU, false, CPU_DIR "/online", "'%.60s' is not a CPU list; counting every cpuN directory", online);
    have_online = false;
  }
  c->cores_known = c->sockets_known = true;
  unsigned bad = 0;
  for (size_t i = 0; i < count; i++) {
    unsigned n;
    bool is_online = true;
    if (!cpu_dir_number(names[i], &n)) continue;
    if (have_online) tb_cpu_list_contains(online, n, &is_online);
    if (is_online) count_cpu(list, c, n, &bad);
  }
  tb_fs_free_names(names, count);
  if (c->threads == 0) return false;
  if (have_online)
    tb_report_check(list, TB_BACKEND_CPU, true, CPU_DIR, "%u online CPUs (online: %.60s)", c->threads, online);
  else
    tb_report_check(list, TB_BACKEND_CPU, true, CPU_DIR, "%u CPUs (no online list; every cpuN directory counted)", c->threads);
  return true;
}

/* /proc/cpuinfo: "processor", "physical id" and "core id" lines, one block per logical CPU. */
static bool counts_from_cpuinfo(tb_device_list *list, counts *c) {
  enum { CPUINFO_MAX = 1 << 21, MAX_CORES = 4096 };
  char *text = malloc(CPUINFO_MAX);
  unsigned long *pairs = malloc(MAX_CORES * sizeof *pairs);
  bool have = text && pairs && tb_fs_read("/proc/cpuinfo", text, CPUINFO_MAX);
  if (!have) {
    free(text);
    free(pairs);
    return false;
  }
  size_t npairs = 0;
  long package = -1;
  c->cores_known = c->sockets_known = true;
  for (char *line = text; line && *line;) {
    char *eol = strchr(line, '\n');
    if (eol) *eol = '\0';
    unsigned long v;
    if (strncmp(line, "processor", 9) == 0) {
      c->threads++;
      package = -1;
    } else if (sscanf(line, "physical id : %lu", &v) == 1) {
      package = (long)v;
      add_socket(c, (unsigned)v);
    } else if (sscanf(line, "core id : %lu", &v) == 1 && package >= 0) {
      unsigned long key = ((unsigned long)package << 20) | (v & 0xfffff);
      size_t j = 0;
      while (j < npairs && pairs[j] != key) j++;
      if (j == npairs && npairs < MAX_CORES) pairs[npairs++] = key;
    }
    line = eol ? eol + 1 : NULL;
  }
  c->cores = (unsigned)npairs;
  if (c->sockets == 0) c->sockets_known = false;
  if (npairs == 0) c->cores_known = false;
  free(text);
  free(pairs);
  tb_report_check(list, TB_BACKEND_CPU, c->threads > 0, "/proc/cpuinfo", "%u processors, %u packages, %zu cores", c->threads,
                  c->sockets, npairs);
  return c->threads > 0;
}

static void read_caches(tb_device_list *list, tb_cpu_topology *out) {
  const char *dir = CPU_DIR "/cpu0/cache";
  char **names = NULL;
  size_t count = 0;
  if (!tb_fs_list(dir, &names, &count)) {
    tb_report_check(list, TB_BACKEND_CPU, false, dir, "missing; cache sizes unknown");
    return;
  }
  for (size_t i = 0; i < count; i++) {
    if (strncmp(names[i], "index", 5) != 0) continue;
    char path[160], type[32], size_text[32];
    uint64_t level, bytes;
    snprintf(path, sizeof path, "%s/%s/level", dir, names[i]);
    bool ok = tb_fs_read_u64(path, &level);
    snprintf(path, sizeof path, "%s/%s/type", dir, names[i]);
    ok = ok && tb_fs_read(path, type, sizeof type);
    snprintf(path, sizeof path, "%s/%s/size", dir, names[i]);
    bool have_size = tb_fs_read(path, size_text, sizeof size_text);
    if (!ok || !have_size || !tb_cpu_parse_cache_size(size_text, &bytes)) {
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      tb_report_check(list, TB_BACKEND_CPU, false, path, "level, type or size unreadable (size '%s'); skipped", have_size ? size_text : "missing");
      continue;
    }
    bool data = strcmp(type, "Data") == 0 || strcmp(type, "Unified") == 0;
    if (level == 1 && data) out->l1d_bytes = bytes;
    if (level == 2 && data) out->l2_bytes = bytes;
    if (level == 3 && data) out->l3_bytes = bytes;
  }
  tb_fs_free_names(names, count);
  tb_report_check(list, TB_BACKEND_CPU, out->l2_bytes > 0, dir, "L1d %llu, L2 %llu, L3 %llu bytes", (unsigned long long)out->l1d_bytes,
                  (unsigned long long)out->l2_bytes, (unsigned long long)out->l3_bytes);
}

static void count_numa_nodes(tb_device_list *list, tb_cpu_topology *out) {
  char **names = NULL;
  size_t count = 0;
  if (!tb_fs_list(NODE_DIR, &names, &count)) {
    out->numa_nodes = 1;
    tb_report_check(list, TB_BACKEND_CPU, true, NODE_DIR, "missing (a kernel without NUMA support): counted as 1 node");
    return;
  }
  unsigned nodes = 0, n;
  for (size_t i = 0; i < count; i++) {
    const char *p = names[i] + 4;
    if (strncmp(names[i], "node", 4) == 0 && parse_uint(&p, &n) && *p == '\0') nodes++;
  }
  tb_fs_free_names(names, count);
  out->numa_nodes = nodes ? nodes : 1;
  if (nodes)
    tb_report_check(list, TB_BACKEND_CPU, true, NODE_DIR, "%u NUMA node(s)", nodes);
  else
    tb_report_check(list, TB_BACKEND_CPU, false, NODE_DIR, "no nodeN directories: counted as 1 node");
}

void tb_cpu_topology_probe(tb_device_list *list, tb_cpu_topology *out) {
  memset(out, 0, sizeof *out);
  counts *c = calloc(1, sizeof *c);
  if (!c) {
    list->arena.failed = true;
    return;
  }
  bool counted = counts_from_sysfs(list, c);
  if (!counted) {
    memset(c, 0, sizeof *c);
    counted = counts_from_cpuinfo(list, c);
  }
  if (counted) {
    out->threads = c->threads;
    out->cores = c->cores_known ? c->cores : 0;
    out->sockets = c->sockets_known ? c->sockets : 0;
  } else {
    tb_report_check(list, TB_BACKEND_CPU, false, CPU_DIR, "no cpuN topology in sysfs and no /proc/cpuinfo; cores and sockets unknown");
  }
  free(c);
  read_caches(list, out);
  count_numa_nodes(list, out);
}
