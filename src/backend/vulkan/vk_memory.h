/* Internal: the Vulkan backend's memory allocator, one per device (vk_memory.c).
 *
 * Each allocation is a VkBuffer (storage, transfer source and destination) bound to a range of a large
 * VkDeviceMemory block (TB_VK_BLOCK_SIZE, or the request rounded up to 1 MiB when larger) of the memory
 * type chosen from the heap properties: device-local for tensors (not host-visible on a discrete GPU when
 * a choice exists), host-visible + coherent (+ cached when possible) for the staging buffer. Host-visible
 * blocks are mapped once and stay mapped, so copies to them are a memcpy. Ranges respect the buffer's
 * alignment and, on non-coherent memory, nonCoherentAtomSize; freed ranges merge with their neighbours
 * and a block with nothing left in it goes back to the driver. */
#ifndef TB_BACKEND_VK_MEMORY_H
#define TB_BACKEND_VK_MEMORY_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/status.h>
#include "runtime/vulkan_device_api.h"

#define TB_VK_BLOCK_SIZE (64ull << 20)
#define TB_VK_STAGING_MAX (16ull << 20) /* bigger transfers go through the staging buffer in pieces */

struct vk_state;

typedef struct vk_range {
  uint64_t offset, size;
} vk_range;

typedef struct vk_block {
  struct vk_block *next;
  tb_vk_device_memory memory;
  uint64_t size;
  uint32_t type;
  void *mapped;   /* the whole block, mapped for its lifetime; NULL when not host-visible (or staging forced) */
  vk_range *free; /* free ranges sorted by offset, never adjacent */
  size_t free_count, free_cap;
  size_t live; /* allocations in the block */
} vk_block;

/* One allocation: what tb_devmem.handle points to. */
typedef struct vk_allocation {
  tb_vk_buffer buffer;
  vk_block *block;
  uint64_t offset; /* of the range in the block */
  uint64_t span;   /* the range's size: the buffer's size rounded to its alignment */
  uint64_t size;   /* bytes asked for: the buffer's size */
} vk_allocation;

typedef struct vk_staging {
  tb_vk_buffer buffer;
  tb_vk_device_memory memory;
  uint64_t size;
  void *mapped;
  bool coherent;
} vk_staging;

typedef struct vk_allocator {
  vk_block *blocks;
  uint32_t tensor_type_hint; /* the type picked for the last tensor, for messages */
  uint64_t block_size;
  uint64_t block_bytes; /* bytes in blocks held */
  uint64_t allocate_calls, free_calls; /* vkAllocateMemory / vkFreeMemory, staging included */
  size_t live;
  bool force_staging;      /* test switch: treat device memory as not host-visible */
  bool force_noncoherent;  /* test switch: treat host-visible memory as not coherent (flush and invalidate) */
  tb_vk_result fail_next;  /* test switch: the next vkAllocateMemory returns this instead (0: off) */
  vk_staging staging;
} vk_allocator;

void tb_vk_memory_init(struct vk_state *s);
/* Frees the staging buffer and every block (allocations still live are released and logged). */
void tb_vk_memory_release(struct vk_state *s);

tb_status tb_vk_memory_alloc(struct vk_state *s, size_t bytes, vk_allocation **out);
void tb_vk_memory_free(struct vk_state *s, vk_allocation *a);

/* The host address of byte `offset` of the allocation when it is mapped; else NULL. */
void *tb_vk_memory_host(const vk_allocation *a, size_t offset);
/* Make host writes to [offset, offset+bytes) visible to the device / device writes visible to the host:
 * flush / invalidate on non-coherent memory, nothing on coherent memory. Every host write is flushed at
 * once, so invalidating before a partial write never drops one; it refreshes the bytes of the atoms at
 * the ends that the write does not cover. */
tb_status tb_vk_memory_flush(struct vk_state *s, const vk_allocation *a, size_t offset, size_t bytes);
tb_status tb_vk_memory_invalidate(struct vk_state *s, const vk_allocation *a, size_t offset, size_t bytes);

/* The staging buffer, grown to at least min(bytes, TB_VK_STAGING_MAX); returns its usable size in *size. */
tb_status tb_vk_staging_get(struct vk_state *s, size_t bytes, size_t *size);
tb_status tb_vk_staging_flush(struct vk_state *s, size_t bytes);
tb_status tb_vk_staging_invalidate(struct vk_state *s, size_t bytes);

/* Device-local heaps: the sum of their sizes; and of budget - usage when VK_EXT_memory_budget is on. */
tb_status tb_vk_memory_info(struct vk_state *s, uint64_t *free_bytes, uint64_t *total_bytes);

#endif
