/* A fake Level Zero loader (libze_loader.so.1) for the XPU probe's tests: the ze* core and zes* Sysman entry
 * points with the real ABI of Level Zero's ze_api.h / zes_api.h (spec 1.x), declared here independently.
 * Behaviour is read from the environment at every call:
 *   FAKE_ZE_MODE    ok (default) | init_error (zeInit returns ZE_RESULT_ERROR_UNINITIALIZED) |
 *                   no_sysman (zesInit returns ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) |
 *                   props_error (zeDeviceGetProperties of the second device returns ZE_RESULT_ERROR_DEVICE_LOST) |
 *                   no_pci_ext (zeDevicePciGetPropertiesExt returns ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
 *   FAKE_ZE_DEVICES max4 (default: 4 Data Center GPU Max 1550, the intel_max fixture's bus ids) |
 *                   max4flat (the same GPUs with each of their 2 tiles listed as a device) |
 *                   laptop (the Iris Xe of the laptop_intel_nvidia fixture at 0000:00:02.0)
 * A struct whose stype is not the one the real API expects makes the call fail with
 * ZE_RESULT_ERROR_INVALID_ENUMERATION, so a layout mistake in the probe shows up as a failed test.
 * Memory for the Level Zero backend (contexts, immediate command lists, device allocations; see
 * fake_devmem.h):
 *   FAKE_ZE_MEM_CAPACITY bytes per core device (default: the device's memory; K/M/G suffixes):
 *                        zeMemAllocDevice beyond it returns ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
 *   FAKE_ZE_FAIL         context (zeContextCreate) | list (zeCommandListCreateImmediate) | alloc
 *                        (zeMemAllocDevice) | copy (zeCommandListAppendMemoryCopy) | fill
 *                        (zeCommandListAppendMemoryFill) fail with FAKE_ZE_FAIL_CODE (default
 *                        0x70000001 ZE_RESULT_ERROR_DEVICE_LOST)
 * Events: host-visible pools (the stype and the HOST_VISIBLE flag are checked) of events that are
 * signalled when zeCommandListAppendSignalEvent runs, and must be reset (zeEventHostReset) before they
 * are signalled again. FAKE_ZE_EVENT_NOT_READY=<n> makes the first n zeEventQueryStatus calls after each
 * signal answer ZE_RESULT_NOT_READY; FAKE_ZE_FAIL=signal makes zeCommandListAppendSignalEvent fail with
 * FAKE_ZE_FAIL_CODE. fake_ze_event_calls("zeEventQueryStatus") counts calls; fake_ze_live_events() and
 * fake_ze_live_event_pools() what is alive.
 * Sysman's free memory of a GPU goes down by what is allocated on it. The fake_ze_* functions at the end
 * let tests read the counts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fake_devmem.h"
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_ZE", "fake_ze")

typedef uint32_t ze_result_t;
#define ZE_OK 0u
#define ZE_ERROR_DEVICE_LOST 0x70000001u
#define ZE_ERROR_UNINITIALIZED 0x78000001u
#define ZE_ERROR_UNSUPPORTED_FEATURE 0x78000003u
#define ZE_ERROR_INVALID_NULL_POINTER 0x78000007u
#define ZE_ERROR_INVALID_ENUMERATION 0x7800000cu
#define ZE_ERROR_INVALID_NULL_HANDLE 0x78000005u
#define ZE_ERROR_OUT_OF_HOST_MEMORY 0x70000002u
#define ZE_ERROR_OUT_OF_DEVICE_MEMORY 0x70000003u
#define ZE_ERROR_INVALID_ARGUMENT 0x78000004u
#define ZE_ERROR_INVALID_SIZE 0x78000008u

typedef struct {
  uint32_t stype;
  void *pNext;
  uint8_t uuid[16];
  uint32_t driverVersion;
} fake_driver_properties;

typedef struct {
  uint32_t stype;
  void *pNext;
  uint32_t type, vendorId, deviceId, flags, subdeviceId, coreClockRate;
  uint64_t maxMemAllocSize;
  uint32_t maxHardwareContexts, maxCommandQueuePriority, numThreadsPerEU, physicalEUSimdWidth;
  uint32_t numEUsPerSubslice, numSubslicesPerSlice, numSlices;
  uint64_t timerResolution;
  uint32_t timestampValidBits, kernelTimestampValidBits;
  uint8_t uuid[16];
  char name[256];
} fake_device_properties;

typedef struct {
  uint32_t stype;
  void *pNext;
  uint32_t maxTotalGroupSize, maxGroupSizeX, maxGroupSizeY, maxGroupSizeZ;
  uint32_t maxGroupCountX, maxGroupCountY, maxGroupCountZ, maxSharedLocalMemory;
  uint32_t numSubGroupSizes, subGroupSizes[8];
} fake_compute_properties;

typedef struct {
  uint32_t stype;
  void *pNext;
  uint32_t flags, maxClockRate, maxBusWidth;
  uint64_t totalSize;
  char name[256];
} fake_memory_properties;

typedef struct {
  uint32_t stype;
  void *pNext;
  uint32_t domain, bus, device, function;
  int32_t genVersion, width;
  int64_t maxBandwidth;
} fake_pci_ext_properties;

typedef struct {
  uint32_t stype;
  void *pNext;
  uint32_t domain, bus, device, function;
  int32_t gen, width;
  int64_t maxBandwidth;
  uint8_t haveBandwidthCounters, havePacketCounters, haveReplayCounters;
} fake_zes_pci_properties;

typedef struct {
  uint32_t stype;
  void *pNext;
  uint32_t type;
  uint8_t onSubdevice;
  uint32_t subdeviceId;
  uint32_t location;
  uint64_t physicalSize;
  int32_t busWidth, numChannels;
} fake_zes_mem_properties;

typedef struct {
  uint32_t stype;
  const void *pNext;
  uint32_t health;
  uint64_t free, size;
} fake_zes_mem_state;

#define GIB (1024ull * 1024ull * 1024ull)

/* One GPU of the fake machine, as Sysman sees it (a whole PCI function). */
typedef struct fake_gpu {
  uint32_t bus;
  uint16_t device_id;
  const char *name;
  uint32_t flags, slices, subslices, eus_per_subslice, threads, simd, clock;
  uint64_t memory;
  unsigned tiles;
} fake_gpu;

