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

enum {
  TB_NVML_SUCCESS = 0,
  TB_NVML_ERROR_NOT_SUPPORTED = 3,
  TB_NVML_DRIVER_VERSION_SIZE = 80,
  TB_NVML_NAME_SIZE = 96,
  TB_NVML_UUID_SIZE = 96,
  TB_NVML_CLOCK_SM = 1,
  TB_NVML_CLOCK_MEM = 2,
};

/* name, return type, parameters, optional */
#define TB_NVML_SYMBOLS(X)                                                                                 \
  X(nvmlInit_v2, tb_nvml_return, (void), false)                                                            \
  X(nvmlShutdown, tb_nvml_return, (void), false)                                                           \
  X(nvmlDeviceGetCount_v2, tb_nvml_return, (unsigned int *count), false)                                   \
  X(nvmlDeviceGetHandleByPciBusId_v2, tb_nvml_return, (const char *bus_id, tb_nvml_device *device), false) \
  X(nvmlDeviceGetMemoryInfo, tb_nvml_return, (tb_nvml_device device, tb_nvml_mem_info *memory), false)       \
  X(nvmlSystemGetDriverVersion, tb_nvml_return, (char *version, unsigned int length), false)               \
  X(nvmlErrorString, const char *, (tb_nvml_return result), true)                                          \
  X(nvmlDeviceGetName, tb_nvml_return, (tb_nvml_device device, char *name, unsigned int length), true)    \
  X(nvmlDeviceGetUUID, tb_nvml_return, (tb_nvml_device device, char *uuid, unsigned int length), true)    \
  X(nvmlDeviceGetCudaComputeCapability, tb_nvml_return, (tb_nvml_device device, int *major, int *minor), true) \
  X(nvmlDeviceGetNumGpuCores, tb_nvml_return, (tb_nvml_device device, unsigned int *cores), true)         \
  X(nvmlDeviceGetMaxClockInfo, tb_nvml_return, (tb_nvml_device device, int type, unsigned int *mhz), true) \
  X(nvmlDeviceGetMemoryBusWidth, tb_nvml_return, (tb_nvml_device device, unsigned int *bits), true)       \
  X(nvmlDeviceGetMigMode, tb_nvml_return, (tb_nvml_device device, unsigned int *current, unsigned int *pending), true)

struct tb_nvml {
  void *handle;
  int count; /* nvmlDeviceGetCount_v2; -1 when it failed */
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
  n->count = rc == TB_NVML_SUCCESS && count <= 4096 ? (int)count : -1;
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

int tb_nvml_count(const tb_nvml *n) { return n ? n->count : -1; }

/* CUDA cores per SM by compute capability, to turn NVML's core count into CUDA's SM count; 0 when
 * not known (the SM count is then left unknown). */
static int cores_per_sm(int major, int minor) {
  switch (major) {
    case 3: return 192;
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    case 9: case 10: case 11: case 12: return 128;
    default: return 0;
  }
}

/* A text NVML wrote, printable and cut at the buffer's end. */
static void printable(char *s, size_t cap) {
  s[cap - 1] = '\0';
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e) *s = '?';
}

/* "GPU-" and 36 characters of a UUID in lower case, as libcuda's entry is formatted. */
static bool uuid_ok(char *uuid) {
  if (strlen(uuid) != 40 || strncmp(uuid, "GPU-", 4) != 0) return false;
  for (char *c = uuid + 4; *c; c++) {
    size_t at = (size_t)(c - uuid - 4);
    bool dash = at == 8 || at == 13 || at == 18 || at == 23;
    if (dash ? *c != '-' : !strchr("0123456789abcdefABCDEF", *c)) return false;
    if (*c >= 'A' && *c <= 'F') *c = (char)(*c - 'A' + 'a');
  }
  return true;
}

