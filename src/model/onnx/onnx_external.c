/* External data: a tensor's bytes in another file next to the model. The location must be a relative
 * path inside the model's folder (no absolute path, no "..", no symlink leading out: the resolved real
 * path is checked), the offset and length inside the file. Each file is mapped once, read-only. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/regular_file.h"
#include "model/onnx/onnx_internal.h"
#include "model/weights.h"

void tb_onnx_mappings_release(tb_onnx_mappings *maps) {
  if (!maps) return;
  for (size_t i = 0; i < maps->count; i++) {
    if (maps->items[i].addr) munmap(maps->items[i].addr, maps->items[i].size);
    free(maps->items[i].path);
  }
  free(maps->items);
  maps->items = NULL;
  maps->count = maps->cap = 0;
}

static bool has_dotdot(const char *p) {
  while (*p) {
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.') return true;
    if (!slash) break;
    p = slash + 1;
  }
  return false;
}

static tb_status map_file(const onnx_ctx *c, const char *where, const char *real, const char *location,
                          const tb_onnx_mapping **out) {
  tb_onnx_mappings *maps = c->external;
  for (size_t i = 0; i < maps->count; i++)
    if (!strcmp(maps->items[i].path, real)) {
      *out = &maps->items[i];
      return TB_OK;
    }
  int fd;
  struct stat st;
  if (tb_fs_open_regular(real, "external data file", &fd, &st) != TB_OK) {
    int e = errno;
    if (e == 0) /* it exists but is a folder, a FIFO, a device... */
      return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data '%.200s' is not a regular file (%s)", location,
                       tb_last_error());
    return tb_onnx_fail(c, e == EACCES ? TB_ERR_PERMISSION : TB_ERR_IO, where, "external data file '%.200s' cannot be opened: %s",
                     location, strerror(e));
  }
  void *addr = NULL;
  size_t size = (size_t)st.st_size;
  if (size > 0) {
    addr = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      int e = errno;
      close(fd);
      return tb_onnx_fail(c, TB_ERR_IO, where, "external data file '%.200s' cannot be mapped: %s", location, strerror(e));
    }
    madvise(addr, size, MADV_NOHUGEPAGE); /* touch by touch, not 2 MiB at a time (model.c) */
  }
  close(fd);
  if (maps->count == maps->cap) {
    size_t cap = maps->cap ? maps->cap * 2 : 4;
    tb_onnx_mapping *items = realloc(maps->items, cap * sizeof *items);
    if (!items) {
      if (addr) munmap(addr, size);
      return tb_onnx_oom(c, where);
    }
    maps->items = items;
    maps->cap = cap;
  }
  char *path = strdup(real);
  if (!path) {
    if (addr) munmap(addr, size);
    return tb_onnx_oom(c, where);
  }
  maps->items[maps->count] = (tb_onnx_mapping){.path = path, .addr = addr, .size = size};
  if (addr) tb_weights_register(c->m, addr, size); /* unregistered with the model, before the unmap */
  *out = &maps->items[maps->count++];
  return TB_OK;
}

tb_status tb_onnx_external_bytes(const onnx_ctx *c, const char *where, const char *location, uint64_t offset,
                              bool has_length, uint64_t length, size_t expected, const uint8_t **out) {
  *out = NULL;
  if (!c->base_dir || !c->external)
    return tb_onnx_fail(c, TB_ERR_MODEL, where,
                     "has external data '%.200s' but the model was loaded from memory without a folder for it",
                     location);
  if (!*location) return tb_onnx_fail(c, TB_ERR_MODEL, where, "external_data location is empty");
  if (location[0] == '/')
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data path '%.200s' is absolute; it must be relative to the model's folder",
                     location);
  if (has_dotdot(location))
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data path '%.200s' contains '..'; it must stay inside the model's folder",
                     location);
  char joined[PATH_MAX];
  if ((size_t)snprintf(joined, sizeof joined, "%s/%s", c->base_dir, location) >= sizeof joined)
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data path '%.200s' is too long", location);
  char real_dir[PATH_MAX], real[PATH_MAX];
  if (!realpath(c->base_dir, real_dir))
    return tb_onnx_fail(c, TB_ERR_IO, where, "the model's folder '%.200s' cannot be resolved: %s", c->base_dir,
                     strerror(errno));
  if (!realpath(joined, real))
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data file '%.200s' (in '%.200s') cannot be found: %s", location,
                     c->base_dir, strerror(errno));
  size_t dn = strlen(real_dir);
  bool inside = strncmp(real, real_dir, dn) == 0 && (real[dn] == '/' || (dn == 1 && real_dir[0] == '/'));
  if (!inside)
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data path '%.200s' resolves to '%.200s', outside the model's folder",
                     location, real);
  const tb_onnx_mapping *map = NULL;
  tb_status st = map_file(c, where, real, location, &map);
  if (st != TB_OK) return st;
  if (offset > map->size)
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data offset %llu is beyond the end of '%.200s' (%zu bytes)",
                     (unsigned long long)offset, location, map->size);
  uint64_t need = has_length ? length : expected;
  if (need > map->size - offset)
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "external data '%.200s' has %llu bytes after offset %llu, %llu needed",
                     location, (unsigned long long)(map->size - offset), (unsigned long long)offset,
                     (unsigned long long)need);
  *out = map->addr ? (const uint8_t *)map->addr + offset : (const uint8_t *)"";
  return TB_OK;
}
