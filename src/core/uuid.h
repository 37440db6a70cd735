/* Internal: the text forms of the 16-byte UUIDs drivers report for devices and drivers. */
#ifndef TB_CORE_UUID_H
#define TB_CORE_UUID_H
#include <stddef.h>
#include <stdint.h>

#define TB_UUID_BYTES 16
#define TB_UUID_TEXT_SIZE 37 /* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and its terminator */
#define TB_UUID_HEX_SIZE 33  /* 32 hex digits and the terminator */

/* The usual 8-4-4-4-12 form, lowercase. */
void tb_uuid_format(const uint8_t bytes[TB_UUID_BYTES], char out[TB_UUID_TEXT_SIZE]);
/* 32 lowercase hex digits, no dashes (how Level Zero's UUIDs are shown). */
void tb_uuid_format_hex(const uint8_t bytes[TB_UUID_BYTES], char out[TB_UUID_HEX_SIZE]);
/* tb_uuid_format into out, or "" when every byte is zero (the driver has no UUID for it) or cap is
 * under TB_UUID_TEXT_SIZE (nothing rather than a cut UUID). */
void tb_uuid_text(const uint8_t bytes[TB_UUID_BYTES], char *out, size_t cap);

#endif
