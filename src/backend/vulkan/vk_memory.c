/* The Vulkan backend's memory allocator: VkBuffers suballocated from large VkDeviceMemory blocks, memory
 * types picked by heap properties, persistent mappings of host-visible blocks, and the staging buffer
 * for memory the host cannot see. See vk_memory.h for the rules. */
#include "backend/vulkan/vk_memory.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_device.h"
#include "core/env.h"
#include "core/error.h"

#define MIB (1ull << 20)
#define STAGING_MIN MIB
#define NO_TYPE UINT32_MAX

static uint64_t round_up(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

static tb_vk_flags type_flags(const vk_state *s, uint32_t type) { return s->memory.memoryTypes[type].propertyFlags; }
static bool is_visible(const vk_state *s, uint32_t type) { return type_flags(s, type) & TB_VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT; }
static bool is_coherent(const vk_state *s, uint32_t type) {
  return !s->mem.force_noncoherent && (type_flags(s, type) & TB_VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
}
static const tb_vk_memory_heap *heap_of(const vk_state *s, uint32_t type) {
  return &s->memory.memoryHeaps[s->memory.memoryTypes[type].heapIndex];
}

/* Tensors: device-local first; on a discrete GPU memory the host cannot see (real VRAM, not a BAR window),
 * elsewhere (integrated GPUs, CPU drivers like lavapipe) host-visible and coherent, so copies are a memcpy. */
static uint32_t pick_tensor_type(const vk_state *s, uint32_t allowed) {
  bool discrete = s->props.deviceType == TB_VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  uint32_t best = NO_TYPE;
  int best_score = -1;
  for (uint32_t t = 0; t < s->memory.memoryTypeCount && t < TB_VK_MAX_MEMORY_TYPES; t++) {
    tb_vk_flags f = type_flags(s, t);
    if (!(allowed & (1u << t)) || (f & (TB_VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT | TB_VK_MEMORY_PROPERTY_PROTECTED_BIT))) continue;
    bool visible = f & TB_VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
    int score = (f & TB_VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT ? 4 : 0) + (discrete ? !visible : visible) * 2 +
                (visible && (f & TB_VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) ? 1 : 0);
    if (score > best_score) best = t, best_score = score;
  }
  return best;
}

/* Staging: host-visible; coherent, then cached (fast reads back), then host memory rather than a BAR window. */
static uint32_t pick_staging_type(const vk_state *s, uint32_t allowed) {
  uint32_t best = NO_TYPE;
  int best_score = -1;
  for (uint32_t t = 0; t < s->memory.memoryTypeCount && t < TB_VK_MAX_MEMORY_TYPES; t++) {
    tb_vk_flags f = type_flags(s, t);
    if (!(allowed & (1u << t)) || !(f & TB_VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) || (f & TB_VK_MEMORY_PROPERTY_PROTECTED_BIT)) continue;
    int score = (f & TB_VK_MEMORY_PROPERTY_HOST_COHERENT_BIT ? 4 : 0) + (f & TB_VK_MEMORY_PROPERTY_HOST_CACHED_BIT ? 2 : 0) +
                (f & TB_VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT ? 0 : 1);
    if (score > best_score) best = t, best_score = score;
  }
  return best;
}

void tb_vk_memory_init(vk_state *s) {
  vk_allocator *m = &s->mem;
  memset(m, 0, sizeof *m);
  m->block_size = TB_VK_BLOCK_SIZE;
  if (m->block_size > s->max_allocation) m->block_size = s->max_allocation;
  uint32_t t = pick_tensor_type(s, ~0u);
  if (t != NO_TYPE && m->block_size > heap_of(s, t)->size / 4) m->block_size = round_up(heap_of(s, t)->size / 4, MIB);
  if (m->block_size < MIB) m->block_size = MIB;
  m->tensor_type_hint = t;
}

/* vkAllocateMemory, counted, with the test switch that makes it fail. */
static tb_vk_result allocate(vk_state *s, uint64_t size, uint32_t type, tb_vk_device_memory *out) {
  *out = 0;
  if (s->mem.fail_next) {
    tb_vk_result r = s->mem.fail_next;
    s->mem.fail_next = 0;
    return r;
  }
  tb_vk_memory_allocate_info info = {.sType = TB_VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = size, .memoryTypeIndex = type};
  s->mem.allocate_calls++;
  tb_vk_result r = s->vk.vkAllocateMemory(s->device, &info, NULL, out);
  if (r != TB_VK_SUCCESS) *out = 0;
  return r;
}

static void release_memory(vk_state *s, tb_vk_device_memory memory, bool mapped) {
  if (!memory) return;
  if (mapped) s->vk.vkUnmapMemory(s->device, memory);
  s->vk.vkFreeMemory(s->device, memory, NULL);
  s->mem.free_calls++;
}

static tb_status create_buffer(vk_state *s, uint64_t bytes, tb_vk_buffer *buffer, tb_vk_memory_requirements *req) {
  tb_vk_buffer_create_info info = {
      .sType = TB_VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = bytes,
      .usage = TB_VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | TB_VK_BUFFER_USAGE_TRANSFER_SRC_BIT | TB_VK_BUFFER_USAGE_TRANSFER_DST_BIT,
  };
  tb_vk_result r = s->vk.vkCreateBuffer(s->device, &info, NULL, buffer);
  if (r != TB_VK_SUCCESS) {
    *buffer = 0;
    return tb_vk_fail(s, "vkCreateBuffer", r);
  }
  s->vk.vkGetBufferMemoryRequirements(s->device, *buffer, req);
  return TB_OK;
}

/* Bytes held in blocks (and the staging buffer) on `heap`. */
static uint64_t held_on_heap(const vk_state *s, uint32_t heap) {
  uint64_t held = 0;
  for (const vk_block *b = s->mem.blocks; b; b = b->next)
    if (s->memory.memoryTypes[b->type].heapIndex == heap) held += b->size;
  return held;
}

static tb_status out_of_memory(const vk_state *s, size_t bytes, const char *why_fmt, ...) __attribute__((format(printf, 3, 4)));
static tb_status out_of_memory(const vk_state *s, size_t bytes, const char *why_fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, why_fmt);
  vsnprintf(why, sizeof why, why_fmt, ap);
  va_end(ap);
  return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes (%.1f MiB): %s; this device holds %llu bytes in %zu allocation%s",
                  s->label, bytes, (double)bytes / (double)MIB, why, (unsigned long long)s->mem.block_bytes, s->mem.live,
                  s->mem.live == 1 ? "" : "s");
}

