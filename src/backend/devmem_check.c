/* Range and fill-pattern checks shared by the backends' memory ops, and the host-buffer fill. */
#include "backend/devmem_check.h"
#include <stdlib.h>
#include <string.h>
#include "core/error.h"

enum { FILL_CHUNK = 1u << 20 };

bool tb_devmem_in_range(tb_devmem mem, size_t offset, size_t bytes) {
  return offset <= mem.size && bytes <= mem.size - offset;
}

tb_status tb_devmem_range_error(const char *label, const char *what, size_t offset, size_t bytes, size_t size) {
  return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %s of %zu bytes at offset %zu lies outside an allocation of %zu bytes",
                  label, what, bytes, offset, size);
}

tb_status tb_devmem_check(const char *label, const char *what, tb_devmem mem, size_t offset, size_t bytes) {
  return tb_devmem_in_range(mem, offset, bytes) ? TB_OK : tb_devmem_range_error(label, what, offset, bytes, mem.size);
}

tb_status tb_fill_check(const char *label, const void *pattern, size_t pattern_size, size_t bytes) {
  if (!pattern || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: fill pattern of %zu bytes; 1, 2, 4 or 8 are supported", label,
                    pattern ? pattern_size : 0);
  if (bytes % pattern_size != 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: fill of %zu bytes is not a multiple of its %zu-byte pattern", label,
                    bytes, pattern_size);
  return TB_OK;
}

tb_status tb_fill_through_host(const char *label, tb_devmem_write_fn write, void *state, tb_devmem dst, size_t offset,
                               const void *pattern, size_t pattern_size, size_t bytes) {
  size_t chunk = bytes < FILL_CHUNK ? bytes : FILL_CHUNK / pattern_size * pattern_size;
  if (chunk == 0) return TB_OK;
  unsigned char *buf = malloc(chunk);
  if (!buf) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for a %zu-byte fill buffer", label, chunk);
  for (size_t i = 0; i < chunk; i += pattern_size) memcpy(buf + i, pattern, pattern_size);
  tb_status st = TB_OK;
  for (size_t done = 0; done < bytes && st == TB_OK; done += chunk) {
    size_t n = bytes - done < chunk ? bytes - done : chunk;
    st = write(state, dst, offset + done, buf, n);
  }
  free(buf);
  return st;
}
