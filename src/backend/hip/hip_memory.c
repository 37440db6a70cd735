/* The HIP backend's memory ops (tb_hip_ops) over the HIP runtime, opened with dlopen through the table
 * shared with the ROCm probe (runtime/amd_hip_api.h). HIP's current device belongs to the calling
 * thread, so every call is wrapped: the backend's device is made current (hipSetDevice) and the thread's
 * previous device is put back afterwards. Copies are the blocking hipMemcpy. The range checks and fill
 * rules are the shared ones (devmem_ops.c); this file is the runtime's side of them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/devmem_ops.h"
#include "backend/hip/hip_state.h"
#include "core/error.h"
#include "runtime/amd_hip_api.h"

#define HIP_ALIGNMENT 256


/* A failed runtime call as a status and a sentence (devmem_ops.h). */
static tb_status call_failed_then(const hip_state *s, const char *call, const char *what, int r, const char *then) {
  return tb_devmem_call_failed(&s->base, call, what, r, then);
}

static tb_status call_failed(const hip_state *s, const char *call, const char *what, int r) {
  return call_failed_then(s, call, what, r, "");
}

/* The thread's device while one call runs: *previous gets the device to put back. */
static tb_status enter(const hip_state *s, int *previous) {
  *previous = -1;
  int current = -1;
  if (s->api.hipGetDevice(&current) == TB_HIP_SUCCESS && current == s->device) return TB_OK;
  int r = s->api.hipSetDevice(s->device);
  if (r != TB_HIP_SUCCESS) {
    char what[32];
    snprintf(what, sizeof what, "(%d)", s->device);
    return call_failed(s, "hipSetDevice", what, r);
  }
  *previous = current;
  return TB_OK;
}

static void leave(const hip_state *s, int previous) {
  if (previous >= 0) s->api.hipSetDevice(previous);
}

static tb_status open_library(hip_state *s) {
  tb_dl_result dl;
  char missing[128];
  s->lib = tb_hip_api_open(&s->api, true, &dl, missing, sizeof missing);
  if (s->lib) return TB_OK;
  if (missing[0])
    return tb_error(TB_ERR_UNAVAILABLE,
                    "%s: %s does not export %s, which the HIP backend needs; install a current ROCm HIP runtime (or "
                    "point TB_HIP_LIB at libamdhip64.so)",
                    s->base.label, dl.path, missing);
  return tb_error(TB_ERR_UNAVAILABLE,
                  "%s: libamdhip64.so not found (tried %s): %s; install ROCm's HIP runtime (hip-runtime-amd) or set "
                  "TB_HIP_LIB to the path of libamdhip64.so",
                  s->base.label, dl.tried, dl.error[0] ? dl.error : "not found");
}

static tb_status start(hip_state *s) {
  int r = s->api.hipInit(0);
  if (r != TB_HIP_SUCCESS)
    return call_failed_then(s, "hipInit", "", r,
                            "; check that the amdgpu kernel driver is loaded and /dev/kfd is accessible (group "
                            "render/video)");
  int count = 0;
  if ((r = s->api.hipGetDeviceCount(&count)) != TB_HIP_SUCCESS) return call_failed(s, "hipGetDeviceCount", "", r);
  if (s->device >= count)
    return tb_error(TB_ERR_NOT_FOUND, "%s: HIP lists %d device%s; check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES",
                    s->base.label, count, count == 1 ? "" : "s");
  int previous;
  tb_status st = enter(s, &previous);
  if (st == TB_OK) leave(s, previous);
  return st;
}

static const tb_devmem_vendor hip_vendor;

static tb_status hip_open(const tb_device_info *device, void **state) {
  *state = NULL;
  if (!device || device->backend != TB_BACKEND_ROCM || device->index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "the HIP backend needs a ROCm device (rocm:N), not %s",
                    device && device->device ? device->device : "(null)");
  hip_state *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory opening %s", device->device);
  s->device = device->index;
  s->base.vendor = &hip_vendor;
  snprintf(s->base.label, sizeof s->base.label, "%s", device->device);
  tb_status st = open_library(s);
  if (st == TB_OK) st = start(s);
  if (st != TB_OK) {
    free(s);
    return st;
  }
  *state = s;
  return TB_OK;
}

/* HIP has no context of ours to release: the runtime stays loaded (core/dl.c owns the handle). */
static void hip_close(void *state) {
  hip_state *s = state;
  if (!s) return;
  free(s);
}

static void error_name(const void *state, int64_t code, char *out, size_t size) {
  const hip_state *s = state;
  char name[64];
  tb_hip_api_error_name(&s->api, (int)code, name, sizeof name);
  snprintf(out, size, "%d %s", (int)code, name);
}

static bool out_of_memory(int64_t code) { return code == TB_HIP_ERROR_OUT_OF_MEMORY; }

