/* The XPU probe: Intel GPUs. The PCI bus (vendor 0x8086, display class 0x03xxxx) says what hardware is there,
 * which kernel driver is bound and which /dev/dri render node belongs to each function; Level Zero
 * (intel_ze.c, intel_zes.c) says which of them a program can use. Level Zero GPUs become "xpu:N", matched
 * to their PCI function by bus id; functions Level Zero does not list stay on the list, unusable, with the
 * reason and the fix. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/fs.h"
#include "discover/capability.h"
#include "discover/intel_names.h"
#include "discover/intel_ze.h"
#include "discover/pci.h"
#include "discover/probes.h"

#define TB_XPU TB_BACKEND_XPU

/* One Intel display function on the bus, with its render node. */
typedef struct intel_function {
  tb_pci_device pci;
  char render[80];  /* "/dev/dri/renderD128"; "" when sysfs shows none */
  int render_error; /* 0 when readable and writable, else the errno of access(2) */
  bool seen;        /* Level Zero lists it */
} intel_function;

static void find_render_node(tb_device_list *list, intel_function *f) {
  char dir[96];
  snprintf(dir, sizeof dir, "/sys/bus/pci/devices/%s/drm", f->pci.bus_id);
  char **names = NULL;
  size_t n = 0;
  f->render[0] = '\0';
  f->render_error = ENOENT;
  if (tb_fs_list(dir, &names, &n)) {
    for (size_t i = 0; i < n; i++) {
      if (strncmp(names[i], "renderD", 7) == 0 && strlen(names[i]) < 32) {
        snprintf(f->render, sizeof f->render, "/dev/dri/%s", names[i]);
        break;
      }
    }
  }
  tb_fs_free_names(names, n);
  if (!f->render[0]) {
    tb_report_check(list, TB_XPU, false, dir, "%s: no renderD* entry", f->pci.bus_id);
    return;
  }
  f->render_error = tb_fs_access(f->render, R_OK | W_OK);
  tb_report_check(list, TB_XPU, f->render_error == 0, f->render, "%s (driver %s): %s", f->pci.bus_id,
                  f->pci.driver[0] ? f->pci.driver : "none", f->render_error == 0 ? "read-write" : strerror(f->render_error));
}

static intel_function *scan_bus(tb_device_list *list, size_t *count) {
  tb_pci_device *pci = NULL;
  *count = 0;
  if (!tb_pci_scan(TB_PCI_VENDOR_INTEL, 0xff0000u, 0x030000u, &pci, count)) {
    list->arena.failed = true;
    return NULL;
  }
  tb_report_check(list, TB_XPU, true, "/sys/bus/pci/devices", "%zu Intel display function%s (vendor 0x8086, class 0x03xxxx)",
                  *count, *count == 1 ? "" : "s");
  intel_function *f = *count ? calloc(*count, sizeof *f) : NULL;
  if (*count && !f) {
    free(pci);
    *count = 0;
    list->arena.failed = true;
    return NULL;
  }
  for (size_t i = 0; i < *count; i++) {
    f[i].pci = pci[i];
    find_render_node(list, &f[i]);
  }
  free(pci);
  return f;
}

/* An Intel integrated GPU is always function 0000:00:02.0; anything else on the bus is a card. */
static bool integrated_by_address(const char *bus_id) { return strcmp(bus_id, "0000:00:02.0") == 0; }

static const char *gpu_name(uint16_t device_id, char *buf, size_t cap) {
  const char *name = tb_intel_gpu_name(device_id);
  if (name) return name;
  snprintf(buf, cap, "Intel GPU 0x%04x", device_id);
  return buf;
}

/* A problem with the function itself (driver, render node) as "reason tail" and fix; false when none. */
static bool function_problem(const intel_function *f, char *why, size_t why_cap, const char **fix) {
  const char *drv = f->pci.driver;
  if (!drv[0]) {
    snprintf(why, why_cap, "no kernel driver bound");
    *fix = "load the xe or i915 kernel driver (modprobe xe, or modprobe i915; Data Center GPU Max and Flex need "
           "Intel's intel-i915-dkms package on older kernels) and check `dmesg | grep -i -e i915 -e xe`";
    return true;
  }
  if (strcmp(drv, "i915") != 0 && strcmp(drv, "xe") != 0) {
    snprintf(why, why_cap, "bound to kernel driver %s, not i915 or xe", drv);
    *fix = strcmp(drv, "vfio-pci") == 0
               ? "the GPU is reserved for a virtual machine (vfio-pci); unbind it and bind i915 or xe to use it here"
               : "bind the GPU to the i915 or xe kernel driver";
    return true;
  }
  if (!f->render[0] || f->render_error == ENOENT) {
    snprintf(why, why_cap, "has no render node%s%s", f->render[0] ? " " : " (/dev/dri/renderD*)", f->render);
    *fix = "check that the kernel driver initialised the GPU (`dmesg | grep -i drm`); in a container, pass "
           "/dev/dri through (docker run --device /dev/dri)";
    return true;
  }
  if (f->render_error != 0) {
    snprintf(why, why_cap, "render node %s is not accessible (%s)", f->render, strerror(f->render_error));
    *fix = "add the user to the render group (sudo usermod -aG render $USER) and log in again";
    return true;
  }
  return false;
}

