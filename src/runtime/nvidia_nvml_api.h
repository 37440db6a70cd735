/* Internal: NVML's entry points (libnvidia-ml.so.1, or TB_NVML_LIB) as one dlopen symbol table, with the
 * few types and values of its C ABI (nvml.h), so no CUDA SDK is needed to build. The NVIDIA probe
 * (discover/nvidia_nvml.c) reads the driver version, memory and device properties through it. */
#ifndef TB_RUNTIME_NVIDIA_NVML_API_H
#define TB_RUNTIME_NVIDIA_NVML_API_H
#include <stddef.h>
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

typedef struct tb_nvml_api {
#define TB_NVML_MEMBER(name, ret, params, optional) ret(*name) params;
  TB_NVML_SYMBOLS(TB_NVML_MEMBER)
#undef TB_NVML_MEMBER
} tb_nvml_api;

/* Open NVML and resolve the table. NULL when the library is missing (`missing` is "", *dl says why) or
 * lacks an entry point (named in `missing`; the table is zeroed). The library stays loaded (core/dl.c). */
void *tb_nvml_api_open(tb_nvml_api *api, tb_dl_result *dl, char *missing, size_t cap);

/* nvmlErrorString's text for code, or its nvmlReturn_t name when the library gives none. */
const char *tb_nvml_error_text(const tb_nvml_api *api, tb_nvml_return code);

#endif
