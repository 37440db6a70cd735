/* Shared by the sub-commands: the error line, status -> exit code, and discovery (see common.h). */
#include "common.h"
#include <stdarg.h>
#include <stdio.h>

void tbc_error(const char *fmt, ...) {
  char msg[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fputs("tb: error: ", stderr);
  for (const char *p = msg; *p; p++) {
    if (*p == '\n') fputs("\\n", stderr);
    else if (*p == '\r') fputs("\\r", stderr);
    else if (*p == '\t') fputs("\\t", stderr);
    else fputc(*p, stderr);
  }
  fputc('\n', stderr);
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
    case TB_ERR_IO:
      return TBC_EXIT_IO;
    default:
      return TBC_EXIT_FAILURE;
  }
}

int tbc_exit_for_file_status(tb_status status) {
  return status == TB_ERR_PERMISSION ? TBC_EXIT_IO : tbc_exit_for_status(status);
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
