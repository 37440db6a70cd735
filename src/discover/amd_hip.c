/* The HIP runtime through dlopen (its symbol table is in amd_hip_api.h): versions, device count, and per
 * device its name, PCI bus id, total memory and a few attributes. Enum values are declared here (HIP's
 * hip_runtime_api.h, ROCm 5 and 6 agree on every value used), so no ROCm SDK is needed to build. */
#include "discover/amd_hip.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/amd_hip_api.h"
#include "discover/pci.h"

/* hipDeviceAttribute_t values (hip_runtime_api.h: the CUDA-compatible block is alphabetical from 0). */
enum {
  HIP_ATTR_CLOCK_RATE = 5,
  HIP_ATTR_INTEGRATED = 16,
  HIP_ATTR_MULTIPROCESSOR_COUNT = 63,
};
enum { HIP_SUCCESS = 0, HIP_ERROR_NO_DEVICE = 100 };
#define HIP_MAX_DEVICES 1024

static void error_name(const tb_hip_api *api, int code, char *out, size_t cap) {
  tb_hip_api_error_name(api, code, out, cap);
}

/* HIP_VERSION = major * 10000000 + minor * 100000 + patch. */
static void format_version(int v, char *out, size_t cap) {
  if (v <= 0) {
    out[0] = '\0';
    return;
  }
  snprintf(out, cap, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

static void record_call(tb_device_list *list, const tb_hip_api *api, const char *what, int rc) {
  char name[64];
  error_name(api, rc, name, sizeof name);
  tb_report_check(list, TB_BACKEND_ROCM, rc == HIP_SUCCESS, what, "%d (%s)", rc, name);
}

static void query_device(tb_device_list *list, const tb_hip_api *api, int ordinal, tb_hip_device *d) {
  char what[64];
  d->ordinal = ordinal;
  d->integrated = -1;
  int dev = ordinal;
  int rc = api->hipDeviceGet(&dev, ordinal);
  snprintf(what, sizeof what, "hipDeviceGet(%d)", ordinal);
  if (rc != HIP_SUCCESS) {
    record_call(list, api, what, rc);
    dev = ordinal;
  }
  char text[256] = "";
  snprintf(what, sizeof what, "hipDeviceGetName(%d)", ordinal);
  if ((rc = api->hipDeviceGetName(text, (int)sizeof text, dev)) == HIP_SUCCESS) {
    text[sizeof text - 1] = '\0';
    snprintf(d->name, sizeof d->name, "%s", text);
  } else {
    record_call(list, api, what, rc);
  }
  char bus[64] = "";
  snprintf(what, sizeof what, "hipDeviceGetPCIBusId(%d)", ordinal);
  if ((rc = api->hipDeviceGetPCIBusId(bus, (int)sizeof bus, dev)) == HIP_SUCCESS) {
    bus[sizeof bus - 1] = '\0';
    if (!tb_pci_normalize(bus, d->bus_id, sizeof d->bus_id))
      tb_report_check(list, TB_BACKEND_ROCM, false, what, "returned '%s', which is not a PCI bus id", bus);
  } else {
    record_call(list, api, what, rc);
  }
  size_t bytes = 0;
  snprintf(what, sizeof what, "hipDeviceTotalMem(%d)", ordinal);
  if ((rc = api->hipDeviceTotalMem(&bytes, dev)) == HIP_SUCCESS) {
    d->total_known = true;
    d->total_mem = bytes;
  } else {
    record_call(list, api, what, rc);
  }
  int v = 0;
  if (api->hipDeviceGetAttribute(&v, HIP_ATTR_MULTIPROCESSOR_COUNT, dev) == HIP_SUCCESS && v > 0) d->compute_units = v;
  if (api->hipDeviceGetAttribute(&v, HIP_ATTR_INTEGRATED, dev) == HIP_SUCCESS && (v == 0 || v == 1)) d->integrated = v;
  if (api->hipDeviceGetAttribute(&v, HIP_ATTR_CLOCK_RATE, dev) == HIP_SUCCESS && v > 0) d->clock_khz = v;
  tb_report_check(list, TB_BACKEND_ROCM, true, "HIP device", "%d: %s at %s, %d CUs", ordinal, d->name[0] ? d->name : "?",
                  d->bus_id[0] ? d->bus_id : "?", d->compute_units);
}

/* hipInit, versions, count and devices; the library stays loaded (see tb_hip_query). */
static bool list_devices(tb_device_list *list, const tb_hip_api *api, tb_hip_info *out) {
  int v = 0;
  if (api->hipRuntimeGetVersion(&v) == HIP_SUCCESS) format_version(v, out->runtime_version, sizeof out->runtime_version);
  v = 0;
  if (api->hipDriverGetVersion(&v) == HIP_SUCCESS) format_version(v, out->driver_version, sizeof out->driver_version);
  tb_report_check(list, TB_BACKEND_ROCM, out->runtime_version[0] != '\0', "hipRuntimeGetVersion", "%s",
                  out->runtime_version[0] ? out->runtime_version : "unknown");

  int rc = api->hipInit(0);
  record_call(list, api, "hipInit", rc);
  if (rc != HIP_SUCCESS) {
    out->state = TB_HIP_ERROR;
    out->failed_call = "hipInit";
    out->error = rc;
    error_name(api, rc, out->error_name, sizeof out->error_name);
    return true;
  }
  int count = 0;
  rc = api->hipGetDeviceCount(&count);
  if (rc != HIP_SUCCESS) {
    record_call(list, api, "hipGetDeviceCount", rc);
    out->state = TB_HIP_ERROR;
    out->failed_call = "hipGetDeviceCount";
    out->error = rc;
    error_name(api, rc, out->error_name, sizeof out->error_name);
    return true;
  }
  if (count < 0 || count > HIP_MAX_DEVICES) {
    tb_report_check(list, TB_BACKEND_ROCM, false, "hipGetDeviceCount", "returned %d devices, which is not plausible", count);
    out->state = TB_HIP_ERROR;
    out->failed_call = "hipGetDeviceCount";
    out->error = HIP_ERROR_NO_DEVICE;
    snprintf(out->error_name, sizeof out->error_name, "implausible count %d", count);
    return true;
  }
  tb_report_check(list, TB_BACKEND_ROCM, true, "hipGetDeviceCount", "%d", count);
  out->state = TB_HIP_OK;
  if (count == 0) return true;
  out->devices = calloc((size_t)count, sizeof *out->devices);
  if (!out->devices) return false;
  out->count = count;
  for (int i = 0; i < count; i++) query_device(list, api, i, &out->devices[i]);
  return true;
}

bool tb_hip_query(tb_device_list *list, tb_hip_info *out) {
  memset(out, 0, sizeof *out);
  tb_hip_api api;
  void *handle = tb_hip_api_open(&api, false, &out->dl, out->missing_symbol, sizeof out->missing_symbol);
  if (!handle && !out->missing_symbol[0]) {
    out->state = TB_HIP_NOT_FOUND;
    tb_report_check(list, TB_BACKEND_ROCM, false, "dlopen libamdhip64.so", "not found (tried %s): %s", out->dl.tried,
                    out->dl.error);
    return true;
  }
  if (!handle) {
    out->state = TB_HIP_BAD_LIBRARY;
    tb_report_check(list, TB_BACKEND_ROCM, false, "dlopen libamdhip64.so", "%s lacks %s", out->dl.path, out->missing_symbol);
    return true;
  }
  tb_report_check(list, TB_BACKEND_ROCM, true, "dlopen libamdhip64.so", "%s", out->dl.path);
  /* Once hipInit has run, the runtime owns threads and atexit handlers inside the library: it stays
   * loaded for the life of the process (core/dl.c owns the handle). */
  return list_devices(list, &api, out);
}

void tb_hip_free(tb_hip_info *info) {
  free(info->devices);
  info->devices = NULL;
  info->count = 0;
}
