/* `tb run --output-dir D`: the folder is made as `mkdir -p` makes it (every missing parent, with the mode
 * the umask leaves); a component that is a file, or a folder that cannot be made, is an error naming it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "common.h"
#include "run.h"

/* The exit code for a failed mkdir, as for the other files tb run writes (tb_npy_save's statuses). */
static int mkdir_failed(const char *dir, const char *part, int err) {
  if (err == ENOTDIR)
    tbc_error("--output-dir %s: %s is a file, not a folder; give a folder path whose parts are folders", dir, part);
  else
    tbc_error("--output-dir %s: cannot create the folder %s: %s; give a folder you can write to", dir, part,
              strerror(err));
  return tbc_exit_for_file_status(err == EACCES || err == EPERM ? TB_ERR_PERMISSION : TB_ERR_IO);
}

/* 0 when path is a folder (made now if missing), else the errno (ENOTDIR: it is something else). */
static int folder_exists_or_made(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    if (errno != ENOENT) return errno;
    if (mkdir(path, 0777) == 0) return 0;
    if (errno != EEXIST) return errno;
    if (stat(path, &sb) != 0) return errno; /* made meanwhile by another process, or a dangling link */
  }
  return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
}

int tbc_make_output_dir(const char *dir) {
  char path[4096];
  size_t len = strlen(dir);
  if (len == 0 || len >= sizeof path) {
    tbc_error("--output-dir: the path is %zu characters long; give one of 1 to %zu", len, sizeof path - 1);
    return TBC_EXIT_USAGE;
  }
  memcpy(path, dir, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (path[i] != '/' && path[i] != '\0') continue;
    if (path[i - 1] == '/') continue; /* "a//b" and a trailing '/' */
    char saved = path[i];
    path[i] = '\0';
    int err = folder_exists_or_made(path);
    if (err != 0) return mkdir_failed(dir, path, err);
    path[i] = saved;
  }
  return TBC_EXIT_OK;
}
