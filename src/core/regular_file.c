/* Opening user-named files for reading: O_NONBLOCK so that a FIFO or a device cannot stall the open, then
 * fstat to refuse anything but a regular file, then back to blocking reads. */
#include "core/regular_file.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "core/error.h"

const char *tb_fs_kind_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

tb_status tb_fs_open_regular(const char *path, const char *what, int *fd, struct stat *info) {
  *fd = -1;
  if (!what) what = "file";
  if (!path || !path[0]) {
    tb_error(TB_ERR_INVALID_ARGUMENT, "no path was given for the %s; name a file", what);
    errno = ENOENT;
    return TB_ERR_INVALID_ARGUMENT;
  }
  int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (f < 0) {
    int e = errno;
    tb_status st = e == ENOENT || e == ENOTDIR ? TB_ERR_NOT_FOUND : e == EACCES || e == EPERM ? TB_ERR_PERMISSION : TB_ERR_IO;
    tb_error(st, "cannot open the %s %s: %s", what, path, strerror(e));
    errno = e;
    return st;
  }
  struct stat sb;
  if (fstat(f, &sb) != 0) {
    int e = errno;
    close(f);
    tb_error(TB_ERR_IO, "cannot read the type of the %s %s: %s", what, path, strerror(e));
    errno = e;
    return TB_ERR_IO;
  }
  if (!S_ISREG(sb.st_mode)) {
    close(f);
    tb_error(TB_ERR_INVALID_ARGUMENT, "the %s %s is %s, not a regular file; give the path of a file", what, path,
             tb_fs_kind_name(sb.st_mode));
    errno = 0;
    return TB_ERR_INVALID_ARGUMENT;
  }
  int flags = fcntl(f, F_GETFL);
  if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    int e = errno;
    close(f);
    tb_error(TB_ERR_IO, "cannot switch the %s %s to blocking reads: %s", what, path, strerror(e));
    errno = e;
    return TB_ERR_IO;
  }
  *fd = f;
  if (info) *info = sb;
  return TB_OK;
}
