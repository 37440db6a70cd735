/* The bus view of NVIDIA GPUs: PCI functions, a small table of PCI device ids, /dev/nvidiaN minors and
 * the kernel module's version, all read under TB_FSROOT. */
#include "discover/nvidia_pci.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/fs.h"

/* Names as the driver reports them; compute capability from NVIDIA's CUDA GPUs list. */
static const tb_nv_model models[] = {
    {0x1db1, "Tesla V100-SXM2-16GB", 7, 0},
    {0x1db4, "Tesla V100-PCIE-16GB", 7, 0},
    {0x1db5, "Tesla V100-SXM2-32GB", 7, 0},
    {0x1db6, "Tesla V100-PCIE-32GB", 7, 0},
    {0x1eb8, "Tesla T4", 7, 5},
    {0x20b0, "NVIDIA A100-SXM4-40GB", 8, 0},
    {0x20b2, "NVIDIA A100-SXM4-80GB", 8, 0},
    {0x20b5, "NVIDIA A100 80GB PCIe", 8, 0},
    {0x20b7, "NVIDIA A30", 8, 0},
    {0x20f1, "NVIDIA A100-PCIE-40GB", 8, 0},
    {0x2204, "NVIDIA GeForce RTX 3090", 8, 6},
    {0x2236, "NVIDIA A10", 8, 6},
    {0x2321, "NVIDIA H100 NVL", 9, 0},
    {0x2330, "NVIDIA H100 80GB HBM3", 9, 0},
    {0x2331, "NVIDIA H100 PCIe", 9, 0},
    {0x2335, "NVIDIA H200", 9, 0},
    {0x2684, "NVIDIA GeForce RTX 4090", 8, 9},
    {0x26b5, "NVIDIA L40", 8, 9},
    {0x26b9, "NVIDIA L40S", 8, 9},
    {0x2704, "NVIDIA GeForce RTX 4080", 8, 9},
    {0x27b8, "NVIDIA L4", 8, 9},
    {0x28e0, "NVIDIA GeForce RTX 4060 Laptop GPU", 8, 9},
    {0x2901, "NVIDIA B200", 10, 0},
    {0x2b85, "NVIDIA GeForce RTX 5090", 12, 0},
};

const tb_nv_model *tb_nv_model_lookup(uint16_t device_id) {
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    if (models[i].device_id == device_id) return &models[i];
  return NULL;
}

static bool is_gpu_class(uint32_t class_code) {
  uint32_t subclass = class_code >> 8;
  return subclass == 0x0300 || subclass == 0x0302 || (class_code >> 16) == 0x12;
}

/* "Device Minor:" of /proc/driver/nvidia/gpus/<bus>/information; -1 when absent or not a number. */
static int proc_minor(const char *bus_id) {
  char path[256], text[2048], value[32];
  uint64_t minor;
  snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", bus_id);
  if (!tb_fs_read(path, text, sizeof text) || !tb_kv_find(text, "Device Minor:", value, sizeof value) ||
      !tb_parse_u64(value, &minor) || minor > 255)
    return -1;
  return (int)minor;
}

bool tb_nv_pci_scan(tb_device_list *list, tb_nv_pci_gpu **out, size_t *count) {
  *out = NULL;
  *count = 0;
  tb_pci_device *all = NULL;
  size_t n = 0;
  if (!tb_pci_scan(TB_PCI_VENDOR_NVIDIA, 0, 0, &all, &n)) return false;
  tb_nv_pci_gpu *gpus = n ? calloc(n, sizeof *gpus) : NULL;
  if (n && !gpus) {
    free(all);
    return false;
  }
  size_t found = 0;
  int nvidia_bound = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_gpu_class(all[i].class_code)) continue;
    tb_nv_pci_gpu *g = &gpus[found++];
    g->pci = all[i];
    g->minor = -1;
    if (strcmp(g->pci.driver, "nvidia") == 0) {
      int from_proc = proc_minor(g->pci.bus_id);
      g->minor = from_proc >= 0 ? from_proc : nvidia_bound;
      nvidia_bound++;
    }
    tb_report_check(list, TB_BACKEND_CUDA, g->pci.driver[0] != '\0', "PCI", "%s 10de:%04x class 0x%06x driver %s",
                    g->pci.bus_id, g->pci.device, g->pci.class_code, g->pci.driver[0] ? g->pci.driver : "none");
  }
  free(all);
  if (found == 0) {
    free(gpus);
    gpus = NULL;
    tb_report_check(list, TB_BACKEND_CUDA, false, "PCI",
                    "no NVIDIA display, 3D or accelerator function in /sys/bus/pci/devices");
  }
  *out = gpus;
  *count = found;
  return true;
}

static bool is_version(const char *token, size_t len) {
  size_t dots = 0;
  if (len == 0 || !isdigit((unsigned char)token[0]) || !isdigit((unsigned char)token[len - 1])) return false;
  for (size_t i = 0; i < len; i++) {
    if (token[i] == '.') dots++;
    else if (!isdigit((unsigned char)token[i])) return false;
  }
  return dots >= 1 && dots <= 3;
}

/* The first line reads "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  <date>" (or
 * "... Open Kernel Module for x86_64  550.54.15  Release Build ..."): the version is the first
 * dotted number after the "NVRM version:" prefix. */
bool tb_nv_kernel_version(char *out, size_t cap) {
  char text[1024];
  if (!tb_fs_read("/proc/driver/nvidia/version", text, sizeof text)) return false;
  const char *p = strstr(text, "NVRM version:");
  if (!p) return false;
  p += strlen("NVRM version:");
  const char *eol = strchr(p, '\n');
  if (!eol) eol = p + strlen(p);
  while (p < eol) {
    while (p < eol && isspace((unsigned char)*p)) p++;
    const char *start = p;
    while (p < eol && !isspace((unsigned char)*p)) p++;
    size_t len = (size_t)(p - start);
    if (is_version(start, len) && len < cap) {
      memcpy(out, start, len);
      out[len] = '\0';
      return true;
    }
  }
  return false;
}

int tb_nv_node_access(const char *path) { return tb_fs_access(path, R_OK | W_OK); }
