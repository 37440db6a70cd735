/* tb_vulkan_ops: the backend vtable over Vulkan. Kernels (find_kernel, kernels/) record dispatches that
 * every copy, fill, free and synchronize submits first (tb_vk_exec_flush). Copies to and from host-visible memory are a memcpy
 * through the persistent mapping; other memory goes through the staging buffer and vkCmdCopyBuffer,
 * waiting on the fence. Fills of 4-byte patterns at 4-byte offsets use vkCmdFillBuffer. Every call
 * holds the device's mutex: there is one command buffer. */
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/vulkan/vk_backend.h"
#include "backend/vulkan/kernels/vk_kernel.h"
#include "backend/vulkan/vk_compute.h"
#include "backend/vulkan/vk_device.h"
#include "core/error.h"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

static tb_status check_range(const vk_state *s, const char *op, const vk_allocation *a, size_t offset, size_t bytes) {
  if (!a) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %s of a NULL allocation", s->label, op);
  if (offset > a->size || bytes > a->size - offset)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %s of bytes [%zu, %zu) is outside the %llu-byte allocation", s->label, op, offset,
                    offset + bytes, (unsigned long long)a->size);
  return TB_OK;
}

/* One region copied on the device, then made visible to the host (mapped memory may be read next). */
static tb_status device_copy(vk_state *s, tb_vk_buffer src, uint64_t src_offset, tb_vk_buffer dst, uint64_t dst_offset, uint64_t bytes) {
  tb_status st = tb_vk_begin(s);
  if (st != TB_OK) return st;
  tb_vk_buffer_copy region = {src_offset, dst_offset, bytes};
  s->vk.vkCmdCopyBuffer(s->cmd, src, dst, 1, &region);
  tb_vk_barrier(s, TB_VK_PIPELINE_STAGE_HOST_BIT, TB_VK_ACCESS_HOST_READ_BIT);
  return tb_vk_submit_wait(s);
}

static tb_status write_locked(vk_state *s, vk_allocation *a, size_t offset, const unsigned char *src, size_t bytes) {
  void *host = tb_vk_memory_host(a, offset);
  if (host) {
    tb_status st = tb_vk_memory_invalidate(s, a, offset, bytes); /* the atoms at the ends hold the device's bytes too */
    if (st != TB_OK) return st;
    memcpy(host, src, bytes);
    return tb_vk_memory_flush(s, a, offset, bytes);
  }
  for (size_t done = 0; done < bytes;) {
    size_t cap = 0;
    tb_status st = tb_vk_staging_get(s, bytes - done, &cap);
    size_t n = min_size(cap, bytes - done);
    if (st == TB_OK) {
      memcpy(s->mem.staging.mapped, src + done, n);
      st = tb_vk_staging_flush(s, n);
    }
    if (st == TB_OK) st = device_copy(s, s->mem.staging.buffer, 0, a->buffer, offset + done, n);
    if (st != TB_OK) return st;
    done += n;
  }
  return TB_OK;
}

static tb_status read_locked(vk_state *s, vk_allocation *a, size_t offset, unsigned char *dst, size_t bytes) {
  void *host = tb_vk_memory_host(a, offset);
  if (host) {
    tb_status st = tb_vk_memory_invalidate(s, a, offset, bytes);
    if (st == TB_OK) memcpy(dst, host, bytes);
    return st;
  }
  for (size_t done = 0; done < bytes;) {
    size_t cap = 0;
    tb_status st = tb_vk_staging_get(s, bytes - done, &cap);
    size_t n = min_size(cap, bytes - done);
    if (st == TB_OK) st = device_copy(s, a->buffer, offset + done, s->mem.staging.buffer, 0, n);
    if (st == TB_OK) st = tb_vk_staging_invalidate(s, n);
    if (st != TB_OK) return st;
    memcpy(dst + done, s->mem.staging.mapped, n);
    done += n;
  }
  return TB_OK;
}

