/* Internal: libcuda's entry points as one dlopen symbol table, shared by the NVIDIA probe (device queries,
 * no context) and the CUDA backend (primary context, stream, memory, copies). The few CUDA driver API
 * types are declared here with the C ABI of cuda.h, so no CUDA header is needed to build. */
#ifndef TB_RUNTIME_NVIDIA_CUDA_API_H
#define TB_RUNTIME_NVIDIA_CUDA_API_H
#include <stdbool.h>
#include <stddef.h>
#include "core/dl.h"

typedef int tb_cu_result;

/* CUresult codes the probe and the backend treat specially (values from the CUDA driver API). */
enum {
  TB_CUDA_SUCCESS = 0,
  TB_CUDA_ERROR_STUB_LIBRARY = 34,
  TB_CUDA_ERROR_NO_DEVICE = 100,
};

typedef int tb_cu_device;
typedef struct tb_cu_context_st *tb_cu_context;
typedef struct tb_cu_stream_st *tb_cu_stream;
typedef unsigned long long tb_cu_deviceptr; /* CUdeviceptr: an unsigned 64-bit integer on 64-bit hosts */
typedef struct tb_cu_uuid {
  unsigned char bytes[16];
} tb_cu_uuid;

_Static_assert(sizeof(tb_cu_deviceptr) == 8, "CUdeviceptr is 64 bits");

/* What the probe reads: name, return type, parameters, optional. */
#define TB_CUDA_PROBE_SYMBOLS(X)                                                             \
  X(cuInit, tb_cu_result, (unsigned int flags), false)                                       \
  X(cuDriverGetVersion, tb_cu_result, (int *version), false)                                 \
  X(cuDeviceGetCount, tb_cu_result, (int *count), false)                                     \
  X(cuDeviceGet, tb_cu_result, (tb_cu_device * device, int ordinal), false)                  \
  X(cuDeviceGetName, tb_cu_result, (char *name, int len, tb_cu_device dev), false)           \
  X(cuDeviceTotalMem_v2, tb_cu_result, (size_t * bytes, tb_cu_device dev), false)            \
  X(cuDeviceGetAttribute, tb_cu_result, (int *value, int attribute, tb_cu_device dev), false) \
  X(cuDeviceGetUuid_v2, tb_cu_result, (tb_cu_uuid * uuid, tb_cu_device dev), true)           \
  X(cuDeviceGetUuid, tb_cu_result, (tb_cu_uuid * uuid, tb_cu_device dev), true)              \
  X(cuDeviceGetPCIBusId, tb_cu_result, (char *bus_id, int len, tb_cu_device dev), false)     \
  X(cuGetErrorName, tb_cu_result, (tb_cu_result error, const char **name), true)

/* What the backend adds: required only when the library is opened for memory. */
#define TB_CUDA_MEMORY_SYMBOLS(X)                                                                          \
  X(cuDevicePrimaryCtxRetain, tb_cu_result, (tb_cu_context * ctx, tb_cu_device dev))                     \
  X(cuDevicePrimaryCtxRelease, tb_cu_result, (tb_cu_device dev))                                         \
  X(cuCtxPushCurrent_v2, tb_cu_result, (tb_cu_context ctx))                                              \
  X(cuCtxPopCurrent_v2, tb_cu_result, (tb_cu_context * ctx))                                             \
  X(cuCtxSynchronize, tb_cu_result, (void))                                                              \
  X(cuStreamCreate, tb_cu_result, (tb_cu_stream * stream, unsigned int flags))                           \
  X(cuStreamDestroy_v2, tb_cu_result, (tb_cu_stream stream))                                             \
  X(cuStreamSynchronize, tb_cu_result, (tb_cu_stream stream))                                            \
  X(cuMemAlloc_v2, tb_cu_result, (tb_cu_deviceptr * ptr, size_t bytes))                                  \
  X(cuMemFree_v2, tb_cu_result, (tb_cu_deviceptr ptr))                                                   \
  X(cuMemcpyHtoD_v2, tb_cu_result, (tb_cu_deviceptr dst, const void *src, size_t bytes))                 \
  X(cuMemcpyDtoH_v2, tb_cu_result, (void *dst, tb_cu_deviceptr src, size_t bytes))                       \
  X(cuMemcpyDtoD_v2, tb_cu_result, (tb_cu_deviceptr dst, tb_cu_deviceptr src, size_t bytes))             \
  X(cuMemsetD8_v2, tb_cu_result, (tb_cu_deviceptr dst, unsigned char value, size_t count))               \
  X(cuMemsetD16_v2, tb_cu_result, (tb_cu_deviceptr dst, unsigned short value, size_t count))             \
  X(cuMemsetD32_v2, tb_cu_result, (tb_cu_deviceptr dst, unsigned int value, size_t count))               \
  X(cuMemGetInfo_v2, tb_cu_result, (size_t * free_bytes, size_t * total_bytes))

