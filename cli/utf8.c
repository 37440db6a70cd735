/* UTF-8 checking (see utf8.h), after the table of well-formed byte sequences in Unicode's chapter 3. */
#include "utf8.h"
#include <stdbool.h>

static bool in(unsigned char c, unsigned char lo, unsigned char hi) { return c >= lo && c <= hi; }

int tbc_utf8_len(const unsigned char *p, size_t avail) {
  if (avail == 0) return -1;
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  int len;
  unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
  if (in(c, 0xC2, 0xDF)) len = 2;
  else if (in(c, 0xE0, 0xEF)) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (in(c, 0xF0, 0xF4)) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (int i = 1; i < len; i++) {
    if ((size_t)i >= avail) return -1;
    if (!(i == 1 ? in(p[i], lo, hi) : in(p[i], 0x80, 0xBF))) return 0;
  }
  return len;
}
