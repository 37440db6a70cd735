/* Internal: what tests and tools may ask of an open Vulkan backend state (the `state` tb_vulkan_ops.open
 * returned) beyond tb_backend_ops: the allocator's counters, switches that force the rarer paths on
 * lavapipe, and the validation layer's message counts. */
#ifndef TB_BACKEND_VK_BACKEND_H
#define TB_BACKEND_VK_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend_impl.h"

typedef struct tb_vk_memory_counters {
  uint64_t allocate_calls; /* vkAllocateMemory calls (blocks and the staging buffer) */
  uint64_t free_calls;     /* vkFreeMemory calls */
  size_t blocks;           /* VkDeviceMemory blocks held for allocations */
  uint64_t block_bytes;    /* their total size */
  uint64_t block_size;     /* the size of an ordinary block */
  size_t live;             /* allocations not freed */
  uint64_t staging_bytes;  /* size of the staging buffer, 0 when none */
  uint32_t memory_type;    /* the memory type index of the last allocation's block */
  bool last_mapped;        /* the last allocation is mapped (host-visible and staging not forced) */
} tb_vk_memory_counters;

void tb_vk_memory_counters_get(void *state, tb_vk_memory_counters *out);
/* Test switch: treat device memory as not host-visible, so copies go through the staging buffer.
 * Applies to blocks created afterwards; call it before allocating. */
void tb_vk_force_staging(void *state, bool on);
/* Test switch: treat host-visible memory as not host-coherent, so every host access flushes or
 * invalidates whole nonCoherentAtomSize ranges. Call it before allocating. */
void tb_vk_force_noncoherent(void *state, bool on);
/* Test switch: the next vkAllocateMemory is not called and `result` is returned in its place. */
void tb_vk_fail_next_allocation(void *state, int32_t result);
/* The memory (device, offset in its block) behind an allocation, for tests that check sharing. */
uint64_t tb_vk_allocation_memory(tb_devmem mem, uint64_t *offset_in_block);

/* The validation layer on this device's instance: whether it is on and counting, and the warnings plus
 * errors it reported so far (the first one's text in `first`). */
bool tb_vk_validation_counting(void *state);
unsigned tb_vk_validation_messages(void *state, char *first, size_t cap);
/* Warnings plus errors reported on the instances of every device closed so far in this process. */
unsigned tb_vk_closed_validation_messages(char *first, size_t cap);

/* Model execution (vk_compute.h): what the device reports and what the pipeline cache did. */
typedef struct tb_vk_compute_stats {
  uint64_t pipelines_created; /* vkCreateComputePipelines calls */
  uint64_t pipelines_reused;  /* a node got a pipeline another node had made */
  uint64_t cache_hits;        /* the on-disk pipeline cache entry was valid and given to the driver */
  uint64_t cache_misses;      /* no entry on disk (or the cache is off) */
  uint64_t cache_rejected;    /* an entry was there but failed the checks: ignored, rebuilt */
  uint64_t cache_writes;      /* entries saved at close */
  uint64_t cache_bytes_loaded;
  uint64_t dispatches;        /* vkCmdDispatch calls recorded */
  uint64_t submits;           /* batches of dispatches submitted */
  uint64_t descriptor_pools;  /* vkCreateDescriptorPool calls (one per prepared node) */
  uint64_t descriptor_updates;
  bool cache_enabled;         /* the disk cache has a folder (TB_CACHE_DIR not "off") */
  bool subgroup_arithmetic;   /* the device reports subgroup arithmetic in compute shaders */
  bool subgroups_used;        /* and reductions use it (not switched off) */
  uint32_t subgroup_size;
  bool shader_float16;        /* VkPhysicalDeviceShaderFloat16Int8Features.shaderFloat16 */
  bool fp16_kernels;          /* shaderFloat16 + storageBuffer16BitAccess enabled: fp16 unary/binary kernels */
  bool cooperative_matrix;    /* VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix */
} tb_vk_compute_stats;
/* TB_ERR_UNSUPPORTED (with the reason) when the device cannot run kernels; the counters are then zero. */
tb_status tb_vk_compute_stats_get(void *state, tb_vk_compute_stats *out);
/* Test switch: reductions use the shared-memory shaders even when subgroups are reported. Applies to
 * nodes prepared afterwards. */
void tb_vk_force_no_subgroups(void *state, bool on);
/* Test switch: the next vkCreateComputePipelines is not called and `result` is returned in its place. */
void tb_vk_fail_next_pipeline(void *state, int32_t result);
/* Test switch: the next submit of recorded kernels is not made and `result` is returned in its place
 * (e.g. VK_ERROR_DEVICE_LOST); the copy or synchronize that asked for it fails with that code. */
void tb_vk_fail_next_submit(void *state, int32_t result);

#endif
