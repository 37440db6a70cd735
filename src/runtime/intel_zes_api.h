/* Internal: Level Zero Sysman's entry points (zes*, exported by libze_loader 1.5 and later) as one symbol
 * table over the loader the core API opened, with the structs of Level Zero's public zes_api.h (spec 1.x;
 * static asserts pin their layouts). Used by the XPU probe for free device memory. */
#ifndef TB_RUNTIME_INTEL_ZES_API_H
#define TB_RUNTIME_INTEL_ZES_API_H
#include <stddef.h>
#include <stdint.h>

enum { TB_ZES_STYPE_PCI_PROPERTIES = 0x2, TB_ZES_STYPE_MEM_PROPERTIES = 0xb, TB_ZES_STYPE_MEM_STATE = 0x1e };
enum { TB_ZES_MEM_LOC_SYSTEM = 0, TB_ZES_MEM_LOC_DEVICE = 1 };

typedef struct tb_zes_pci_properties {
  uint32_t stype;
  void *pNext;
  uint32_t domain, bus, device, function; /* zes_pci_address_t */
  int32_t gen, width;                     /* zes_pci_speed_t */
  int64_t maxBandwidth;
  uint8_t haveBandwidthCounters, havePacketCounters, haveReplayCounters;
} tb_zes_pci_properties;

typedef struct tb_zes_mem_properties {
  uint32_t stype;
  void *pNext;
  uint32_t type;       /* zes_mem_type_t */
  uint8_t onSubdevice; /* ze_bool_t */
  uint32_t subdeviceId;
  uint32_t location;   /* zes_mem_loc_t */
  uint64_t physicalSize;
  int32_t busWidth, numChannels;
} tb_zes_mem_properties;

typedef struct tb_zes_mem_state {
  uint32_t stype;
  const void *pNext;
  uint32_t health; /* zes_mem_health_t */
  uint64_t free, size;
} tb_zes_mem_state;

_Static_assert(offsetof(tb_zes_pci_properties, haveBandwidthCounters) == 48, "zes_pci_properties_t layout");
_Static_assert(offsetof(tb_zes_mem_properties, location) == 28 && offsetof(tb_zes_mem_properties, physicalSize) == 32,
               "zes_mem_properties_t layout");
_Static_assert(offsetof(tb_zes_mem_state, free) == 24 && sizeof(tb_zes_mem_state) == 40, "zes_mem_state_t layout");

typedef uint32_t (*tb_zesInit_fn)(uint32_t flags);
typedef uint32_t (*tb_zesDriverGet_fn)(uint32_t *count, void **drivers);
typedef uint32_t (*tb_zesDeviceGet_fn)(void *driver, uint32_t *count, void **devices);
typedef uint32_t (*tb_zesDevicePciGetProperties_fn)(void *device, tb_zes_pci_properties *props);
typedef uint32_t (*tb_zesDeviceEnumMemoryModules_fn)(void *device, uint32_t *count, void **modules);
typedef uint32_t (*tb_zesMemoryGetProperties_fn)(void *module, tb_zes_mem_properties *props);
typedef uint32_t (*tb_zesMemoryGetState_fn)(void *module, tb_zes_mem_state *state);

/* All optional: an old loader without Sysman leaves free memory unknown. */
#define TB_ZES_SYMBOLS(X)             \
  X(zesInit)                          \
  X(zesDriverGet)                     \
  X(zesDeviceGet)                     \
  X(zesDevicePciGetProperties)        \
  X(zesDeviceEnumMemoryModules)       \
  X(zesMemoryGetProperties)           \
  X(zesMemoryGetState)

typedef struct tb_zes_api {
#define TB_ZES_SLOT(name) void *name;
  TB_ZES_SYMBOLS(TB_ZES_SLOT)
#undef TB_ZES_SLOT
} tb_zes_api;

#define TB_ZES_CALL(api, name) ((tb_##name##_fn)(api)->name)

/* Resolve the Sysman entry points from the opened Level Zero loader `handle`; absent ones stay NULL (all
 * are optional: an old loader without Sysman leaves free memory unknown). */
void tb_zes_api_resolve(void *handle, tb_zes_api *api);

#endif