static tb_status hip_alloc(void *state, size_t bytes, uintptr_t *out) {
  hip_state *s = state;
  int previous;
  tb_status st = enter(s, &previous);
  if (st != TB_OK) return st;
  void *p = NULL;
  int r = s->api.hipMalloc(&p, bytes);
  size_t free_bytes = 0, total_bytes = 0;
  bool info = r == TB_HIP_ERROR_OUT_OF_MEMORY && s->api.hipMemGetInfo(&free_bytes, &total_bytes) == TB_HIP_SUCCESS;
  leave(s, previous);
  if (r != TB_HIP_SUCCESS || !p) {
    char what[96], then[128] = "";
    snprintf(what, sizeof what, "of %zu bytes", bytes);
    if (info) snprintf(then, sizeof then, " (the runtime reports %zu bytes free of %zu)", free_bytes, total_bytes);
    return call_failed_then(s, "hipMalloc", what, r != TB_HIP_SUCCESS ? r : TB_HIP_ERROR_OUT_OF_MEMORY, then);
  }
  *out = (uintptr_t)p;
  return TB_OK;
}

static void hip_free(void *state, uintptr_t address) {
  hip_state *s = state;
  int previous;
  if (enter(s, &previous) != TB_OK) return;
  s->api.hipFree((void *)address);
  leave(s, previous);
}

static tb_status hip_copy(void *state, tb_devmem_direction direction, uintptr_t dst, uintptr_t src, size_t bytes,
                          size_t offset) {
  static const char *const kinds[] = {"", "host to device", "device to host", "device to device"};
  static const int hip_kinds[] = {0, TB_HIP_MEMCPY_H2D, TB_HIP_MEMCPY_D2H, TB_HIP_MEMCPY_D2D};
  hip_state *s = state;
  int previous;
  tb_status st = enter(s, &previous);
  if (st != TB_OK) return st;
  int r = s->api.hipMemcpy((void *)dst, (const void *)src, bytes, hip_kinds[direction]);
  leave(s, previous);
  if (r == TB_HIP_SUCCESS) return TB_OK;
  char what[128];
  snprintf(what, sizeof what, "(%s) of %zu bytes at offset %zu", kinds[direction], bytes, offset);
  return call_failed(s, "hipMemcpy", what, r);
}

/* A 1-, 2- or 4-byte pattern at an address it divides (the shared fill sees to both). */
static tb_status hip_fill(void *state, uintptr_t address, const unsigned char *p, size_t pattern_size, size_t bytes,
                          size_t offset) {
  hip_state *s = state;
  void *at = (void *)address;
  int previous;
  tb_status st = enter(s, &previous);
  if (st != TB_OK) return st;
  int r;
  const char *call;
  if (pattern_size == 1) {
    call = "hipMemset";
    r = s->api.hipMemset(at, p[0], bytes);
  } else if (pattern_size == 2) {
    unsigned short v;
    memcpy(&v, p, 2);
    call = "hipMemsetD16";
    r = s->api.hipMemsetD16(at, v, bytes / 2);
  } else {
    int v;
    memcpy(&v, p, 4);
    call = "hipMemsetD32";
    r = s->api.hipMemsetD32(at, v, bytes / 4);
  }
  leave(s, previous);
  if (r == TB_HIP_SUCCESS) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, offset);
  return call_failed(s, call, what, r);
}

static tb_status hip_synchronize(void *state) {
  hip_state *s = state;
  int previous;
  tb_status st = enter(s, &previous);
  if (st != TB_OK) return st;
  int r = s->api.hipDeviceSynchronize();
  leave(s, previous);
  return r == TB_HIP_SUCCESS ? TB_OK : call_failed(s, "hipDeviceSynchronize", "", r);
}

static tb_status hip_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  hip_state *s = state;
  int previous;
  tb_status st = enter(s, &previous);
  if (st != TB_OK) return st;
  size_t f = 0, t = 0;
  int r = s->api.hipMemGetInfo(&f, &t);
  leave(s, previous);
  if (r != TB_HIP_SUCCESS) return call_failed(s, "hipMemGetInfo", "", r);
  *free_bytes = f;
  *total_bytes = t;
  return TB_OK;
}

static const tb_devmem_vendor hip_vendor = {
    .alignment = HIP_ALIGNMENT,
    .fill_any_pattern = false,
    .alloc = hip_alloc,
    .free = hip_free,
    .copy = hip_copy,
    .fill = hip_fill,
    .synchronize = hip_synchronize,
    .memory_info = hip_memory_info,
    .error_name = error_name,
    .out_of_memory = out_of_memory,
    .check_foreign = tb_hip_check_foreign,
};

const tb_backend_ops tb_hip_ops = {
    .kind = TB_BACKEND_ROCM,
    .open = hip_open,
    .close = hip_close,
    TB_DEVMEM_OPS,
    .event_create = tb_hip_event_create,
    .event_record = tb_hip_event_record,
    .event_synchronize = tb_hip_event_synchronize,
    .event_query = tb_hip_event_query,
    .event_elapsed_ms = tb_hip_event_elapsed_ms,
    .event_destroy = tb_hip_event_destroy,
};
