/* Internal: Level Zero's core entry points (libze_loader, opened with dlopen) as one symbol table, shared
 * by the XPU probe (drivers, devices, properties) and the Level Zero backend (context, immediate command
 * list, device memory). The structs follow Level Zero's public ze_api.h (spec 1.x: every descriptor and
 * properties struct starts with stype and pNext); static asserts pin their layouts. */
#ifndef TB_RUNTIME_INTEL_ZE_API_H
#define TB_RUNTIME_INTEL_ZE_API_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/dl.h"

#define ZE_RESULT_OUT_OF_HOST_MEMORY 0x70000002u
#define ZE_RESULT_OUT_OF_DEVICE_MEMORY 0x70000003u

/* ze_structure_type_t values (ze_api.h). */
enum {
  ZE_STYPE_DRIVER_PROPERTIES = 0x1,
  ZE_STYPE_DEVICE_PROPERTIES = 0x3,
  ZE_STYPE_DEVICE_COMPUTE_PROPERTIES = 0x4,
  ZE_STYPE_DEVICE_MEMORY_PROPERTIES = 0x7,
  ZE_STYPE_CONTEXT_DESC = 0xd,
  ZE_STYPE_COMMAND_QUEUE_DESC = 0xe,
  ZE_STYPE_DEVICE_MEM_ALLOC_DESC = 0x15,
  ZE_STYPE_PCI_EXT_PROPERTIES = 0x10008
};

/* ze_command_queue_mode_t, ze_command_queue_priority_t */
enum { ZE_QUEUE_MODE_SYNCHRONOUS = 1, ZE_QUEUE_PRIORITY_NORMAL = 0 };

typedef struct ze_driver_properties {
  uint32_t stype;
  void *pNext;
  uint8_t uuid[16];
  uint32_t driverVersion;
} ze_driver_properties;

typedef struct ze_device_properties {
  uint32_t stype;
  void *pNext;
  uint32_t type, vendorId, deviceId, flags, subdeviceId, coreClockRate;
  uint64_t maxMemAllocSize;
  uint32_t maxHardwareContexts, maxCommandQueuePriority, numThreadsPerEU, physicalEUSimdWidth;
  uint32_t numEUsPerSubslice, numSubslicesPerSlice, numSlices;
  uint64_t timerResolution;
  uint32_t timestampValidBits, kernelTimestampValidBits;
  uint8_t uuid[16];
  char name[256]; /* ZE_MAX_DEVICE_NAME */
} ze_device_properties;

typedef struct ze_device_compute_properties {
  uint32_t stype;
  void *pNext;
  uint32_t maxTotalGroupSize, maxGroupSizeX, maxGroupSizeY, maxGroupSizeZ;
  uint32_t maxGroupCountX, maxGroupCountY, maxGroupCountZ, maxSharedLocalMemory;
  uint32_t numSubGroupSizes, subGroupSizes[8];
} ze_device_compute_properties;

typedef struct ze_device_memory_properties {
  uint32_t stype;
  void *pNext;
  uint32_t flags, maxClockRate, maxBusWidth;
  uint64_t totalSize;
  char name[256];
} ze_device_memory_properties;

typedef struct ze_pci_ext_properties {
  uint32_t stype;
  void *pNext;
  uint32_t domain, bus, device, function; /* ze_pci_address_ext_t */
  int32_t genVersion, width;              /* ze_pci_speed_ext_t */
  int64_t maxBandwidth;
} ze_pci_ext_properties;

_Static_assert(offsetof(ze_device_properties, maxMemAllocSize) == 40, "ze_device_properties_t layout");
_Static_assert(offsetof(ze_device_properties, timerResolution) == 80, "ze_device_properties_t layout");
_Static_assert(offsetof(ze_device_properties, name) == 112 && sizeof(ze_device_properties) == 368,
               "ze_device_properties_t layout");
