/* The CUDA backend's memory ops (tb_cuda_ops) over libcuda's driver API, opened with dlopen through the
 * table shared with the NVIDIA probe (runtime/nvidia_cuda_api.h). The device's primary context is
 * retained once and pushed/popped around every call, so any thread can use the backend without
 * disturbing the context the caller has current. Copies and fills go on the stream this thread has bound (a
 * prepared model's, cuda_stream.c), else on the backend's own non-blocking stream, never on the legacy default
 * stream: with the host through pinned staging buffers (cuda_staging.c), within the device stream-ordered (and
 * waited for when no model stream is bound, so they block as the ops' contract says). A libcuda without the
 * stream-ordered calls gets the blocking cuMemcpy* calls. During a graph capture a copy with the host or a
 * synchronize is refused (cuda_graph.c). The kernels' module (cuda_module.c) is unloaded at close. The range checks
 * and fill rules are the shared ones (devmem_ops.c); this file is the driver's side of them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_dnn.h"
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/cuda/cuda_state.h"
#include "backend/devmem_ops.h"
#include "core/env.h"
#include "core/error.h"
#include "discover/nvidia_cuda.h"
#include "discover/pci.h"
#include "runtime/nvidia_cuda_api.h"

#define CUDA_ALIGNMENT 256
#define CUDA_ERROR_OUT_OF_MEMORY 2


/* A failed driver call as a status and a sentence (devmem_ops.h): the device, the call, what it was asked,
 * the code and its name. Out of memory is TB_ERR_OUT_OF_MEMORY; everything else TB_ERR_DRIVER. */
static tb_status call_failed_then(const cuda_state *s, const char *call, const char *what, tb_cu_result r,
                                  const char *then) {
  return tb_devmem_call_failed(&s->base, call, what, r, then);
}

static tb_status call_failed(const cuda_state *s, const char *call, const char *what, tb_cu_result r) {
  return call_failed_then(s, call, what, r, "");
}

/* The same, with what a person can do about it. */
static tb_status call_failed_fix(const cuda_state *s, const char *call, tb_cu_result r) {
  char then[512];
  snprintf(then, sizeof then, "; %s", tb_cuda_error_fix(r));
  return call_failed_then(s, call, "", r, then);
}

/* Make the backend's context current on this thread for one call. */
static tb_status enter(const cuda_state *s, const char *call) {
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return call_failed(s, "cuCtxPushCurrent_v2", call, r);
  return TB_OK;
}

static void leave(const cuda_state *s) {
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
}

static void release(cuda_state *s) {
  tb_cuda_workspace_release(s, NULL, true);
  pthread_mutex_destroy(&s->workspace_lock);
  tb_cuda_staging_free(s);
  tb_cuda_module_release(s);
  pthread_mutex_destroy(&s->module_lock);
  if (s->dnn && enter(s, "cudnnDestroy") == TB_OK) {
    tb_cuda_dnn_destroy(s->dnn);
    leave(s);
  }
  pthread_mutex_destroy(&s->dnn_lock);
  if (s->stream && enter(s, "cuStreamDestroy_v2") == TB_OK) {
    s->api.cuStreamDestroy_v2(s->stream);
    leave(s);
  }
  if (s->ctx) s->api.cuDevicePrimaryCtxRelease(s->device);
  free(s);
}

static tb_status open_library(cuda_state *s) {
  tb_dl_result dl;
  char missing[128];
  s->lib = tb_cuda_api_open(&s->api, true, &dl, missing, sizeof missing);
  if (s->lib) return TB_OK;
  if (missing[0])
    return tb_error(TB_ERR_UNAVAILABLE,
                    "%s: %s does not export %s, which the CUDA backend needs; update the NVIDIA driver (or point "
                    "TB_CUDA_LIB at a current libcuda.so.1)",
                    s->base.label, dl.path, missing);
  return tb_error(TB_ERR_UNAVAILABLE,
                  "%s: libcuda.so.1 not found (tried %s): %s; install the NVIDIA driver (nvidia-driver package) or set "
                  "TB_CUDA_LIB to the path of libcuda.so.1",
                  s->base.label, dl.tried, dl.error[0] ? dl.error : "not found");
}

/* Discovery may number the GPUs from NVML without cuInit (docs/nvidia.md): the ordinal must reach the GPU
 * it listed, never another one. */
