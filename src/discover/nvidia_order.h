/* Internal: CUDA's device numbering decided without cuInit, from what NVML described: the order
 * CUDA_DEVICE_ORDER asks for and the subset CUDA_VISIBLE_DEVICES names, or a sentence saying why only
 * cuInit can tell. */
#ifndef TB_DISCOVER_NVIDIA_ORDER_H
#define TB_DISCOVER_NVIDIA_ORDER_H
#include <stdbool.h>
#include <stddef.h>
#include "discover/nvidia_cuda.h"

/* `gpus` holds `*count` GPUs in PCI bus order. On success they are rearranged into CUDA's ordinals
 * (gpus[N] is cuda:N) and *count is the number CUDA would list; `order` and `visible` are the values of
 * CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES (NULL when unset). false, with `why` filled and the array
 * untouched, when the numbering cannot be decided without the driver: the default fastest-first
 * order on GPUs that differ, MIG forms, and lists CUDA would cut short or reject. */
bool tb_nv_cuda_order(tb_cuda_gpu *gpus, int *count, const char *order, const char *visible, char *why, size_t cap);

#endif
