/* The device-memory ops shared by the CUDA, HIP and Level Zero backends (see devmem_ops.h). */
#include "backend/devmem_ops.h"
#include <string.h>
#include "backend/devmem_check.h"
#include "core/error.h"

static uintptr_t device_address(tb_devmem mem, size_t offset) { return (uintptr_t)mem.handle + offset; }

tb_status tb_devmem_call_failed(const tb_devmem_state *s, const char *call, const char *what, int64_t code,
                                const char *then) {
  char name[96];
  s->vendor->error_name(s, code, name, sizeof name);
  tb_status status = s->vendor->out_of_memory(code) ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER;
  return tb_error(status, "%s: %s%s%s failed with %s%s", s->label, call, what[0] ? " " : "", what, name, then);
}

size_t tb_devmem_alignment(void *state) {
  const tb_devmem_state *s = state;
  return s->vendor->alignment;
}

tb_status tb_devmem_alloc(void *state, size_t bytes, tb_devmem *out) {
  const tb_devmem_state *s = state;
  uintptr_t address = 0;
  tb_status st = s->vendor->alloc(state, bytes, &address);
  if (st != TB_OK) return st;
  out->handle = (void *)address;
  out->size = bytes;
  return TB_OK;
}

void tb_devmem_free(void *state, tb_devmem mem) {
  const tb_devmem_state *s = state;
  s->vendor->free(state, device_address(mem, 0));
}

tb_status tb_devmem_write(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes) {
  const tb_devmem_state *s = state;
  tb_status st = tb_devmem_check(s->label, "write", dst, dst_offset, bytes);
  if (st != TB_OK || bytes == 0) return st;
  return s->vendor->copy(state, TB_DEVMEM_HOST_TO_DEVICE, device_address(dst, dst_offset), (uintptr_t)src, bytes,
                         dst_offset);
}

tb_status tb_devmem_read(void *state, tb_devmem src, size_t src_offset, void *dst, size_t bytes) {
  const tb_devmem_state *s = state;
  tb_status st = tb_devmem_check(s->label, "read", src, src_offset, bytes);
  if (st != TB_OK || bytes == 0) return st;
  return s->vendor->copy(state, TB_DEVMEM_DEVICE_TO_HOST, (uintptr_t)dst, device_address(src, src_offset), bytes,
                         src_offset);
}

tb_status tb_devmem_copy(void *state, tb_devmem dst, size_t dst_offset, tb_devmem src, size_t src_offset,
                         size_t bytes) {
  const tb_devmem_state *s = state;
  tb_status st = tb_devmem_check(s->label, "copy destination", dst, dst_offset, bytes);
  if (st == TB_OK) st = tb_devmem_check(s->label, "copy source", src, src_offset, bytes);
  if (st != TB_OK || bytes == 0) return st;
  return s->vendor->copy(state, TB_DEVMEM_DEVICE_TO_DEVICE, device_address(dst, dst_offset),
                         device_address(src, src_offset), bytes, dst_offset);
}

/* A driver without 8-byte fills takes an 8-byte pattern of two equal halves as a 4-byte one; other
 * 8-byte patterns and fills at an address the pattern does not divide go through a host buffer. */
tb_status tb_devmem_fill(void *state, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size,
                         size_t bytes) {
  const tb_devmem_state *s = state;
  tb_status checked = tb_fill_check(s->label, pattern, pattern_size, bytes);
  if (checked != TB_OK) return checked;
  if (!tb_devmem_in_range(dst, offset, bytes)) return tb_devmem_range_error(s->label, "fill", offset, bytes, dst.size);
  if (bytes == 0) return TB_OK;
  unsigned char p[8];
  memcpy(p, pattern, pattern_size);
  uintptr_t at = device_address(dst, offset);
  if (!s->vendor->fill_any_pattern) {
    if (pattern_size == 8 && memcmp(p, p + 4, 4) == 0) pattern_size = 4;
    if (pattern_size == 8 || at % pattern_size != 0)
      return tb_fill_through_host(s->label, tb_devmem_write, state, dst, offset, pattern, pattern_size, bytes);
  }
  return s->vendor->fill(state, at, p, pattern_size, bytes, offset);
}

tb_status tb_devmem_synchronize(void *state) {
  const tb_devmem_state *s = state;
  return s->vendor->synchronize(state);
}

tb_status tb_devmem_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  const tb_devmem_state *s = state;
  return s->vendor->memory_info(state, free_bytes, total_bytes);
}

tb_status tb_devmem_wrap_foreign(void *state, uintptr_t address, size_t bytes, bool managed, tb_devmem *out) {
  const tb_devmem_state *s = state;
  if (!s->vendor->check_foreign)
    return tb_error(TB_ERR_UNSUPPORTED, "%s: device memory that another library allocated cannot be imported: %s",
                    s->label, s->vendor->foreign_refusal ? s->vendor->foreign_refusal : "the driver cannot check it");
  tb_status st = s->vendor->check_foreign(state, address, bytes, managed);
  if (st != TB_OK) return st;
  out->handle = (void *)address;
  out->size = bytes;
  return TB_OK;
}
