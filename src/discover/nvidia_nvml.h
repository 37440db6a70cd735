/* Internal: NVML (libnvidia-ml.so.1) through dlopen for the NVIDIA probe: the full driver version and
 * each GPU's free and total memory by PCI bus id, without creating a CUDA context. */
#ifndef TB_DISCOVER_NVIDIA_NVML_H
#define TB_DISCOVER_NVIDIA_NVML_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "discover/devlist.h"

typedef struct tb_nvml tb_nvml;

/* Load NVML (TB_NVML_LIB, else libnvidia-ml.so.1) and call nvmlInit_v2. On success returns a session
 * and writes the driver version ("550.54.15", or "" when NVML does not say) into driver_version. NULL
 * when NVML is unavailable; a check of the CUDA report then says why. */
tb_nvml *tb_nvml_open(tb_device_list *list, char *driver_version, size_t cap);

/* Total and free memory of the GPU at `bus_id`; false (with a check) when NVML cannot say. */
bool tb_nvml_memory(tb_nvml *nvml, tb_device_list *list, const char *bus_id, uint64_t *total, uint64_t *free_bytes);

/* nvmlShutdown and unload; NULL is allowed. */
void tb_nvml_close(tb_nvml *nvml);

#endif
