/* Product names of Intel GPUs by PCI device id. Source: the device-id lists of Intel's compute runtime
 * (intel/compute-runtime, shared/source/dll/devices/devices_base.inl and its successors) and Intel's
 * hardware table (dgpu-docs.intel.com, "Supported Hardware"). A name only: the architecture comes from the
 * capability table by the same id. */
#include "discover/intel_names.h"
#include <stddef.h>

static const struct {
  uint16_t id;
  const char *name;
} intel_gpus[] = {
    /* Xe-HPC (Ponte Vecchio) */
    {0x0bd5, "Intel Data Center GPU Max 1550"},
    {0x0bd6, "Intel Data Center GPU Max 1550"},
    {0x0bd7, "Intel Data Center GPU Max 1350"},
    {0x0bd8, "Intel Data Center GPU Max 1350"},
    {0x0bd9, "Intel Data Center GPU Max 1100"},
    {0x0bda, "Intel Data Center GPU Max 1100"},
    {0x0bdb, "Intel Data Center GPU Max 1100"},
    {0x0b69, "Intel Data Center GPU Max 1450"},
    /* Xe-HPG (Alchemist, DG2) */
    {0x56a0, "Intel Arc A770 Graphics"},
    {0x56a1, "Intel Arc A750 Graphics"},
    {0x56a2, "Intel Arc A580 Graphics"},
    {0x56a5, "Intel Arc A380 Graphics"},
    {0x56a6, "Intel Arc A310 Graphics"},
    {0x5690, "Intel Arc A770M Graphics"},
    {0x56c0, "Intel Data Center GPU Flex 170"},
    {0x56c1, "Intel Data Center GPU Flex 140"},
    /* Xe2-HPG (Battlemage) */
    {0xe20b, "Intel Arc B580 Graphics"},
    {0xe20c, "Intel Arc B570 Graphics"},
    /* Xe-LPG (Meteor Lake) and Xe2-LPG (Lunar Lake) */
    {0x7d55, "Intel Arc Graphics (Meteor Lake)"},
    {0x7dd5, "Intel Graphics (Meteor Lake)"},
    {0x64a0, "Intel Arc Graphics (Lunar Lake)"},
    /* Xe-LP (Tiger Lake, Alder Lake, Raptor Lake) */
    {0x9a49, "Intel Iris Xe Graphics"},
    {0x9a40, "Intel Iris Xe Graphics"},
    {0x46a6, "Intel Iris Xe Graphics"},
    {0xa7a0, "Intel Iris Xe Graphics"},
    {0xa7a1, "Intel Iris Xe Graphics"},
    {0x4680, "Intel UHD Graphics 770"},
    {0x4905, "Intel Iris Xe MAX Graphics"},
};

const char *tb_intel_gpu_name(uint16_t device_id) {
  for (size_t i = 0; i < sizeof intel_gpus / sizeof intel_gpus[0]; i++)
    if (intel_gpus[i].id == device_id) return intel_gpus[i].name;
  return NULL;
}
