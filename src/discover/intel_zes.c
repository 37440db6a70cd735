/* Free device memory from Level Zero Sysman: zesInit(0), zesDriverGet, zesDeviceGet, the PCI address of each
 * Sysman device (zesDevicePciGetProperties), then its memory modules (zesDeviceEnumMemoryModules,
 * zesMemoryGetProperties, zesMemoryGetState), through the table in runtime/intel_zes_api.h. */
#include "discover/intel_zes.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "discover/pci.h"
#include "runtime/intel_zes_api.h"

#define TB_ZES_MAX_DEVICES 64
#define TB_ZES_MAX_MODULES 16

/* One memory module of a Sysman device. */
typedef struct zes_module {
  bool on_subdevice;
  uint32_t subdevice_id;
  uint64_t free, size;
} zes_module;

typedef struct zes_device {
  char bus_id[16];
  zes_module modules[TB_ZES_MAX_MODULES];
  unsigned module_count;
} zes_device;

static void read_modules(tb_device_list *list, const tb_zes_api *api, void *device, zes_device *out) {
  uint32_t n = 0;
  uint32_t r = TB_ZES_CALL(api, zesDeviceEnumMemoryModules)(device, &n, NULL);
  void *modules[TB_ZES_MAX_MODULES] = {0};
  if (n > TB_ZES_MAX_MODULES) n = TB_ZES_MAX_MODULES;
  if (r == 0 && n) r = TB_ZES_CALL(api, zesDeviceEnumMemoryModules)(device, &n, modules);
  if (r != 0) {
    tb_report_check(list, TB_BACKEND_XPU, false, "zesDeviceEnumMemoryModules", "%s: 0x%08x (%s)",
                    out->bus_id[0] ? out->bus_id : "?", r, tb_ze_result_name(r));
    return;
  }
  for (uint32_t i = 0; i < n && i < TB_ZES_MAX_MODULES; i++) {
    tb_zes_mem_properties props;
    memset(&props, 0, sizeof props);
    props.stype = TB_ZES_STYPE_MEM_PROPERTIES;
    props.location = TB_ZES_MEM_LOC_DEVICE;
    if (api->zesMemoryGetProperties && TB_ZES_CALL(api, zesMemoryGetProperties)(modules[i], &props) == 0 &&
        props.location != TB_ZES_MEM_LOC_DEVICE)
      continue; /* system memory seen by the GPU is not its own */
    tb_zes_mem_state state;
    memset(&state, 0, sizeof state);
    state.stype = TB_ZES_STYPE_MEM_STATE;
    r = TB_ZES_CALL(api, zesMemoryGetState)(modules[i], &state);
    if (r != 0 || state.free > state.size) {
      tb_report_check(list, TB_BACKEND_XPU, false, "zesMemoryGetState", "%s module %u: 0x%08x (%s), free %llu of %llu",
                      out->bus_id[0] ? out->bus_id : "?", i, r, tb_ze_result_name(r), (unsigned long long)state.free,
                      (unsigned long long)state.size);
      continue;
    }
    zes_module *m = &out->modules[out->module_count++];
    m->on_subdevice = props.onSubdevice != 0;
    m->subdevice_id = props.subdeviceId;
    m->free = state.free;
    m->size = state.size;
  }
}

static void read_address(const tb_zes_api *api, void *device, zes_device *out) {
  out->bus_id[0] = '\0';
  if (!api->zesDevicePciGetProperties) return;
  tb_zes_pci_properties p;
  memset(&p, 0, sizeof p);
  p.stype = TB_ZES_STYPE_PCI_PROPERTIES;
  if (TB_ZES_CALL(api, zesDevicePciGetProperties)(device, &p) != 0) return;
  if (p.domain > 0xffff || p.bus > 0xff || p.device > 0x1f || p.function > 7) return;
  tb_pci_format(p.domain, p.bus, p.device, p.function, out->bus_id, sizeof out->bus_id);
}

