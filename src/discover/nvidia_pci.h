/* Internal: the bus view of NVIDIA GPUs for the NVIDIA probe: PCI functions with their bound kernel
 * driver, names and compute capability from PCI device ids, the /dev/nvidiaN minor of each GPU, and
 * the kernel module's version from /proc/driver/nvidia. */
#ifndef TB_DISCOVER_NVIDIA_PCI_H
#define TB_DISCOVER_NVIDIA_PCI_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "discover/devlist.h"
#include "discover/pci.h"

/* A GPU model known by its PCI device id. */
typedef struct tb_nv_model {
  uint16_t device_id;
  const char *name;      /* as the driver names it */
  int cc_major, cc_minor; /* compute capability */
} tb_nv_model;

/* The model of a PCI device id; NULL when not in the local table. */
const tb_nv_model *tb_nv_model_lookup(uint16_t device_id);

typedef struct tb_nv_pci_gpu {
  tb_pci_device pci;
  int minor;   /* N of /dev/nvidiaN; -1 when no nvidia driver is bound */
  bool listed; /* libcuda lists this GPU (set by the probe) */
} tb_nv_pci_gpu;

/* NVIDIA display (0x0300), 3D (0x0302) and accelerator (0x12xx) functions, sorted by bus id, each
 * recorded as a check of the CUDA report. The minor comes from /proc/driver/nvidia/gpus/<bus>/
 * information ("Device Minor:") and otherwise from the order of the nvidia-bound GPUs on the bus,
 * which is how the driver numbers them. Free *out with free(). false only on memory failure. */
bool tb_nv_pci_scan(tb_device_list *list, tb_nv_pci_gpu **out, size_t *count);

/* The kernel module's version ("550.54.15") from /proc/driver/nvidia/version; false when the file
 * is absent or holds no version. */
bool tb_nv_kernel_version(char *out, size_t cap);

/* Whether a /dev node under TB_FSROOT can be opened read-write: 0, or the errno (ENOENT, EACCES). */
int tb_nv_node_access(const char *path);

#endif