/* Requests no allocation on this device could satisfy, refused before the driver is asked. */
static tb_status check_limits(const vk_state *s, size_t bytes) {
  if (bytes > s->max_allocation)
    return out_of_memory(s, bytes, "one Vulkan allocation holds at most maxMemoryAllocationSize = %llu bytes",
                         (unsigned long long)s->max_allocation);
  uint32_t t = s->mem.tensor_type_hint;
  if (t != NO_TYPE && bytes > heap_of(s, t)->size)
    return out_of_memory(s, bytes, "more than the whole memory heap %u (%llu bytes)", s->memory.memoryTypes[t].heapIndex,
                         (unsigned long long)heap_of(s, t)->size);
  return TB_OK;
}

static tb_status new_block(vk_state *s, uint32_t type, uint64_t span, size_t bytes, vk_block **out) {
  if (span > s->max_allocation)
    return out_of_memory(s, bytes, "its buffer needs %llu bytes, over maxMemoryAllocationSize = %llu bytes", (unsigned long long)span,
                         (unsigned long long)s->max_allocation);
  uint64_t size = span > s->mem.block_size ? round_up(span, MIB) : s->mem.block_size;
  if (size > s->max_allocation) size = span;
  uint32_t heap = s->memory.memoryTypes[type].heapIndex;
  uint64_t heap_size = s->memory.memoryHeaps[heap].size, held = held_on_heap(s, heap);
  if (held + size > heap_size && held + span <= heap_size) size = span; /* a smaller block still fits */
  if (held + size > heap_size)
    return out_of_memory(s, bytes, "memory heap %u is %llu bytes and a %llu-byte block would over-fill it",
                         heap, (unsigned long long)heap_size, (unsigned long long)size);
  vk_block *b = calloc(1, sizeof *b);
  vk_range *ranges = calloc(4, sizeof *ranges);
  if (!b || !ranges) {
    free(b);
    free(ranges);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the allocator's bookkeeping", s->label);
  }
  tb_vk_result r = allocate(s, size, type, &b->memory);
  if (r != TB_VK_SUCCESS) {
    free(b);
    free(ranges);
    tb_status st = r == TB_VK_ERROR_OUT_OF_DEVICE_MEMORY || r == TB_VK_ERROR_OUT_OF_HOST_MEMORY ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER;
    return tb_error(st, "%s: vkAllocateMemory of %llu bytes (memory type %u, heap %u of %llu bytes) for a %zu-byte allocation failed with %d %s; "
                    "this device holds %llu bytes in %zu allocation%s",
                    s->label, (unsigned long long)size, type, heap, (unsigned long long)heap_size, bytes, (int)r, tb_vk_result_name(r),
                    (unsigned long long)s->mem.block_bytes, s->mem.live, s->mem.live == 1 ? "" : "s");
  }
  if (is_visible(s, type) && !s->mem.force_staging) {
    r = s->vk.vkMapMemory(s->device, b->memory, 0, TB_VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != TB_VK_SUCCESS) {
      release_memory(s, b->memory, false);
      free(b);
      free(ranges);
      return tb_vk_fail(s, "vkMapMemory", r);
    }
  }
  b->size = size;
  b->type = type;
  b->free = ranges;
  b->free_cap = 4;
  b->free_count = 1;
  b->free[0] = (vk_range){0, size};
  b->next = s->mem.blocks;
  s->mem.blocks = b;
  s->mem.block_bytes += size;
  *out = b;
  return TB_OK;
}

