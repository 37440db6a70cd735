/* ROCm SMI through dlopen: per GPU the PCI BDF id and VRAM total/used, and the driver version.
 * Prototypes and enum values are declared here from rocm_smi_lib's include/rocm_smi/rocm_smi.h. */
#include "discover/amd_smi.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/dl.h"
#include "discover/pci.h"

enum { RSMI_STATUS_SUCCESS = 0, RSMI_MEM_TYPE_VRAM = 0, RSMI_SW_COMP_DRIVER = 0 };
#define RSMI_MAX_DEVICES 1024u

typedef uint32_t (*rsmi_init_fn)(uint64_t flags);
typedef uint32_t (*rsmi_shut_down_fn)(void);
typedef uint32_t (*rsmi_count_fn)(uint32_t *count);
typedef uint32_t (*rsmi_pci_id_fn)(uint32_t index, uint64_t *bdfid);
typedef uint32_t (*rsmi_memory_fn)(uint32_t index, int memory_type, uint64_t *bytes);
typedef uint32_t (*rsmi_version_str_fn)(int component, char *text, uint32_t len);

/* X(symbol, type, optional) */
#define TB_RSMI_SYMBOLS(X)                                  \
  X(rsmi_init, rsmi_init_fn, false)                         \
  X(rsmi_shut_down, rsmi_shut_down_fn, false)               \
  X(rsmi_num_monitor_devices, rsmi_count_fn, false)         \
  X(rsmi_dev_pci_id_get, rsmi_pci_id_fn, false)             \
  X(rsmi_dev_memory_total_get, rsmi_memory_fn, false)       \
  X(rsmi_dev_memory_usage_get, rsmi_memory_fn, false)       \
  X(rsmi_version_str_get, rsmi_version_str_fn, true)

typedef struct rsmi_api {
#define TB_RSMI_FIELD(name, type, optional) type name;
  TB_RSMI_SYMBOLS(TB_RSMI_FIELD)
#undef TB_RSMI_FIELD
} rsmi_api;

static const char *const rsmi_names[] = {"librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so", NULL};

const char *tb_smi_status_name(uint32_t status) {
  static const char *const names[] = {"RSMI_STATUS_SUCCESS",          "RSMI_STATUS_INVALID_ARGS",
                                      "RSMI_STATUS_NOT_SUPPORTED",    "RSMI_STATUS_FILE_ERROR",
                                      "RSMI_STATUS_PERMISSION",       "RSMI_STATUS_OUT_OF_RESOURCES",
                                      "RSMI_STATUS_INTERNAL_EXCEPTION", "RSMI_STATUS_INPUT_OUT_OF_BOUNDS",
                                      "RSMI_STATUS_INIT_ERROR",       "RSMI_STATUS_NOT_YET_IMPLEMENTED",
                                      "RSMI_STATUS_NOT_FOUND",        "RSMI_STATUS_INSUFFICIENT_SIZE",
                                      "RSMI_STATUS_INTERRUPT",        "RSMI_STATUS_UNEXPECTED_SIZE",
                                      "RSMI_STATUS_NO_DATA",          "RSMI_STATUS_UNEXPECTED_DATA",
                                      "RSMI_STATUS_BUSY",             "RSMI_STATUS_REFCOUNT_OVERFLOW"};
  if (status < sizeof names / sizeof names[0]) return names[status];
  if (status == 0xFFFFFFFFu) return "RSMI_STATUS_UNKNOWN_ERROR";
  return "RSMI_STATUS_?";
}

/* BDFID = domain << 32 | partition << 28 | bus << 8 | device << 3 | function (rsmi_dev_pci_id_get). */
static bool bdfid_to_bus_id(uint64_t bdfid, char *out, size_t cap) {
  uint64_t domain = bdfid >> 32;
  if (domain > 0xffff) return false;
  tb_pci_format((uint32_t)domain, (uint32_t)(bdfid >> 8) & 0xff, (uint32_t)(bdfid >> 3) & 0x1f, (uint32_t)bdfid & 7, out, cap);
  return true;
}

