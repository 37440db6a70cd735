/* Internal: host memory for the CPU device, honouring the process's memory cgroup (v1 and v2).
 * /proc/meminfo gives MemTotal and MemAvailable; /proc/self/cgroup names the cgroup, whose limit
 * and usage files are read at each level up to the root (the smallest limit binds). Everything is
 * read through tb_fs, so TB_FSROOT moves it. Garbage is ignored and described, never fatal. */
#ifndef TB_DISCOVER_CPU_MEMORY_H
#define TB_DISCOVER_CPU_MEMORY_H
#include <stdbool.h>
#include <stdint.h>
#include "discover/devlist.h"

typedef struct tb_cpu_memory {
  uint64_t total, available;     /* bytes: min(MemTotal, limit), min(MemAvailable, limit - usage) */
  bool total_known, available_known;
  bool limited;                  /* a finite cgroup limit applies */
  uint64_t cgroup_limit;         /* the smallest limit from the process's cgroup up to the root */
  int cgroup_version;            /* 1 or 2; 0 when no memory cgroup was found */
  char cgroup_path[256];         /* the cgroup of the process, as /proc/self/cgroup names it */
  char cgroup_note[512];         /* what was wrong with the cgroup files; "" when nothing */
  char meminfo_note[256];        /* what was wrong with /proc/meminfo; "" when nothing */
} tb_cpu_memory;

/* Fill *out, recording each file read as a check of the CPU backend's report. */
void tb_cpu_memory_probe(tb_device_list *list, tb_cpu_memory *out);

/* Whether a cgroup v1 limit_in_bytes value means "no limit" (the kernel writes the page counter
 * maximum rounded to pages, such as 9223372036854771712). */
bool tb_cgroup_v1_unlimited(uint64_t value);

#endif
