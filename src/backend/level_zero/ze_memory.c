/* The Level Zero backend's memory ops (tb_level_zero_ops) over libze_loader, opened with dlopen through the
 * table shared with the XPU probe (runtime/intel_ze_api.h). open() finds the xpu:N device (by UUID, else
 * as the N-th GPU in driver order, as the probe numbers them), creates a context and one immediate command
 * list in synchronous mode: every copy and fill appended to it has finished when the call returns. A
 * command list is not safe for two threads at once, so a mutex guards it. Free memory comes from Sysman
 * (zesInit; discover/intel_zes.h) when the loader has it. The range checks are the shared ones
 * (devmem_ops.c); this file is the driver's side of them. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/devmem_ops.h"
#include "backend/level_zero/ze_state.h"
#include "core/error.h"
#include "core/uuid.h"
#include "discover/devlist.h"
#include "discover/intel_ze.h"
#include "runtime/intel_ze_api.h"
#include "discover/intel_zes.h"

#define ZE_ALIGNMENT 256
#define ZE_MAX_DRIVERS 16
#define ZE_MAX_DEVICES 256


/* A failed driver call as a status and a sentence (devmem_ops.h). */
static tb_status call_failed(const ze_state *s, const char *call, const char *what, uint32_t r) {
  return tb_devmem_call_failed(&s->base, call, what, r, "");
}

static tb_status open_library(ze_state *s) {
  tb_dl_result dl;
  char missing[128];
  s->lib = tb_ze_api_open(&s->api, true, &dl, missing, sizeof missing);
  if (s->lib) {
    snprintf(s->library, sizeof s->library, "%s", dl.path);
    return TB_OK;
  }
  if (missing[0])
    return tb_error(TB_ERR_UNAVAILABLE,
                    "%s: %s does not export %s, which the Level Zero backend needs; install a current Level Zero "
                    "loader (libze1 / level-zero) or point TB_ZE_LIB at libze_loader.so.1",
                    s->base.label, dl.path, missing);
  return tb_error(TB_ERR_UNAVAILABLE,
                  "%s: libze_loader.so.1 not found (tried %s): %s; install the Level Zero loader and Intel's GPU "
                  "compute runtime, or set TB_ZE_LIB to the path of libze_loader.so.1",
                  s->base.label, dl.tried, dl.error[0] ? dl.error : "not found");
}

/* Is this device a GPU, and what is its UUID as 32 hex digits? false when its properties cannot be read. */
static bool gpu_uuid(const ze_state *s, void *device, char uuid[TB_UUID_HEX_SIZE]) {
  ze_device_properties p;
  memset(&p, 0, sizeof p);
  p.stype = ZE_STYPE_DEVICE_PROPERTIES;
  if (ZE_CALL(&s->api, zeDeviceGetProperties)(device, &p) != 0 || p.type != 1u /* ZE_DEVICE_TYPE_GPU */) return false;
  tb_uuid_format_hex(p.uuid, uuid);
  return true;
}

/* The device of `info`: the GPU with its UUID, else the index-th GPU. */
static tb_status find_device(ze_state *s, const tb_device_info *info) {
  uint32_t ndrivers = 0;
  uint32_t r = ZE_CALL(&s->api, zeDriverGet)(&ndrivers, NULL);
  void *drivers[ZE_MAX_DRIVERS] = {0};
  if (ndrivers > ZE_MAX_DRIVERS) ndrivers = ZE_MAX_DRIVERS;
  if (r == 0 && ndrivers) r = ZE_CALL(&s->api, zeDriverGet)(&ndrivers, drivers);
  if (r != 0) return call_failed(s, "zeDriverGet", "", r);
  void *by_index = NULL, *by_index_driver = NULL;
  int gpus = 0;
  for (uint32_t di = 0; di < ndrivers && di < ZE_MAX_DRIVERS; di++) {
    uint32_t n = 0;
    if (ZE_CALL(&s->api, zeDeviceGet)(drivers[di], &n, NULL) != 0 || n == 0) continue;
    if (n > ZE_MAX_DEVICES) n = ZE_MAX_DEVICES;
    void *devices[ZE_MAX_DEVICES];
    if ((r = ZE_CALL(&s->api, zeDeviceGet)(drivers[di], &n, devices)) != 0) return call_failed(s, "zeDeviceGet", "", r);
    for (uint32_t i = 0; i < n && i < ZE_MAX_DEVICES; i++) {
      char uuid[TB_UUID_HEX_SIZE];
      if (!gpu_uuid(s, devices[i], uuid)) continue;
      if (info->uuid && info->uuid[0] && strcmp(uuid, info->uuid) == 0) {
        s->driver = drivers[di];
        s->device = devices[i];
        return TB_OK;
      }
      if (gpus++ == info->index) {
        by_index = devices[i];
        by_index_driver = drivers[di];
      }
    }
  }
  if (!by_index)
    return tb_error(TB_ERR_NOT_FOUND,
                    "%s: Level Zero lists %d GPU%s and none has UUID %s; check ZE_AFFINITY_MASK and "
                    "ONEAPI_DEVICE_SELECTOR",
                    s->base.label, gpus, gpus == 1 ? "" : "s", info->uuid && info->uuid[0] ? info->uuid : "(unknown)");
  s->driver = by_index_driver;
  s->device = by_index;
  return TB_OK;
}

