/* Internal: ROCm SMI (librocm_smi64.so, opened with dlopen) for what HIP cannot say without a context:
 * VRAM used and total per GPU, keyed by PCI bus id, and the amdgpu driver version. */
#ifndef TB_DISCOVER_AMD_SMI_H
#define TB_DISCOVER_AMD_SMI_H
#include <stdbool.h>
#include <stdint.h>
#include "discover/devlist.h"
#include "runtime/amd_smi_api.h"

typedef struct tb_smi_device {
  char bus_id[16];     /* normalized, from rsmi_dev_pci_id_get */
  bool memory_known;   /* total and used both read */
  uint64_t total, used;
} tb_smi_device;

typedef struct tb_smi_info {
  bool available;            /* loaded and rsmi_init succeeded */
  char driver_version[64];   /* rsmi_version_str_get(RSMI_SW_COMP_DRIVER), "" unknown */
  size_t count;
  tb_smi_device *devices;
} tb_smi_info;

/* Open ROCm SMI, read every device, shut it down and unload it; each step is recorded as a check of
 * the ROCm report. false only when host memory runs out. */
bool tb_smi_query(tb_device_list *list, tb_smi_info *out);
void tb_smi_free(tb_smi_info *info);
/* The device with this bus id, or NULL. */
const tb_smi_device *tb_smi_find(const tb_smi_info *info, const char *bus_id);

#endif