/* Sysman devices of every Sysman driver, at most TB_ZES_MAX_DEVICES. */
static size_t list_devices(tb_device_list *list, const tb_zes_api *api, zes_device *out) {
  uint32_t ndrivers = 0;
  uint32_t r = TB_ZES_CALL(api, zesDriverGet)(&ndrivers, NULL);
  void *drivers[8] = {0};
  if (ndrivers > 8) ndrivers = 8;
  if (r == 0 && ndrivers) r = TB_ZES_CALL(api, zesDriverGet)(&ndrivers, drivers);
  if (r != 0) {
    tb_report_check(list, TB_BACKEND_XPU, false, "zesDriverGet", "0x%08x (%s)", r, tb_ze_result_name(r));
    return 0;
  }
  size_t count = 0;
  for (uint32_t di = 0; di < ndrivers && di < 8; di++) {
    void *devices[TB_ZES_MAX_DEVICES] = {0};
    uint32_t n = 0;
    r = TB_ZES_CALL(api, zesDeviceGet)(drivers[di], &n, NULL);
    if (n > TB_ZES_MAX_DEVICES - count) n = (uint32_t)(TB_ZES_MAX_DEVICES - count);
    if (r == 0 && n) r = TB_ZES_CALL(api, zesDeviceGet)(drivers[di], &n, devices);
    if (r != 0) {
      tb_report_check(list, TB_BACKEND_XPU, false, "zesDeviceGet", "driver %u: 0x%08x (%s)", di, r, tb_ze_result_name(r));
      continue;
    }
    for (uint32_t i = 0; i < n && count < TB_ZES_MAX_DEVICES; i++) {
      zes_device *d = &out[count++];
      memset(d, 0, sizeof *d);
      read_address(api, devices[i], d);
      read_modules(list, api, devices[i], d);
    }
  }
  return count;
}

/* Free memory of core device `d` from its Sysman device: all device-local modules when the GPU is listed
 * whole; the modules of one tile when its tiles are listed one by one (FLAT hierarchy). */
static bool free_of(const tb_ze_device *d, const zes_device *s, uint64_t *out) {
  uint64_t sum = 0;
  unsigned used = 0;
  for (unsigned m = 0; m < s->module_count; m++) {
    const zes_module *mod = &s->modules[m];
    if (d->sibling_count > 1 && (!mod->on_subdevice || mod->subdevice_id != d->sibling_index)) continue;
    sum += mod->free;
    used++;
  }
  *out = sum;
  return used > 0;
}

static const zes_device *match(const tb_ze_scan *scan, size_t index, const zes_device *devs, size_t ndevs) {
  const tb_ze_device *d = &scan->devices[index];
  if (d->bus_id[0]) {
    for (size_t i = 0; i < ndevs; i++)
      if (strcmp(devs[i].bus_id, d->bus_id) == 0) return &devs[i];
    return NULL;
  }
  /* No PCI address from the core API: pair by order when both list the same number of GPUs. */
  size_t gpus = 0, nth = 0;
  for (size_t i = 0; i < scan->count; i++) {
    if (scan->devices[i].type != TB_ZE_DEVICE_TYPE_GPU) continue;
    if (i < index) nth++;
    gpus++;
  }
  return (gpus == ndevs && d->type == TB_ZE_DEVICE_TYPE_GPU) ? &devs[nth] : NULL;
}

void tb_zes_read_free(tb_device_list *list, void *handle, tb_ze_scan *scan) {
  tb_zes_api api;
  tb_zes_api_resolve(handle, &api);
  if (!api.zesInit || !api.zesDriverGet || !api.zesDeviceGet || !api.zesDeviceEnumMemoryModules ||
      !api.zesMemoryGetState) {
    tb_report_check(list, TB_BACKEND_XPU, false, "zesInit",
                    "Sysman entry points not exported by %s (a Level Zero loader older than 1.5): free memory unknown; "
                    "update the loader (libze1 / level-zero) to see it",
                    scan->library);
    return;
  }
  uint32_t r = TB_ZES_CALL(&api, zesInit)(0);
  if (r != 0) {
    tb_report_check(list, TB_BACKEND_XPU, false, "zesInit", "0x%08x (%s): free memory unknown", r, tb_ze_result_name(r));
    return;
  }
  tb_report_check(list, TB_BACKEND_XPU, true, "zesInit", "0x00000000 (ZE_RESULT_SUCCESS)");
  zes_device *devs = calloc(TB_ZES_MAX_DEVICES, sizeof *devs);
  if (!devs) {
    list->arena.failed = true;
    return;
  }
  size_t ndevs = list_devices(list, &api, devs);
  scan->sysman = ndevs > 0;
  for (size_t i = 0; i < scan->count; i++) {
    tb_ze_device *d = &scan->devices[i];
    if (d->props_result != 0) continue;
    const zes_device *s = match(scan, i, devs, ndevs);
    uint64_t free_bytes = 0;
    if (s && free_of(d, s, &free_bytes)) {
      d->memory_free = free_bytes;
      d->memory_free_known = true;
      tb_report_check(list, TB_BACKEND_XPU, true, "zesMemoryGetState", "%s at %s: %llu bytes free", d->name,
                      s->bus_id[0] ? s->bus_id : "?", (unsigned long long)free_bytes);
    } else if (d->type == TB_ZE_DEVICE_TYPE_GPU) {
      tb_report_check(list, TB_BACKEND_XPU, false, "zesMemoryGetState", "%s at %s: %s", d->name,
                      d->bus_id[0] ? d->bus_id : "?",
                      s ? "no device-local memory module (shares system memory)" : "not listed by Sysman");
    }
  }
  free(devs);
}