static const fake_gpu max_gpus[] = {
    {0x29, 0x0bd5, "Intel(R) Data Center GPU Max 1550", 0x4 | 0x8, 8, 16, 8, 8, 16, 1600, 128 * GIB, 2},
    {0x3a, 0x0bd5, "Intel(R) Data Center GPU Max 1550", 0x4 | 0x8, 8, 16, 8, 8, 16, 1600, 128 * GIB, 2},
    {0x9a, 0x0bd5, "Intel(R) Data Center GPU Max 1550", 0x4 | 0x8, 8, 16, 8, 8, 16, 1600, 128 * GIB, 2},
    {0xca, 0x0bd5, "Intel(R) Data Center GPU Max 1550", 0x4 | 0x8, 8, 16, 8, 8, 16, 1600, 128 * GIB, 2},
};
static const fake_gpu laptop_gpus[] = {
    {0x00, 0xa7a0, "Intel(R) Iris(R) Xe Graphics", 0x1, 1, 6, 16, 7, 8, 1500, 13 * GIB, 0},
};

/* A core device handle: a GPU, or one tile of it (tile >= 0). */
typedef struct fake_device {
  const fake_gpu *gpu;
  int tile;
  unsigned index;
} fake_device;

/* A Sysman memory module handle. */
typedef struct fake_module {
  unsigned gpu;
  int tile; /* -1: system memory seen by the GPU */
} fake_module;

static fake_device core_devices[16];
static fake_module modules[16][3];
static int driver_object, sysman_driver_object;

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return (v && *v) ? v : fallback;
}

static int mode_is(const char *mode) { return strcmp(env_or("FAKE_ZE_MODE", "ok"), mode) == 0; }

static const fake_gpu *gpus(unsigned *count) {
  if (strcmp(env_or("FAKE_ZE_DEVICES", "max4"), "laptop") == 0) {
    *count = 1;
    return laptop_gpus;
  }
  *count = 4;
  return max_gpus;
}

static int flat(void) { return strcmp(env_or("FAKE_ZE_DEVICES", "max4"), "max4flat") == 0; }

static unsigned build_core_devices(void) {
  unsigned ngpus, n = 0;
  const fake_gpu *g = gpus(&ngpus);
  for (unsigned i = 0; i < ngpus; i++) {
    unsigned parts = (flat() && g[i].tiles > 1) ? g[i].tiles : 1;
    for (unsigned t = 0; t < parts; t++, n++) core_devices[n] = (fake_device){&g[i], parts > 1 ? (int)t : -1, n};
  }
  return n;
}