/* Overlapping ranges of one buffer (vkCmdCopyBuffer forbids that): through the staging buffer, piece
 * by piece in the direction memmove would take. */
static tb_status overlapping_copy(vk_state *s, vk_allocation *a, size_t dst_offset, size_t src_offset, size_t bytes) {
  bool forward = dst_offset < src_offset;
  for (size_t done = 0; done < bytes;) {
    size_t cap = 0;
    tb_status st = tb_vk_staging_get(s, bytes - done, &cap);
    if (st != TB_OK) return st;
    size_t n = min_size(cap, bytes - done);
    size_t at = forward ? done : bytes - done - n;
    st = tb_vk_begin(s);
    if (st != TB_OK) return st;
    tb_vk_buffer_copy in = {src_offset + at, 0, n}, out = {0, dst_offset + at, n};
    s->vk.vkCmdCopyBuffer(s->cmd, a->buffer, s->mem.staging.buffer, 1, &in);
    tb_vk_barrier(s, TB_VK_PIPELINE_STAGE_TRANSFER_BIT, TB_VK_ACCESS_TRANSFER_READ_BIT);
    s->vk.vkCmdCopyBuffer(s->cmd, s->mem.staging.buffer, a->buffer, 1, &out);
    tb_vk_barrier(s, TB_VK_PIPELINE_STAGE_HOST_BIT, TB_VK_ACCESS_HOST_READ_BIT);
    st = tb_vk_submit_wait(s);
    if (st != TB_OK) return st;
    done += n;
  }
  return TB_OK;
}

static tb_status copy_locked(vk_state *s, vk_allocation *dst, size_t dst_offset, vk_allocation *src, size_t src_offset, size_t bytes) {
  void *to = tb_vk_memory_host(dst, dst_offset), *from = tb_vk_memory_host(src, src_offset);
  if (to && from) {
    tb_status st = tb_vk_memory_invalidate(s, src, src_offset, bytes);
    if (st == TB_OK) st = tb_vk_memory_invalidate(s, dst, dst_offset, bytes);
    if (st != TB_OK) return st;
    memmove(to, from, bytes);
    return tb_vk_memory_flush(s, dst, dst_offset, bytes);
  }
  if (dst == src && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes) {
    if (dst_offset == src_offset) return TB_OK;
    return overlapping_copy(s, dst, dst_offset, src_offset, bytes);
  }
  return device_copy(s, src->buffer, src_offset, dst->buffer, dst_offset, bytes);
}

/* `bytes` of the pattern repeated from its first byte (the last repetition may be cut short). */
static void repeat_pattern(unsigned char *out, const unsigned char *pattern, size_t pattern_size, size_t bytes) {
  size_t n = min_size(pattern_size, bytes);
  memcpy(out, pattern, n);
  while (n < bytes) {
    size_t more = min_size(n, bytes - n); /* doubling: each copy starts at a multiple of pattern_size */
    memcpy(out + n, out, more);
    n += more;
  }
}

static tb_status fill_locked(vk_state *s, vk_allocation *a, size_t offset, const unsigned char *pattern, size_t pattern_size, size_t bytes) {
  if (pattern_size <= 4 && offset % 4 == 0 && bytes % 4 == 0) {
    unsigned char word_bytes[4];
    repeat_pattern(word_bytes, pattern, pattern_size, 4);
    uint32_t word;
    memcpy(&word, word_bytes, 4); /* vkCmdFillBuffer writes the word in the host's byte order */
    tb_status st = tb_vk_begin(s);
    if (st != TB_OK) return st;
    s->vk.vkCmdFillBuffer(s->cmd, a->buffer, offset, bytes, word);
    tb_vk_barrier(s, TB_VK_PIPELINE_STAGE_HOST_BIT, TB_VK_ACCESS_HOST_READ_BIT);
    return tb_vk_submit_wait(s);
  }
  void *host = tb_vk_memory_host(a, offset);
  if (host) {
    tb_status st = tb_vk_memory_invalidate(s, a, offset, bytes);
    if (st != TB_OK) return st;
    repeat_pattern(host, pattern, pattern_size, bytes);
    return tb_vk_memory_flush(s, a, offset, bytes);
  }
  size_t cap = 0;
  tb_status st = tb_vk_staging_get(s, bytes, &cap);
  if (st != TB_OK) return st;
  size_t chunk = min_size(cap, bytes) / pattern_size * pattern_size; /* every piece starts on a whole pattern */
  if (chunk == 0) chunk = bytes;
  repeat_pattern(s->mem.staging.mapped, pattern, pattern_size, min_size(chunk, bytes));
  st = tb_vk_staging_flush(s, chunk);
  for (size_t done = 0; st == TB_OK && done < bytes; done += chunk)
    st = device_copy(s, s->mem.staging.buffer, 0, a->buffer, offset + done, min_size(chunk, bytes - done));
  return st;
}

