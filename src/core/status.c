/* Status names and the thread-local last-error text. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <tb_version.h>
#include "core/error.h"

static _Thread_local char last_error[TB_ERROR_CAP];

const char *tb_status_str(tb_status status) {
  switch (status) {
    case TB_OK: return "TB_OK";
    case TB_ERR_INVALID_ARGUMENT: return "TB_ERR_INVALID_ARGUMENT";
    case TB_ERR_NOT_FOUND: return "TB_ERR_NOT_FOUND";
    case TB_ERR_UNAVAILABLE: return "TB_ERR_UNAVAILABLE";
    case TB_ERR_DRIVER: return "TB_ERR_DRIVER";
    case TB_ERR_OUT_OF_MEMORY: return "TB_ERR_OUT_OF_MEMORY";
    case TB_ERR_MODEL: return "TB_ERR_MODEL";
    case TB_ERR_UNSUPPORTED: return "TB_ERR_UNSUPPORTED";
    case TB_ERR_IO: return "TB_ERR_IO";
    case TB_ERR_PERMISSION: return "TB_ERR_PERMISSION";
    case TB_ERR_INTERNAL: return "TB_ERR_INTERNAL";
  }
  return "TB_ERR_UNKNOWN";
}

const char *tb_last_error(void) { return last_error; }

void tb_clear_error(void) { last_error[0] = '\0'; }

tb_status tb_error(tb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return status;
}

const char *tb_version(void) { return TB_VERSION_STRING; }

void tb_free(void *ptr) { free(ptr); }