/* First fit: the offset of a `span`-byte range aligned to `align`, taken out of the free list; false when none. */
static bool take_range(vk_block *b, uint64_t span, uint64_t align, uint64_t *offset) {
  for (size_t i = 0; i < b->free_count; i++) {
    vk_range r = b->free[i];
    uint64_t start = round_up(r.offset, align);
    if (start < r.offset || start > r.offset + r.size || r.offset + r.size - start < span) continue;
    uint64_t end = start + span, r_end = r.offset + r.size;
    bool before = start > r.offset, after = end < r_end;
    if (before && after) {
      if (b->free_count == b->free_cap) {
        vk_range *grown = realloc(b->free, b->free_cap * 2 * sizeof *grown);
        if (!grown) return false;
        b->free = grown;
        b->free_cap *= 2;
      }
      memmove(&b->free[i + 2], &b->free[i + 1], (b->free_count - i - 1) * sizeof *b->free);
      b->free[i] = (vk_range){r.offset, start - r.offset};
      b->free[i + 1] = (vk_range){end, r_end - end};
      b->free_count++;
    } else if (before) {
      b->free[i].size = start - r.offset;
    } else if (after) {
      b->free[i] = (vk_range){end, r_end - end};
    } else {
      memmove(&b->free[i], &b->free[i + 1], (b->free_count - i - 1) * sizeof *b->free);
      b->free_count--;
    }
    *offset = start;
    return true;
  }
  return false;
}

/* Put [offset, offset+size) back, merged with the free ranges next to it. false when out of host memory
 * (the range is then lost until the block goes). */
static bool give_range(vk_block *b, uint64_t offset, uint64_t size) {
  size_t i = 0;
  while (i < b->free_count && b->free[i].offset < offset) i++;
  bool merge_prev = i > 0 && b->free[i - 1].offset + b->free[i - 1].size == offset;
  bool merge_next = i < b->free_count && offset + size == b->free[i].offset;
  if (merge_prev && merge_next) {
    b->free[i - 1].size += size + b->free[i].size;
    memmove(&b->free[i], &b->free[i + 1], (b->free_count - i - 1) * sizeof *b->free);
    b->free_count--;
  } else if (merge_prev) {
    b->free[i - 1].size += size;
  } else if (merge_next) {
    b->free[i].offset = offset;
    b->free[i].size += size;
  } else {
    if (b->free_count == b->free_cap) {
      vk_range *grown = realloc(b->free, b->free_cap * 2 * sizeof *grown);
      if (!grown) return false;
      b->free = grown;
      b->free_cap *= 2;
    }
    memmove(&b->free[i + 1], &b->free[i], (b->free_count - i) * sizeof *b->free);
    b->free[i] = (vk_range){offset, size};
    b->free_count++;
  }
  return true;
}

static void drop_block(vk_state *s, vk_block *b) {
  for (vk_block **p = &s->mem.blocks; *p; p = &(*p)->next) {
    if (*p == b) {
      *p = b->next;
      break;
    }
  }
  s->mem.block_bytes -= b->size;
  release_memory(s, b->memory, b->mapped != NULL);
  free(b->free);
  free(b);
}

