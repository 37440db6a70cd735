/* Internal: the HIP runtime's entry points (libamdhip64.so) as one dlopen symbol table, shared by the ROCm
 * probe (device queries, no device set) and the HIP backend (hipSetDevice, memory, copies). Prototypes
 * follow HIP's hip_runtime_api.h (ROCm 5 and 6 agree on them), so no ROCm SDK is needed to build. */
#ifndef TB_RUNTIME_AMD_HIP_API_H
#define TB_RUNTIME_AMD_HIP_API_H
#include <stdbool.h>
#include <stddef.h>
#include "core/dl.h"

/* hipMemcpyKind */
enum { TB_HIP_MEMCPY_H2D = 1, TB_HIP_MEMCPY_D2H = 2, TB_HIP_MEMCPY_D2D = 3 };
enum { TB_HIP_SUCCESS = 0, TB_HIP_ERROR_OUT_OF_MEMORY = 2 };

/* What the probe reads: name, return type, parameters, optional. */
#define TB_HIP_PROBE_SYMBOLS(X)                                                         \
  X(hipInit, int, (unsigned int flags), false)                                          \
  X(hipGetDeviceCount, int, (int *count), false)                                        \
  X(hipDeviceGet, int, (int *device, int ordinal), false)                               \
  X(hipDeviceGetName, int, (char *name, int len, int device), false)                    \
  X(hipDeviceGetPCIBusId, int, (char *bus_id, int len, int device), false)              \
  X(hipDeviceTotalMem, int, (size_t * bytes, int device), false)                        \
  X(hipDeviceGetAttribute, int, (int *value, int attribute, int device), false)         \
  X(hipRuntimeGetVersion, int, (int *version), false)                                   \
  X(hipDriverGetVersion, int, (int *version), false)                                    \
  X(hipGetErrorName, const char *, (int error), true)

/* What the backend adds: required only when the library is opened for memory. */
#define TB_HIP_MEMORY_SYMBOLS(X)                                                        \
  X(hipSetDevice, int, (int device))                                                    \
  X(hipGetDevice, int, (int *device))                                                   \
  X(hipMalloc, int, (void **ptr, size_t bytes))                                         \
  X(hipFree, int, (void *ptr))                                                          \
  X(hipMemcpy, int, (void *dst, const void *src, size_t bytes, int kind))               \
  X(hipMemset, int, (void *dst, int value, size_t bytes))                               \
  X(hipMemsetD16, int, (void *dst, unsigned short value, size_t count))                 \
  X(hipMemsetD32, int, (void *dst, int value, size_t count))                            \
  X(hipDeviceSynchronize, int, (void))                                                  \
  X(hipMemGetInfo, int, (size_t * free_bytes, size_t * total_bytes))

/* Events: optional, checked when an event is created (the backend then names the missing symbol). Events
 * are recorded on the null stream (0), which every blocking call of the backend also uses. */
enum { TB_HIP_ERROR_NOT_READY = 600 };
typedef struct tb_hip_event_st *tb_hip_event;
#define TB_HIP_EVENT_SYMBOLS(X)                                                         \
  X(hipEventCreate, int, (tb_hip_event * event))                                        \
  X(hipEventRecord, int, (tb_hip_event event, void *stream))                            \
  X(hipEventSynchronize, int, (tb_hip_event event))                                     \
  X(hipEventQuery, int, (tb_hip_event event))                                           \
  X(hipEventElapsedTime, int, (float *ms, tb_hip_event start, tb_hip_event end))        \
  X(hipEventDestroy, int, (tb_hip_event event))

/* Pointer attributes, for importing memory another library allocated (DLPack): optional, checked when a
 * pointer is imported. hipPointerAttribute_t has the same layout in ROCm 5 and 6, but hipMemoryType's values
 * changed in ROCm 6 (HIP runtime version 60000000 and up); hip_memory.c reads them by version. */
typedef struct tb_hip_pointer_attributes {
  int type; /* hipMemoryType */
  int device;
  void *device_pointer;
  void *host_pointer;
  int is_managed;
  unsigned allocation_flags;
} tb_hip_pointer_attributes;
#define TB_HIP_POINTER_SYMBOLS(X)                                                       \
  X(hipPointerGetAttributes, int, (tb_hip_pointer_attributes * attributes, const void *ptr)) \
  X(hipMemGetAddressRange, int, (void **base, size_t *size, void *ptr))

typedef struct tb_hip_api {
#define TB_HIP_PROBE_MEMBER(name, ret, params, optional) ret(*name) params;
#define TB_HIP_MEMORY_MEMBER(name, ret, params) ret(*name) params;
  TB_HIP_PROBE_SYMBOLS(TB_HIP_PROBE_MEMBER)
  TB_HIP_MEMORY_SYMBOLS(TB_HIP_MEMORY_MEMBER)
  TB_HIP_EVENT_SYMBOLS(TB_HIP_MEMORY_MEMBER)
  TB_HIP_POINTER_SYMBOLS(TB_HIP_MEMORY_MEMBER)
#undef TB_HIP_PROBE_MEMBER
#undef TB_HIP_MEMORY_MEMBER
} tb_hip_api;

/* Open HIP (TB_HIP_LIB, else libamdhip64.so.6, .so.5, .so) and resolve the table; the memory symbols are
 * required when `memory` is set. Returns the handle, or NULL: *dl says what was tried and `missing` names
 * the absent required symbol ("" when the library itself did not load). */
void *tb_hip_api_open(tb_hip_api *api, bool memory, tb_dl_result *dl, char *missing, size_t cap);

/* The name of a hipError_t: the runtime's own when it answers with a "hip..." name, else the local table. */
void tb_hip_api_error_name(const tb_hip_api *api, int code, char *out, size_t cap);

/* "hipErrorNoDevice" for 100; "hipError?" for codes not in the local table. */
const char *tb_hip_error_name(int code);

#endif
