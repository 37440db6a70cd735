/* Internal: AMD GPU facts keyed by PCI device id or gfx target that the KFD does not state: product
 * names for display, and which devices are APUs (integrated). Architecture never comes from here. */
#ifndef TB_DISCOVER_AMD_IDS_H
#define TB_DISCOVER_AMD_IDS_H
#include <stdbool.h>
#include <stdint.h>

/* "AMD Instinct MI300X" for 0x74a1; NULL when the id is not in the table. */
const char *tb_amd_product_name(uint32_t pci_device_id);

/* Memory type of products whose gfx target's row would say otherwise ("HBM3E" for MI325X, a gfx942
 * like MI300X's HBM3); NULL when the capability table's row applies. */
const char *tb_amd_memory_type(uint32_t pci_device_id);

/* True when the GPU shares the CPU's memory (an APU): the KFD node has CPU cores (ROCr's rule for an
 * APU node), or the PCI id is MI300A, or the gfx target exists only in APUs (Raven, Renoir, Rembrandt,
 * Phoenix, Strix ...). `gfx` may be "". */
bool tb_amd_is_apu(uint32_t pci_device_id, const char *gfx, uint64_t kfd_cpu_cores);

#endif