static tb_status check_bus(const cuda_state *s, int index, const char *expected) {
  char got[64] = "", normal[16] = "";
  if (!expected || !expected[0]) return TB_OK;
  tb_cu_result r = s->api.cuDeviceGetPCIBusId(got, (int)sizeof got, s->device);
  got[sizeof got - 1] = '\0';
  if (r != TB_CUDA_SUCCESS) return call_failed(s, "cuDeviceGetPCIBusId", "", r);
  if (tb_pci_normalize(got, normal, sizeof normal) && strcmp(normal, expected) == 0) return TB_OK;
  return tb_error(TB_ERR_DRIVER,
                  "%s: discovery listed the GPU at %s as CUDA ordinal %d, but libcuda has %s there; run `tb devices` "
                  "again in this environment (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER decide the numbering), or "
                  "set CUDA_DEVICE_ORDER=PCI_BUS_ID",
                  s->base.label, expected, index, normal[0] ? normal : "no valid bus id");
}

/* cuInit, the device (the one discovery listed), its primary context and a stream. */
static tb_status start(cuda_state *s, int index, const char *bus_id) {
  tb_cu_result r = s->api.cuInit(0);
  if (r != TB_CUDA_SUCCESS) return call_failed_fix(s, "cuInit", r);
  char what[32];
  snprintf(what, sizeof what, "(%d)", index);
  if ((r = s->api.cuDeviceGet(&s->device, index)) != TB_CUDA_SUCCESS) return call_failed(s, "cuDeviceGet", what, r);
  tb_status bus = check_bus(s, index, bus_id);
  if (bus != TB_OK) return bus;
  if ((r = s->api.cuDevicePrimaryCtxRetain(&s->ctx, s->device)) != TB_CUDA_SUCCESS) {
    s->ctx = NULL;
    return call_failed_fix(s, "cuDevicePrimaryCtxRetain", r);
  }
  /* The grids of the kernels' launches follow the multiprocessor count; a driver that does not answer gets
   * the smallest current GPU's (a grid-stride kernel is correct with any grid). */
  if (s->api.cuDeviceGetAttribute(&s->sm_count, 16, s->device) != TB_CUDA_SUCCESS || s->sm_count < 1) s->sm_count = 16;
  s->async = s->api.cuMemcpyHtoDAsync_v2 && s->api.cuMemcpyDtoHAsync_v2 && s->api.cuMemcpyDtoDAsync_v2 &&
             s->api.cuMemsetD8Async && s->api.cuMemsetD16Async && s->api.cuMemsetD32Async && s->api.cuEventCreate &&
             s->api.cuEventRecord && s->api.cuEventSynchronize && s->api.cuEventDestroy_v2;
  const char *staging = tb_env("TB_CUDA_STAGING");
  s->staging_on = !staging || (strcmp(staging, "off") != 0 && strcmp(staging, "0") != 0);
  if (staging && s->staging_on && strcmp(staging, "on") != 0 && strcmp(staging, "1") != 0)
    tb_env_warn("TB_CUDA_STAGING", staging, "is not on, 1, off or 0; host copies go through pinned staging buffers (on)");
  tb_status st = enter(s, "cuStreamCreate");
  if (st != TB_OK) return st;
  r = s->api.cuStreamCreate(&s->stream, s->async ? TB_CU_STREAM_NON_BLOCKING : 0);
  leave(s);
  if (r != TB_CUDA_SUCCESS) {
    s->stream = NULL;
    return call_failed(s, "cuStreamCreate", "", r);
  }
  return TB_OK;
}

static const tb_devmem_vendor cuda_vendor;

static tb_status cuda_open(const tb_device_info *device, void **state) {
  *state = NULL;
  if (!device || device->backend != TB_BACKEND_CUDA || device->index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "the CUDA backend needs a CUDA device (cuda:N), not %s",
                    device && device->device ? device->device : "(null)");
  cuda_state *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory opening %s", device->device);
  s->base.vendor = &cuda_vendor;
  pthread_mutex_init(&s->module_lock, NULL);
  pthread_mutex_init(&s->dnn_lock, NULL);
  pthread_mutex_init(&s->workspace_lock, NULL);
  snprintf(s->base.label, sizeof s->base.label, "%s", device->device);
  tb_status st = open_library(s);
  if (st == TB_OK) st = start(s, device->index, device->pci_bus_id);
  if (st != TB_OK) {
    release(s);
    return st;
  }
  *state = s;
  return TB_OK;
}

static void cuda_close(void *state) {
  if (state) release(state);
}

static void error_name(const void *state, int64_t code, char *out, size_t size) {
  const cuda_state *s = state;
  char name[64];
  tb_cuda_api_error_name(&s->api, (tb_cu_result)code, name, sizeof name);
  snprintf(out, size, "%d %s", (int)code, name);
}

static bool out_of_memory(int64_t code) { return code == CUDA_ERROR_OUT_OF_MEMORY; }