static int valid_device(const void *h) {
  unsigned n = build_core_devices();
  for (unsigned i = 0; i < n; i++)
    if (h == &core_devices[i]) return 1;
  return 0;
}

ze_result_t zeInit(uint32_t flags) {
  (void)flags;
  return mode_is("init_error") ? ZE_ERROR_UNINITIALIZED : ZE_OK;
}

static ze_result_t one_driver(uint32_t *count, void **drivers, void *object) {
  if (!count) return ZE_ERROR_INVALID_NULL_POINTER;
  if (mode_is("init_error")) return ZE_ERROR_UNINITIALIZED;
  if (*count == 0 || !drivers) {
    *count = 1;
    return ZE_OK;
  }
  *count = 1;
  drivers[0] = object;
  return ZE_OK;
}

ze_result_t zeDriverGet(uint32_t *count, void **drivers) { return one_driver(count, drivers, &driver_object); }

ze_result_t zeDriverGetProperties(void *driver, fake_driver_properties *p) {
  if (driver != &driver_object) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_ERROR_INVALID_NULL_POINTER;
  if (p->stype != 0x1) return ZE_ERROR_INVALID_ENUMERATION;
  memset(p->uuid, 0x5a, sizeof p->uuid);
  p->driverVersion = (1u << 24) | (3u << 16) | 29735u;
  return ZE_OK;
}

ze_result_t zeDeviceGet(void *driver, uint32_t *count, void **devices) {
  if (driver != &driver_object) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_ERROR_INVALID_NULL_POINTER;
  unsigned n = build_core_devices();
  if (*count == 0 || !devices) {
    *count = n;
    return ZE_OK;
  }
  if (*count > n) *count = n;
  for (unsigned i = 0; i < *count; i++) devices[i] = &core_devices[i];
  return ZE_OK;
}

