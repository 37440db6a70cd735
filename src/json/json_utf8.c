/* Internal: JSON text that is always UTF-8. cJSON copies the bytes of a string as they are, and a model's
 * names, a driver's strings or a file's metadata may hold bytes that are not UTF-8; every JSON text the
 * library returns passes through tb_json_repair_utf8 (from tb_json_finish), which writes each such byte
 * as the escape \ufffd (the replacement character), and DEL, which cJSON leaves raw, as \u007f: the text
 * then holds no control byte at all, and `tb` prints it unchanged. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "json/json_util.h"

static bool in(unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; }

/* The length of the well-formed UTF-8 sequence at p (NUL-terminated), or 0 when it is not one or is DEL. */
static size_t sequence_length(const unsigned char *p) {
  unsigned char c = p[0], lo = 0x80, hi = 0xBF;
  size_t len;
  if (c < 0x80) return c == 0x7f ? 0 : 1;
  if (in(c, 0xC2, 0xDF)) len = 2;
  else if (in(c, 0xE0, 0xEF)) len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (in(c, 0xF0, 0xF4)) len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  for (size_t i = 1; i < len; i++) /* a NUL ends the check: it is no continuation byte */
    if (!(i == 1 ? in(p[i], lo, hi) : in(p[i], 0x80, 0xBF))) return 0;
  return len;
}

char *tb_json_repair_utf8(char *text) {
  size_t bad = 0, n = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    size_t len = sequence_length(p);
    bad += len == 0;
    p += len ? len : 1;
  }
  if (bad == 0) return text;
  n = strlen(text);
  char *out = malloc(n + bad * 5 + 1); /* one byte becomes six */
  if (!out) {
    free(text);
    return NULL;
  }
  char *w = out;
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    size_t len = sequence_length(p);
    if (len) {
      memcpy(w, p, len);
      w += len;
      p += len;
    } else {
      memcpy(w, *p == 0x7f ? "\\u007f" : "\\ufffd", 6);
      w += 6;
      p++;
    }
  }
  *w = '\0';
  free(text);
  return out;
}