/* Events: optional, checked when an event is created (the backend then names the missing symbol). */
typedef struct tb_cu_event_st *tb_cu_event;
#define TB_CUDA_EVENT_SYMBOLS(X)                                                                  \
  X(cuEventCreate, tb_cu_result, (tb_cu_event * event, unsigned int flags))                       \
  X(cuEventRecord, tb_cu_result, (tb_cu_event event, tb_cu_stream stream))                        \
  X(cuEventSynchronize, tb_cu_result, (tb_cu_event event))                                        \
  X(cuEventQuery, tb_cu_result, (tb_cu_event event))                                              \
  X(cuEventElapsedTime, tb_cu_result, (float *ms, tb_cu_event start, tb_cu_event end))            \
  X(cuEventDestroy_v2, tb_cu_result, (tb_cu_event event))

/* Pointer attributes, for importing memory another library allocated (DLPack): optional, checked when a
 * pointer is imported. The attribute numbers and CUmemorytype values are cuda.h's. */
enum {
  TB_CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  TB_CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  TB_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  TB_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  TB_CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
  TB_CU_MEMORYTYPE_HOST = 1,
  TB_CU_MEMORYTYPE_DEVICE = 2,
};
#define TB_CUDA_POINTER_SYMBOLS(X) \
  X(cuPointerGetAttribute, tb_cu_result, (void *data, int attribute, tb_cu_deviceptr ptr))

/* Modules and launches: optional, checked when the backend loads its kernels (backend/cuda/cuda_module.c
 * names the missing symbol). The device's compute capability (attributes 75/76) and cuDriverGetVersion,
 * which key the compiled kernels, are in the probe's table. */
typedef struct tb_cu_module_st *tb_cu_module;
typedef struct tb_cu_function_st *tb_cu_function;
#define TB_CUDA_MODULE_SYMBOLS(X)                                                                          \
  X(cuModuleLoadData, tb_cu_result, (tb_cu_module * module, const void *image))                          \
  X(cuModuleGetFunction, tb_cu_result, (tb_cu_function * function, tb_cu_module module, const char *name)) \
  X(cuModuleUnload, tb_cu_result, (tb_cu_module module))                                                 \
  X(cuLaunchKernel, tb_cu_result,                                                                        \
    (tb_cu_function f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x, \
     unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, tb_cu_stream stream, void **params, \
     void **extra))

/* Execution on a model's own stream (backend/cuda/cuda_stream.c, cuda_staging.c, cuda_graph.c): stream-ordered
 * copies and fills, pinned host memory for staging, and CUDA graphs (stream capture, instantiate, launch, exec
 * update). Optional: a libcuda without one of them runs on the backend's stream with synchronous copies and no
 * graphs, the reason in the prepare result. Flag and enum values are cuda.h's. */