ze_result_t zeDeviceGetProperties(void *device, fake_device_properties *p) {
  if (!valid_device(device)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_ERROR_INVALID_NULL_POINTER;
  if (p->stype != 0x3) return ZE_ERROR_INVALID_ENUMERATION;
  const fake_device *d = device;
  if (mode_is("props_error") && d->index == 1) return ZE_ERROR_DEVICE_LOST;
  const fake_gpu *g = d->gpu;
  p->type = 1; /* ZE_DEVICE_TYPE_GPU */
  p->vendorId = 0x8086;
  p->deviceId = g->device_id;
  p->flags = g->flags;
  p->subdeviceId = 0;
  p->coreClockRate = g->clock;
  p->maxMemAllocSize = d->tile >= 0 ? g->memory / g->tiles : g->memory / 2;
  p->maxHardwareContexts = 65536;
  p->maxCommandQueuePriority = 0;
  p->numThreadsPerEU = g->threads;
  p->physicalEUSimdWidth = g->simd;
  p->numEUsPerSubslice = g->eus_per_subslice;
  p->numSubslicesPerSlice = g->subslices;
  p->numSlices = d->tile >= 0 ? g->slices / g->tiles : g->slices;
  p->timerResolution = 52;
  p->timestampValidBits = 64;
  p->kernelTimestampValidBits = 32;
  memset(p->uuid, 0, sizeof p->uuid);
  p->uuid[0] = 0x86;
  p->uuid[1] = 0x80;
  p->uuid[2] = (uint8_t)(g->device_id & 0xff);
  p->uuid[3] = (uint8_t)(g->device_id >> 8);
  p->uuid[8] = (uint8_t)g->bus;
  p->uuid[15] = (uint8_t)(d->tile + 1);
  strncpy(p->name, g->name, sizeof p->name - 1);
  p->name[sizeof p->name - 1] = '\0';
  return ZE_OK;
}

ze_result_t zeDeviceGetComputeProperties(void *device, fake_compute_properties *p) {
  if (!valid_device(device)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_ERROR_INVALID_NULL_POINTER;
  if (p->stype != 0x4) return ZE_ERROR_INVALID_ENUMERATION;
  p->maxTotalGroupSize = 1024;
  p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
  p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
  p->maxSharedLocalMemory = 131072;
  p->numSubGroupSizes = 2;
  p->subGroupSizes[0] = 16;
  p->subGroupSizes[1] = 32;
  return ZE_OK;
}

ze_result_t zeDeviceGetMemoryProperties(void *device, uint32_t *count, fake_memory_properties *p) {
  if (!valid_device(device)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || !p) {
    *count = 1;
    return ZE_OK;
  }
  *count = 1;
  if (p[0].stype != 0x7) return ZE_ERROR_INVALID_ENUMERATION;
  const fake_device *d = device;
  p[0].flags = 0;
  p[0].maxClockRate = 3200;
  p[0].maxBusWidth = 8192;
  p[0].totalSize = d->tile >= 0 ? d->gpu->memory / d->gpu->tiles : d->gpu->memory;
  strcpy(p[0].name, d->gpu->tiles ? "HBM" : "DDR");
  return ZE_OK;
}

ze_result_t zeDevicePciGetPropertiesExt(void *device, fake_pci_ext_properties *p) {
  if (!valid_device(device)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_ERROR_INVALID_NULL_POINTER;
  if (p->stype != 0x10008) return ZE_ERROR_INVALID_ENUMERATION;
  if (mode_is("no_pci_ext")) return ZE_ERROR_UNSUPPORTED_FEATURE;
  const fake_device *d = device;
  p->domain = 0;
  p->bus = d->gpu->bus;
  p->device = d->gpu->bus ? 0 : 2;
  p->function = 0;
  p->genVersion = 4;
  p->width = 16;
  p->maxBandwidth = 32000000000;
  return ZE_OK;
}

/* Sysman: one device per GPU, whatever the core hierarchy. */
ze_result_t zesInit(uint32_t flags) {
  (void)flags;
  return mode_is("no_sysman") ? ZE_ERROR_UNSUPPORTED_FEATURE : ZE_OK;
}

ze_result_t zesDriverGet(uint32_t *count, void **drivers) {
  if (mode_is("no_sysman")) return ZE_ERROR_UNINITIALIZED;
  return one_driver(count, drivers, &sysman_driver_object);
}

static unsigned sysman_gpu_index(const void *device) {
  unsigned n;
  const fake_gpu *g = gpus(&n);
  for (unsigned i = 0; i < n; i++)
    if (device == &g[i]) return i;
  return n;
}

ze_result_t zesDeviceGet(void *driver, uint32_t *count, void **devices) {
  if (driver != &sysman_driver_object) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_ERROR_INVALID_NULL_POINTER;
  unsigned n;
  const fake_gpu *g = gpus(&n);
  if (*count == 0 || !devices) {
    *count = n;
    return ZE_OK;
  }
  if (*count > n) *count = n;
  for (unsigned i = 0; i < *count; i++) devices[i] = (void *)&g[i];
  return ZE_OK;
}

ze_result_t zesDevicePciGetProperties(void *device, fake_zes_pci_properties *p) {
  unsigned n;
  const fake_gpu *g = gpus(&n);
  unsigned i = sysman_gpu_index(device);
  if (i >= n) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_ERROR_INVALID_NULL_POINTER;
  if (p->stype != 0x2) return ZE_ERROR_INVALID_ENUMERATION;
  p->domain = 0;
  p->bus = g[i].bus;
  p->device = g[i].bus ? 0 : 2;
  p->function = 0;
  p->gen = 4;
  p->width = 16;
  p->maxBandwidth = 32000000000;
  p->haveBandwidthCounters = p->havePacketCounters = p->haveReplayCounters = 0;
  return ZE_OK;
}

/* A Max 1550 has one HBM module per tile, plus (to test the filter) the system memory it can reach;
 * the laptop's iGPU has no module of its own. */
ze_result_t zesDeviceEnumMemoryModules(void *device, uint32_t *count, void **handles) {
  unsigned n;
  const fake_gpu *g = gpus(&n);
  unsigned i = sysman_gpu_index(device);
  if (i >= n) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_ERROR_INVALID_NULL_POINTER;
  unsigned m = g[i].tiles ? g[i].tiles + 1 : 0;
  if (*count == 0 || !handles) {
    *count = m;
    return ZE_OK;
  }
  if (*count > m) *count = m;
  for (unsigned k = 0; k < *count; k++) {
    modules[i][k] = (fake_module){i, k < g[i].tiles ? (int)k : -1};
    handles[k] = &modules[i][k];
  }
  return ZE_OK;
}

static const fake_module *valid_module(const void *h) {
  for (unsigned i = 0; i < 16; i++)
    for (unsigned k = 0; k < 3; k++)
      if (h == &modules[i][k]) return &modules[i][k];
  return NULL;
}

ze_result_t zesMemoryGetProperties(void *module, fake_zes_mem_properties *p) {
  const fake_module *m = valid_module(module);
  if (!m) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!p) return ZE_ERROR_INVALID_NULL_POINTER;
  if (p->stype != 0xb) return ZE_ERROR_INVALID_ENUMERATION;
  p->type = m->tile >= 0 ? 2u /* ZES_MEM_TYPE_HBM */ : 6u /* DDR */;
  p->onSubdevice = m->tile >= 0;
  p->subdeviceId = m->tile >= 0 ? (uint32_t)m->tile : 0;
  p->location = m->tile >= 0 ? 1u /* ZES_MEM_LOC_DEVICE */ : 0u /* SYSTEM */;
  p->physicalSize = m->tile >= 0 ? 64 * GIB : 512 * GIB;
  p->busWidth = -1;
  p->numChannels = -1;
  return ZE_OK;
}

static uint64_t used_on_gpu(unsigned gpu);

/* Free memory: tile 0 of GPU i has (i + 1) GiB in use, tile 1 has 2 GiB in use; tile 0 also holds what the
 * fake's zeMemAllocDevice handed out on that GPU. */
ze_result_t zesMemoryGetState(void *module, fake_zes_mem_state *s) {
  const fake_module *m = valid_module(module);
  if (!m) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!s) return ZE_ERROR_INVALID_NULL_POINTER;
  if (s->stype != 0x1e) return ZE_ERROR_INVALID_ENUMERATION;
  s->health = 1; /* ZES_MEM_HEALTH_OK */
  if (m->tile < 0) {
    s->size = 512 * GIB;
    s->free = 400 * GIB;
  } else {
    s->size = 64 * GIB;
    s->free = 64 * GIB - (m->tile == 0 ? (uint64_t)(m->gpu + 1) : 2u) * GIB;
    if (m->tile == 0) s->free -= used_on_gpu(m->gpu);
  }
  return ZE_OK;
}

/* ---- Memory ------------------------------------------------------------------------------------- */

typedef struct {
  uint32_t stype;
  const void *pNext;
  uint32_t flags;
} fake_context_desc;

typedef struct {
  uint32_t stype;
  const void *pNext;
  uint32_t ordinal, index, flags, mode, priority;
} fake_queue_desc;

typedef struct {
  uint32_t stype;
  const void *pNext;
  uint32_t flags, ordinal;
} fake_mem_alloc_desc;

typedef struct fake_context {
  uint32_t magic;
} fake_context;

typedef struct fake_list {
  uint32_t magic;
  fake_context *ctx;
  const fake_device *device;
} fake_list;

#define CONTEXT_MAGIC 0xc0c0c0c0u
#define LIST_MAGIC 0x11571157u

static fake_heap heap = FAKE_HEAP_INIT;
static pthread_mutex_t object_lock = PTHREAD_MUTEX_INITIALIZER;
static int live_contexts, live_lists;
static uint32_t last_queue_mode = 0xffffffffu;
static unsigned long long fill_calls[9]; /* by pattern size 1, 2, 4, 8 */

static int failing(const char *what) { return strcmp(env_or("FAKE_ZE_FAIL", ""), what) == 0; }

static ze_result_t fail_code(void) { return (ze_result_t)strtoul(env_or("FAKE_ZE_FAIL_CODE", "0x70000001"), NULL, 0); }

static uint64_t used_on_gpu(unsigned gpu) {
  unsigned n = build_core_devices();
  uint64_t used = 0;
  unsigned ngpus;
  const fake_gpu *g = gpus(&ngpus);
  for (unsigned i = 0; i < n; i++)
    if (gpu < ngpus && core_devices[i].gpu == &g[gpu]) used += fake_used(&heap, (int)i);
  return used;
}

static int valid_context(const fake_context *c) { return c && c->magic == CONTEXT_MAGIC; }
static int valid_list(const fake_list *l) { return l && l->magic == LIST_MAGIC; }

static void count(int *counter, int delta) {
  pthread_mutex_lock(&object_lock);
  *counter += delta;
  pthread_mutex_unlock(&object_lock);
}

ze_result_t zeContextCreate(void *driver, const fake_context_desc *desc, fake_context **ctx) {
  if (driver != &driver_object) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !ctx) return ZE_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != 0xd) return ZE_ERROR_INVALID_ENUMERATION;
  if (failing("context")) return fail_code();
  fake_context *c = calloc(1, sizeof *c);
  if (!c) return ZE_ERROR_OUT_OF_HOST_MEMORY;
  c->magic = CONTEXT_MAGIC;
  count(&live_contexts, 1);
  *ctx = c;
  return ZE_OK;
}

