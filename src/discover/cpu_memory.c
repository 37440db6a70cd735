/* Host memory for the CPU device: /proc/meminfo (Linux Documentation/filesystems/proc.rst) bounded by
 * the memory cgroup (Documentation/admin-guide/cgroup-v2.rst "memory.max", "memory.current";
 * cgroup-v1/memory.rst "memory.limit_in_bytes", "memory.usage_in_bytes"). */
#include "discover/cpu_memory.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include "core/fs.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_V1_MEMORY_ROOT "/sys/fs/cgroup/memory"

static void append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 3 >= cap) return;
  if (len) {
    strcpy(buf + len, "; ");
    len += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

/* A value quoted in a message: printable, at most 40 characters. */
static const char *shown(const char *text, char *buf, size_t cap) {
  size_t n = 0;
  for (; *text && n + 4 < cap && n < 40; text++) buf[n++] = isprint((unsigned char)*text) ? *text : '?';
  if (*text && n + 4 < cap) buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
  buf[n] = '\0';
  return buf;
}

bool tb_cgroup_v1_unlimited(uint64_t value) { return value >= (1ull << 62); }

/* "24684096 kB" -> bytes. */
static bool parse_kb(const char *v, uint64_t *bytes) {
  char number[32];
  size_t n = 0;
  while (isdigit((unsigned char)v[n]) && n + 1 < sizeof number) number[n] = v[n], n++;
  number[n] = '\0';
  const char *rest = v + n;
  while (*rest == ' ') rest++;
  uint64_t kb;
  if (n == 0 || (strcmp(rest, "kB") != 0 && *rest != '\0') || !tb_parse_u64(number, &kb) || kb > UINT64_MAX / 1024)
    return false;
  *bytes = kb * 1024;
  return true;
}

static void read_meminfo(tb_device_list *list, tb_cpu_memory *out, uint64_t *total, bool *total_ok, uint64_t *avail,
                         bool *avail_ok) {
  char text[8192], value[64], q[64];
  *total_ok = *avail_ok = false;
  if (!tb_fs_read("/proc/meminfo", text, sizeof text)) {
    append(out->meminfo_note, sizeof out->meminfo_note, "/proc/meminfo missing or empty; used sysinfo(2)");
  } else {
    static const char *const keys[2] = {"MemTotal:", "MemAvailable:"};
    uint64_t *dest[2] = {total, avail};
    bool *ok[2] = {total_ok, avail_ok};
    for (int k = 0; k < 2; k++) {
      if (!tb_kv_find(text, keys[k], value, sizeof value))
        append(out->meminfo_note, sizeof out->meminfo_note, "/proc/meminfo has no %s line; used sysinfo(2)", keys[k]);
      else if (!(*ok[k] = parse_kb(value, dest[k])))
        append(out->meminfo_note, sizeof out->meminfo_note, "/proc/meminfo %s '%s' is not a number of kB; used sysinfo(2)",
               keys[k], shown(value, q, sizeof q));
    }
  }
  if (!*total_ok || !*avail_ok) {
    struct sysinfo si;
    if (sysinfo(&si) == 0) {
      uint64_t unit = si.mem_unit ? si.mem_unit : 1;
      if (!*total_ok) *total = (uint64_t)si.totalram * unit, *total_ok = true;
      if (!*avail_ok) *avail = ((uint64_t)si.freeram + (uint64_t)si.bufferram) * unit, *avail_ok = true;
    }
  }
  if (out->meminfo_note[0])
    tb_report_check(list, TB_BACKEND_CPU, false, "/proc/meminfo", "%s", out->meminfo_note);
  else
    tb_report_check(list, TB_BACKEND_CPU, true, "/proc/meminfo", "MemTotal %llu bytes, MemAvailable %llu bytes",
                    (unsigned long long)*total, (unsigned long long)*avail);
}

/* Find the process's memory cgroup in /proc/self/cgroup: a v1 line whose controllers include
 * "memory", else the v2 line "0::<path>". */
static void find_cgroup(tb_device_list *list, tb_cpu_memory *out) {
  char text[8192], q[64];
  if (!tb_fs_read("/proc/self/cgroup", text, sizeof text)) {
    tb_report_check(list, TB_BACKEND_CPU, true, "/proc/self/cgroup", "missing: no cgroup limit applies");
    return;
  }
  char v2_path[sizeof out->cgroup_path] = "";
  bool have_v2 = false;
  int line_no = 0;
  for (char *line = text; line && *line;) {
    char *eol = strchr(line, '\n');
    if (eol) *eol = '\0';
    line_no++;
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || c1 == line || c2[1] != '/' || strlen(c2 + 1) >= sizeof out->cgroup_path) {
      append(out->cgroup_note, sizeof out->cgroup_note, "/proc/self/cgroup line %d '%s' is not 'id:controllers:/path'; ignored",
             line_no, shown(line, q, sizeof q));
    } else {
      *c2 = '\0';
      const char *controllers = c1 + 1, *path = c2 + 1;
      if (strncmp(line, "0:", 2) == 0 && *controllers == '\0') {
        strcpy(v2_path, path);
        have_v2 = true;
      }
      for (const char *p = controllers; *p;) {
        size_t len = strcspn(p, ",");
        if (len == 6 && strncmp(p, "memory", 6) == 0 && out->cgroup_version == 0) {
          out->cgroup_version = 1;
          strcpy(out->cgroup_path, path);
        }
        p += len + (p[len] == ',');
      }
    }
    line = eol ? eol + 1 : NULL;
  }
  if (out->cgroup_version == 0 && have_v2) {
    out->cgroup_version = 2;
    strcpy(out->cgroup_path, v2_path);
  }
  if (out->cgroup_version)
    tb_report_check(list, TB_BACKEND_CPU, true, "/proc/self/cgroup", "cgroup v%d memory controller, cgroup %s", out->cgroup_version,
                    out->cgroup_path);
  else
    tb_report_check(list, TB_BACKEND_CPU, out->cgroup_note[0] == '\0', "/proc/self/cgroup", "no memory cgroup line%s%s",
                    out->cgroup_note[0] ? ": " : "", out->cgroup_note);
}