/* The essential calls: each failure fills why and ends the NVML listing. */
#define TB_NVML_NEED(call, args)                                                                       \
  do {                                                                                                 \
    if (!n->call) {                                                                                    \
      snprintf(why, cap, "this NVML does not export %s", #call);                                       \
      return false;                                                                                    \
    }                                                                                                  \
    tb_nvml_return r_ = n->call args;                                                                  \
    if (r_ != TB_NVML_SUCCESS) {                                                                       \
      snprintf(why, cap, "%s for %s returned %d %s", #call, bus_id, r_, error_text(n, r_));            \
      return false;                                                                                    \
    }                                                                                                  \
  } while (0)

/* An optional figure in MHz or bits: 0 (unknown) unless NVML answers with a value in [1, hi]. */
static int optional_value(tb_nvml_return r, unsigned int v, unsigned int hi) {
  return r == TB_NVML_SUCCESS && v >= 1 && v <= hi ? (int)v : 0;
}

bool tb_nvml_describe(tb_nvml *n, const char *bus_id, tb_cuda_gpu *g, char *why, size_t cap) {
  memset(g, 0, sizeof *g);
  tb_nvml_device device = NULL;
  TB_NVML_NEED(nvmlDeviceGetHandleByPciBusId_v2, (bus_id, &device));
  if (n->nvmlDeviceGetMigMode) {
    unsigned int current = 0, pending = 0;
    tb_nvml_return r = n->nvmlDeviceGetMigMode(device, &current, &pending);
    if (r == TB_NVML_SUCCESS && current != 0) {
      snprintf(why, cap, "MIG mode is on at %s, and CUDA then numbers MIG instances", bus_id);
      return false;
    }
    if (r != TB_NVML_SUCCESS && r != TB_NVML_ERROR_NOT_SUPPORTED) {
      snprintf(why, cap, "nvmlDeviceGetMigMode for %s returned %d %s", bus_id, r, error_text(n, r));
      return false;
    }
  }
  char name[TB_NVML_NAME_SIZE] = "";
  TB_NVML_NEED(nvmlDeviceGetName, (device, name, sizeof name));
  printable(name, sizeof name);
  snprintf(g->name, sizeof g->name, "%s", name);
  char uuid[TB_NVML_UUID_SIZE] = "";
  TB_NVML_NEED(nvmlDeviceGetUUID, (device, uuid, sizeof uuid));
  printable(uuid, sizeof uuid);
  if (!uuid_ok(uuid)) {
    snprintf(why, cap, "nvmlDeviceGetUUID for %s gave \"%.48s\", not GPU- and a UUID", bus_id, uuid);
    return false;
  }
  _Static_assert(sizeof g->uuid > 40, "room for GPU- and a UUID");
  memcpy(g->uuid, uuid, 41); /* uuid_ok: 40 characters and the NUL */
  int major = 0, minor = 0;
  TB_NVML_NEED(nvmlDeviceGetCudaComputeCapability, (device, &major, &minor));
  if (major < 1 || major > 99 || minor < 0 || minor > 9) {
    snprintf(why, cap, "nvmlDeviceGetCudaComputeCapability for %s gave %d.%d, which is not a valid value", bus_id,
             major, minor);
    return false;
  }
  g->cc_major = major;
  g->cc_minor = minor;
  tb_nvml_mem_info m;
  memset(&m, 0, sizeof m);
  TB_NVML_NEED(nvmlDeviceGetMemoryInfo, (device, &m));
  if (m.total == 0 || m.free > m.total) {
    snprintf(why, cap, "nvmlDeviceGetMemoryInfo for %s gave total %llu, free %llu bytes", bus_id, m.total, m.free);
    return false;
  }
  g->memory_total = m.total;
  g->memory_total_known = true;
  unsigned int v = 0;
  int per_sm = cores_per_sm(major, minor);
  if (n->nvmlDeviceGetNumGpuCores && n->nvmlDeviceGetNumGpuCores(device, &v) == TB_NVML_SUCCESS && per_sm &&
      v % (unsigned)per_sm == 0)
    g->sm_count = optional_value(TB_NVML_SUCCESS, v / (unsigned)per_sm, 1u << 20);
  if (n->nvmlDeviceGetMaxClockInfo) {
    tb_nvml_return r = n->nvmlDeviceGetMaxClockInfo(device, TB_NVML_CLOCK_SM, &v);
    g->clock_khz = optional_value(r, v, 100000) * 1000;
    r = n->nvmlDeviceGetMaxClockInfo(device, TB_NVML_CLOCK_MEM, &v);
    g->memory_clock_khz = optional_value(r, v, 100000) * 1000;
  }
  if (n->nvmlDeviceGetMemoryBusWidth) {
    tb_nvml_return r = n->nvmlDeviceGetMemoryBusWidth(device, &v);
    g->bus_width_bits = optional_value(r, v, 1u << 20);
  }
  snprintf(g->bus_id, sizeof g->bus_id, "%s", bus_id);
  return true;
}
#undef TB_NVML_NEED

void tb_nvml_close(tb_nvml *n) {
  if (!n) return;
  n->nvmlShutdown();
  free(n);
}