_Static_assert(offsetof(ze_device_memory_properties, totalSize) == 32, "ze_device_memory_properties_t layout");
_Static_assert(offsetof(ze_driver_properties, driverVersion) == 32, "ze_driver_properties_t layout");
_Static_assert(sizeof(ze_pci_ext_properties) == 48, "ze_pci_ext_properties_t layout");

typedef struct ze_context_desc {
  uint32_t stype;
  const void *pNext;
  uint32_t flags;
} ze_context_desc;

typedef struct ze_command_queue_desc {
  uint32_t stype;
  const void *pNext;
  uint32_t ordinal, index, flags, mode, priority;
} ze_command_queue_desc;

typedef struct ze_device_mem_alloc_desc {
  uint32_t stype;
  const void *pNext;
  uint32_t flags, ordinal;
} ze_device_mem_alloc_desc;

_Static_assert(offsetof(ze_context_desc, flags) == 16 && sizeof(ze_context_desc) == 24, "ze_context_desc_t layout");
_Static_assert(offsetof(ze_command_queue_desc, ordinal) == 16 && offsetof(ze_command_queue_desc, mode) == 28 &&
                   sizeof(ze_command_queue_desc) == 40,
               "ze_command_queue_desc_t layout");
_Static_assert(offsetof(ze_device_mem_alloc_desc, ordinal) == 20 && sizeof(ze_device_mem_alloc_desc) == 24,
               "ze_device_mem_alloc_desc_t layout");

typedef uint32_t (*zeInit_fn)(uint32_t flags);
typedef uint32_t (*zeDriverGet_fn)(uint32_t *count, void **drivers);
typedef uint32_t (*zeDriverGetProperties_fn)(void *driver, ze_driver_properties *props);
typedef uint32_t (*zeDeviceGet_fn)(void *driver, uint32_t *count, void **devices);
typedef uint32_t (*zeDeviceGetProperties_fn)(void *device, ze_device_properties *props);
typedef uint32_t (*zeDeviceGetComputeProperties_fn)(void *device, ze_device_compute_properties *props);
typedef uint32_t (*zeDeviceGetMemoryProperties_fn)(void *device, uint32_t *count, ze_device_memory_properties *props);
typedef uint32_t (*zeDevicePciGetPropertiesExt_fn)(void *device, ze_pci_ext_properties *props);

typedef uint32_t (*zeContextCreate_fn)(void *driver, const ze_context_desc *desc, void **context);
typedef uint32_t (*zeContextDestroy_fn)(void *context);
typedef uint32_t (*zeCommandListCreateImmediate_fn)(void *context, void *device, const ze_command_queue_desc *desc,
                                                   void **list);
typedef uint32_t (*zeCommandListDestroy_fn)(void *list);
typedef uint32_t (*zeCommandListAppendMemoryCopy_fn)(void *list, void *dst, const void *src, size_t bytes,
                                                    void *signal_event, uint32_t wait_count, void **wait_events);
typedef uint32_t (*zeCommandListAppendMemoryFill_fn)(void *list, void *dst, const void *pattern, size_t pattern_size,
                                                    size_t bytes, void *signal_event, uint32_t wait_count,
                                                    void **wait_events);
typedef uint32_t (*zeCommandListHostSynchronize_fn)(void *list, uint64_t timeout_ns);
typedef uint32_t (*zeMemAllocDevice_fn)(void *context, const ze_device_mem_alloc_desc *desc, size_t bytes,
                                       size_t alignment, void *device, void **ptr);
typedef uint32_t (*zeMemFree_fn)(void *context, void *ptr);

/* Events: a host-visible pool per event, signalled from the immediate command list. */
enum { ZE_STYPE_EVENT_POOL_DESC = 0x10, ZE_STYPE_EVENT_DESC = 0x11 };
enum { ZE_EVENT_POOL_FLAG_HOST_VISIBLE = 0x1, ZE_EVENT_SCOPE_FLAG_HOST = 0x4 };
#define ZE_RESULT_NOT_READY 0x1u

typedef struct ze_event_pool_desc {
  uint32_t stype;
  const void *pNext;
  uint32_t flags, count;
} ze_event_pool_desc;

