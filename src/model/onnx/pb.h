/* Internal: a protobuf wire-format reader over a bounded byte range. It reads one field at a time
 * (varint, 64-bit, length-delimited, 32-bit), checks every length against the bytes that remain, and
 * says why it stopped. Groups (wire types 3 and 4) are refused: ONNX never uses them. */
#ifndef TB_MODEL_ONNX_PB_H
#define TB_MODEL_ONNX_PB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { TB_PB_VARINT = 0, TB_PB_FIXED64 = 1, TB_PB_LEN = 2, TB_PB_FIXED32 = 5 };

typedef struct tb_pb {
  const uint8_t *p, *end;
  const uint8_t *base;  /* start of the whole buffer, for offsets in messages */
  const char *error;    /* why the last tb_pb_next failed (static text) */
  size_t error_at;      /* byte offset of the failure from base */
} tb_pb;

typedef struct tb_pb_field {
  uint32_t number;
  int wire;
  uint64_t u;            /* the value of a varint or fixed field */
  const uint8_t *data;   /* a length-delimited field's bytes */
  size_t len;
  size_t offset;         /* offset of the field's tag from base */
} tb_pb_field;

/* A reader over data[0, size); base is where offsets count from (NULL: data). */
tb_pb tb_pb_init(const void *data, size_t size, const void *base);
/* A reader over a length-delimited field's bytes, sharing the parent's base. */
tb_pb tb_pb_sub(const tb_pb *parent, const tb_pb_field *f);
/* 1: a field was read into *f; 0: end of the message; -1: malformed (r->error, r->error_at set). */
int tb_pb_next(tb_pb *r, tb_pb_field *f);

/* The elements of a repeated scalar field, packed (one LEN field) or not (one field each).
 * kind: TB_PB_VARINT, TB_PB_FIXED32 or TB_PB_FIXED64 — what one element is on the wire.
 * tb_pb_count adds the number of elements this occurrence holds to *count; false when the packed
 * bytes are malformed (a truncated varint, a length not a multiple of the element size) or the wire
 * type does not fit. tb_pb_elements calls fn for each element (false from fn stops with false). */
bool tb_pb_count(const tb_pb_field *f, int kind, size_t *count);
typedef bool (*tb_pb_element_fn)(void *ctx, uint64_t value);
bool tb_pb_elements(const tb_pb_field *f, int kind, tb_pb_element_fn fn, void *ctx);

/* Read a varint from [*p, end); false when truncated or longer than 10 bytes. */
bool tb_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out);

#endif
