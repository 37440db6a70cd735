/* Text renderings for people: byte counts ("79.6 GiB"), a device's memory ("75.2/79.6 GiB"), and
 * lists of dtypes and features. Every function writes a NUL-terminated string that fits in `size`. */
#ifndef TB_CLI_FORMAT_H
#define TB_CLI_FORMAT_H
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensorbridge.h>

/* "0 B", "1023 B", "1.0 KiB", "79.6 GiB" (binary units, one decimal from KiB up). */
void tbc_format_bytes(uint64_t bytes, char *buf, size_t size);

/* "75.2/79.6 GiB" when free and total are known (free in the unit of total), "79.6 GiB" when only
 * the total is, "75.2 GiB free" when only free is, "-" when neither is. */
void tbc_format_memory(const tb_device_info *device, char *buf, size_t size);

/* Names of the features set in `features`, in enum order, joined by `separator`; "-" when none. */
void tbc_format_features(uint64_t features, const char *separator, char *buf, size_t size);

/* Names of the dtypes in `dtypes`, in enum order, joined by `separator`; "-" when none. */
void tbc_format_dtypes(tb_dtype_set dtypes, const char *separator, char *buf, size_t size);

/* s on one line: a newline or carriage return in it (a model's name may hold any byte) written as \n or
 * \r, so that it cannot fake a line of output; returns buf. Other control bytes are escaped on the way
 * out (safe_output.c). */
const char *tbc_one_line(const char *s, char *buf, size_t size);

/* s, or "-" when s is NULL or empty. */
const char *tbc_or_dash(const char *s);

#endif
