/* A fake libcuda for tests: exports the CUDA driver API calls the NVIDIA probe uses, with the real C
 * ABI (CUresult and CUdevice are int, CUuuid is 16 bytes), and behaves as the environment says at
 * call time:
 *   FAKE_CUDA_MODE     ok (default) | stub (every call returns 34, as the toolkit's stub does) |
 *                      no_device (cuInit returns 100) | init_error (cuInit returns FAKE_CUDA_INIT_CODE,
 *                      default 999) | bad_attr (device 0 reports compute capability 1000.0 and -5 SMs) |
 *                      attr_error (every attribute of device 0 fails with 1)
 *   FAKE_CUDA_DEVICES  h100x8 (default) | laptop (see fake_nvidia_gpus.h)
 *   FAKE_CUDA_COUNT    list only the first N devices, as CUDA_VISIBLE_DEVICES would */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_nvidia_gpus.h"

typedef int CUresult;
typedef int CUdevice;
typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

enum {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  STUB_LIBRARY = 34,
  NO_DEVICE = 100,
  INVALID_DEVICE = 101,
  UNKNOWN = 999,
};

static int initialized;

static int mode_is(const char *mode) {
  const char *m = getenv("FAKE_CUDA_MODE");
  return strcmp(m && *m ? m : "ok", mode) == 0;
}

static int device_count(void) {
  int n;
  fake_gpus(&n);
  const char *limit = getenv("FAKE_CUDA_COUNT");
  if (limit && *limit) {
    int k = atoi(limit);
    if (k >= 0 && k < n) n = k;
  }
  return n;
}

/* The state every call but cuInit checks first. */
static CUresult ready(void) {
  if (mode_is("stub")) return STUB_LIBRARY;
  return initialized ? SUCCESS : NOT_INITIALIZED;
}

static const fake_gpu *gpu(CUdevice dev) {
  int n;
  const fake_gpu *all = fake_gpus(&n);
  return dev >= 0 && dev < device_count() ? &all[dev] : NULL;
}

CUresult cuInit(unsigned int flags) {
  initialized = 0;
  if (flags != 0) return INVALID_VALUE;
  if (mode_is("stub")) return STUB_LIBRARY;
  if (mode_is("no_device")) return NO_DEVICE;
  if (mode_is("init_error")) {
    const char *code = getenv("FAKE_CUDA_INIT_CODE");
    return code && *code ? atoi(code) : UNKNOWN;
  }
  initialized = 1;
  return SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  if (mode_is("stub")) return STUB_LIBRARY;
  if (!version) return INVALID_VALUE;
  *version = 12040;
  return SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!count) return INVALID_VALUE;
  *count = device_count();
  return SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!device) return INVALID_VALUE;
  if (!gpu(ordinal)) return INVALID_DEVICE;
  *device = ordinal;
  return SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!name || len <= 0) return INVALID_VALUE;
  snprintf(name, (size_t)len, "%s", g->name);
  return SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!bytes) return INVALID_VALUE;
  *bytes = (size_t)g->memory_total;
  return SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!value) return INVALID_VALUE;
  if (dev == 0 && mode_is("attr_error")) return INVALID_VALUE;
  int bad = dev == 0 && mode_is("bad_attr");
  switch (attribute) {
    case 13: *value = g->clock_khz; break;
    case 16: *value = bad ? -5 : g->sm_count; break;
    case 18: *value = g->integrated; break;
    case 36: *value = g->memory_clock_khz; break;
    case 37: *value = g->bus_width_bits; break;
    case 38: *value = g->l2_bytes; break;
    case 75: *value = bad ? 1000 : g->cc_major; break;
    case 76: *value = g->cc_minor; break;
    default: return INVALID_VALUE;
  }
  return SUCCESS;
}

static CUresult get_uuid(CUuuid *uuid, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!uuid) return INVALID_VALUE;
  memcpy(uuid->bytes, g->uuid, sizeof uuid->bytes);
  return SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }

CUresult cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!bus_id || len < 13) return INVALID_VALUE;
  snprintf(bus_id, (size_t)len, "%s", g->bus_id);
  return SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  if (mode_is("stub")) return STUB_LIBRARY;
  if (!name) return INVALID_VALUE;
  switch (error) {
    case SUCCESS: *name = "CUDA_SUCCESS"; break;
    case INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
    case INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
    case UNKNOWN: *name = "CUDA_ERROR_UNKNOWN"; break;
    default: *name = NULL; return INVALID_VALUE;
  }
  return SUCCESS;
}