static tb_status cuda_alloc(void *state, size_t bytes, uintptr_t *out) {
  cuda_state *s = state;
  tb_status st = enter(s, "cuMemAlloc_v2");
  if (st != TB_OK) return st;
  tb_cu_deviceptr p = 0;
  tb_cu_result r = s->api.cuMemAlloc_v2(&p, bytes);
  size_t free_bytes = 0, total_bytes = 0;
  bool info = r == CUDA_ERROR_OUT_OF_MEMORY && s->api.cuMemGetInfo_v2(&free_bytes, &total_bytes) == TB_CUDA_SUCCESS;
  leave(s);
  if (r != TB_CUDA_SUCCESS) {
    char what[96], then[128] = "";
    snprintf(what, sizeof what, "of %zu bytes", bytes);
    if (info) snprintf(then, sizeof then, " (the driver reports %zu bytes free of %zu)", free_bytes, total_bytes);
    return call_failed_then(s, "cuMemAlloc_v2", what, r, then);
  }
  *out = (uintptr_t)p;
  return TB_OK;
}

static void cuda_free(void *state, uintptr_t address) {
  cuda_state *s = state;
  if (enter(s, "cuMemFree_v2") != TB_OK) return;
  s->api.cuMemFree_v2((tb_cu_deviceptr)address);
  leave(s);
}

/* A copy with the host while this thread captures a graph: refused (a graph cannot read or write host memory
 * whose contents change between replays, and the host would not see the result). */
static tb_status refuse_in_capture(const cuda_state *s, tb_devmem_direction direction, size_t bytes) {
  char what[160];
  snprintf(what, sizeof what, "a copy of %zu bytes %s the host", bytes, direction == TB_DEVMEM_HOST_TO_DEVICE ? "from" : "to");
  tb_cuda_capture_refuse(s, what);
  return tb_error(TB_ERR_UNSUPPORTED, "%s: %s in the middle of a captured run cannot be captured into a CUDA graph",
                  s->base.label, what);
}

/* Whether the caller's thread has no model stream bound: then device-side work is waited for, so it blocks. */
static bool unbound(const cuda_state *s) { return tb_cuda_stream_of(s) == s->stream; }

static tb_status cuda_copy(void *state, tb_devmem_direction direction, uintptr_t dst, uintptr_t src, size_t bytes,
                           size_t offset) {
  static const char *const calls[] = {"", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2"};
  cuda_state *s = state;
  if (direction != TB_DEVMEM_DEVICE_TO_DEVICE && tb_cuda_capturing(s)) return refuse_in_capture(s, direction, bytes);
  tb_status st = enter(s, calls[direction]);
  if (st != TB_OK) return st;
  tb_cu_result r;
  tb_cu_stream stream = tb_cuda_stream_of(s);
  if (s->async && direction != TB_DEVMEM_DEVICE_TO_DEVICE) {
    bool to_device = direction == TB_DEVMEM_HOST_TO_DEVICE;
    st = tb_cuda_copy_host(s, to_device, (tb_cu_deviceptr)(to_device ? dst : src), (void *)(to_device ? src : dst), bytes, stream,
                           unbound(s), offset);
    leave(s);
    return st;
  }
  const char *call = calls[direction];
  if (s->async) {
    call = "cuMemcpyDtoDAsync_v2";
    r = s->api.cuMemcpyDtoDAsync_v2((tb_cu_deviceptr)dst, (tb_cu_deviceptr)src, bytes, stream);
    if (r == TB_CUDA_SUCCESS && unbound(s) && (r = s->api.cuStreamSynchronize(stream)) != TB_CUDA_SUCCESS) call = "cuStreamSynchronize";
  } else if (direction == TB_DEVMEM_HOST_TO_DEVICE) {
    r = s->api.cuMemcpyHtoD_v2((tb_cu_deviceptr)dst, (const void *)src, bytes);
  } else if (direction == TB_DEVMEM_DEVICE_TO_HOST) {
    r = s->api.cuMemcpyDtoH_v2((void *)dst, (tb_cu_deviceptr)src, bytes);
  } else {
    r = s->api.cuMemcpyDtoD_v2((tb_cu_deviceptr)dst, (tb_cu_deviceptr)src, bytes);
  }
  leave(s);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char what[96];
  if (direction == TB_DEVMEM_DEVICE_TO_DEVICE) snprintf(what, sizeof what, "of %zu bytes", bytes);
  else snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, offset);
  return call_failed(s, call, what, r);
}