static tb_status vk_open(const tb_device_info *device, void **state) {
  vk_state *s = NULL;
  tb_status st = tb_vk_device_open(device, &s);
  *state = s;
  return st;
}

static void vk_close(void *state) { tb_vk_device_close(state); }

static size_t vk_alignment(void *state) {
  vk_state *s = state;
  uint64_t a = s->props.limits.minStorageBufferOffsetAlignment;
  return a > 4 ? (size_t)a : 4;
}

static tb_status vk_alloc(void *state, size_t bytes, tb_devmem *out) {
  vk_state *s = state;
  out->handle = NULL;
  out->size = 0;
  if (bytes == 0) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: an allocation of 0 bytes", s->label);
  vk_allocation *a = NULL;
  pthread_mutex_lock(&s->lock);
  tb_status st = tb_vk_memory_alloc(s, bytes, &a);
  pthread_mutex_unlock(&s->lock);
  if (st == TB_OK) *out = (tb_devmem){a, bytes};
  return st;
}

static void vk_free_mem(void *state, tb_devmem mem) {
  vk_state *s = state;
  if (!mem.handle) return;
  pthread_mutex_lock(&s->lock);
  if (tb_vk_exec_flush(s) != TB_OK) s->vk.vkDeviceWaitIdle(s->device); /* recorded dispatches may use it */
  tb_vk_memory_free(s, mem.handle);
  pthread_mutex_unlock(&s->lock);
}

static tb_status vk_write(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes) {
  vk_state *s = state;
  tb_status st = check_range(s, "write", dst.handle, dst_offset, bytes);
  if (st != TB_OK || bytes == 0) return st;
  pthread_mutex_lock(&s->lock);
  st = tb_vk_exec_flush(s);
  if (st == TB_OK) st = write_locked(s, dst.handle, dst_offset, src, bytes);
  pthread_mutex_unlock(&s->lock);
  return st;
}

static tb_status vk_read(void *state, tb_devmem src, size_t src_offset, void *dst, size_t bytes) {
  vk_state *s = state;
  tb_status st = check_range(s, "read", src.handle, src_offset, bytes);
  if (st != TB_OK || bytes == 0) return st;
  pthread_mutex_lock(&s->lock);
  st = tb_vk_exec_flush(s);
  if (st == TB_OK) st = read_locked(s, src.handle, src_offset, dst, bytes);
  pthread_mutex_unlock(&s->lock);
  return st;
}

static tb_status vk_copy(void *state, tb_devmem dst, size_t dst_offset, tb_devmem src, size_t src_offset, size_t bytes) {
  vk_state *s = state;
  tb_status st = check_range(s, "copy destination", dst.handle, dst_offset, bytes);
  if (st == TB_OK) st = check_range(s, "copy source", src.handle, src_offset, bytes);
  if (st != TB_OK || bytes == 0) return st;
  pthread_mutex_lock(&s->lock);
  st = tb_vk_exec_flush(s);
  if (st == TB_OK) st = copy_locked(s, dst.handle, dst_offset, src.handle, src_offset, bytes);
  pthread_mutex_unlock(&s->lock);
  return st;
}

