/* Internal: the on-disk cache of compiled device code (OpenCL program binaries, Vulkan pipeline caches).
 *
 * The folder is TB_CACHE_DIR when set, else $XDG_CACHE_HOME/tensorbridge, else $HOME/.cache/tensorbridge;
 * TB_CACHE_DIR=off switches the cache off. Each user of the cache has a subfolder (its `kind`: "opencl",
 * "vulkan"), made on first write with mode 0700. Entries are files named by a key the caller derives from
 * everything the content depends on (device, driver version, source hash). Writes go to a temporary file
 * renamed into place, so a reader never sees half an entry and concurrent writers do not collide. The
 * cache is an optimisation: a caller treats every failure as a miss and goes on. */
#ifndef TB_CORE_DISK_CACHE_H
#define TB_CORE_DISK_CACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/status.h>

/* The folder of `kind` into buf. TB_ERR_UNAVAILABLE when the cache is off (TB_CACHE_DIR=off) or no
 * folder can be named (no TB_CACHE_DIR, XDG_CACHE_HOME or HOME); TB_ERR_INVALID_ARGUMENT when the path
 * does not fit or TB_CACHE_DIR is relative. */
tb_status tb_disk_cache_dir(const char *kind, char *buf, size_t cap);
/* The entry's bytes in a malloc'd buffer the caller frees. TB_ERR_NOT_FOUND when absent. */
tb_status tb_disk_cache_read(const char *kind, const char *key, void **data, size_t *size);
/* Store the entry, replacing an older one. */
tb_status tb_disk_cache_write(const char *kind, const char *key, const void *data, size_t size);

#endif
