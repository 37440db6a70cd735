/* Level Zero core API through dlopen: zeInit, drivers, devices and their properties, memory sizes, PCI
 * addresses. The symbol table and the structs, with their layouts pinned, are in intel_ze_api.h. */
#include "discover/intel_ze.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/dl.h"
#include "core/uuid.h"
#include "runtime/intel_ze_api.h"
#include "discover/intel_zes.h"
#include "discover/pci.h"

#define TB_ZE_INSTALL_FIX                                                                                      \
  "install the Level Zero loader and Intel's GPU compute runtime (Debian/Ubuntu: libze1 or level-zero, and " \
  "intel-level-zero-gpu or libze-intel-gpu1), or set TB_ZE_LIB to the path of libze_loader.so.1"

static bool open_loader(tb_device_list *list, tb_ze_scan *scan, void **handle, ze_api *api) {
  tb_dl_result dl;
  char missing[128];
  *handle = tb_ze_api_open(api, false, &dl, missing, sizeof missing);
  if (!*handle && !missing[0]) {
    tb_report_check(list, TB_BACKEND_XPU, false, "dlopen libze_loader", "%s: %s", dl.tried, dl.error);
    scan->outcome = TB_ZE_NO_LIBRARY;
    if (dl.from_env)
      snprintf(scan->failure, sizeof scan->failure, "libze_loader.so.1 not found at %s", dl.tried);
    else
      snprintf(scan->failure, sizeof scan->failure, "libze_loader.so.1 not found in the loader path");
    snprintf(scan->fix, sizeof scan->fix, "%s", TB_ZE_INSTALL_FIX);
    return false;
  }
  snprintf(scan->library, sizeof scan->library, "%s", dl.path);
  tb_report_check(list, TB_BACKEND_XPU, true, "dlopen libze_loader", "%s", dl.path);
  if (!*handle) {
    tb_report_check(list, TB_BACKEND_XPU, false, "dlsym", "%s not exported by %s", missing, dl.path);
    scan->outcome = TB_ZE_MISSING_SYMBOL;
    snprintf(scan->failure, sizeof scan->failure, "%s does not export %s (not a Level Zero loader, or a broken one)",
             dl.path, missing);
    snprintf(scan->fix, sizeof scan->fix, "%s", TB_ZE_INSTALL_FIX);
    return false;
  }
  return true;
}

static void set_call_failure(tb_device_list *list, tb_ze_scan *scan, tb_ze_outcome outcome, const char *call,
                             uint32_t r) {
  tb_report_check(list, TB_BACKEND_XPU, false, call, "0x%08x (%s)", r, tb_ze_result_name(r));
  scan->outcome = outcome;
  snprintf(scan->failure, sizeof scan->failure, "%s failed with 0x%08x (%s)", call, r, tb_ze_result_name(r));
  snprintf(scan->fix, sizeof scan->fix,
           "check that the i915 or xe kernel driver is loaded and /dev/dri/renderD* is accessible, and that Intel's "
           "GPU compute runtime (intel-level-zero-gpu or libze-intel-gpu1) matches the kernel driver; "
           "`ZE_ENABLE_LOADER_DEBUG_TRACE=1 tb devices` shows the loader's detail");
}

static void read_memory(tb_device_list *list, const ze_api *api, void *device, tb_ze_device *d) {
  if (!api->zeDeviceGetMemoryProperties) return;
  uint32_t count = 0;
  uint32_t r = ZE_CALL(api, zeDeviceGetMemoryProperties)(device, &count, NULL);
  if (r != 0 || count == 0) {
    tb_report_check(list, TB_BACKEND_XPU, false, "zeDeviceGetMemoryProperties", "%s: %u memories, 0x%08x (%s)",
                    d->name, count, r, tb_ze_result_name(r));
    return;
  }
  if (count > 16) count = 16;
  ze_device_memory_properties mem[16];
  memset(mem, 0, sizeof mem);
  for (uint32_t i = 0; i < count; i++) mem[i].stype = ZE_STYPE_DEVICE_MEMORY_PROPERTIES;
  r = ZE_CALL(api, zeDeviceGetMemoryProperties)(device, &count, mem);
  if (r != 0 || count > 16) {
    tb_report_check(list, TB_BACKEND_XPU, false, "zeDeviceGetMemoryProperties", "%s: 0x%08x (%s)", d->name, r,
                    tb_ze_result_name(r));
    return;
  }
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; i++) total += mem[i].totalSize;
  d->memory_total = total;
  d->memory_total_known = true;
}

