/* The CUDA backend's memory ops (tb_cuda_ops) over libcuda's driver API, opened with dlopen through the
 * table shared with the NVIDIA probe (runtime/nvidia_cuda_api.h). The device's primary context is
 * retained once and pushed/popped around every call, so any thread can use the backend without
 * disturbing the context the caller has current. Copies are the blocking cuMemcpy* calls; a stream is
 * created for the kernels to come. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_state.h"
#include "backend/devmem_check.h"
#include "core/error.h"
#include "runtime/nvidia_cuda_api.h"

#define CUDA_ALIGNMENT 256
#define CUDA_ERROR_OUT_OF_MEMORY 2


static tb_cu_deviceptr device_pointer(tb_devmem mem, size_t offset) {
  return (tb_cu_deviceptr)(uintptr_t)mem.handle + offset;
}

/* A failed driver call as a status and a sentence: the device, the call, what it was asked, the code and
 * its name. Out of memory is TB_ERR_OUT_OF_MEMORY; everything else TB_ERR_DRIVER. */
static tb_status call_failed_then(const cuda_state *s, const char *call, const char *what, tb_cu_result r,
                                  const char *then) {
  char name[64];
  tb_cuda_api_error_name(&s->api, r, name, sizeof name);
  tb_status status = r == CUDA_ERROR_OUT_OF_MEMORY ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER;
  return tb_error(status, "%s: %s%s%s failed with %d %s%s", s->label, call, what[0] ? " " : "", what, r, name, then);
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
                    s->label, dl.path, missing);
  return tb_error(TB_ERR_UNAVAILABLE,
                  "%s: libcuda.so.1 not found (tried %s): %s; install the NVIDIA driver (nvidia-driver package) or set "
                  "TB_CUDA_LIB to the path of libcuda.so.1",
                  s->label, dl.tried, dl.error[0] ? dl.error : "not found");
}

/* cuInit, the device, its primary context and a stream. */
static tb_status start(cuda_state *s, int index) {
  tb_cu_result r = s->api.cuInit(0);
  if (r != TB_CUDA_SUCCESS) return call_failed_fix(s, "cuInit", r);
  char what[32];
  snprintf(what, sizeof what, "(%d)", index);
  if ((r = s->api.cuDeviceGet(&s->device, index)) != TB_CUDA_SUCCESS) return call_failed(s, "cuDeviceGet", what, r);
  if ((r = s->api.cuDevicePrimaryCtxRetain(&s->ctx, s->device)) != TB_CUDA_SUCCESS) {
    s->ctx = NULL;
    return call_failed_fix(s, "cuDevicePrimaryCtxRetain", r);
  }
  tb_status st = enter(s, "cuStreamCreate");
  if (st != TB_OK) return st;
  r = s->api.cuStreamCreate(&s->stream, 0);
  leave(s);
  if (r != TB_CUDA_SUCCESS) {
    s->stream = NULL;
    return call_failed(s, "cuStreamCreate", "", r);
  }
  return TB_OK;
}

static tb_status cuda_open(const tb_device_info *device, void **state) {
  *state = NULL;
  if (!device || device->backend != TB_BACKEND_CUDA || device->index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "the CUDA backend needs a CUDA device (cuda:N), not %s",
                    device && device->device ? device->device : "(null)");
  cuda_state *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory opening %s", device->device);
  snprintf(s->label, sizeof s->label, "%s", device->device);
  tb_status st = open_library(s);
  if (st == TB_OK) st = start(s, device->index);
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

static size_t cuda_alignment(void *state) {
  (void)state;
  return CUDA_ALIGNMENT;
}

static tb_status cuda_alloc(void *state, size_t bytes, tb_devmem *out) {
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
  out->handle = (void *)(uintptr_t)p;
  out->size = bytes;
  return TB_OK;
}

static void cuda_free(void *state, tb_devmem mem) {
  cuda_state *s = state;
  if (enter(s, "cuMemFree_v2") != TB_OK) return;
  s->api.cuMemFree_v2(device_pointer(mem, 0));
  leave(s);
}

static tb_status cuda_write(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes) {
  cuda_state *s = state;
  tb_status range_dst = tb_devmem_check(s->label, "write", dst, dst_offset, bytes);
  if (range_dst != TB_OK) return range_dst;
  if (bytes == 0) return TB_OK;
  tb_status st = enter(s, "cuMemcpyHtoD_v2");
  if (st != TB_OK) return st;
  tb_cu_result r = s->api.cuMemcpyHtoD_v2(device_pointer(dst, dst_offset), src, bytes);
  leave(s);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, dst_offset);
  return call_failed(s, "cuMemcpyHtoD_v2", what, r);
}

