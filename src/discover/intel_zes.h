/* Internal: free device memory of Intel GPUs from Level Zero Sysman (zesInit, zesDeviceEnumMemoryModules,
 * zesMemoryGetState), matched to the core API's devices by PCI address. Sysman is started with zesInit, never
 * by setting ZES_ENABLE_SYSMAN; a loader without zesInit only leaves free memory unknown. */
#ifndef TB_DISCOVER_INTEL_ZES_H
#define TB_DISCOVER_INTEL_ZES_H
#include "discover/devlist.h"
#include "discover/intel_ze.h"

/* Fill memory_free of scan->devices through the loader `handle`; sets scan->sysman when Sysman answered. */
void tb_zes_read_free(tb_device_list *list, void *handle, tb_ze_scan *scan);

#endif
