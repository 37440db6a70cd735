/* AMD product names by PCI device id (from the PCI ID repository's 1002 entries) and the APU rule. */
#include "discover/amd_ids.h"
#include <stddef.h>
#include <string.h>

static const struct {
  uint16_t id;
  const char *name;
} products[] = {
    {0x66af, "AMD Radeon VII"},
    {0x738c, "AMD Instinct MI100"},
    {0x7408, "AMD Instinct MI250X"},
    {0x740c, "AMD Instinct MI250X/MI250"},
    {0x740f, "AMD Instinct MI210"},
    {0x74a0, "AMD Instinct MI300A"},
    {0x74a1, "AMD Instinct MI300X"},
    {0x74a2, "AMD Instinct MI308X"},
    {0x74a5, "AMD Instinct MI325X"},
    {0x74b5, "AMD Instinct MI300X VF"},
    {0x75a0, "AMD Instinct MI350X"},
    {0x75a3, "AMD Instinct MI355X"},
    {0x73a1, "AMD Radeon PRO V620"},
    {0x73bf, "AMD Radeon RX 6800/6800 XT/6900 XT"},
    {0x7448, "AMD Radeon PRO W7900"},
    {0x744c, "AMD Radeon RX 7900 XTX/XT"},
    {0x747e, "AMD Radeon RX 7800 XT/7700 XT"},
    {0x7550, "AMD Radeon RX 9070/9070 XT"},
};

/* gfx targets that only exist as the GPU of an APU. */
static const char *const apu_targets[] = {"gfx801", "gfx902", "gfx909", "gfx90c", "gfx1013", "gfx1033", "gfx1035",
                                          "gfx1036", "gfx1037", "gfx1103", "gfx1150", "gfx1151", "gfx1152"};

#define TB_AMD_PCI_MI300A 0x74a0u

const char *tb_amd_product_name(uint32_t pci_device_id) {
  for (size_t i = 0; i < sizeof products / sizeof products[0]; i++)
    if (products[i].id == pci_device_id) return products[i].name;
  return NULL;
}

const char *tb_amd_memory_type(uint32_t pci_device_id) { return pci_device_id == 0x74a5u ? "HBM3E" : NULL; }

bool tb_amd_is_apu(uint32_t pci_device_id, const char *gfx, uint64_t kfd_cpu_cores) {
  if (kfd_cpu_cores > 0 || pci_device_id == TB_AMD_PCI_MI300A) return true;
  for (size_t i = 0; gfx && i < sizeof apu_targets / sizeof apu_targets[0]; i++)
    if (strcmp(gfx, apu_targets[i]) == 0) return true;
  return false;
}
