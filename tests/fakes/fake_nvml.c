/* A fake NVML (libnvidia-ml) for tests: exports the calls the NVIDIA probe uses, with the real C ABI,
 * for the GPUs of FAKE_CUDA_DEVICES (see fake_nvidia_gpus.h), and behaves as the environment says
 * at call time:
 *   FAKE_NVML_MODE  ok (default) | init_error (nvmlInit_v2 returns 9, driver not loaded) |
 *                   memory_error (nvmlDeviceGetMemoryInfo returns 4, no permission) |
 *                   old (an NVML before the device queries: nvmlDeviceGetName, ...UUID,
 *                   ...CudaComputeCapability and the rest answer 3, not supported) |
 *                   mig (MIG mode is on on the first GPU)
 *   FAKE_NVML_TOTAL_EXTRA  bytes NVML's total (and free) memory exceed libcuda's cuDeviceTotalMem, as on
 *                          an H100, where NVML says 79.6 GiB and CUDA 79.2 GiB (default 0)
 * Driver version 550.54.15; GPU i has its total memory less (i + 1) GiB free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_nvidia_gpus.h"
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_NVML", "fake_nvml")

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlMemory_st {
  unsigned long long total, free, used;
} nvmlMemory_t;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
};

static int initialized;

static int mode_is(const char *mode) {
  const char *m = getenv("FAKE_NVML_MODE");
  return strcmp(m && *m ? m : "ok", mode) == 0;
}

/* A handle is the address of the GPU's entry in the table. */
static const fake_gpu *from_handle(nvmlDevice_t device, int *index) {
  int n;
  const fake_gpu *all = fake_gpus(&n);
  for (int i = 0; i < n; i++)
    if ((const void *)device == (const void *)&all[i]) {
      *index = i;
      return &all[i];
    }
  return NULL;
}

static int parse_bus(const char *s, unsigned *domain, unsigned *bus, unsigned *dev, unsigned *fn) {
  if (sscanf(s, "%x:%x:%x.%x", domain, bus, dev, fn) == 4) return 1;
  *domain = 0;
  return sscanf(s, "%x:%x.%x", bus, dev, fn) == 3;
}

nvmlReturn_t nvmlInit_v2(void) {
  if (mode_is("init_error")) return NVML_ERROR_DRIVER_NOT_LOADED;
  initialized = 1;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  initialized = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  int n;
  fake_gpus(&n);
  *count = (unsigned)n;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *device) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  unsigned d, b, s, f;
  if (!bus_id || !device || !parse_bus(bus_id, &d, &b, &s, &f)) return NVML_ERROR_INVALID_ARGUMENT;
  int n;
  const fake_gpu *all = fake_gpus(&n);
  for (int i = 0; i < n; i++) {
    unsigned d2, b2, s2, f2;
    if (parse_bus(all[i].bus_id, &d2, &b2, &s2, &f2) && d == d2 && b == b2 && s == s2 && f == f2) {
      *device = (nvmlDevice_t)(void *)&all[i];
      return NVML_SUCCESS;
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  int i = 0;
  const fake_gpu *g = from_handle(device, &i);
  if (!g || !memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (mode_is("memory_error")) return NVML_ERROR_NO_PERMISSION;
  const char *extra_text = getenv("FAKE_NVML_TOTAL_EXTRA");
  unsigned long long extra = extra_text ? strtoull(extra_text, NULL, 10) : 0;
  memory->total = g->memory_total + extra;
  memory->free = fake_free_bytes(g, i) + extra;
  memory->used = memory->total - memory->free;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < sizeof "550.54.15") return NVML_ERROR_INSUFFICIENT_SIZE;
  snprintf(version, length, "%s", "550.54.15");
  return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

/* The device queries the probe lists GPUs with when it does not call cuInit. */
static const fake_gpu *described(nvmlDevice_t device, nvmlReturn_t *r) {
  int i = 0;
  const fake_gpu *g = initialized ? from_handle(device, &i) : NULL;
  *r = !initialized ? NVML_ERROR_UNINITIALIZED
       : !g         ? NVML_ERROR_INVALID_ARGUMENT
       : mode_is("old") ? NVML_ERROR_NOT_SUPPORTED
                        : NVML_SUCCESS;
  return *r == NVML_SUCCESS ? g : NULL;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
  nvmlReturn_t r;
  const fake_gpu *g = described(device, &r);
  if (!g) return r;
  if (!name || length <= strlen(g->name)) return NVML_ERROR_INSUFFICIENT_SIZE;
  snprintf(name, length, "%s", g->name);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
  nvmlReturn_t r;
  const fake_gpu *g = described(device, &r);
  if (!g) return r;
  if (!uuid || length < 41) return NVML_ERROR_INSUFFICIENT_SIZE;
  const unsigned char *b = g->uuid;
  snprintf(uuid, length, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
           b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
  nvmlReturn_t r;
  const fake_gpu *g = described(device, &r);
  if (!g) return r;
  if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
  *major = g->cc_major;
  *minor = g->cc_minor;
  return NVML_SUCCESS;
}

/* 128 CUDA cores per SM on the fakes' GPUs (compute capability 8.9 and 9.0). */
nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *cores) {
  nvmlReturn_t r;
  const fake_gpu *g = described(device, &r);
  if (!g) return r;
  if (!cores) return NVML_ERROR_INVALID_ARGUMENT;
  *cores = (unsigned)g->sm_count * 128u;
  return NVML_SUCCESS;
}

/* type 1 is NVML_CLOCK_SM, 2 NVML_CLOCK_MEM; in MHz. */
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned int *mhz) {
  nvmlReturn_t r;
  const fake_gpu *g = described(device, &r);
  if (!g) return r;
  if (!mhz || (type != 1 && type != 2)) return NVML_ERROR_INVALID_ARGUMENT;
  *mhz = (unsigned)((type == 1 ? g->clock_khz : g->memory_clock_khz) / 1000);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int *bits) {
  nvmlReturn_t r;
  const fake_gpu *g = described(device, &r);
  if (!g) return r;
  if (!bits) return NVML_ERROR_INVALID_ARGUMENT;
  *bits = (unsigned)g->bus_width_bits;
  return NVML_SUCCESS;
}

/* GeForce GPUs have no MIG: not supported, as the real NVML answers. */
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending) {
  nvmlReturn_t r;
  int i = 0;
  const fake_gpu *g = described(device, &r);
  if (!g) return r;
  if (!current || !pending) return NVML_ERROR_INVALID_ARGUMENT;
  if (strstr(g->name, "GeForce")) return NVML_ERROR_NOT_SUPPORTED;
  from_handle(device, &i);
  *current = *pending = mode_is("mig") && i == 0 ? 1u : 0u;
  return NVML_SUCCESS;
}