static void read_pci_address(const ze_api *api, void *device, tb_ze_device *d) {
  if (!api->zeDevicePciGetPropertiesExt) return;
  ze_pci_ext_properties pci;
  memset(&pci, 0, sizeof pci);
  pci.stype = ZE_STYPE_PCI_EXT_PROPERTIES;
  if (ZE_CALL(api, zeDevicePciGetPropertiesExt)(device, &pci) != 0) return;
  if (pci.domain > 0xffff || pci.bus > 0xff || pci.device > 0x1f || pci.function > 7) return;
  tb_pci_format(pci.domain, pci.bus, pci.device, pci.function, d->bus_id, sizeof d->bus_id);
}

static void read_device(tb_device_list *list, const ze_api *api, void *device, tb_ze_device *d) {
  ze_device_properties p;
  memset(&p, 0, sizeof p);
  p.stype = ZE_STYPE_DEVICE_PROPERTIES;
  uint32_t r = ZE_CALL(api, zeDeviceGetProperties)(device, &p);
  if (r != 0) {
    d->props_result = r;
    tb_report_check(list, TB_BACKEND_XPU, false, "zeDeviceGetProperties", "0x%08x (%s)", r, tb_ze_result_name(r));
    read_pci_address(api, device, d);
    return;
  }
  p.name[sizeof p.name - 1] = '\0';
  d->type = p.type;
  d->vendor_id = p.vendorId;
  d->device_id = p.deviceId;
  d->flags = p.flags;
  snprintf(d->name, sizeof d->name, "%s", p.name);
  tb_uuid_format_hex(p.uuid, d->uuid);
  uint64_t eus = (uint64_t)p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice;
  d->eu_count = eus > 1000000 ? 0 : (uint32_t)eus;
  d->threads_per_eu = p.numThreadsPerEU;
  d->simd_width = p.physicalEUSimdWidth;
  d->core_clock_mhz = p.coreClockRate;
  d->max_alloc = p.maxMemAllocSize;
  read_memory(list, api, device, d);
  read_pci_address(api, device, d);
  if (api->zeDeviceGetComputeProperties) {
    ze_device_compute_properties c;
    memset(&c, 0, sizeof c);
    c.stype = ZE_STYPE_DEVICE_COMPUTE_PROPERTIES;
    if (ZE_CALL(api, zeDeviceGetComputeProperties)(device, &c) == 0) d->max_group_size = c.maxTotalGroupSize;
  }
  tb_report_check(list, TB_BACKEND_XPU, true, "zeDeviceGetProperties", "%s: type %u, id 0x%04x, %u EUs, bus %s", d->name,
                  d->type, d->device_id, d->eu_count, d->bus_id[0] ? d->bus_id : "unknown");
}

/* The Intel runtime encodes driverVersion as major << 24 | minor << 16 | build. */
static void driver_version(const ze_api *api, void *driver, char *out, size_t cap) {
  out[0] = '\0';
  if (!api->zeDriverGetProperties) return;
  ze_driver_properties p;
  memset(&p, 0, sizeof p);
  p.stype = ZE_STYPE_DRIVER_PROPERTIES;
  if (ZE_CALL(api, zeDriverGetProperties)(driver, &p) != 0 || p.driverVersion == 0) return;
  snprintf(out, cap, "%u.%u.%u", p.driverVersion >> 24, (p.driverVersion >> 16) & 0xffu, p.driverVersion & 0xffffu);
}

static bool append_device(tb_ze_scan *scan, size_t *cap) {
  if (scan->count < *cap) return true;
  size_t ncap = *cap ? *cap * 2 : 8;
  tb_ze_device *grown = realloc(scan->devices, ncap * sizeof *grown);
  if (!grown) return false;
  scan->devices = grown;
  *cap = ncap;
  return true;
}