/* A 1-, 2- or 4-byte pattern at an address it divides (the shared fill sees to both). */
static tb_status cuda_fill(void *state, uintptr_t at, const unsigned char *p, size_t pattern_size, size_t bytes,
                           size_t offset) {
  cuda_state *s = state;
  const char *call = pattern_size == 1 ? "cuMemsetD8_v2" : pattern_size == 2 ? "cuMemsetD16_v2" : "cuMemsetD32_v2";
  if (s->async) call = pattern_size == 1 ? "cuMemsetD8Async" : pattern_size == 2 ? "cuMemsetD16Async" : "cuMemsetD32Async";
  tb_status st = enter(s, call);
  if (st != TB_OK) return st;
  tb_cu_result r;
  tb_cu_stream stream = tb_cuda_stream_of(s);
  unsigned short v16 = 0;
  unsigned int v32 = 0;
  if (pattern_size == 2) memcpy(&v16, p, 2);
  if (pattern_size == 4) memcpy(&v32, p, 4);
  if (s->async) {
    if (pattern_size == 1) r = s->api.cuMemsetD8Async((tb_cu_deviceptr)at, p[0], bytes, stream);
    else if (pattern_size == 2) r = s->api.cuMemsetD16Async((tb_cu_deviceptr)at, v16, bytes / 2, stream);
    else r = s->api.cuMemsetD32Async((tb_cu_deviceptr)at, v32, bytes / 4, stream);
    if (r == TB_CUDA_SUCCESS && unbound(s) && (r = s->api.cuStreamSynchronize(stream)) != TB_CUDA_SUCCESS) call = "cuStreamSynchronize";
  } else if (pattern_size == 1) {
    r = s->api.cuMemsetD8_v2((tb_cu_deviceptr)at, p[0], bytes);
  } else if (pattern_size == 2) {
    r = s->api.cuMemsetD16_v2((tb_cu_deviceptr)at, v16, bytes / 2);
  } else {
    r = s->api.cuMemsetD32_v2((tb_cu_deviceptr)at, v32, bytes / 4);
  }
  leave(s);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, offset);
  return call_failed(s, call, what, r);
}

static tb_status cuda_synchronize(void *state) {
  cuda_state *s = state;
  if (tb_cuda_capturing(s)) {
    tb_cuda_capture_refuse(s, "a wait for the device (the host needs a result in the middle of the run)");
    return tb_error(TB_ERR_UNSUPPORTED, "%s: a wait for the device in the middle of a captured run cannot be captured",
                    s->base.label);
  }
  tb_status st = enter(s, "cuCtxSynchronize");
  if (st != TB_OK) return st;
  tb_cu_result r = s->api.cuCtxSynchronize();
  leave(s);
  return r == TB_CUDA_SUCCESS ? TB_OK : call_failed(s, "cuCtxSynchronize", "", r);
}

static tb_status cuda_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  cuda_state *s = state;
  tb_status st = enter(s, "cuMemGetInfo_v2");
  if (st != TB_OK) return st;
  size_t f = 0, t = 0;
  tb_cu_result r = s->api.cuMemGetInfo_v2(&f, &t);
  leave(s);
  if (r != TB_CUDA_SUCCESS) return call_failed(s, "cuMemGetInfo_v2", "", r);
  *free_bytes = f;
  *total_bytes = t;
  return TB_OK;
}

static const tb_devmem_vendor cuda_vendor = {
    .alignment = CUDA_ALIGNMENT,
    .fill_any_pattern = false,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .fill = cuda_fill,
    .synchronize = cuda_synchronize,
    .memory_info = cuda_memory_info,
    .error_name = error_name,
    .out_of_memory = out_of_memory,
    .check_foreign = tb_cuda_check_foreign,
};

const tb_backend_ops tb_cuda_ops = {
    .kind = TB_BACKEND_CUDA,
    .open = cuda_open,
    .close = cuda_close,
    TB_DEVMEM_OPS,
    .event_create = tb_cuda_event_create,
    .event_record = tb_cuda_event_record,
    .event_synchronize = tb_cuda_event_synchronize,
    .event_query = tb_cuda_event_query,
    .event_elapsed_ms = tb_cuda_event_elapsed_ms,
    .event_destroy = tb_cuda_event_destroy,
    .find_kernel = tb_cuda_find_kernel,
    .stream_create = tb_cuda_stream_create,
    .stream_destroy = tb_cuda_stream_destroy,
    .stream_synchronize = tb_cuda_stream_synchronize,
    .stream_bind = tb_cuda_stream_bind,
    .capture_begin = tb_cuda_capture_begin,
    .capture_end = tb_cuda_capture_end,
    .graph_launch = tb_cuda_graph_launch,
    .graph_destroy = tb_cuda_graph_destroy,
};
