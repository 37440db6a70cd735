/* The CPU backend's memory ops (tb_cpu_ops): raw allocations are 64-byte aligned host memory, copies are
 * memmove, synchronize has nothing to wait for, and free/total memory come from the CPU device that
 * discovery described (cgroup-aware), falling back to sysconf. Its find_kernel is the CPU kernel registry's
 * choice (backend/cpu/kernels/registry.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "backend/cpu/kernels/kernel.h"
#include "core/error.h"

#define CPU_ALIGNMENT 64

typedef struct cpu_state {
  char device[32];
  uint64_t total;
  bool total_known;
  uint64_t free_at_open;
  bool free_known;
} cpu_state;

static uint64_t sysconf_bytes(int name) {
  long pages = sysconf(name), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static tb_status cpu_open(const tb_device_info *device, void **state) {
  cpu_state *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "cpu backend: out of host memory while opening the device");
  snprintf(s->device, sizeof s->device, "%s", device && device->device ? device->device : "cpu:0");
  if (device && device->memory_total_known) {
    s->total = device->memory_total;
    s->total_known = true;
  } else {
    s->total = sysconf_bytes(_SC_PHYS_PAGES);
    s->total_known = s->total > 0;
  }
  if (device && device->memory_free_known) {
    s->free_at_open = device->memory_free;
    s->free_known = true;
  }
  *state = s;
  return TB_OK;
}

static void cpu_close(void *state) { free(state); }

static size_t cpu_alignment(void *state) {
  (void)state;
  return CPU_ALIGNMENT;
}

static tb_status cpu_alloc(void *state, size_t bytes, tb_devmem *out) {
  cpu_state *s = state;
  out->handle = NULL;
  out->size = 0;
  /* A request above the machine's memory can never succeed; refusing it here also keeps sanitizer
   * allocators (which abort on absurd sizes) out of the way. */
  if (s->total_known && bytes > s->total)
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes: the machine has %llu bytes of memory",
                    s->device, bytes, (unsigned long long)s->total);
  void *p = NULL;
  int rc = posix_memalign(&p, CPU_ALIGNMENT, bytes ? bytes : 1);
  if (rc != 0 || !p)
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: posix_memalign of %zu bytes failed (%s)", s->device, bytes,
                    strerror(rc ? rc : ENOMEM));
  out->handle = p;
  out->size = bytes;
  return TB_OK;
}

static void cpu_free(void *state, tb_devmem mem) {
  (void)state;
  free(mem.handle);
}

static tb_status cpu_write(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes) {
  (void)state;
  if (bytes) memmove((char *)dst.handle + dst_offset, src, bytes);
  return TB_OK;
}

static tb_status cpu_read(void *state, tb_devmem src, size_t src_offset, void *dst, size_t bytes) {
  (void)state;
  if (bytes) memmove(dst, (const char *)src.handle + src_offset, bytes);
  return TB_OK;
}

static tb_status cpu_copy(void *state, tb_devmem dst, size_t dst_offset, tb_devmem src, size_t src_offset, size_t bytes) {
  (void)state;
  if (bytes) memmove((char *)dst.handle + dst_offset, (const char *)src.handle + src_offset, bytes);
  return TB_OK;
}

static tb_status cpu_fill(void *state, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size, size_t bytes) {
  cpu_state *s = state;
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: fill pattern of %zu bytes; it must be 1, 2, 4 or 8", s->device,
                    pattern_size);
  if (bytes % pattern_size)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: fill of %zu bytes is not a multiple of the %zu-byte pattern",
                    s->device, bytes, pattern_size);
  unsigned char *p = (unsigned char *)dst.handle + offset;
  if (pattern_size == 1) {
    memset(p, *(const unsigned char *)pattern, bytes);
    return TB_OK;
  }
  if (bytes == 0) return TB_OK;
  /* Write one pattern, then double the filled prefix until the range is covered. */
  memcpy(p, pattern, pattern_size);
  size_t done = pattern_size;
  while (done < bytes) {
    size_t n = done < bytes - done ? done : bytes - done;
    memcpy(p + done, p, n);
    done += n;
  }
  return TB_OK;
}

static tb_status cpu_synchronize(void *state) {
  (void)state;
  return TB_OK;
}

static tb_status cpu_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  cpu_state *s = state;
  if (!s->total_known) return tb_error(TB_ERR_UNSUPPORTED, "%s: the machine's memory size is unknown", s->device);
  uint64_t avail = s->free_known ? s->free_at_open : sysconf_bytes(_SC_AVPHYS_PAGES);
  *free_bytes = avail < s->total ? avail : s->total;
  *total_bytes = s->total;
  return TB_OK;
}

static void *cpu_host_pointer(void *state, tb_devmem mem) {
  (void)state;
  return mem.handle;
}

static const tb_kernel *cpu_find_kernel(void *state, const tb_kernel_query *q) {
  (void)state;
  return tb_cpu_kernel_find(q);
}

const tb_backend_ops tb_cpu_ops = {
    .kind = TB_BACKEND_CPU,
    .open = cpu_open,
    .close = cpu_close,
    .alignment = cpu_alignment,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .write = cpu_write,
    .read = cpu_read,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .synchronize = cpu_synchronize,
    .memory_info = cpu_memory_info,
    .host_pointer = cpu_host_pointer,
    .find_kernel = cpu_find_kernel,
};
