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

#endif