tb_status tb_vk_memory_alloc(vk_state *s, size_t bytes, vk_allocation **out) {
  *out = NULL;
  tb_status st = check_limits(s, bytes);
  if (st != TB_OK) return st;
  vk_allocation *a = calloc(1, sizeof *a);
  if (!a) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for an allocation record", s->label);
  tb_vk_memory_requirements req;
  st = create_buffer(s, bytes, &a->buffer, &req);
  if (st != TB_OK) {
    free(a);
    return st;
  }
  uint32_t type = pick_tensor_type(s, req.memoryTypeBits);
  if (type == NO_TYPE) {
    s->vk.vkDestroyBuffer(s->device, a->buffer, NULL);
    free(a);
    return tb_error(TB_ERR_UNSUPPORTED, "%s: no usable memory type for a storage buffer (memoryTypeBits 0x%x)", s->label, req.memoryTypeBits);
  }
  uint64_t align = req.alignment ? req.alignment : 1;
  if (is_visible(s, type) && !is_coherent(s, type) && s->props.limits.nonCoherentAtomSize > align)
    align = s->props.limits.nonCoherentAtomSize; /* flushes of whole atoms stay inside the allocation */
  a->span = round_up(req.size, align);
  a->size = bytes;
  vk_block *b = NULL;
  for (vk_block *it = s->mem.blocks; it && !b; it = it->next)
    if (it->type == type && take_range(it, a->span, align, &a->offset)) b = it;
  if (!b) {
    st = new_block(s, type, a->span, bytes, &b);
    if (st == TB_OK && !take_range(b, a->span, align, &a->offset)) {
      drop_block(s, b);
      st = tb_error(TB_ERR_INTERNAL, "%s: a new %llu-byte block cannot hold %llu bytes", s->label, (unsigned long long)b->size,
                    (unsigned long long)a->span);
    }
    if (st != TB_OK) {
      s->vk.vkDestroyBuffer(s->device, a->buffer, NULL);
      free(a);
      return st;
    }
  }
  a->block = b;
  b->live++;
  s->mem.live++;
  tb_vk_result r = s->vk.vkBindBufferMemory(s->device, a->buffer, b->memory, a->offset);
  if (r != TB_VK_SUCCESS) {
    st = tb_vk_fail(s, "vkBindBufferMemory", r);
    tb_vk_memory_free(s, a);
    return st;
  }
  s->mem.tensor_type_hint = type;
  *out = a;
  return TB_OK;
}

void tb_vk_memory_free(vk_state *s, vk_allocation *a) {
  if (!a) return;
  s->vk.vkDestroyBuffer(s->device, a->buffer, NULL);
  vk_block *b = a->block;
  if (!give_range(b, a->offset, a->span)) tb_log(TB_LOG_WARN, "%s: out of host memory: %llu bytes stay unused until their block is freed", s->label, (unsigned long long)a->span);
  b->live--;
  s->mem.live--;
  if (b->live == 0) drop_block(s, b);
  free(a);
}

void *tb_vk_memory_host(const vk_allocation *a, size_t offset) {
  return a->block->mapped ? (char *)a->block->mapped + a->offset + offset : NULL;
}

/* The atom-aligned range covering [offset, offset+bytes) of the allocation, within its block. */
static tb_vk_mapped_memory_range atom_range(const vk_state *s, const vk_allocation *a, size_t offset, size_t bytes) {
  uint64_t atom = s->props.limits.nonCoherentAtomSize ? s->props.limits.nonCoherentAtomSize : 1;
  uint64_t start = (a->offset + offset) / atom * atom, end = round_up(a->offset + offset + bytes, atom);
  tb_vk_mapped_memory_range range = {.sType = TB_VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = a->block->memory, .offset = start};
  range.size = end >= a->block->size ? TB_VK_WHOLE_SIZE : end - start;
  return range;
}

tb_status tb_vk_memory_flush(vk_state *s, const vk_allocation *a, size_t offset, size_t bytes) {
  if (!a->block->mapped || is_coherent(s, a->block->type) || !bytes) return TB_OK;
  tb_vk_mapped_memory_range range = atom_range(s, a, offset, bytes);
  tb_vk_result r = s->vk.vkFlushMappedMemoryRanges(s->device, 1, &range);
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, "vkFlushMappedMemoryRanges", r);
}

tb_status tb_vk_memory_invalidate(vk_state *s, const vk_allocation *a, size_t offset, size_t bytes) {
  if (!a->block->mapped || is_coherent(s, a->block->type) || !bytes) return TB_OK;
  tb_vk_mapped_memory_range range = atom_range(s, a, offset, bytes);
  tb_vk_result r = s->vk.vkInvalidateMappedMemoryRanges(s->device, 1, &range);
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, "vkInvalidateMappedMemoryRanges", r);
}

static void release_staging(vk_state *s) {
  vk_staging *g = &s->mem.staging;
  if (g->buffer) s->vk.vkDestroyBuffer(s->device, g->buffer, NULL);
  release_memory(s, g->memory, g->mapped != NULL);
  memset(g, 0, sizeof *g);
}

