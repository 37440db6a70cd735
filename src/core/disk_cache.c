/* The on-disk cache of compiled device code: folder resolution, whole-file reads, atomic writes. */
#define _POSIX_C_SOURCE 200809L
#include "core/disk_cache.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/env.h"
#include "core/error.h"
#include "core/regular_file.h"

enum { MAX_ENTRY_BYTES = 1 << 30 };

static bool valid_name(const char *s) {
  if (!s || !s[0] || strlen(s) > 200) return false;
  for (const char *c = s; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
      return false;
  return s[0] != '.';
}

/* The folder of `kind`, and the variable that named it (*var, *value) for the warnings. */
static tb_status resolve_dir(const char *kind, char *buf, size_t cap, const char **var, const char **value) {
  if (!valid_name(kind)) return tb_error(TB_ERR_INVALID_ARGUMENT, "disk cache: kind '%s' is not a plain name", kind ? kind : "(null)");
  const char *dir = tb_env("TB_CACHE_DIR");
  int n;
  *var = "TB_CACHE_DIR";
  *value = dir;
  if (dir) {
    if (strcmp(dir, "off") == 0 || strcmp(dir, "0") == 0)
      return tb_error(TB_ERR_UNAVAILABLE, "disk cache: switched off by TB_CACHE_DIR=%s", dir);
    if (dir[0] != '/') {
      tb_env_warn("TB_CACHE_DIR", dir, "is not an absolute path, so the on-disk cache of compiled device code is off; set it "
                                       "to an absolute folder, or to 'off'");
      return tb_error(TB_ERR_INVALID_ARGUMENT, "disk cache: TB_CACHE_DIR='%s' is not an absolute path; set it to one, or to 'off'", dir);
    }
    n = snprintf(buf, cap, "%s/%s", dir, kind);
  } else if ((dir = tb_env("XDG_CACHE_HOME")) && dir[0] == '/') {
    *var = "XDG_CACHE_HOME";
    *value = dir;
    n = snprintf(buf, cap, "%s/tensorbridge/%s", dir, kind);
  } else if ((dir = tb_env("HOME")) && dir[0] == '/') {
    *var = "HOME";
    *value = dir;
    n = snprintf(buf, cap, "%s/.cache/tensorbridge/%s", dir, kind);
  } else {
    return tb_error(TB_ERR_UNAVAILABLE, "disk cache: none of TB_CACHE_DIR, XDG_CACHE_HOME and HOME is set to an absolute path");
  }
  if (n < 0 || (size_t)n >= cap) return tb_error(TB_ERR_INVALID_ARGUMENT, "disk cache: the folder path for '%s' is too long", kind);
  return TB_OK;
}

tb_status tb_disk_cache_dir(const char *kind, char *buf, size_t cap) {
  const char *var, *value;
  return resolve_dir(kind, buf, cap, &var, &value);
}

static tb_status entry_path(const char *kind, const char *key, char *buf, size_t cap) {
  if (!valid_name(key)) return tb_error(TB_ERR_INVALID_ARGUMENT, "disk cache: key '%s' is not a plain name", key ? key : "(null)");
  char dir[4096];
  tb_status st = tb_disk_cache_dir(kind, dir, sizeof dir);
  if (st != TB_OK) return st;
  int n = snprintf(buf, cap, "%s/%s", dir, key);
  if (n < 0 || (size_t)n >= cap) return tb_error(TB_ERR_INVALID_ARGUMENT, "disk cache: the path of entry '%s' is too long", key);
  return TB_OK;
}

tb_status tb_disk_cache_read(const char *kind, const char *key, void **data, size_t *size) {
  *data = NULL;
  *size = 0;
  char path[4352];
  tb_status st = entry_path(kind, key, path, sizeof path);
  if (st != TB_OK) return st;
  int fd;
  st = tb_fs_open_regular(path, "disk cache entry", &fd, NULL);
  if (st != TB_OK) {
    if (errno == ENOENT) return tb_error(TB_ERR_NOT_FOUND, "disk cache: no entry %s", path);
    /* unreadable, or a FIFO, a folder... in place of the entry: the user's to fix, so said once */
    tb_warn_once(path, "%s; it is ignored (compiled again, not cached): remove it", tb_last_error());
    return st;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    return tb_error(TB_ERR_IO, "disk cache: cannot read %s: %s", path, strerror(errno));
  }
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || sb.st_size <= 0 || sb.st_size > MAX_ENTRY_BYTES) {
    fclose(f);
    return tb_error(TB_ERR_IO, "disk cache: %s is empty, unreadable or larger than 1 GiB", path);
  }
  void *buf = malloc((size_t)sb.st_size);
  if (!buf) {
    fclose(f);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "disk cache: out of memory reading %lld bytes of %s", (long long)sb.st_size, path);
  }
  size_t got = fread(buf, 1, (size_t)sb.st_size, f);
  fclose(f);
  if (got != (size_t)sb.st_size) {
    free(buf);
    return tb_error(TB_ERR_IO, "disk cache: short read of %s (%zu of %lld bytes)", path, got, (long long)sb.st_size);
  }
  *data = buf;
  *size = got;
  return TB_OK;
}

/* mkdir -p with mode 0700 for the folders it makes. */
static tb_status make_dirs(char *path) {
  for (char *c = path + 1;; c++) {
    if (*c != '/' && *c != '\0') continue;
    char saved = *c;
    *c = '\0';
    int rc = mkdir(path, 0700);
    int err = errno;
    *c = saved;
    if (rc != 0 && err != EEXIST) {
      *c = '\0';
      tb_status st = tb_error(TB_ERR_IO, "disk cache: cannot create folder %s: %s", path, strerror(err));
      *c = saved;
      return st;
    }
    if (saved == '\0') return TB_OK;
  }
}

/* The one rule for a folder that cannot be written (a file, no permission, a read-only file system): one
 * warning per process naming the variable that chose it; the caller goes on without the cache. */
static tb_status unusable_folder(const char *var, const char *value, tb_status st) {
  tb_env_warn(var, value ? value : "", "names a cache folder that cannot be used (%s), so compiled device code is not cached; "
                                       "set TB_CACHE_DIR to an absolute folder you can write, or to 'off'", tb_last_error());
  return st;
}

tb_status tb_disk_cache_write(const char *kind, const char *key, const void *data, size_t size) {
  char path[4352], dir[4096], tmp[4400];
  const char *var = NULL, *value = NULL;
  tb_status st = entry_path(kind, key, path, sizeof path);
  if (st == TB_OK) st = resolve_dir(kind, dir, sizeof dir, &var, &value);
  if (st != TB_OK) return st;
  if ((st = make_dirs(dir)) != TB_OK) return unusable_folder(var, value, st);
  snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, key);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    tb_error(TB_ERR_IO, "disk cache: cannot create a file in %s: %s", dir, strerror(errno));
    return unusable_folder(var, value, TB_ERR_IO);
  }
  const char *p = data;
  size_t left = size;
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      unlink(tmp);
      return tb_error(TB_ERR_IO, "disk cache: cannot write %s: %s", tmp, n < 0 ? strerror(err) : "no progress");
    }
    p += n;
    left -= (size_t)n;
  }
  if (close(fd) != 0 || rename(tmp, path) != 0) {
    int err = errno;
    unlink(tmp);
    return tb_error(TB_ERR_IO, "disk cache: cannot store %s: %s", path, strerror(err));
  }
  return TB_OK;
}
