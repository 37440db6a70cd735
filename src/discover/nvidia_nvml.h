/* Internal: NVML (libnvidia-ml.so.1) through dlopen for the NVIDIA probe: the full driver version and
 * each GPU's free and total memory and the properties the device list shows, by PCI bus id, without
 * cuInit or a CUDA context. */
#ifndef TB_DISCOVER_NVIDIA_NVML_H
#define TB_DISCOVER_NVIDIA_NVML_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "discover/devlist.h"
#include "discover/nvidia_cuda.h"

typedef struct tb_nvml tb_nvml;

/* Load NVML (TB_NVML_LIB, else libnvidia-ml.so.1) and call nvmlInit_v2. On success returns a session
 * and writes the driver version ("550.54.15", or "" when NVML does not say) into driver_version. NULL
 * when NVML is unavailable; a check of the CUDA report then says why. */
tb_nvml *tb_nvml_open(tb_device_list *list, char *driver_version, size_t cap);

/* Total and free memory of the GPU at `bus_id`; false (with a check) when NVML cannot say. */
bool tb_nvml_memory(tb_nvml *nvml, tb_device_list *list, const char *bus_id, uint64_t *total, uint64_t *free_bytes);

/* The number of GPUs NVML lists; -1 when nvmlDeviceGetCount_v2 failed or nvml is NULL. */
int tb_nvml_count(const tb_nvml *nvml);

/* What libcuda's device queries give, from NVML and without cuInit, for the GPU at `bus_id`: name,
 * UUID, compute capability, total memory, and when NVML says them the SM count (from the CUDA core
 * count), the highest SM and memory clocks and the memory bus width. L2 size and `integrated` are not
 * in NVML (left 0). false, with `why` filled, when a required answer is missing or MIG mode is on. */
bool tb_nvml_describe(tb_nvml *nvml, const char *bus_id, tb_cuda_gpu *gpu, char *why, size_t cap);

/* nvmlShutdown and unload; NULL is allowed. */
void tb_nvml_close(tb_nvml *nvml);

#endif