static tb_status cuda_read(void *state, tb_devmem src, size_t src_offset, void *dst, size_t bytes) {
  cuda_state *s = state;
  tb_status range_src = tb_devmem_check(s->label, "read", src, src_offset, bytes);
  if (range_src != TB_OK) return range_src;
  if (bytes == 0) return TB_OK;
  tb_status st = enter(s, "cuMemcpyDtoH_v2");
  if (st != TB_OK) return st;
  tb_cu_result r = s->api.cuMemcpyDtoH_v2(dst, device_pointer(src, src_offset), bytes);
  leave(s);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, src_offset);
  return call_failed(s, "cuMemcpyDtoH_v2", what, r);
}

static tb_status cuda_copy(void *state, tb_devmem dst, size_t dst_offset, tb_devmem src, size_t src_offset,
                           size_t bytes) {
  cuda_state *s = state;
  tb_status range_dst = tb_devmem_check(s->label, "copy destination", dst, dst_offset, bytes);
  if (range_dst != TB_OK) return range_dst;
  tb_status range_src = tb_devmem_check(s->label, "copy source", src, src_offset, bytes);
  if (range_src != TB_OK) return range_src;
  if (bytes == 0) return TB_OK;
  tb_status st = enter(s, "cuMemcpyDtoD_v2");
  if (st != TB_OK) return st;
  tb_cu_result r = s->api.cuMemcpyDtoD_v2(device_pointer(dst, dst_offset), device_pointer(src, src_offset), bytes);
  leave(s);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes", bytes);
  return call_failed(s, "cuMemcpyDtoD_v2", what, r);
}


static tb_status cuda_fill(void *state, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size,
                           size_t bytes) {
  cuda_state *s = state;
  tb_status checked = tb_fill_check(s->label, pattern, pattern_size, bytes);
  if (checked != TB_OK) return checked;
  if (!tb_devmem_in_range(dst, offset, bytes)) return tb_devmem_range_error(s->label, "fill", offset, bytes, dst.size);
  if (bytes == 0) return TB_OK;
  unsigned char p[8];
  memcpy(p, pattern, pattern_size);
  if (pattern_size == 8 && memcmp(p, p + 4, 4) == 0) pattern_size = 4; /* two equal halves: a 4-byte pattern */
  tb_cu_deviceptr at = device_pointer(dst, offset);
  if (pattern_size == 8 || at % pattern_size != 0)
    return tb_fill_through_host(s->label, cuda_write, s, dst, offset, pattern, pattern_size, bytes);
  const char *call = pattern_size == 1 ? "cuMemsetD8_v2" : pattern_size == 2 ? "cuMemsetD16_v2" : "cuMemsetD32_v2";
  tb_status st = enter(s, call);
  if (st != TB_OK) return st;
  tb_cu_result r;
  if (pattern_size == 1) {
    r = s->api.cuMemsetD8_v2(at, p[0], bytes);
  } else if (pattern_size == 2) {
    unsigned short v;
    memcpy(&v, p, 2);
    r = s->api.cuMemsetD16_v2(at, v, bytes / 2);
  } else {
    unsigned int v;
    memcpy(&v, p, 4);
    r = s->api.cuMemsetD32_v2(at, v, bytes / 4);
  }
  leave(s);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, offset);
  return call_failed(s, call, what, r);
}

static tb_status cuda_synchronize(void *state) {
  cuda_state *s = state;
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

const tb_backend_ops tb_cuda_ops = {
    .kind = TB_BACKEND_CUDA,
    .open = cuda_open,
    .close = cuda_close,
    .alignment = cuda_alignment,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .write = cuda_write,
    .read = cuda_read,
    .copy = cuda_copy,
    .fill = cuda_fill,
    .synchronize = cuda_synchronize,
    .memory_info = cuda_memory_info,
    .event_create = tb_cuda_event_create,
    .event_record = tb_cuda_event_record,
    .event_synchronize = tb_cuda_event_synchronize,
    .event_query = tb_cuda_event_query,
    .event_elapsed_ms = tb_cuda_event_elapsed_ms,
    .event_destroy = tb_cuda_event_destroy,
};