typedef struct tb_cu_graph_st *tb_cu_graph;
typedef struct tb_cu_graph_exec_st *tb_cu_graph_exec;
typedef struct tb_cu_graph_node_st *tb_cu_graph_node;
enum {
  TB_CU_STREAM_NON_BLOCKING = 1,     /* CU_STREAM_NON_BLOCKING: no implicit sync with the legacy default stream */
  TB_CU_STREAM_CAPTURE_MODE_RELAXED = 2,
  TB_CU_MEMHOSTALLOC_PORTABLE = 1,
  TB_CU_EVENT_DISABLE_TIMING = 2,
  TB_CUDA_ERROR_NOT_READY = 600,
  TB_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  TB_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  TB_CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
};
/* CUgraphExecUpdateResultInfo (CUDA 12): the result, the node that failed and the node it was matched with. */
typedef struct tb_cu_graph_exec_update_info {
  int result;
  tb_cu_graph_node error_node;
  tb_cu_graph_node error_from_node;
} tb_cu_graph_exec_update_info;
#define TB_CUDA_EXEC_SYMBOLS(X)                                                                                    \
  X(cuMemcpyHtoDAsync_v2, tb_cu_result, (tb_cu_deviceptr dst, const void *src, size_t bytes, tb_cu_stream stream))  \
  X(cuMemcpyDtoHAsync_v2, tb_cu_result, (void *dst, tb_cu_deviceptr src, size_t bytes, tb_cu_stream stream))        \
  X(cuMemcpyDtoDAsync_v2, tb_cu_result, (tb_cu_deviceptr dst, tb_cu_deviceptr src, size_t bytes, tb_cu_stream stream)) \
  X(cuMemsetD8Async, tb_cu_result, (tb_cu_deviceptr dst, unsigned char value, size_t count, tb_cu_stream stream))  \
  X(cuMemsetD16Async, tb_cu_result, (tb_cu_deviceptr dst, unsigned short value, size_t count, tb_cu_stream stream)) \
  X(cuMemsetD32Async, tb_cu_result, (tb_cu_deviceptr dst, unsigned int value, size_t count, tb_cu_stream stream))  \
  X(cuMemHostAlloc, tb_cu_result, (void **host, size_t bytes, unsigned int flags))                               \
  X(cuMemFreeHost, tb_cu_result, (void *host))                                                                   \
  X(cuStreamBeginCapture_v2, tb_cu_result, (tb_cu_stream stream, int mode))                                      \
  X(cuStreamEndCapture, tb_cu_result, (tb_cu_stream stream, tb_cu_graph * graph))                                \
  X(cuGraphInstantiateWithFlags, tb_cu_result, (tb_cu_graph_exec * exec, tb_cu_graph graph, unsigned long long flags)) \
  X(cuGraphLaunch, tb_cu_result, (tb_cu_graph_exec exec, tb_cu_stream stream))                                   \
  X(cuGraphExecUpdate_v2, tb_cu_result, (tb_cu_graph_exec exec, tb_cu_graph graph, tb_cu_graph_exec_update_info * info)) \
  X(cuGraphExecDestroy, tb_cu_result, (tb_cu_graph_exec exec))                                                   \
  X(cuGraphDestroy, tb_cu_result, (tb_cu_graph graph))

/* CUdevice_attribute values the backend reads. */
enum { TB_CU_ATTR_COMPUTE_MAJOR = 75, TB_CU_ATTR_COMPUTE_MINOR = 76 };

typedef struct tb_cuda_api {
#define TB_CUDA_PROBE_MEMBER(name, ret, params, optional) ret(*name) params;
#define TB_CUDA_MEMORY_MEMBER(name, ret, params) ret(*name) params;
  TB_CUDA_PROBE_SYMBOLS(TB_CUDA_PROBE_MEMBER)
  TB_CUDA_MEMORY_SYMBOLS(TB_CUDA_MEMORY_MEMBER)
  TB_CUDA_EVENT_SYMBOLS(TB_CUDA_MEMORY_MEMBER)
  TB_CUDA_POINTER_SYMBOLS(TB_CUDA_MEMORY_MEMBER)
  TB_CUDA_MODULE_SYMBOLS(TB_CUDA_MEMORY_MEMBER)
  TB_CUDA_EXEC_SYMBOLS(TB_CUDA_MEMORY_MEMBER)
#undef TB_CUDA_PROBE_MEMBER
#undef TB_CUDA_MEMORY_MEMBER
} tb_cuda_api;

/* Open libcuda (TB_CUDA_LIB, else libcuda.so.1 then libcuda.so) and resolve the table; the memory symbols
 * are required when `memory` is set, else left NULL when absent. Returns the handle, or NULL: then *dl
 * says what was tried, and `missing` names the absent required symbol ("" when the library itself did
 * not load). */
void *tb_cuda_api_open(tb_cuda_api *api, bool memory, tb_dl_result *dl, char *missing, size_t cap);

/* The name of a CUresult: the driver's own (cuGetErrorName) when it answers, else the local table, else
 * "CUDA error <code>". */
void tb_cuda_api_error_name(const tb_cuda_api *api, tb_cu_result code, char *out, size_t cap);

/* The name of a CUresult ("CUDA_ERROR_NO_DEVICE"); NULL when the code is not in the local table. */
const char *tb_cuda_error_name(int code);
/* What a person can do when cuInit returns `code`. */
const char *tb_cuda_error_fix(int code);

#endif
