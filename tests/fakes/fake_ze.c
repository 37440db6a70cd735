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
 * ZE_RESULT_ERROR_INVALID_ENUMERATION, so a layout mistake in the probe shows up as a failed test. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint32_t ze_result_t;
#define ZE_OK 0u
#define ZE_ERROR_DEVICE_LOST 0x70000001u
#define ZE_ERROR_UNINITIALIZED 0x78000001u
#define ZE_ERROR_UNSUPPORTED_FEATURE 0x78000003u
#define ZE_ERROR_INVALID_NULL_POINTER 0x78000007u
#define ZE_ERROR_INVALID_ENUMERATION 0x7800000cu
#define ZE_ERROR_INVALID_NULL_HANDLE 0x78000005u

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

/* Free memory: tile 0 of GPU i has (i + 1) GiB in use, tile 1 has 2 GiB in use. */
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
  }
  return ZE_OK;
}
