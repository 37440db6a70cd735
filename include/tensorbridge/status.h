/* Status codes and the per-thread text of the last error.
 *
 * Every call that can fail returns a tb_status. When it is not TB_OK, tb_last_error() gives a sentence
 * that names the thing, the value and what to do. The text belongs to the calling thread and stays
 * valid until that thread's next failing call into the library. */
#ifndef TENSORBRIDGE_STATUS_H
#define TENSORBRIDGE_STATUS_H
#include <stddef.h>
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_status {
  TB_OK = 0,
  TB_ERR_INVALID_ARGUMENT = 1, /* a NULL where a value is needed, a value out of range, a bad name */
  TB_ERR_NOT_FOUND = 2,        /* a named backend, device, file or key does not exist */
  TB_ERR_UNAVAILABLE = 3,      /* it exists but cannot be used here: no driver, no device, no permission */
  TB_ERR_DRIVER = 4,           /* a vendor runtime returned an error; the message has its code and name */
  TB_ERR_OUT_OF_MEMORY = 5,    /* host or device memory exhausted; the message has the sizes */
  TB_ERR_MODEL = 6,            /* a model file is malformed or uses something not supported */
  TB_ERR_UNSUPPORTED = 7,      /* a valid request this build or device cannot do */
  TB_ERR_IO = 8,               /* a file could not be read or written */
  TB_ERR_PERMISSION = 9,       /* the OS refused access (a /dev node, a file) */
  TB_ERR_INTERNAL = 10         /* a bug in TensorBridge: please report it with the message */
} tb_status;

/* The name of a status, e.g. "TB_ERR_NOT_FOUND". Never NULL; unknown values give "TB_ERR_UNKNOWN". */
TB_API const char *tb_status_str(tb_status status);

/* The sentence describing this thread's last failure, or "" when none. Never NULL. */
TB_API const char *tb_last_error(void);

/* Forget this thread's last error. */
TB_API void tb_clear_error(void);

/* The library version, "MAJOR.MINOR.PATCH". */
TB_API const char *tb_version(void);

/* SHA-256 of data[0, size) as 64 lowercase hex digits and a NUL (model hashes, output checksums). */
TB_API void tb_sha256_hex(const void *data, size_t size, char out_hex[65]);

/* Free memory the library returned to the caller (JSON text, explanations). NULL is allowed. */
TB_API void tb_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
