/* Internal: what Level Zero (libze_loader, opened with dlopen) says about Intel GPUs, in plain structs for
 * the XPU probe (intel.c). The core API gives names, ids, EU counts, memory sizes and PCI addresses; Sysman
 * (zesInit, never the ZES_ENABLE_SYSMAN variable) gives free memory. Every call made is recorded as a check
 * of the XPU report. */
#ifndef TB_DISCOVER_INTEL_ZE_H
#define TB_DISCOVER_INTEL_ZE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "discover/devlist.h"
#include "runtime/intel_ze_api.h"

#define TB_ZE_DEVICE_TYPE_GPU 1u
#define TB_ZE_FLAG_INTEGRATED 1u /* ZE_DEVICE_PROPERTY_FLAG_INTEGRATED */
#define TB_ZE_FLAG_SUBDEVICE 2u  /* ZE_DEVICE_PROPERTY_FLAG_SUBDEVICE */

/* One device as Level Zero reports it (GPUs and other types alike). */
typedef struct tb_ze_device {
  uint32_t props_result;   /* 0, or the error zeDeviceGetProperties returned (then only the ids below are 0) */
  uint32_t type;           /* ZE_DEVICE_TYPE_*: 1 GPU, 2 CPU, 3 FPGA, 4 MCA, 5 VPU */
  uint32_t vendor_id, device_id, flags;
  char name[256];
  char uuid[40];           /* 32 hex digits */
  uint32_t eu_count;       /* numSlices * numSubslicesPerSlice * numEUsPerSubslice */
  uint32_t threads_per_eu, simd_width, core_clock_mhz;
  uint64_t max_alloc;
  uint32_t max_group_size; /* from zeDeviceGetComputeProperties; 0 when not asked or failed */
  uint64_t memory_total;
  bool memory_total_known;
  uint64_t memory_free;
  bool memory_free_known;
  char bus_id[16];         /* "0000:29:00.0"; "" when zeDevicePciGetPropertiesExt is absent or failed */
  char driver_version[32]; /* "1.3.29735" */
  unsigned driver_index;
  unsigned sibling_index, sibling_count; /* k-th of n devices sharing this bus id (tiles in FLAT mode) */
} tb_ze_device;

typedef enum tb_ze_outcome {
  TB_ZE_OK = 0,
  TB_ZE_NO_LIBRARY,      /* libze_loader not found */
  TB_ZE_MISSING_SYMBOL,  /* a required entry point is absent */
  TB_ZE_INIT_FAILED,     /* zeInit returned an error */
  TB_ZE_ENUM_FAILED      /* zeDriverGet / zeDeviceGet failed */
} tb_ze_outcome;

typedef struct tb_ze_scan {
  tb_ze_outcome outcome;
  char failure[1024]; /* when not OK: "libze_loader.so.1 not found" or "zeInit failed with 0x78000001 (...)" */
  char fix[512];      /* what to do about it */
  char library[512];  /* the file that was loaded */
  tb_ze_device *devices;
  size_t count;
  bool sysman;        /* Sysman answered (free memory known for the devices it listed) */
} tb_ze_scan;

/* Open Level Zero (TB_ZE_LIB, else libze_loader.so.1, libze_loader.so) and list its devices. Never fails as
 * a whole: scan->outcome says how far it got. Memory failure sets list->arena.failed. Free with
 * tb_ze_scan_free. */
void tb_ze_scan_run(tb_device_list *list, tb_ze_scan *scan);
void tb_ze_scan_free(tb_ze_scan *scan);

#endif