ze_result_t zeContextDestroy(fake_context *ctx) {
  if (!valid_context(ctx)) return ZE_ERROR_INVALID_NULL_HANDLE;
  ctx->magic = 0;
  free(ctx);
  count(&live_contexts, -1);
  return ZE_OK;
}

ze_result_t zeCommandListCreateImmediate(fake_context *ctx, void *device, const fake_queue_desc *desc,
                                         fake_list **list) {
  if (!valid_context(ctx) || !valid_device(device)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !list) return ZE_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != 0xe) return ZE_ERROR_INVALID_ENUMERATION;
  if (desc->mode > 2 || desc->priority > 2) return ZE_ERROR_INVALID_ENUMERATION;
  if (failing("list")) return fail_code();
  fake_list *l = calloc(1, sizeof *l);
  if (!l) return ZE_ERROR_OUT_OF_HOST_MEMORY;
  l->magic = LIST_MAGIC;
  l->ctx = ctx;
  l->device = device;
  __atomic_store_n(&last_queue_mode, desc->mode, __ATOMIC_RELAXED);
  count(&live_lists, 1);
  *list = l;
  return ZE_OK;
}

ze_result_t zeCommandListDestroy(fake_list *list) {
  if (!valid_list(list)) return ZE_ERROR_INVALID_NULL_HANDLE;
  list->magic = 0;
  free(list);
  count(&live_lists, -1);
  return ZE_OK;
}

