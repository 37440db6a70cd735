/* Test helper: a tiny protobuf writer, to build ONNX models byte by byte in the reader's tests
 * (valid ones, and ones broken on purpose). Buffers grow on the heap; the caller frees .data. */
#ifndef TEST_ONNX_PBW_H
#define TEST_ONNX_PBW_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pbw {
  unsigned char *data;
  size_t len, cap;
} pbw;

static inline void pbw_raw(pbw *b, const void *p, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1) cap *= 2;
    b->data = realloc(b->data, cap);
    if (!b->data) abort(); /* test code */
    b->cap = cap;
  }
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
}

static inline void pbw_uvarint(pbw *b, uint64_t v) {
  unsigned char tmp[10];
  size_t n = 0;
  do {
    tmp[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) tmp[n] |= 0x80;
    n++;
  } while (v);
  pbw_raw(b, tmp, n);
}

static inline void pbw_tag(pbw *b, unsigned field, unsigned wire) { pbw_uvarint(b, ((uint64_t)field << 3) | wire); }
static inline void pbw_int(pbw *b, unsigned field, int64_t v) {
  pbw_tag(b, field, 0);
  pbw_uvarint(b, (uint64_t)v);
}
static inline void pbw_bytes(pbw *b, unsigned field, const void *p, size_t n) {
  pbw_tag(b, field, 2);
  pbw_uvarint(b, n);
  pbw_raw(b, p, n);
}
static inline void pbw_str(pbw *b, unsigned field, const char *s) { pbw_bytes(b, field, s, strlen(s)); }
static inline void pbw_float(pbw *b, unsigned field, float f) {
  pbw_tag(b, field, 5);
  pbw_raw(b, &f, 4);
}
/* Append sub as a length-delimited field and free it. */
static inline void pbw_msg(pbw *b, unsigned field, pbw *sub) {
  pbw_bytes(b, field, sub->data, sub->len);
  free(sub->data);
  memset(sub, 0, sizeof *sub);
}
/* Packed repeated int64 / float. */
static inline void pbw_packed_ints(pbw *b, unsigned field, const int64_t *v, size_t n) {
  pbw tmp = {0};
  for (size_t i = 0; i < n; i++) pbw_uvarint(&tmp, (uint64_t)v[i]);
  pbw_bytes(b, field, tmp.data, tmp.len);
  free(tmp.data);
}
static inline void pbw_packed_floats(pbw *b, unsigned field, const float *v, size_t n) {
  pbw_bytes(b, field, v, n * sizeof *v);
}

/* ONNX building blocks. */
/* TensorProto header: name, data_type, dims (unpacked, as onnx writes them). */
static inline void pbw_tensor_head(pbw *t, const char *name, int data_type, const int64_t *dims, size_t ndim) {
  for (size_t i = 0; i < ndim; i++) pbw_int(t, 1, dims[i]);
  pbw_int(t, 2, data_type);
  if (name) pbw_str(t, 8, name);
}
/* ValueInfoProto with a tensor type of elem_type and dims (a negative dim: dim_param "N"). */
static inline void pbw_value_info(pbw *b, unsigned field, const char *name, int elem_type, const int64_t *dims,
                                  size_t ndim) {
  pbw shape = {0}, tensor = {0}, type = {0}, vi = {0};
  for (size_t i = 0; i < ndim; i++) {
    pbw dim = {0};
    if (dims[i] >= 0) pbw_int(&dim, 1, dims[i]);
    else pbw_str(&dim, 2, "N");
    pbw_msg(&shape, 1, &dim);
  }
  pbw_int(&tensor, 1, elem_type);
  pbw_msg(&tensor, 2, &shape);
  pbw_msg(&type, 1, &tensor);
  pbw_str(&vi, 1, name);
  pbw_msg(&vi, 2, &type);
  pbw_msg(b, field, &vi);
}
/* NodeProto with one input and one output (attributes appended by the caller through `extra`). */
static inline void pbw_node(pbw *g, const char *name, const char *op, const char *in, const char *out, pbw *extra) {
  pbw n = {0};
  if (in) pbw_str(&n, 1, in);
  if (out) pbw_str(&n, 2, out);
  if (name) pbw_str(&n, 3, name);
  if (op) pbw_str(&n, 4, op);
  if (extra) {
    pbw_raw(&n, extra->data, extra->len);
    free(extra->data);
    memset(extra, 0, sizeof *extra);
  }
  pbw_msg(g, 1, &n);
}
/* ModelProto around a graph: ir_version 8, opset 17, producer "pbw". */
static inline pbw pbw_model(pbw *graph) {
  pbw m = {0}, op = {0};
  pbw_int(&m, 1, 8);
  pbw_str(&m, 2, "pbw");
  pbw_str(&m, 3, "1.0");
  pbw_str(&op, 1, "");
  pbw_int(&op, 2, 17);
  pbw_msg(&m, 8, &op);
  pbw_msg(&m, 7, graph);
  return m;
}

#endif