static intel_function *match_function(const tb_ze_device *d, intel_function *f, size_t n) {
  if (d->bus_id[0]) {
    for (size_t i = 0; i < n; i++)
      if (strcmp(f[i].pci.bus_id, d->bus_id) == 0) return &f[i];
    return NULL;
  }
  /* Without a PCI address from the driver: the first function with the same device id not yet taken. */
  for (size_t i = 0; i < n; i++)
    if (!f[i].seen && d->device_id && f[i].pci.device == d->device_id) return &f[i];
  return NULL;
}

static void set_common(tb_device_list *list, tb_device_info *dev, uint16_t device_id, const intel_function *f) {
  tb_dev_set(list, &dev->vendor, "Intel");
  tb_dev_set(list, &dev->arch_id, "0x%04x", device_id);
  tb_capability_apply(list, dev, tb_capability_intel(device_id));
  tb_dev_prop(list, dev, "pci_device_id", "0x%04x", device_id);
  if (!f) return;
  tb_dev_set(list, &dev->pci_bus_id, "%s", f->pci.bus_id);
  tb_dev_prop(list, dev, "pci_class", "0x%06x", f->pci.class_code);
  tb_dev_prop(list, dev, "kernel_driver", "%s", f->pci.driver[0] ? f->pci.driver : "none");
  if (f->render[0]) tb_dev_prop(list, dev, "render_node", "%s", f->render);
  if (f->pci.numa_node >= 0) tb_dev_prop(list, dev, "numa_node", "%d", f->pci.numa_node);
}

static void add_ze_device(tb_device_list *list, const tb_ze_scan *scan, const tb_ze_device *d, intel_function *f) {
  tb_device_info *dev = tb_devlist_add(list, TB_XPU);
  if (!dev) return;
  uint16_t device_id = (uint16_t)(d->device_id ? d->device_id : (f ? f->pci.device : 0));
  char buf[64];
  tb_dev_set(list, &dev->name, "%s", d->name[0] ? d->name : gpu_name(device_id, buf, sizeof buf));
  dev->type = (d->flags & TB_ZE_FLAG_INTEGRATED) ? TB_DEVICE_INTEGRATED_GPU : TB_DEVICE_DISCRETE_GPU;
  if (d->props_result != 0 && f) dev->type = integrated_by_address(f->pci.bus_id) ? TB_DEVICE_INTEGRATED_GPU : TB_DEVICE_DISCRETE_GPU;
  set_common(list, dev, device_id, f);
  if (!f && d->bus_id[0]) tb_dev_set(list, &dev->pci_bus_id, "%s", d->bus_id);
  dev->compute_units = (int)d->eu_count;
  dev->memory_total = d->memory_total;
  dev->memory_total_known = d->memory_total_known;
  dev->memory_free = d->memory_free;
  dev->memory_free_known = d->memory_free_known;
  tb_dev_set(list, &dev->driver_version, "%s", d->driver_version);
  tb_dev_set(list, &dev->uuid, "%s", d->uuid);
  tb_dev_prop(list, dev, "level_zero_loader", "%s", scan->library);
  if (d->eu_count) tb_dev_prop(list, dev, "eu_count", "%u", d->eu_count);
  if (d->threads_per_eu) tb_dev_prop(list, dev, "threads_per_eu", "%u", d->threads_per_eu);
  if (d->simd_width) tb_dev_prop(list, dev, "simd_width", "%u", d->simd_width);
  if (d->core_clock_mhz) tb_dev_prop(list, dev, "core_clock_mhz", "%u", d->core_clock_mhz);
  if (d->max_alloc) tb_dev_prop(list, dev, "max_alloc_bytes", "%llu", (unsigned long long)d->max_alloc);
  if (d->max_group_size) tb_dev_prop(list, dev, "max_work_group_size", "%u", d->max_group_size);
  if (d->sibling_count > 1) tb_dev_prop(list, dev, "tile", "%u of %u", d->sibling_index, d->sibling_count);
  dev->usable = true;
  char why[256];
  const char *fix = NULL;
  if (d->props_result != 0) {
    tb_dev_unusable(list, dev, "check `dmesg` for i915/xe errors; reset the GPU (or reboot) and retry",
                    "Intel GPU at %s: zeDeviceGetProperties failed with 0x%08x (%s)", f ? f->pci.bus_id : "?",
                    d->props_result, tb_ze_result_name(d->props_result));
  } else if (f && f->render[0] && function_problem(f, why, sizeof why, &fix)) {
    tb_dev_unusable(list, dev, fix, "%s at %s: %s", dev->name, f->pci.bus_id, why);
  }
}

