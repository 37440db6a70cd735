/* PCI scan through sysfs: vendor, device, class and bound driver of every function. */
#include "discover/pci.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/fs.h"

bool tb_pci_normalize(const char *in, char *out, size_t cap) {
  unsigned int domain = 0, bus, dev, fn;
  char tail;
  if (!in) return false;
  if (sscanf(in, "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) == 4) {
    /* full form */
  } else if (sscanf(in, "%x:%x.%x%c", &bus, &dev, &fn, &tail) == 3) {
    domain = 0;
  } else {
    return false;
  }
  if (bus > 0xff || dev > 0x1f || fn > 7 || domain > 0xffff) return false;
  tb_pci_format(domain, bus, dev, fn, out, cap);
  return true;
}

void tb_pci_format(uint32_t domain, uint32_t bus, uint32_t dev, uint32_t fn, char *out, size_t cap) {
  snprintf(out, cap, "%04x:%02x:%02x.%x", domain & 0xffffu, bus & 0xffu, dev & 0x1fu, fn & 7u);
}

bool tb_pci_is_display_or_accel(uint32_t class_code) {
  uint32_t base = class_code >> 16;
  return base == 0x03 || base == 0x12;
}

static bool read_hex(const char *dir, const char *file, uint64_t *out) {
  char path[512];
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", dir, file);
  return tb_fs_read_u64(path, out);
}

static void read_driver(const char *dir, char *out, size_t cap) {
  char path[512], text[1024];
  out[0] = '\0';
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/uevent", dir);
  if (tb_fs_read(path, text, sizeof text) && tb_kv_find(text, "DRIVER", out, cap)) return;
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/driver", dir);
  if (!tb_fs_link_name(path, out, cap)) out[0] = '\0';
}

bool tb_pci_bus_visible(void) {
  char **names;
  size_t n;
  if (!tb_fs_list("/sys/bus/pci/devices", &names, &n)) return false;
  tb_fs_free_names(names, n);
  return n > 0;
}

bool tb_pci_scan(uint16_t vendor, uint32_t class_mask, uint32_t class_value, tb_pci_device **out, size_t *count) {
  *out = NULL;
  *count = 0;
  char **names;
  size_t n;
  if (!tb_fs_list("/sys/bus/pci/devices", &names, &n)) return true;
  tb_pci_device *devs = n ? calloc(n, sizeof *devs) : NULL;
  if (n && !devs) {
    tb_fs_free_names(names, n);
    return false;
  }
  size_t found = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t v, d, c;
    if (!read_hex(names[i], "vendor", &v) || !read_hex(names[i], "device", &d) || !read_hex(names[i], "class", &c)) continue;
    if (v > 0xffff || d > 0xffff || c > 0xffffff) continue;
    if (vendor && v != vendor) continue;
    if (class_mask && (c & class_mask) != class_value) continue;
    tb_pci_device *p = &devs[found];
    if (!tb_pci_normalize(names[i], p->bus_id, sizeof p->bus_id)) continue;
    p->vendor = (uint16_t)v;
    p->device = (uint16_t)d;
    p->class_code = (uint32_t)c;
    uint64_t x;
    if (read_hex(names[i], "subsystem_vendor", &x) && x <= 0xffff) p->subsystem_vendor = (uint16_t)x;
    if (read_hex(names[i], "subsystem_device", &x) && x <= 0xffff) p->subsystem_device = (uint16_t)x;
    if (read_hex(names[i], "revision", &x) && x <= 0xff) p->revision = (uint8_t)x;
    char path[512], text[32];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/numa_node", names[i]);
    p->numa_node = -1;
    uint64_t node;
    if (tb_fs_read(path, text, sizeof text) && tb_parse_u64(text, &node) && node < 4096) p->numa_node = (int)node;
    read_driver(names[i], p->driver, sizeof p->driver);
    found++;
  }
  tb_fs_free_names(names, n);
  if (found == 0) {
    free(devs);
    devs = NULL;
  }
  *out = devs;
  *count = found;
  return true;
}
