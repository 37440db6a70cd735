/* Internal: CPU topology from sysfs (through tb_fs, so TB_FSROOT moves it): threads, physical cores
 * and sockets of the online CPUs, NUMA nodes, and the cache sizes of cpu0. */
#ifndef TB_DISCOVER_CPU_TOPOLOGY_H
#define TB_DISCOVER_CPU_TOPOLOGY_H
#include <stdbool.h>
#include <stdint.h>
#include "discover/devlist.h"

typedef struct tb_cpu_topology {
  unsigned threads, cores, sockets, numa_nodes; /* 0 when unknown */
  uint64_t l1d_bytes, l2_bytes, l3_bytes;       /* 0 when unknown */
} tb_cpu_topology;

/* Read /sys/devices/system/cpu (falling back to /proc/cpuinfo) and /sys/devices/system/node;
 * records what it read, and anything it had to skip, as checks of the CPU backend's report. */
void tb_cpu_topology_probe(tb_device_list *list, tb_cpu_topology *out);

/* A sysfs cache size: "48K" -> 49152; also plain bytes and M/G suffixes. false on anything else. */
bool tb_cpu_parse_cache_size(const char *text, uint64_t *out);
/* A kernel CPU list such as "0-3,8,10-11": the number of CPUs in it (8), and whether `cpu` is in it.
 * "" is an empty list. false on anything that is not such a list. */
bool tb_cpu_list_count(const char *text, unsigned *count);
bool tb_cpu_list_contains(const char *text, unsigned cpu, bool *contains);

#endif