/* Unified addressing: a pointer is either a fake device allocation (then the whole range must lie in it)
 * or host memory. */
static unsigned char *bytes_at(const void *p, size_t n) {
  uint64_t v = (uint64_t)(uintptr_t)p;
  if (!p) return NULL;
  return fake_is_device_pointer(v) ? fake_resolve(&heap, v, n) : (unsigned char *)(uintptr_t)v;
}

ze_result_t zeCommandListAppendMemoryCopy(fake_list *list, void *dst, const void *src, size_t bytes, void *signal,
                                          uint32_t wait_count, void **wait_events) {
  if (!valid_list(list)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!dst || !src) return ZE_ERROR_INVALID_NULL_POINTER;
  if (signal || wait_count || wait_events) return ZE_ERROR_INVALID_ARGUMENT; /* the fake has no events */
  if (failing("copy")) return fail_code();
  unsigned char *d = bytes_at(dst, bytes), *s = bytes_at(src, bytes);
  if (!d || !s) return ZE_ERROR_INVALID_ARGUMENT;
  memmove(d, s, bytes);
  return ZE_OK;
}

ze_result_t zeCommandListAppendMemoryFill(fake_list *list, void *dst, const void *pattern, size_t pattern_size,
                                          size_t bytes, void *signal, uint32_t wait_count, void **wait_events) {
  if (!valid_list(list)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!dst || !pattern) return ZE_ERROR_INVALID_NULL_POINTER;
  if (signal || wait_count || wait_events) return ZE_ERROR_INVALID_ARGUMENT;
  if (pattern_size == 0 || pattern_size > 8 || (pattern_size & (pattern_size - 1)) || bytes % pattern_size)
    return ZE_ERROR_INVALID_SIZE;
  if (failing("fill")) return fail_code();
  unsigned char *d = bytes_at(dst, bytes);
  if (!d) return ZE_ERROR_INVALID_ARGUMENT;
  fake_fill(d, pattern, pattern_size, bytes / pattern_size);
  __atomic_add_fetch(&fill_calls[pattern_size], 1, __ATOMIC_RELAXED);
  return ZE_OK;
}

ze_result_t zeCommandListHostSynchronize(fake_list *list, uint64_t timeout) {
  (void)timeout;
  if (!valid_list(list)) return ZE_ERROR_INVALID_NULL_HANDLE;
  return failing("sync") ? fail_code() : ZE_OK;
}