tb_status tb_vk_staging_get(vk_state *s, size_t bytes, size_t *size) {
  vk_staging *g = &s->mem.staging;
  uint64_t want = bytes < TB_VK_STAGING_MAX ? bytes : TB_VK_STAGING_MAX;
  if (g->buffer && g->size >= want) {
    *size = (size_t)g->size;
    return TB_OK;
  }
  uint64_t grow = STAGING_MIN;
  while (grow < want) grow *= 2;
  release_staging(s);
  tb_vk_memory_requirements req;
  tb_status st = create_buffer(s, grow, &g->buffer, &req);
  if (st != TB_OK) return st;
  uint32_t type = pick_staging_type(s, req.memoryTypeBits);
  if (type == NO_TYPE) {
    release_staging(s);
    return tb_error(TB_ERR_UNSUPPORTED, "%s: no host-visible memory type for a staging buffer (memoryTypeBits 0x%x)", s->label,
                    req.memoryTypeBits);
  }
  tb_vk_result r = allocate(s, round_up(req.size, s->props.limits.nonCoherentAtomSize), type, &g->memory);
  if (r == TB_VK_SUCCESS) r = s->vk.vkBindBufferMemory(s->device, g->buffer, g->memory, 0);
  if (r == TB_VK_SUCCESS) r = s->vk.vkMapMemory(s->device, g->memory, 0, TB_VK_WHOLE_SIZE, 0, &g->mapped);
  if (r != TB_VK_SUCCESS) {
    g->mapped = NULL;
    release_staging(s);
    return tb_error(tb_vk_fail(s, "vkAllocateMemory", r), "%s: a %llu-byte staging buffer could not be set up: %d %s", s->label,
                    (unsigned long long)grow, (int)r, tb_vk_result_name(r));
  }
  g->size = grow;
  g->coherent = is_coherent(s, type);
  *size = (size_t)grow;
  return TB_OK;
}

static tb_status staging_sync(vk_state *s, size_t bytes, bool flush) {
  vk_staging *g = &s->mem.staging;
  if (g->coherent || !bytes) return TB_OK;
  tb_vk_mapped_memory_range range = {.sType = TB_VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, .memory = g->memory, .offset = 0,
                                     .size = TB_VK_WHOLE_SIZE};
  tb_vk_result r = flush ? s->vk.vkFlushMappedMemoryRanges(s->device, 1, &range) : s->vk.vkInvalidateMappedMemoryRanges(s->device, 1, &range);
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, flush ? "vkFlushMappedMemoryRanges" : "vkInvalidateMappedMemoryRanges", r);
}

tb_status tb_vk_staging_flush(vk_state *s, size_t bytes) { return staging_sync(s, bytes, true); }
tb_status tb_vk_staging_invalidate(vk_state *s, size_t bytes) { return staging_sync(s, bytes, false); }

void tb_vk_memory_release(vk_state *s) {
  release_staging(s);
  while (s->mem.blocks) {
    if (s->mem.blocks->live)
      tb_log(TB_LOG_WARN, "%s: %zu allocation%s still live at close; their memory is released", s->label, s->mem.blocks->live,
             s->mem.blocks->live == 1 ? "" : "s");
    drop_block(s, s->mem.blocks);
  }
}

tb_status tb_vk_memory_info(vk_state *s, uint64_t *free_bytes, uint64_t *total_bytes) {
  tb_vk_memory_budget_properties budget = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  tb_vk_memory_properties2 p2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, .pNext = &budget};
  if (s->has_budget) s->api.vkGetPhysicalDeviceMemoryProperties2(s->phys, &p2);
  uint64_t total = 0, free_sum = 0;
  bool any_local = false;
  for (uint32_t h = 0; h < s->memory.memoryHeapCount && h < TB_VK_MAX_MEMORY_HEAPS; h++)
    any_local = any_local || (s->memory.memoryHeaps[h].flags & TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT);
  for (uint32_t h = 0; h < s->memory.memoryHeapCount && h < TB_VK_MAX_MEMORY_HEAPS; h++) {
    if (any_local && !(s->memory.memoryHeaps[h].flags & TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)) continue;
    total += s->memory.memoryHeaps[h].size;
    if (budget.heapBudget[h] > budget.heapUsage[h]) free_sum += budget.heapBudget[h] - budget.heapUsage[h];
  }
  *total_bytes = total;
  *free_bytes = 0;
  if (!s->has_budget)
    return tb_error(TB_ERR_UNSUPPORTED, "%s: the driver has no VK_EXT_memory_budget, so free memory is unknown; total device-local memory is %llu bytes",
                    s->label, (unsigned long long)total);
  *free_bytes = free_sum;
  return TB_OK;
}