static void read_total(ze_state *s) {
  if (!s->api.zeDeviceGetMemoryProperties) return;
  uint32_t count = 0;
  if (ZE_CALL(&s->api, zeDeviceGetMemoryProperties)(s->device, &count, NULL) != 0 || count == 0) return;
  ze_device_memory_properties mem[16];
  if (count > 16) count = 16;
  memset(mem, 0, sizeof mem);
  for (uint32_t i = 0; i < count; i++) mem[i].stype = ZE_STYPE_DEVICE_MEMORY_PROPERTIES;
  if (ZE_CALL(&s->api, zeDeviceGetMemoryProperties)(s->device, &count, mem) != 0 || count > 16) return;
  uint64_t total = 0;
  for (uint32_t i = 0; i < count; i++) total += mem[i].totalSize;
  s->total = total;
  s->total_known = total > 0;
}

/* What Sysman needs to find this device: its PCI address and, for one tile of a GPU, which tile. */
static void set_sysman_key(ze_state *s, const tb_device_info *info) {
  tb_ze_device *k = &s->sysman_key;
  k->type = TB_ZE_DEVICE_TYPE_GPU;
  k->sibling_count = 1;
  if (info->pci_bus_id) snprintf(k->bus_id, sizeof k->bus_id, "%s", info->pci_bus_id);
  const char *tile = tb_device_property(info, "tile");
  unsigned index = 0, count = 0;
  if (tile && sscanf(tile, "%u of %u", &index, &count) == 2 && index < count) {
    k->sibling_index = index;
    k->sibling_count = count;
  }
}

static tb_status start(ze_state *s, const tb_device_info *info) {
  uint32_t r = ZE_CALL(&s->api, zeInit)(0);
  if (r != 0) return call_failed(s, "zeInit", "", r);
  tb_status st = find_device(s, info);
  if (st != TB_OK) return st;
  ze_context_desc cdesc = {ZE_STYPE_CONTEXT_DESC, NULL, 0};
  if ((r = ZE_CALL(&s->api, zeContextCreate)(s->driver, &cdesc, &s->context)) != 0) {
    s->context = NULL;
    return call_failed(s, "zeContextCreate", "", r);
  }
  ze_command_queue_desc qdesc = {ZE_STYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_QUEUE_MODE_SYNCHRONOUS,
                                 ZE_QUEUE_PRIORITY_NORMAL};
  if ((r = ZE_CALL(&s->api, zeCommandListCreateImmediate)(s->context, s->device, &qdesc, &s->list)) != 0) {
    s->list = NULL;
    return call_failed(s, "zeCommandListCreateImmediate", "", r);
  }
  read_total(s);
  set_sysman_key(s, info);
  return TB_OK;
}

