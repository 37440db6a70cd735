/* NVML through dlopen: driver version and per-GPU memory for the NVIDIA probe. NVML answers from the
 * kernel driver directly, so reading free memory here creates no CUDA context. */
#include "discover/nvidia_nvml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/dl.h"

/* The few NVML types, as its C ABI defines them. */
typedef int tb_nvml_return;
typedef struct tb_nvml_device_st *tb_nvml_device;
typedef struct tb_nvml_mem_info {
  unsigned long long total, free, used;
} tb_nvml_mem_info;

enum { TB_NVML_SUCCESS = 0, TB_NVML_DRIVER_VERSION_SIZE = 80 };

/* name, return type, parameters, optional */
#define TB_NVML_SYMBOLS(X)                                                                                 \
  X(nvmlInit_v2, tb_nvml_return, (void), false)                                                            \
  X(nvmlShutdown, tb_nvml_return, (void), false)                                                           \
  X(nvmlDeviceGetCount_v2, tb_nvml_return, (unsigned int *count), false)                                   \
  X(nvmlDeviceGetHandleByPciBusId_v2, tb_nvml_return, (const char *bus_id, tb_nvml_device *device), false) \
  X(nvmlDeviceGetMemoryInfo, tb_nvml_return, (tb_nvml_device device, tb_nvml_mem_info *memory), false)       \
  X(nvmlSystemGetDriverVersion, tb_nvml_return, (char *version, unsigned int length), false)               \
  X(nvmlErrorString, const char *, (tb_nvml_return result), true)

struct tb_nvml {
  void *handle;
#define TB_NVML_MEMBER(name, ret, params, optional) ret(*name) params;
  TB_NVML_SYMBOLS(TB_NVML_MEMBER)
#undef TB_NVML_MEMBER
};

static const char *const libnvml_names[] = {"libnvidia-ml.so.1", NULL};

/* nvmlReturn_t names for the codes discovery meets, used when nvmlErrorString is absent. */
static const char *local_error_name(tb_nvml_return code) {
  switch (code) {
    case 1: return "NVML_ERROR_UNINITIALIZED";
    case 2: return "NVML_ERROR_INVALID_ARGUMENT";
    case 3: return "NVML_ERROR_NOT_SUPPORTED";
    case 4: return "NVML_ERROR_NO_PERMISSION";
    case 6: return "NVML_ERROR_NOT_FOUND";
    case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 15: return "NVML_ERROR_GPU_IS_LOST";
    case 17: return "NVML_ERROR_OPERATING_SYSTEM";
    case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 999: return "NVML_ERROR_UNKNOWN";
    default: return "NVML error";
  }
}

static const char *error_text(const tb_nvml *n, tb_nvml_return code) {
  const char *s = n->nvmlErrorString ? n->nvmlErrorString(code) : NULL;
  return s && s[0] ? s : local_error_name(code);
}

tb_nvml *tb_nvml_open(tb_device_list *list, char *driver_version, size_t cap) {
  if (cap) driver_version[0] = '\0';
  tb_dl_result dl;
  void *handle = tb_dl_open("TB_NVML_LIB", libnvml_names, &dl);
  if (!handle) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "dlopen NVML", "%s: %s; free memory is unknown", dl.tried,
                    dl.error[0] ? dl.error : "not found");
    return NULL;
  }
  tb_nvml *n = calloc(1, sizeof *n);
  if (!n) {
    list->arena.failed = true;
    return NULL;
  }
  n->handle = handle;
  const tb_dl_symbol table[] = {
#define TB_NVML_ENTRY(name, ret, params, optional) {#name, (void **)&n->name, optional},
      TB_NVML_SYMBOLS(TB_NVML_ENTRY)
#undef TB_NVML_ENTRY
  };
  char missing[128];
  if (!tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, sizeof missing)) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "NVML symbols", "%s not found in %s; free memory is unknown", missing,
                    dl.path);
    free(n);
    return NULL;
  }
  tb_nvml_return r = n->nvmlInit_v2();
  if (r != TB_NVML_SUCCESS) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "nvmlInit_v2", "%d %s (%s); free memory is unknown", r,
                    error_text(n, r), dl.path);
    free(n);
    return NULL;
  }
  char version[TB_NVML_DRIVER_VERSION_SIZE] = "";
  r = n->nvmlSystemGetDriverVersion(version, sizeof version);
  version[sizeof version - 1] = '\0';
  if (r == TB_NVML_SUCCESS && version[0]) {
    for (char *c = version; *c; c++)
      if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) *c = '?';
    snprintf(driver_version, cap, "%s", version);
  }
  unsigned int count = 0;
  tb_nvml_return rc = n->nvmlDeviceGetCount_v2(&count);
  tb_report_check(list, TB_BACKEND_CUDA, true, "NVML", "%s: driver %s", dl.path,
                  r == TB_NVML_SUCCESS && version[0] ? version : "version unknown");
  if (rc == TB_NVML_SUCCESS)
    tb_report_check(list, TB_BACKEND_CUDA, true, "nvmlDeviceGetCount_v2", "%u", count);
  else
    tb_report_check(list, TB_BACKEND_CUDA, false, "nvmlDeviceGetCount_v2", "%d %s", rc, error_text(n, rc));
  return n;
}

bool tb_nvml_memory(tb_nvml *n, tb_device_list *list, const char *bus_id, uint64_t *total, uint64_t *free_bytes) {
  if (!n || !bus_id || !bus_id[0]) return false;
  tb_nvml_device device = NULL;
  tb_nvml_return r = n->nvmlDeviceGetHandleByPciBusId_v2(bus_id, &device);
  if (r != TB_NVML_SUCCESS) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "nvmlDeviceGetHandleByPciBusId_v2", "%s: %d %s", bus_id, r,
                    error_text(n, r));
    return false;
  }
  tb_nvml_mem_info m;
  memset(&m, 0, sizeof m);
  r = n->nvmlDeviceGetMemoryInfo(device, &m);
  if (r != TB_NVML_SUCCESS) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "nvmlDeviceGetMemoryInfo", "%s: %d %s", bus_id, r, error_text(n, r));
    return false;
  }
  if (m.total == 0 || m.free > m.total) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "nvmlDeviceGetMemoryInfo",
                    "%s: total %llu, free %llu bytes do not make sense; ignored", bus_id, m.total, m.free);
    return false;
  }
  *total = m.total;
  *free_bytes = m.free;
  tb_report_check(list, TB_BACKEND_CUDA, true, "nvmlDeviceGetMemoryInfo", "%s: %llu of %llu bytes free", bus_id, m.free,
                  m.total);
  return true;
}

void tb_nvml_close(tb_nvml *n) {
  if (!n) return;
  n->nvmlShutdown();
  free(n);
}