static bool enumerate(tb_device_list *list, const ze_api *api, tb_ze_scan *scan) {
  uint32_t ndrivers = 0;
  uint32_t r = ZE_CALL(api, zeDriverGet)(&ndrivers, NULL);
  if (r != 0) {
    set_call_failure(list, scan, TB_ZE_ENUM_FAILED, "zeDriverGet", r);
    return true;
  }
  if (ndrivers > 16) ndrivers = 16;
  void *drivers[16] = {0};
  if (ndrivers && (r = ZE_CALL(api, zeDriverGet)(&ndrivers, drivers)) != 0) {
    set_call_failure(list, scan, TB_ZE_ENUM_FAILED, "zeDriverGet", r);
    return true;
  }
  tb_report_check(list, TB_BACKEND_XPU, true, "zeDriverGet", "%u driver%s", ndrivers, ndrivers == 1 ? "" : "s");
  size_t cap = 0;
  for (uint32_t di = 0; di < ndrivers && di < 16; di++) {
    char version[32];
    driver_version(api, drivers[di], version, sizeof version);
    uint32_t ndev = 0;
    r = ZE_CALL(api, zeDeviceGet)(drivers[di], &ndev, NULL);
    if (r == 0 && ndev > 256) ndev = 256;
    void **handles = (r == 0 && ndev) ? calloc(ndev, sizeof *handles) : NULL;
    if (r == 0 && ndev && !handles) return false;
    if (r == 0 && ndev) r = ZE_CALL(api, zeDeviceGet)(drivers[di], &ndev, handles);
    if (r != 0) {
      free(handles);
      set_call_failure(list, scan, TB_ZE_ENUM_FAILED, "zeDeviceGet", r);
      return true;
    }
    tb_report_check(list, TB_BACKEND_XPU, true, "zeDeviceGet", "driver %u (version %s): %u device%s", di,
                    version[0] ? version : "unknown", ndev, ndev == 1 ? "" : "s");
    for (uint32_t i = 0; i < ndev && i < 256; i++) {
      if (!append_device(scan, &cap)) {
        free(handles);
        return false;
      }
      tb_ze_device *d = &scan->devices[scan->count++];
      memset(d, 0, sizeof *d);
      d->driver_index = di;
      snprintf(d->driver_version, sizeof d->driver_version, "%s", version);
      read_device(list, api, handles[i], d);
    }
    free(handles);
  }
  return true;
}

/* Number the devices that share one PCI function (the tiles of a GPU listed one by one in FLAT mode). */
static void number_siblings(tb_ze_scan *scan) {
  for (size_t i = 0; i < scan->count; i++) {
    tb_ze_device *d = &scan->devices[i];
    d->sibling_index = 0;
    d->sibling_count = 1;
    if (!d->bus_id[0]) continue;
    for (size_t j = 0; j < scan->count; j++) {
      if (j == i || strcmp(scan->devices[j].bus_id, d->bus_id) != 0) continue;
      d->sibling_count++;
      if (j < i) d->sibling_index++;
    }
  }
}

void tb_ze_scan_run(tb_device_list *list, tb_ze_scan *scan) {
  memset(scan, 0, sizeof *scan);
  void *handle = NULL;
  ze_api api;
  memset(&api, 0, sizeof api);
  if (!open_loader(list, scan, &handle, &api)) {
    return;
  }
  uint32_t r = ZE_CALL(&api, zeInit)(0);
  if (r != 0) {
    set_call_failure(list, scan, TB_ZE_INIT_FAILED, "zeInit", r);
    return;
  }
  tb_report_check(list, TB_BACKEND_XPU, true, "zeInit", "0x00000000 (ZE_RESULT_SUCCESS)");
  if (!enumerate(list, &api, scan)) list->arena.failed = true;
  number_siblings(scan);
  if (scan->outcome == TB_ZE_OK && scan->count) tb_zes_read_free(list, handle, scan);
}

void tb_ze_scan_free(tb_ze_scan *scan) {
  free(scan->devices);
  scan->devices = NULL;
  scan->count = 0;
}
