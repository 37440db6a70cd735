/* A growable text buffer and a JSON string escaper (see json_out.h). */
#include "json_out.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "utf8.h"

static bool reserve(tbc_buf *b, size_t extra) {
  if (b->failed) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1) cap *= 2;
  char *grown = realloc(b->data, cap);
  if (!grown) {
    b->failed = true;
    return false;
  }
  b->data = grown;
  b->cap = cap;
  return true;
}

static void add_bytes(tbc_buf *b, const char *text, size_t n) {
  if (!reserve(b, n)) return;
  memcpy(b->data + b->len, text, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void tbc_buf_add(tbc_buf *b, const char *text) { add_bytes(b, text, strlen(text)); }

void tbc_buf_addf(tbc_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = true;
  } else if (reserve(b, (size_t)n)) {
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
    b->len += (size_t)n;
  }
  va_end(again);
}

void tbc_buf_free(tbc_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

void tbc_json_string(tbc_buf *b, const char *s) {
  if (!s) {
    tbc_buf_add(b, "null");
    return;
  }
  add_bytes(b, "\"", 1);
  size_t left = strlen(s);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++, left--) {
    if (*p >= 0x80) {
      int len = tbc_utf8_len(p, left);
      if (len > 0) {
        add_bytes(b, (const char *)p, (size_t)len);
        p += len - 1;
        left -= (size_t)(len - 1);
      } else {
        tbc_buf_add(b, "\\ufffd"); /* not UTF-8: one replacement character per byte */
      }
      continue;
    }
    switch (*p) {
      case '"': tbc_buf_add(b, "\\\""); break;
      case '\\': tbc_buf_add(b, "\\\\"); break;
      case '\n': tbc_buf_add(b, "\\n"); break;
      case '\r': tbc_buf_add(b, "\\r"); break;
      case '\t': tbc_buf_add(b, "\\t"); break;
      case '\b': tbc_buf_add(b, "\\b"); break;
      case '\f': tbc_buf_add(b, "\\f"); break;
      default:
        if (*p < 0x20 || *p == 0x7f)
          tbc_buf_addf(b, "\\u%04x", *p);
        else
          add_bytes(b, (const char *)p, 1);
    }
  }
  add_bytes(b, "\"", 1);
}

void tbc_json_key(tbc_buf *b, bool *first, const char *key) {
  if (!*first) tbc_buf_add(b, ",");
  *first = false;
  tbc_json_string(b, key);
  tbc_buf_add(b, ":");
}