static void add_bus_only_device(tb_device_list *list, const tb_ze_scan *scan, const intel_function *f) {
  tb_device_info *dev = tb_devlist_add_unindexed(list, TB_XPU, f->pci.bus_id);
  if (!dev) return;
  char buf[64];
  tb_dev_set(list, &dev->name, "%s", gpu_name(f->pci.device, buf, sizeof buf));
  dev->type = integrated_by_address(f->pci.bus_id) ? TB_DEVICE_INTEGRATED_GPU : TB_DEVICE_DISCRETE_GPU;
  set_common(list, dev, f->pci.device, f);
  char why[256];
  const char *fix = NULL;
  if (function_problem(f, why, sizeof why, &fix)) {
    tb_dev_unusable(list, dev, fix, "Intel GPU 0x%04x at %s present but %s", f->pci.device, f->pci.bus_id, why);
  } else if (scan->outcome != TB_ZE_OK) {
    tb_dev_unusable(list, dev, scan->fix, "Intel GPU 0x%04x at %s present but %s", f->pci.device, f->pci.bus_id,
                    scan->failure);
  } else {
    tb_dev_unusable(list, dev,
                    "install Intel's GPU compute runtime for this GPU (intel-level-zero-gpu or libze-intel-gpu1) and "
                    "check that ZE_AFFINITY_MASK / ONEAPI_DEVICE_SELECTOR do not hide it",
                    "Intel GPU 0x%04x at %s present but Level Zero (%s) does not list it", f->pci.device,
                    f->pci.bus_id, scan->library);
  }
}

static void summarize(tb_device_list *list, const tb_ze_scan *scan) {
  size_t found = 0, usable = 0;
  const char *first_fix = NULL;
  for (size_t i = 0; i < list->count; i++) {
    const tb_device_info *d = list->devices[i];
    if (d->backend != TB_XPU) continue;
    found++;
    if (d->usable) usable++;
    else if (!first_fix && d->fix[0]) first_fix = d->fix;
  }
  if (found == 0) {
    tb_report_set(list, TB_XPU, NULL, "no Intel GPU found");
    return;
  }
  tb_report_set(list, TB_XPU, usable ? NULL : first_fix, "%zu Intel GPU%s found, %zu usable%s%s", found,
                found == 1 ? "" : "s", usable, usable || scan->outcome == TB_ZE_OK ? "" : ": ",
                usable || scan->outcome == TB_ZE_OK ? "" : scan->failure);
}

void tb_probe_xpu(tb_device_list *list) {
  size_t nf = 0;
  intel_function *f = scan_bus(list, &nf);
  if (list->arena.failed) return;
  tb_ze_scan scan;
  /* Level Zero is opened only for an Intel GPU on the bus: its loader starts every installed driver,
   * and a runtime stays loaded for the life of the process once opened (core/dl.c). */
  if (nf > 0 || !tb_pci_bus_visible()) {
    tb_ze_scan_run(list, &scan);
  } else {
    memset(&scan, 0, sizeof scan);
    tb_report_check(list, TB_XPU, true, "dlopen libze_loader", "not opened: no Intel display function on the PCI bus");
  }
  for (size_t i = 0; i < scan.count; i++) {
    const tb_ze_device *d = &scan.devices[i];
    if (d->props_result == 0 && d->type != TB_ZE_DEVICE_TYPE_GPU) {
      tb_report_check(list, TB_XPU, true, "Level Zero device skipped", "%s: type %u is not a GPU", d->name, d->type);
      continue;
    }
    intel_function *fn = match_function(d, f, nf);
    if (fn) fn->seen = true;
    add_ze_device(list, &scan, d, fn);
  }
  for (size_t i = 0; i < nf; i++)
    if (!f[i].seen) add_bus_only_device(list, &scan, &f[i]);
  summarize(list, &scan);
  tb_ze_scan_free(&scan);
  free(f);
}