typedef struct cgroup_files {
  const char *root, *limit, *usage;
} cgroup_files;

/* One level of the hierarchy: its limit (when finite) and its headroom (limit - usage). */
static void read_level(tb_device_list *list, tb_cpu_memory *out, const cgroup_files *f, const char *dir, uint64_t *headroom,
                       bool *headroom_known) {
  char path[512], text[64], q[64];
  uint64_t limit, usage;
  int n = snprintf(path, sizeof path, "%s/%s", dir, f->limit);
  if (n < 0 || (size_t)n >= sizeof path || !tb_fs_read(path, text, sizeof text)) return; /* the root cgroup has no limit file */
  if (out->cgroup_version == 2 && strcmp(text, "max") == 0) {
    tb_report_check(list, TB_BACKEND_CPU, true, path, "max (no limit)");
    return;
  }
  if (!tb_parse_u64(text, &limit)) {
    append(out->cgroup_note, sizeof out->cgroup_note, "%s: '%s' is not a number%s; ignored", path, shown(text, q, sizeof q),
           out->cgroup_version == 2 ? " or 'max'" : "");
    tb_report_check(list, TB_BACKEND_CPU, false, path, "'%s' is not a limit; ignored", shown(text, q, sizeof q));
    return;
  }
  if (out->cgroup_version == 1 && tb_cgroup_v1_unlimited(limit)) {
    tb_report_check(list, TB_BACKEND_CPU, true, path, "%llu (no limit)", (unsigned long long)limit);
    return;
  }
  tb_report_check(list, TB_BACKEND_CPU, true, path, "limit %llu bytes", (unsigned long long)limit);
  if (!out->limited || limit < out->cgroup_limit) out->cgroup_limit = limit;
  out->limited = true;
  n = snprintf(path, sizeof path, "%s/%s", dir, f->usage);
  bool have = n >= 0 && (size_t)n < sizeof path && tb_fs_read(path, text, sizeof text);
  if (!have || !tb_parse_u64(text, &usage)) {
    append(out->cgroup_note, sizeof out->cgroup_note, "%s: '%s' is not a number; ignored", path, have ? shown(text, q, sizeof q) : "(missing)");
    tb_report_check(list, TB_BACKEND_CPU, false, path, "'%s' is not a usage; ignored", have ? shown(text, q, sizeof q) : "(missing)");
    return;
  }
  uint64_t room = usage < limit ? limit - usage : 0;
  if (!*headroom_known || room < *headroom) *headroom = room;
  *headroom_known = true;
}

/* Read limits from the process's cgroup up to the root. A directory that does not exist (a container
 * whose /proc/self/cgroup names the host's path) is skipped, so its own root still counts. */
static void walk_cgroup(tb_device_list *list, tb_cpu_memory *out, uint64_t *headroom, bool *headroom_known) {
  static const cgroup_files v1 = {CGROUP_V1_MEMORY_ROOT, "memory.limit_in_bytes", "memory.usage_in_bytes"};
  static const cgroup_files v2 = {CGROUP_ROOT, "memory.max", "memory.current"};
  const cgroup_files *f = out->cgroup_version == 1 ? &v1 : &v2;
  if (strstr(out->cgroup_path, "/..") || strstr(out->cgroup_path, "//")) {
    append(out->cgroup_note, sizeof out->cgroup_note, "/proc/self/cgroup path '%s' is not a plain cgroup path; ignored",
           out->cgroup_path);
    return;
  }
  char rel[sizeof out->cgroup_path];
  strcpy(rel, out->cgroup_path);
  for (;;) {
    size_t len = strlen(rel);
    while (len > 0 && rel[len - 1] == '/') rel[--len] = '\0';
    char dir[512];
    snprintf(dir, sizeof dir, "%s%s", f->root, rel);
    if (tb_fs_exists(dir)) read_level(list, out, f, dir, headroom, headroom_known);
    if (len == 0) break;
    char *slash = strrchr(rel, '/');
    if (!slash) break;
    *slash = '\0';
  }
}

void tb_cpu_memory_probe(tb_device_list *list, tb_cpu_memory *out) {
  memset(out, 0, sizeof *out);
  uint64_t total = 0, avail = 0, headroom = 0;
  bool total_ok, avail_ok, headroom_known = false;
  read_meminfo(list, out, &total, &total_ok, &avail, &avail_ok);
  find_cgroup(list, out);
  if (out->cgroup_version) walk_cgroup(list, out, &headroom, &headroom_known);
  out->total_known = total_ok || out->limited;
  out->total = total_ok ? total : out->cgroup_limit;
  if (out->limited && out->cgroup_limit < out->total) out->total = out->cgroup_limit;
  out->available_known = avail_ok || headroom_known;
  out->available = avail_ok ? avail : headroom;
  if (headroom_known && headroom < out->available) out->available = headroom;
  if (out->total_known && out->available > out->total) out->available = out->total;
}