static void read_device(tb_device_list *list, const rsmi_api *api, uint32_t index, tb_smi_device *d) {
  char what[64];
  uint64_t bdfid = 0;
  uint32_t rc = api->rsmi_dev_pci_id_get(index, &bdfid);
  if (rc != RSMI_STATUS_SUCCESS || !bdfid_to_bus_id(bdfid, d->bus_id, sizeof d->bus_id)) {
    snprintf(what, sizeof what, "rsmi_dev_pci_id_get(%u)", index);
    tb_report_check(list, TB_BACKEND_ROCM, false, what, "%u (%s), bdfid 0x%llx", rc, tb_smi_status_name(rc),
                    (unsigned long long)bdfid);
    d->bus_id[0] = '\0';
    return;
  }
  uint32_t rc_total = api->rsmi_dev_memory_total_get(index, RSMI_MEM_TYPE_VRAM, &d->total);
  uint32_t rc_used = api->rsmi_dev_memory_usage_get(index, RSMI_MEM_TYPE_VRAM, &d->used);
  d->memory_known = rc_total == RSMI_STATUS_SUCCESS && rc_used == RSMI_STATUS_SUCCESS && d->used <= d->total;
  snprintf(what, sizeof what, "rsmi VRAM of %s", d->bus_id);
  if (d->memory_known)
    tb_report_check(list, TB_BACKEND_ROCM, true, what, "%llu of %llu bytes used", (unsigned long long)d->used,
                    (unsigned long long)d->total);
  else
    tb_report_check(list, TB_BACKEND_ROCM, false, what, "total: %u (%s), used: %u (%s)", rc_total,
                    tb_smi_status_name(rc_total), rc_used, tb_smi_status_name(rc_used));
}

static bool read_all(tb_device_list *list, const rsmi_api *api, tb_smi_info *out) {
  uint32_t rc = api->rsmi_init(0);
  tb_report_check(list, TB_BACKEND_ROCM, rc == RSMI_STATUS_SUCCESS, "rsmi_init", "%u (%s)", rc, tb_smi_status_name(rc));
  if (rc != RSMI_STATUS_SUCCESS) return true;
  bool ok = true;
  uint32_t count = 0;
  rc = api->rsmi_num_monitor_devices(&count);
  if (rc != RSMI_STATUS_SUCCESS || count > RSMI_MAX_DEVICES) {
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
    if (api->rsmi_version_str_get && api->rsmi_version_str_get(RSMI_SW_COMP_DRIVER, text, sizeof text) == RSMI_STATUS_SUCCESS) {
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
  void *handle = tb_dl_open("TB_ROCM_SMI_LIB", rsmi_names, &dl);
  if (!handle) {
    tb_report_check(list, TB_BACKEND_ROCM, false, "dlopen librocm_smi64.so",
                    "not found (tried %s): %s; free memory is unknown without it", dl.tried, dl.error);
    return true;
  }
  rsmi_api api;
  memset(&api, 0, sizeof api);
  const tb_dl_symbol table[] = {
#define TB_RSMI_ENTRY(name, type, optional) {#name, (void **)&api.name, optional},
      TB_RSMI_SYMBOLS(TB_RSMI_ENTRY)
#undef TB_RSMI_ENTRY
  };
  char missing[128];
  bool ok = true;
  if (!tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, sizeof missing)) {
    tb_report_check(list, TB_BACKEND_ROCM, false, "dlopen librocm_smi64.so", "%s lacks %s; free memory is unknown",
                    dl.path, missing);
  } else {
    tb_report_check(list, TB_BACKEND_ROCM, true, "dlopen librocm_smi64.so", "%s", dl.path);
    ok = read_all(list, &api, out);
  }
  return ok;
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
