/* NVML through dlopen: driver version and per-GPU memory for the NVIDIA probe. NVML answers from the
 * kernel driver directly, so reading free memory here creates no CUDA context. The symbol table is
 * runtime/nvidia_nvml_api.h's. */
#include "discover/nvidia_nvml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/nvidia_nvml_api.h"

struct tb_nvml {
  tb_nvml_api api;
  int count; /* nvmlDeviceGetCount_v2; -1 when it failed */
};

static const char *error_text(const tb_nvml *n, tb_nvml_return code) { return tb_nvml_error_text(&n->api, code); }

tb_nvml *tb_nvml_open(tb_device_list *list, char *driver_version, size_t cap) {
  if (cap) driver_version[0] = '\0';
  tb_nvml *n = calloc(1, sizeof *n);
  if (!n) {
    list->arena.failed = true;
    return NULL;
  }
  tb_dl_result dl;
  char missing[128];
  if (!tb_nvml_api_open(&n->api, &dl, missing, sizeof missing)) {
    if (missing[0])
      tb_report_check(list, TB_BACKEND_CUDA, false, "NVML symbols", "%s not found in %s; free memory is unknown", missing,
                      dl.path);
    else
      tb_report_check(list, TB_BACKEND_CUDA, false, "dlopen NVML", "%s: %s; free memory is unknown", dl.tried,
                      dl.error[0] ? dl.error : "not found");
    free(n);
    return NULL;
  }
  tb_nvml_return r = n->api.nvmlInit_v2();
  if (r != TB_NVML_SUCCESS) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "nvmlInit_v2", "%d %s (%s); free memory is unknown", r,
                    error_text(n, r), dl.path);
    free(n);
    return NULL;
  }
  char version[TB_NVML_DRIVER_VERSION_SIZE] = "";
  r = n->api.nvmlSystemGetDriverVersion(version, sizeof version);
  version[sizeof version - 1] = '\0';
  if (r == TB_NVML_SUCCESS && version[0]) {
    for (char *c = version; *c; c++)
      if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) *c = '?';
    snprintf(driver_version, cap, "%s", version);
  }
  unsigned int count = 0;
  tb_nvml_return rc = n->api.nvmlDeviceGetCount_v2(&count);
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
  tb_nvml_return r = n->api.nvmlDeviceGetHandleByPciBusId_v2(bus_id, &device);
  if (r != TB_NVML_SUCCESS) {
    tb_report_check(list, TB_BACKEND_CUDA, false, "nvmlDeviceGetHandleByPciBusId_v2", "%s: %d %s", bus_id, r,
                    error_text(n, r));
    return false;
  }
  tb_nvml_mem_info m;
  memset(&m, 0, sizeof m);
  r = n->api.nvmlDeviceGetMemoryInfo(device, &m);
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
    if (!n->api.call) {                                                                                    \
      snprintf(why, cap, "this NVML does not export %s", #call);                                       \
      return false;                                                                                    \
    }                                                                                                  \
    tb_nvml_return r_ = n->api.call args;                                                                  \
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
  if (n->api.nvmlDeviceGetMigMode) {
    unsigned int current = 0, pending = 0;
    tb_nvml_return r = n->api.nvmlDeviceGetMigMode(device, &current, &pending);
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
  if (n->api.nvmlDeviceGetNumGpuCores && n->api.nvmlDeviceGetNumGpuCores(device, &v) == TB_NVML_SUCCESS && per_sm &&
      v % (unsigned)per_sm == 0)
    g->sm_count = optional_value(TB_NVML_SUCCESS, v / (unsigned)per_sm, 1u << 20);
  if (n->api.nvmlDeviceGetMaxClockInfo) {
    tb_nvml_return r = n->api.nvmlDeviceGetMaxClockInfo(device, TB_NVML_CLOCK_SM, &v);
    g->clock_khz = optional_value(r, v, 100000) * 1000;
    r = n->api.nvmlDeviceGetMaxClockInfo(device, TB_NVML_CLOCK_MEM, &v);
    g->memory_clock_khz = optional_value(r, v, 100000) * 1000;
  }
  if (n->api.nvmlDeviceGetMemoryBusWidth) {
    tb_nvml_return r = n->api.nvmlDeviceGetMemoryBusWidth(device, &v);
    g->bus_width_bits = optional_value(r, v, 1u << 20);
  }
  snprintf(g->bus_id, sizeof g->bus_id, "%s", bus_id);
  return true;
}
#undef TB_NVML_NEED

void tb_nvml_close(tb_nvml *n) {
  if (!n) return;
  n->api.nvmlShutdown();
  free(n);
}
