/* A growable text buffer and a JSON string escaper, for the JSON that `tb` writes itself (`tb doctor
 * --json`, `tb info --capabilities --json`) and for joining the library's JSON texts. The library's
 * JSON parser is private to it, so the tool writes JSON by hand with these. */
#ifndef TB_CLI_JSON_OUT_H
#define TB_CLI_JSON_OUT_H
#include <stdbool.h>
#include <stddef.h>

typedef struct tbc_buf {
  char *data; /* NUL-terminated; NULL until the first append */
  size_t len, cap;
  bool failed; /* an allocation failed: the text is incomplete */
} tbc_buf;

void tbc_buf_add(tbc_buf *buf, const char *text);
void tbc_buf_addf(tbc_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tbc_buf_free(tbc_buf *buf);

/* Append s as a JSON string literal: quoted, with '"', '\\', control characters and DEL escaped.
 * Well-formed UTF-8 is copied as it is; each byte that is not (a model's names may hold any bytes) becomes
 * \ufffd, so the JSON is always valid UTF-8. NULL appends null. */
void tbc_json_string(tbc_buf *buf, const char *s);
/* Append "key": (the key escaped) after a ',' when `*first` is false; sets *first to false. */
void tbc_json_key(tbc_buf *buf, bool *first, const char *key);

#endif
