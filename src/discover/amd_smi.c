/* ROCm SMI for the ROCm probe: per GPU the PCI BDF id and VRAM total/used, and the driver version, read
 * through its symbol table (runtime/amd_smi_api.h). */
#include "discover/amd_smi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/amd_smi_api.h"
#include "discover/pci.h"

#define RSMI_MAX_DEVICES 1024u

/* BDFID = domain << 32 | partition << 28 | bus << 8 | device << 3 | function (rsmi_dev_pci_id_get). */
static bool bdfid_to_bus_id(uint64_t bdfid, char *out, size_t cap) {
  uint64_t domain = bdfid >> 32;
  if (domain > 0xffff) return false;
  tb_pci_format((uint32_t)domain, (uint32_t)(bdfid >> 8) & 0xff, (uint32_t)(bdfid >> 3) & 0x1f, (uint32_t)bdfid & 7, out, cap);
  return true;
}

static void read_device(tb_device_list *list, const tb_rsmi_api *api, uint32_t index, tb_smi_device *d) {
  char what[64];
  uint64_t bdfid = 0;
  uint32_t rc = api->rsmi_dev_pci_id_get(index, &bdfid);
  if (rc != TB_RSMI_STATUS_SUCCESS || !bdfid_to_bus_id(bdfid, d->bus_id, sizeof d->bus_id)) {
    snprintf(what, sizeof what, "rsmi_dev_pci_id_get(%u)", index);
    tb_report_check(list, TB_BACKEND_ROCM, false, what, "%u (%s), bdfid 0x%llx", rc, tb_smi_status_name(rc),
                    (unsigned long long)bdfid);
    d->bus_id[0] = '\0';
    return;
  }
  uint32_t rc_total = api->rsmi_dev_memory_total_get(index, TB_RSMI_MEM_TYPE_VRAM, &d->total);
  uint32_t rc_used = api->rsmi_dev_memory_usage_get(index, TB_RSMI_MEM_TYPE_VRAM, &d->used);
  d->memory_known = rc_total == TB_RSMI_STATUS_SUCCESS && rc_used == TB_RSMI_STATUS_SUCCESS && d->used <= d->total;
  snprintf(what, sizeof what, "rsmi VRAM of %s", d->bus_id);
  if (d->memory_known)
    tb_report_check(list, TB_BACKEND_ROCM, true, what, "%llu of %llu bytes used", (unsigned long long)d->used,
                    (unsigned long long)d->total);
  else
    tb_report_check(list, TB_BACKEND_ROCM, false, what, "total: %u (%s), used: %u (%s)", rc_total,
                    tb_smi_status_name(rc_total), rc_used, tb_smi_status_name(rc_used));
}

static bool read_all(tb_device_list *list, const tb_rsmi_api *api, tb_smi_info *out) {
  uint32_t rc = api->rsmi_init(0);
  tb_report_check(list, TB_BACKEND_ROCM, rc == TB_RSMI_STATUS_SUCCESS, "rsmi_init", "%u (%s)", rc, tb_smi_status_name(rc));
  if (rc != TB_RSMI_STATUS_SUCCESS) return true;
  bool ok = true;
  uint32_t count = 0;
  rc = api->rsmi_num_monitor_devices(&count);
  if (rc != TB_RSMI_STATUS_SUCCESS || count > RSMI_MAX_DEVICES) {
    tb_report_check(list, TB_BACKEND_ROCM, false, "rsmi_num_monitor_devices", "%u (%s), count %u", rc,
                    tb_smi_status_name(rc), count);
  } else {
    tb_report_check(list, TB_BACKEND_ROCM, true, "rsmi_num_monitor_devices", "%u", count);
    out->available = true;
    if (count) {
      out->devices = calloc(count, sizeof *out->devices);
      ok = out->devices != NULL;
      if (ok) out->count = count;
    }
    for (uint32_t i = 0; i < out->count; i++) read_device(list, api, i, &out->devices[i]);
    char text[64] = "";
    if (api->rsmi_version_str_get && api->rsmi_version_str_get(TB_RSMI_SW_COMP_DRIVER, text, sizeof text) == TB_RSMI_STATUS_SUCCESS) {
      text[sizeof text - 1] = '\0';
      snprintf(out->driver_version, sizeof out->driver_version, "%s", text);
    }
  }
  api->rsmi_shut_down();
  return ok;
}

bool tb_smi_query(tb_device_list *list, tb_smi_info *out) {
  memset(out, 0, sizeof *out);
  tb_dl_result dl;
  tb_rsmi_api api;
  char missing[128];
  if (!tb_rsmi_api_open(&api, &dl, missing, sizeof missing)) {
    if (missing[0])
      tb_report_check(list, TB_BACKEND_ROCM, false, "dlopen librocm_smi64.so", "%s lacks %s; free memory is unknown",
                      dl.path, missing);
    else
      tb_report_check(list, TB_BACKEND_ROCM, false, "dlopen librocm_smi64.so",
                      "not found (tried %s): %s; free memory is unknown without it", dl.tried, dl.error);
    return true;
  }
  tb_report_check(list, TB_BACKEND_ROCM, true, "dlopen librocm_smi64.so", "%s", dl.path);
  return read_all(list, &api, out);
}

void tb_smi_free(tb_smi_info *info) {
  free(info->devices);
  info->devices = NULL;
  info->count = 0;
}

const tb_smi_device *tb_smi_find(const tb_smi_info *info, const char *bus_id) {
  if (!bus_id || !bus_id[0]) return NULL;
  for (size_t i = 0; i < info->count; i++)
    if (strcmp(info->devices[i].bus_id, bus_id) == 0) return &info->devices[i];
  return NULL;
}
