/* The protobuf wire-format reader: fields, varints and packed repeated scalars, bounds-checked. */
#include "model/onnx/pb.h"
#include <string.h>

tb_pb tb_pb_init(const void *data, size_t size, const void *base) {
  tb_pb r;
  memset(&r, 0, sizeof r);
  if (!data) { /* an empty range: point at a byte, so p + size stays defined */
    static const uint8_t empty;
    data = &empty;
    size = 0;
  }
  r.p = data;
  r.end = r.p + size;
  r.base = base ? base : data;
  return r;
}

tb_pb tb_pb_sub(const tb_pb *parent, const tb_pb_field *f) { return tb_pb_init(f->data, f->len, parent->base); }

bool tb_pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  const uint8_t *q = *p;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (q >= end) return false;
    uint8_t b = *q++;
    if (shift == 63 && (b & 0x7e)) return false; /* more than 64 bits */
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *p = q;
      *out = v;
      return true;
    }
  }
  return false;
}

static int fail(tb_pb *r, const uint8_t *at, const char *why) {
  r->error = why;
  r->error_at = (size_t)(at - r->base);
  return -1;
}

int tb_pb_next(tb_pb *r, tb_pb_field *f) {
  if (r->p >= r->end) return 0;
  const uint8_t *start = r->p;
  uint64_t key;
  if (!tb_pb_varint(&r->p, r->end, &key)) return fail(r, start, "truncated or overlong field tag");
  memset(f, 0, sizeof *f);
  f->offset = (size_t)(start - r->base);
  f->wire = (int)(key & 7);
  uint64_t number = key >> 3;
  if (number == 0 || number > 0x1fffffff) return fail(r, start, "invalid field number");
  f->number = (uint32_t)number;
  size_t left;
  switch (f->wire) {
  case TB_PB_VARINT:
    if (!tb_pb_varint(&r->p, r->end, &f->u)) return fail(r, start, "truncated or overlong varint");
    return 1;
  case TB_PB_FIXED64:
    if ((size_t)(r->end - r->p) < 8) return fail(r, start, "truncated 64-bit field");
    for (int i = 7; i >= 0; i--) f->u = (f->u << 8) | r->p[i];
    r->p += 8;
    return 1;
  case TB_PB_FIXED32:
    if ((size_t)(r->end - r->p) < 4) return fail(r, start, "truncated 32-bit field");
    for (int i = 3; i >= 0; i--) f->u = (f->u << 8) | r->p[i];
    r->p += 4;
    return 1;
  case TB_PB_LEN: {
    uint64_t len;
    if (!tb_pb_varint(&r->p, r->end, &len)) return fail(r, start, "truncated or overlong length");
    left = (size_t)(r->end - r->p);
    if (len > left) return fail(r, start, "length runs past the end of the enclosing message");
    f->data = r->p;
    f->len = (size_t)len;
    r->p += len;
    return 1;
  }
  default:
    return fail(r, start, "unsupported wire type (groups are not used by ONNX)");
  }
}

static size_t element_size(int kind) { return kind == TB_PB_FIXED32 ? 4 : kind == TB_PB_FIXED64 ? 8 : 0; }

bool tb_pb_count(const tb_pb_field *f, int kind, size_t *count) {
  if (f->wire == kind) {
    *count += 1;
    return true;
  }
  if (f->wire != TB_PB_LEN) return false;
  size_t es = element_size(kind);
  if (es) {
    if (f->len % es) return false;
    *count += f->len / es;
    return true;
  }
  size_t n = 0;
  const uint8_t *p = f->data, *end = f->data + f->len;
  uint64_t v;
  while (p < end) {
    if (!tb_pb_varint(&p, end, &v)) return false;
    n++;
  }
  *count += n;
  return true;
}

bool tb_pb_elements(const tb_pb_field *f, int kind, tb_pb_element_fn fn, void *ctx) {
  if (f->wire == kind) return fn(ctx, f->u);
  if (f->wire != TB_PB_LEN) return false;
  size_t es = element_size(kind);
  const uint8_t *p = f->data, *end = f->data + f->len;
  if (es && f->len % es) return false;
  while (p < end) {
    uint64_t v = 0;
    if (es) {
      for (size_t i = es; i-- > 0;) v = (v << 8) | p[i];
      p += es;
    } else if (!tb_pb_varint(&p, end, &v)) {
      return false;
    }
    if (!fn(ctx, v)) return false;
  }
  return true;
}