static void release(ze_state *s) {
  if (s->list) ZE_CALL(&s->api, zeCommandListDestroy)(s->list);
  if (s->context) ZE_CALL(&s->api, zeContextDestroy)(s->context);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

static const tb_devmem_vendor ze_vendor;

static tb_status ze_open(const tb_device_info *device, void **state) {
  *state = NULL;
  if (!device || device->backend != TB_BACKEND_XPU || device->index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "the Level Zero backend needs an Intel GPU (xpu:N), not %s",
                    device && device->device ? device->device : "(null)");
  ze_state *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory opening %s", device->device);
  if (pthread_mutex_init(&s->lock, NULL) != 0) {
    free(s);
    return tb_error(TB_ERR_INTERNAL, "pthread_mutex_init failed opening %s", device->device);
  }
  s->base.vendor = &ze_vendor;
  snprintf(s->base.label, sizeof s->base.label, "%s", device->device);
  tb_status st = open_library(s);
  if (st == TB_OK) st = start(s, device);
  if (st != TB_OK) {
    release(s);
    return st;
  }
  *state = s;
  return TB_OK;
}

static void ze_close(void *state) {
  if (state) release(state);
}

static void error_name(const void *state, int64_t code, char *out, size_t size) {
  (void)state;
  snprintf(out, size, "0x%08x %s", (uint32_t)code, tb_ze_result_name((uint32_t)code));
}

static bool out_of_memory(int64_t code) {
  return code == ZE_RESULT_OUT_OF_DEVICE_MEMORY || code == ZE_RESULT_OUT_OF_HOST_MEMORY;
}

static tb_status ze_alloc(void *state, size_t bytes, uintptr_t *out) {
  ze_state *s = state;
  ze_device_mem_alloc_desc desc = {ZE_STYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
  void *p = NULL;
  uint32_t r = ZE_CALL(&s->api, zeMemAllocDevice)(s->context, &desc, bytes, ZE_ALIGNMENT, s->device, &p);
  if (r != 0 || !p) {
    char what[64];
    snprintf(what, sizeof what, "of %zu bytes", bytes);
    return call_failed(s, "zeMemAllocDevice", what, r ? r : ZE_RESULT_OUT_OF_DEVICE_MEMORY);
  }
  *out = (uintptr_t)p;
  return TB_OK;
}

static void ze_free(void *state, uintptr_t address) {
  ze_state *s = state;
  ZE_CALL(&s->api, zeMemFree)(s->context, (void *)address);
}

/* One copy on the immediate (synchronous) list. */
static tb_status ze_copy(void *state, tb_devmem_direction direction, uintptr_t dst, uintptr_t src, size_t bytes,
                         size_t offset) {
  static const char *const kinds[] = {"", "host to device", "device to host", "device to device"};
  (void)offset;
  ze_state *s = state;
  pthread_mutex_lock(&s->lock);
  uint32_t r =
      ZE_CALL(&s->api, zeCommandListAppendMemoryCopy)(s->list, (void *)dst, (const void *)src, bytes, NULL, 0, NULL);
  pthread_mutex_unlock(&s->lock);
  if (r == 0) return TB_OK;
  char detail[128];
  snprintf(detail, sizeof detail, "(%s) of %zu bytes", kinds[direction], bytes);
  return call_failed(s, "zeCommandListAppendMemoryCopy", detail, r);
}

/* Level Zero fills any pattern of 1 to 8 bytes at any address. */
static tb_status ze_fill(void *state, uintptr_t at, const unsigned char *pattern, size_t pattern_size, size_t bytes,
                         size_t offset) {
  ze_state *s = state;
  pthread_mutex_lock(&s->lock);
  uint32_t r = ZE_CALL(&s->api, zeCommandListAppendMemoryFill)(s->list, (void *)at, pattern, pattern_size, bytes,
                                                               NULL, 0, NULL);
  pthread_mutex_unlock(&s->lock);
  if (r == 0) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, offset);
  return call_failed(s, "zeCommandListAppendMemoryFill", what, r);
}

/* The list is synchronous, so nothing is ever pending; a loader with zeCommandListHostSynchronize (1.6+)
 * is asked anyway, which also reports a lost device. */
static tb_status ze_synchronize(void *state) {
  ze_state *s = state;
  if (!s->api.zeCommandListHostSynchronize) return TB_OK;
  pthread_mutex_lock(&s->lock);
  uint32_t r = ZE_CALL(&s->api, zeCommandListHostSynchronize)(s->list, UINT64_MAX);
  pthread_mutex_unlock(&s->lock);
  return r == 0 ? TB_OK : call_failed(s, "zeCommandListHostSynchronize", "", r);
}

/* Total from the core API, free from Sysman. Without Sysman: TB_ERR_UNSUPPORTED with the total still
 * set, which the ops contract reads as "total known, free unknown". */
static tb_status ze_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  ze_state *s = state;
  if (!s->total_known)
    return tb_error(TB_ERR_UNSUPPORTED, "%s: zeDeviceGetMemoryProperties did not report the memory size", s->base.label);
  tb_device_list *checks = tb_devlist_new();
  if (!checks) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory asking Sysman for free memory", s->base.label);
  tb_ze_device key = s->sysman_key;
  tb_ze_scan scan;
  memset(&scan, 0, sizeof scan);
  scan.devices = &key;
  scan.count = 1;
  snprintf(scan.library, sizeof scan.library, "%s", s->library);
  tb_zes_read_free(checks, s->lib, &scan);
  tb_device_list_destroy(checks);
  *total_bytes = s->total;
  if (!key.memory_free_known)
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: free memory unknown (Level Zero Sysman did not report it for %s); total is %llu bytes",
                    s->base.label, key.bus_id[0] ? key.bus_id : "this device", (unsigned long long)s->total);
  *free_bytes = key.memory_free < s->total ? key.memory_free : s->total;
  return TB_OK;
}

static const tb_devmem_vendor ze_vendor = {
    .alignment = ZE_ALIGNMENT,
    .fill_any_pattern = true,
    .alloc = ze_alloc,
    .free = ze_free,
    .copy = ze_copy,
    .fill = ze_fill,
    .synchronize = ze_synchronize,
    .memory_info = ze_memory_info,
    .error_name = error_name,
    .out_of_memory = out_of_memory,
    .foreign_refusal = "a kDLOneAPI pointer is USM memory of the producer's SYCL / Level Zero context, which this "
                       "backend's own context may not use; copy the tensor to the CPU and import that",
};

const tb_backend_ops tb_level_zero_ops = {
    .kind = TB_BACKEND_XPU,
    .open = ze_open,
    .close = ze_close,
    TB_DEVMEM_OPS,
    .event_create = tb_ze_event_create,
    .event_record = tb_ze_event_record,
    .event_synchronize = tb_ze_event_synchronize,
    .event_query = tb_ze_event_query,
    .event_destroy = tb_ze_event_destroy,
};