ze_result_t zeMemAllocDevice(fake_context *ctx, const fake_mem_alloc_desc *desc, size_t bytes, size_t alignment,
                             void *device, void **ptr) {
  if (!valid_context(ctx) || !valid_device(device)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !ptr) return ZE_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != 0x15) return ZE_ERROR_INVALID_ENUMERATION;
  if (desc->ordinal != 0) return ZE_ERROR_INVALID_ARGUMENT; /* one memory per device here */
  if (bytes == 0) return ZE_ERROR_INVALID_SIZE;
  if (alignment & (alignment - 1) || alignment > FAKE_DEVICE_ALIGN) return ZE_ERROR_INVALID_ARGUMENT;
  if (failing("alloc")) return fail_code();
  const fake_device *d = device;
  uint64_t memory = d->tile >= 0 ? d->gpu->memory / d->gpu->tiles : d->gpu->memory;
  uint64_t dev = 0;
  int rc = fake_alloc(&heap, bytes, fake_capacity("FAKE_ZE_MEM_CAPACITY", memory), (int)d->index, &dev);
  if (rc == FAKE_ALLOC_FULL) return ZE_ERROR_OUT_OF_DEVICE_MEMORY;
  if (rc != FAKE_ALLOC_OK) return ZE_ERROR_OUT_OF_HOST_MEMORY;
  *ptr = (void *)(uintptr_t)dev;
  return ZE_OK;
}

ze_result_t zeMemFree(fake_context *ctx, void *ptr) {
  if (!valid_context(ctx)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!ptr) return ZE_ERROR_INVALID_NULL_POINTER;
  return fake_release(&heap, (uint64_t)(uintptr_t)ptr) == 0 ? ZE_OK : ZE_ERROR_INVALID_ARGUMENT;
}

/* For tests. */
int fake_ze_live_allocations(int device);
int fake_ze_live_contexts(void);
int fake_ze_live_command_lists(void);
unsigned long long fake_ze_bytes_in_use(int device);
unsigned fake_ze_last_queue_mode(void);
unsigned long long fake_ze_fill_calls(int pattern_size);

int fake_ze_live_allocations(int device) { return fake_live(&heap, device); }
int fake_ze_live_contexts(void) {
  pthread_mutex_lock(&object_lock);
  int n = live_contexts;
  pthread_mutex_unlock(&object_lock);
  return n;
}
int fake_ze_live_command_lists(void) {
  pthread_mutex_lock(&object_lock);
  int n = live_lists;
  pthread_mutex_unlock(&object_lock);
  return n;
}
unsigned long long fake_ze_bytes_in_use(int device) { return fake_used(&heap, device); }
unsigned fake_ze_last_queue_mode(void) { return __atomic_load_n(&last_queue_mode, __ATOMIC_RELAXED); }
unsigned long long fake_ze_fill_calls(int pattern_size) {
  return pattern_size >= 1 && pattern_size <= 8 ? __atomic_load_n(&fill_calls[pattern_size], __ATOMIC_RELAXED) : 0;
}

/* ---- Events ------------------------------------------------------------------------------------- */

#define ZE_NOT_READY 0x1u
#define POOL_MAGIC 0x9001900du
#define EVENT_MAGIC 0xe7e7e7e7u

typedef struct {
  uint32_t stype;
  const void *pNext;
  uint32_t flags, count;
} fake_event_pool_desc;

typedef struct {
  uint32_t stype;
  const void *pNext;
  uint32_t index, signal, wait;
} fake_event_desc;

typedef struct fake_event_pool {
  uint32_t magic;
  uint32_t count;
} fake_event_pool;

typedef struct fake_event {
  uint32_t magic;
  int signalled;
  int pending_not_ready;
} fake_event;

static const char *const event_call_names[] = {"zeEventPoolCreate", "zeEventCreate", "zeEventHostReset",
                                               "zeCommandListAppendSignalEvent", "zeEventHostSynchronize",
                                               "zeEventQueryStatus", "zeEventDestroy", "zeEventPoolDestroy"};
enum { EV_POOL_CREATE, EV_CREATE, EV_RESET, EV_SIGNAL, EV_SYNC, EV_QUERY, EV_DESTROY, EV_POOL_DESTROY, EV_CALLS };
static unsigned long long event_calls[EV_CALLS];
static int live_events, live_pools;

static void count_event_call(int which) { __atomic_add_fetch(&event_calls[which], 1, __ATOMIC_RELAXED); }
static int valid_event(const fake_event *e) { return e && e->magic == EVENT_MAGIC; }