static tb_status vk_fill(void *state, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size, size_t bytes) {
  vk_state *s = state;
  if (!pattern || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a fill pattern is 1, 2, 4 or 8 bytes, not %zu%s", s->label, pattern_size,
                    pattern ? "" : " (and not NULL)");
  tb_status st = check_range(s, "fill", dst.handle, offset, bytes);
  if (st != TB_OK || bytes == 0) return st;
  pthread_mutex_lock(&s->lock);
  st = tb_vk_exec_flush(s);
  if (st == TB_OK) st = fill_locked(s, dst.handle, offset, pattern, pattern_size, bytes);
  pthread_mutex_unlock(&s->lock);
  return st;
}

static tb_status vk_synchronize(void *state) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  tb_status st = tb_vk_exec_flush(s);
  tb_vk_result r = s->vk.vkDeviceWaitIdle(s->device);
  pthread_mutex_unlock(&s->lock);
  if (st != TB_OK) return st;
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, "vkDeviceWaitIdle", r);
}

static tb_status vk_memory_info_op(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  tb_status st = tb_vk_memory_info(s, free_bytes, total_bytes);
  pthread_mutex_unlock(&s->lock);
  return st;
}

const tb_backend_ops tb_vulkan_ops = {
    .kind = TB_BACKEND_VULKAN,
    .open = vk_open,
    .close = vk_close,
    .alignment = vk_alignment,
    .alloc = vk_alloc,
    .free = vk_free_mem,
    .write = vk_write,
    .read = vk_read,
    .copy = vk_copy,
    .fill = vk_fill,
    .synchronize = vk_synchronize,
    .memory_info = vk_memory_info_op,
    .find_kernel = tb_vk_find_kernel,
};

void tb_vk_memory_counters_get(void *state, tb_vk_memory_counters *out) {
  vk_state *s = state;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&s->lock);
  out->allocate_calls = s->mem.allocate_calls;
  out->free_calls = s->mem.free_calls;
  for (const vk_block *b = s->mem.blocks; b; b = b->next) out->blocks++;
  out->block_bytes = s->mem.block_bytes;
  out->block_size = s->mem.block_size;
  out->live = s->mem.live;
  out->staging_bytes = s->mem.staging.size;
  out->memory_type = s->mem.tensor_type_hint;
  out->last_mapped = s->mem.blocks && !s->mem.force_staging && s->mem.tensor_type_hint < TB_VK_MAX_MEMORY_TYPES &&
                     (s->memory.memoryTypes[s->mem.tensor_type_hint].propertyFlags & TB_VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  pthread_mutex_unlock(&s->lock);
}

void tb_vk_force_staging(void *state, bool on) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  s->mem.force_staging = on;
  pthread_mutex_unlock(&s->lock);
}

void tb_vk_force_noncoherent(void *state, bool on) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  s->mem.force_noncoherent = on;
  pthread_mutex_unlock(&s->lock);
}

void tb_vk_fail_next_allocation(void *state, int32_t result) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  s->mem.fail_next = result;
  pthread_mutex_unlock(&s->lock);
}

uint64_t tb_vk_allocation_memory(tb_devmem mem, uint64_t *offset_in_block) {
  const vk_allocation *a = mem.handle;
  if (offset_in_block) *offset_in_block = a ? a->offset : 0;
  return a ? a->block->memory : 0;
}

bool tb_vk_validation_counting(void *state) {
  vk_state *s = state;
  return s->validation.counting && s->validation.messenger_created;
}

unsigned tb_vk_validation_messages(void *state, char *first, size_t cap) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  unsigned n = s->validation.warnings + s->validation.errors;
  if (first && cap) {
    size_t len = strlen(s->validation.first_message);
    if (len >= cap) len = cap - 1;
    memcpy(first, s->validation.first_message, len);
    first[len] = '\0';
  }
  pthread_mutex_unlock(&s->lock);
  return n;
}
