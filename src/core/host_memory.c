/* The host memory a process can still allocate: MemAvailable bounded by RLIMIT_AS minus the current size. */
#include "core/host_memory.h"
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
#include "core/fs.h"

bool tb_host_memory_room(uint64_t *bytes) {
  *bytes = UINT64_MAX;
  bool known = false;
  char text[8192], value[64];
  unsigned long long kib = 0;
  char unit[8] = "";
  if (tb_fs_read("/proc/meminfo", text, sizeof text) && tb_kv_find(text, "MemAvailable:", value, sizeof value) &&
      sscanf(value, "%llu %7s", &kib, unit) == 2 && unit[0] == 'k' && kib <= UINT64_MAX / 1024) {
    *bytes = (uint64_t)kib * 1024;
    known = true;
  }
  struct rlimit lim;
  unsigned long long pages = 0;
  long page = sysconf(_SC_PAGESIZE);
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && page > 0 &&
      tb_fs_read("/proc/self/statm", text, sizeof text) && sscanf(text, "%llu", &pages) == 1) {
    uint64_t used = (uint64_t)pages * (uint64_t)page, room = lim.rlim_cur > used ? lim.rlim_cur - used : 0;
    if (room < *bytes) *bytes = room;
    known = true;
  }
  return known;
}
