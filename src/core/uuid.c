/* UUID bytes to text (see uuid.h). */
#include "core/uuid.h"
#include <stdbool.h>
#include <stdio.h>

void tb_uuid_format(const uint8_t bytes[TB_UUID_BYTES], char out[TB_UUID_TEXT_SIZE]) {
  size_t n = 0;
  for (int i = 0; i < TB_UUID_BYTES; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[n++] = '-';
    n += (size_t)snprintf(out + n, TB_UUID_TEXT_SIZE - n, "%02x", bytes[i]);
  }
}

void tb_uuid_format_hex(const uint8_t bytes[TB_UUID_BYTES], char out[TB_UUID_HEX_SIZE]) {
  for (int i = 0; i < TB_UUID_BYTES; i++) snprintf(out + 2 * i, TB_UUID_HEX_SIZE - 2 * (size_t)i, "%02x", bytes[i]);
}

void tb_uuid_text(const uint8_t bytes[TB_UUID_BYTES], char *out, size_t cap) {
  bool any = false;
  for (int i = 0; i < TB_UUID_BYTES; i++) any = any || bytes[i];
  if (!any || cap < TB_UUID_TEXT_SIZE) {
    if (cap) out[0] = '\0';
    return;
  }
  tb_uuid_format(bytes, out);
}
