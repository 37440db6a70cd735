/* File-system reads under a movable root (TB_FSROOT), with parsing helpers for sysfs-style files. */
#include "core/fs.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/env.h"
#include "core/regular_file.h"

/* A TB_FSROOT that is not a folder is warned about (once per value); reads under it then find nothing,
 * as under an empty tree: it is never silently replaced by the real system. */
static void check_root(const char *root) {
  static _Thread_local char checked[512];
  if (strncmp(checked, root, sizeof checked) == 0) return;
  snprintf(checked, sizeof checked, "%s", root);
  struct stat sb;
  if (stat(root, &sb) != 0)
    tb_env_warn("TB_FSROOT", root, "cannot be used: %s; set it to a folder that holds a recorded sys/proc/dev tree, or "
                                   "unset it for the real system (every read under it finds nothing)", strerror(errno));
  else if (!S_ISDIR(sb.st_mode))
    tb_env_warn("TB_FSROOT", root, "is %s, not a folder; set it to a folder that holds a recorded sys/proc/dev tree, or "
                                   "unset it for the real system (every read under it finds nothing)", tb_fs_kind_name(sb.st_mode));
}

const char *tb_fs_root(void) {
  const char *root = tb_env("TB_FSROOT");
  if (!root) return "";
  check_root(root);
  return root;
}

bool tb_fs_path(char *out, size_t cap, const char *path) {
  int n = snprintf(out, cap, "%s%s", tb_fs_root(), path);
  return n >= 0 && (size_t)n < cap;
}

bool tb_fs_read(const char *path, char *buf, size_t cap) {
  char full[4096];
  if (cap == 0 || !tb_fs_path(full, sizeof full, path)) return false;
  int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO in a recorded tree reads as empty, never blocks */
  if (fd < 0) return false;
  size_t len = 0;
  while (len + 1 < cap) {
    ssize_t r = read(fd, buf + len, cap - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  close(fd);
  buf[len] = '\0';
  while (len > 0 && isspace((unsigned char)buf[len - 1])) buf[--len] = '\0';
  return len > 0;
}

bool tb_parse_u64(const char *s, uint64_t *out) {
  if (!s) return false;
  while (isspace((unsigned char)*s)) s++;
  if (!*s || *s == '-' || *s == '+') return false;
  errno = 0;
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno != 0 || end == s) return false;
  while (isspace((unsigned char)*end)) end++;
  if (*end) return false;
  *out = (uint64_t)v;
  return true;
}

bool tb_fs_read_u64(const char *path, uint64_t *out) {
  char buf[64];
  return tb_fs_read(path, buf, sizeof buf) && tb_parse_u64(buf, out);
}

bool tb_fs_exists(const char *path) {
  char full[4096];
  return tb_fs_path(full, sizeof full, path) && access(full, F_OK) == 0;
}

int tb_fs_access(const char *path, int mode) {
  char full[4096];
  if (!tb_fs_path(full, sizeof full, path)) return ENAMETOOLONG;
  return access(full, mode) == 0 ? 0 : errno;
}

bool tb_fs_link_name(const char *path, char *buf, size_t cap) {
  char full[4096], target[4096];
  if (!tb_fs_path(full, sizeof full, path)) return false;
  ssize_t n = readlink(full, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  const char *base = strrchr(target, '/');
  base = base ? base + 1 : target;
  if (strlen(base) >= cap) return false;
  strcpy(buf, base);
  return true;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

bool tb_fs_list(const char *dir, char ***names, size_t *count) {
  char full[4096];
  *names = NULL;
  *count = 0;
  if (!tb_fs_path(full, sizeof full, dir)) return false;
  DIR *d = opendir(full);
  if (!d) return false;
  size_t n = 0, cap = 0;
  char **list = NULL;
  struct dirent *e;
  bool ok = true;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (n == cap) {
      size_t ncap = cap ? cap * 2 : 16;
      char **grown = realloc(list, ncap * sizeof *grown);
      if (!grown) { ok = false; break; }
      list = grown;
      cap = ncap;
    }
    list[n] = strdup(e->d_name);
    if (!list[n]) { ok = false; break; }
    n++;
  }
  closedir(d);
  if (!ok) {
    tb_fs_free_names(list, n);
    return false;
  }
  if (n) qsort(list, n, sizeof *list, compare_names);
  *names = list;
  *count = n;
  return true;
}

void tb_fs_free_names(char **names, size_t count) {
  for (size_t i = 0; i < count; i++) free(names[i]);
  free(names);
}

bool tb_kv_find(const char *text, const char *key, char *out, size_t cap) {
  size_t klen = strlen(key);
  const char *line = text;
  while (line && *line) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    if (len > klen && strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == '=' || line[klen] == '\t')) {
      const char *v = line + klen + 1;
      const char *end = line + len;
      while (v < end && (*v == ' ' || *v == '\t')) v++;
      while (end > v && isspace((unsigned char)end[-1])) end--;
      size_t vlen = (size_t)(end - v);
      if (vlen >= cap) vlen = cap - 1;
      memcpy(out, v, vlen);
      out[vlen] = '\0';
      return true;
    }
    line = eol ? eol + 1 : NULL;
  }
  return false;
}

bool tb_kv_u64(const char *text, const char *key, uint64_t *out) {
  char v[64];
  return tb_kv_find(text, key, v, sizeof v) && tb_parse_u64(v, out);
}