typedef struct ze_event_desc {
  uint32_t stype;
  const void *pNext;
  uint32_t index, signal, wait;
} ze_event_desc;

_Static_assert(offsetof(ze_event_pool_desc, flags) == 16 && sizeof(ze_event_pool_desc) == 24,
               "ze_event_pool_desc_t layout");
_Static_assert(offsetof(ze_event_desc, index) == 16 && offsetof(ze_event_desc, wait) == 24,
               "ze_event_desc_t layout");

typedef uint32_t (*zeEventPoolCreate_fn)(void *context, const ze_event_pool_desc *desc, uint32_t num_devices,
                                        void **devices, void **pool);
typedef uint32_t (*zeEventPoolDestroy_fn)(void *pool);
typedef uint32_t (*zeEventCreate_fn)(void *pool, const ze_event_desc *desc, void **event);
typedef uint32_t (*zeEventDestroy_fn)(void *event);
typedef uint32_t (*zeEventHostReset_fn)(void *event);
typedef uint32_t (*zeEventHostSynchronize_fn)(void *event, uint64_t timeout_ns);
typedef uint32_t (*zeEventQueryStatus_fn)(void *event);
typedef uint32_t (*zeCommandListAppendSignalEvent_fn)(void *list, void *event);

/* Optional always: checked when an event is created (the backend then names the missing symbol). */
#define TB_ZE_EVENT_SYMBOLS(X)           \
  X(zeEventPoolCreate, true)             \
  X(zeEventPoolDestroy, true)            \
  X(zeEventCreate, true)                 \
  X(zeEventDestroy, true)                \
  X(zeEventHostReset, true)              \
  X(zeEventHostSynchronize, true)        \
  X(zeEventQueryStatus, true)            \
  X(zeCommandListAppendSignalEvent, true)

/* What the probe reads: name, optional. */
#define TB_ZE_PROBE_SYMBOLS(X)            \
  X(zeInit, false)                        \
  X(zeDriverGet, false)                   \
  X(zeDeviceGet, false)                   \
  X(zeDeviceGetProperties, false)         \
  X(zeDriverGetProperties, true)          \
  X(zeDeviceGetMemoryProperties, true)    \
  X(zeDeviceGetComputeProperties, true)   \
  X(zeDevicePciGetPropertiesExt, true)

/* What the backend adds (name, optional even then); absent unless the loader is opened for memory. */
#define TB_ZE_MEMORY_SYMBOLS(X)              \
  X(zeContextCreate, false)                  \
  X(zeContextDestroy, false)                 \
  X(zeCommandListCreateImmediate, false)     \
  X(zeCommandListDestroy, false)             \
  X(zeCommandListAppendMemoryCopy, false)    \
  X(zeCommandListAppendMemoryFill, false)    \
  X(zeCommandListHostSynchronize, true)      \
  X(zeMemAllocDevice, false)                 \
  X(zeMemFree, false)

typedef struct ze_api {
#define TB_ZE_SLOT(name, optional) void *name;
  TB_ZE_PROBE_SYMBOLS(TB_ZE_SLOT)
  TB_ZE_MEMORY_SYMBOLS(TB_ZE_SLOT)
  TB_ZE_EVENT_SYMBOLS(TB_ZE_SLOT)
#undef TB_ZE_SLOT
} ze_api;

#define ZE_CALL(api, name) ((name##_fn)(api)->name)

/* Open the loader (TB_ZE_LIB, else libze_loader.so.1, libze_loader.so) and resolve the table; the memory
 * symbols are required when `memory` is set. Returns the handle, or NULL: *dl says what was tried and
 * `missing` names the absent required symbol ("" when the library itself did not load). */
void *tb_ze_api_open(ze_api *api, bool memory, tb_dl_result *dl, char *missing, size_t cap);

/* "ZE_RESULT_ERROR_UNINITIALIZED" for 0x78000001; "unknown ze_result_t" for values not in the table. */
const char *tb_ze_result_name(uint32_t result);

#endif
