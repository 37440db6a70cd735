/* Shared by the sub-commands: the error line, status -> exit code, and discovery (see common.h). */
#include "common.h"
#include <stdarg.h>
#include <stdio.h>

void tbc_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("tb: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int tbc_exit_for_status(tb_status status) {
  switch (status) {
    case TB_OK:
      return TBC_EXIT_OK;
    case TB_ERR_INVALID_ARGUMENT:
    case TB_ERR_NOT_FOUND:
      return TBC_EXIT_USAGE;
    case TB_ERR_UNAVAILABLE:
    case TB_ERR_PERMISSION:
      return TBC_EXIT_UNAVAILABLE;
    default:
      return TBC_EXIT_FAILURE;
  }
}

int tbc_discover(tb_device_list **out_list) {
  *out_list = NULL;
  tb_status status = tb_discover(NULL, out_list);
  if (status != TB_OK) {
    tbc_error("device discovery failed (%s): %s", tb_status_str(status), tb_last_error());
    return TBC_EXIT_FAILURE;
  }
  return TBC_EXIT_OK;
}
