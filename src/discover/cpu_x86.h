/* Internal: describing an x86 CPU from cpuid, or from a recorded dump named by TB_CPUID_FILE. */
#ifndef TB_DISCOVER_CPU_X86_H
#define TB_DISCOVER_CPU_X86_H
#include <stdbool.h>
#include <stdint.h>
#include "discover/devlist.h"

/* Set vendor, name, arch_id, architecture and the cpuid properties (cpuid_source, xcr0,
 * amx_permission, ...) of dev, and *features: what the CPU has and the OS enabled, with AMX only
 * when the kernel granted the tile state. A malformed TB_CPUID_FILE is reported as a check and the
 * cpuid instruction is used instead. false (dev untouched) when there is neither a valid
 * TB_CPUID_FILE nor an x86 CPU to ask. */
bool tb_cpu_x86_describe(tb_device_list *list, tb_device_info *dev, uint64_t *features);

#endif
