/* Internal: setting the thread's last-error text. */
#ifndef TB_CORE_ERROR_H
#define TB_CORE_ERROR_H
#include <tensorbridge/status.h>

/* The size of the thread's last-error buffer (bytes, with the terminating 0): a copy of the sentence this large is whole. */
#define TB_ERROR_CAP 1024

/* Record `status` and the formatted sentence as this thread's last error; returns `status`. */
tb_status tb_error(tb_status status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