ze_result_t zeEventPoolCreate(fake_context *ctx, const fake_event_pool_desc *desc, uint32_t num_devices, void **devices,
                              fake_event_pool **pool) {
  count_event_call(EV_POOL_CREATE);
  if (!valid_context(ctx)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !pool) return ZE_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != 0x10) return ZE_ERROR_INVALID_ENUMERATION;
  if (!(desc->flags & 0x1u) || desc->count == 0) return ZE_ERROR_INVALID_ARGUMENT; /* host-visible wanted here */
  for (uint32_t i = 0; i < num_devices; i++)
    if (!devices || !valid_device(devices[i])) return ZE_ERROR_INVALID_NULL_HANDLE;
  fake_event_pool *p = calloc(1, sizeof *p);
  if (!p) return ZE_ERROR_OUT_OF_HOST_MEMORY;
  p->magic = POOL_MAGIC;
  p->count = desc->count;
  count(&live_pools, 1);
  *pool = p;
  return ZE_OK;
}

ze_result_t zeEventPoolDestroy(fake_event_pool *pool) {
  count_event_call(EV_POOL_DESTROY);
  if (!pool || pool->magic != POOL_MAGIC) return ZE_ERROR_INVALID_NULL_HANDLE;
  pool->magic = 0;
  free(pool);
  count(&live_pools, -1);
  return ZE_OK;
}

ze_result_t zeEventCreate(fake_event_pool *pool, const fake_event_desc *desc, fake_event **event) {
  count_event_call(EV_CREATE);
  if (!pool || pool->magic != POOL_MAGIC) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !event) return ZE_ERROR_INVALID_NULL_POINTER;
  if (desc->stype != 0x11) return ZE_ERROR_INVALID_ENUMERATION;
  if (desc->index >= pool->count) return ZE_ERROR_INVALID_ARGUMENT;
  fake_event *e = calloc(1, sizeof *e);
  if (!e) return ZE_ERROR_OUT_OF_HOST_MEMORY;
  e->magic = EVENT_MAGIC;
  count(&live_events, 1);
  *event = e;
  return ZE_OK;
}

ze_result_t zeEventDestroy(fake_event *event) {
  count_event_call(EV_DESTROY);
  if (!valid_event(event)) return ZE_ERROR_INVALID_NULL_HANDLE;
  event->magic = 0;
  free(event);
  count(&live_events, -1);
  return ZE_OK;
}

ze_result_t zeEventHostReset(fake_event *event) {
  count_event_call(EV_RESET);
  if (!valid_event(event)) return ZE_ERROR_INVALID_NULL_HANDLE;
  event->signalled = 0;
  event->pending_not_ready = 0;
  return ZE_OK;
}

ze_result_t zeCommandListAppendSignalEvent(fake_list *list, fake_event *event) {
  count_event_call(EV_SIGNAL);
  if (!valid_list(list) || !valid_event(event)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (event->signalled) return ZE_ERROR_INVALID_ARGUMENT; /* signalled twice without a reset */
  if (failing("signal")) return fail_code();
  event->signalled = 1;
  event->pending_not_ready = atoi(env_or("FAKE_ZE_EVENT_NOT_READY", "0"));
  return ZE_OK;
}

ze_result_t zeEventHostSynchronize(fake_event *event, uint64_t timeout) {
  (void)timeout;
  count_event_call(EV_SYNC);
  if (!valid_event(event)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (failing("sync")) return fail_code();
  if (!event->signalled) return ZE_NOT_READY; /* never signalled: a real wait would time out */
  event->pending_not_ready = 0;
  return ZE_OK;
}

ze_result_t zeEventQueryStatus(fake_event *event) {
  count_event_call(EV_QUERY);
  if (!valid_event(event)) return ZE_ERROR_INVALID_NULL_HANDLE;
  if (!event->signalled) return ZE_NOT_READY;
  if (event->pending_not_ready > 0) {
    event->pending_not_ready--;
    return ZE_NOT_READY;
  }
  return ZE_OK;
}

unsigned long long fake_ze_event_calls(const char *call);
int fake_ze_live_events(void);
int fake_ze_live_event_pools(void);

unsigned long long fake_ze_event_calls(const char *call) {
  for (int i = 0; i < EV_CALLS; i++)
    if (strcmp(call, event_call_names[i]) == 0) return __atomic_load_n(&event_calls[i], __ATOMIC_RELAXED);
  return ~0ull;
}

int fake_ze_live_events(void) {
  pthread_mutex_lock(&object_lock);
  int n = live_events;
  pthread_mutex_unlock(&object_lock);
  return n;
}

int fake_ze_live_event_pools(void) {
  pthread_mutex_lock(&object_lock);
  int n = live_pools;
  pthread_mutex_unlock(&object_lock);
  return n;
}
