/* The conformance runner's own protobuf decoding of ONNX test data (see pb_data.h for why it is separate
 * from the library's reader). A minimal wire-format walker: varints, fixed32/64 and length-delimited
 * fields, every length checked against the bytes left. */
#include "pb_data.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pb_cursor {
  const uint8_t *p, *end;
} pb_cursor;

typedef struct pb_field {
  uint32_t number;
  uint32_t wire;
  uint64_t varint;       /* wire 0, 1, 5 (fixed values stored here as bits) */
  const uint8_t *bytes;  /* wire 2 */
  size_t len;
} pb_field;

static void set_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
}

static bool read_varint(pb_cursor *c, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (c->p >= c->end) return false;
    uint8_t b = *c->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

/* The next field, or false at the end (*bad set when the bytes are malformed). */
static bool next_field(pb_cursor *c, pb_field *f, bool *bad) {
  *bad = false;
  if (c->p >= c->end) return false;
  uint64_t key;
  if (!read_varint(c, &key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX) goto malformed;
  f->number = (uint32_t)(key >> 3);
  f->wire = (uint32_t)(key & 7);
  f->bytes = NULL;
  f->len = 0;
  switch (f->wire) {
  case 0:
    if (!read_varint(c, &f->varint)) goto malformed;
    return true;
  case 1:
    if (c->end - c->p < 8) goto malformed;
    memcpy(&f->varint, c->p, 8);
    c->p += 8;
    return true;
  case 5: {
    if (c->end - c->p < 4) goto malformed;
    uint32_t v;
    memcpy(&v, c->p, 4);
    f->varint = v;
    c->p += 4;
    return true;
  }
  case 2: {
    uint64_t len;
    if (!read_varint(c, &len) || len > (uint64_t)(c->end - c->p)) goto malformed;
    f->bytes = c->p;
    f->len = (size_t)len;
    c->p += len;
    return true;
  }
  default:
    goto malformed;
  }
malformed:
  *bad = true;
  return false;
}

static bool read_file(const char *path, uint8_t **out, size_t *out_len, char *err, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    set_err(err, cap, "cannot open %s", path);
    return false;
  }
  size_t len = 0, capb = 1 << 16;
  uint8_t *buf = malloc(capb);
  size_t got;
  while (buf && (got = fread(buf + len, 1, capb - len, f)) > 0) {
    len += got;
    if (len == capb) {
      uint8_t *bigger = realloc(buf, capb * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      capb *= 2;
    }
  }
  fclose(f);
  if (!buf) {
    set_err(err, cap, "out of memory reading %s", path);
    return false;
  }
  *out = buf;
  *out_len = len;
  return true;
}

const char *pb_onnx_type_name(int t) {
  static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
                                      "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64",
                                      "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                      "FLOAT8E5M2", "FLOAT8E5M2FNUZ"};
  return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "UNKNOWN";
}

static bool dtype_of(int t, tb_dtype *out) {
  switch (t) {
  case PB_ONNX_FLOAT: *out = TB_DTYPE_F32; return true;
  case PB_ONNX_UINT8: *out = TB_DTYPE_U8; return true;
  case PB_ONNX_INT8: *out = TB_DTYPE_I8; return true;
  case PB_ONNX_INT16: *out = TB_DTYPE_I16; return true;
  case PB_ONNX_INT32: *out = TB_DTYPE_I32; return true;
  case PB_ONNX_INT64: *out = TB_DTYPE_I64; return true;
  case PB_ONNX_BOOL: *out = TB_DTYPE_BOOL; return true;
  case PB_ONNX_FLOAT16: *out = TB_DTYPE_F16; return true;
  case PB_ONNX_DOUBLE: *out = TB_DTYPE_F64; return true;
  case PB_ONNX_BFLOAT16: *out = TB_DTYPE_BF16; return true;
  case PB_ONNX_FLOAT8E4M3FN: *out = TB_DTYPE_FP8_E4M3FN; return true;
  case PB_ONNX_FLOAT8E5M2: *out = TB_DTYPE_FP8_E5M2; return true;
  default: return false;
  }
}

/* A repeated numeric field, packed (wire 2) or one value per field. Appends to vals (as raw uint64). */
typedef struct u64_list {
  uint64_t *v;
  size_t n, cap;
} u64_list;

static bool list_push(u64_list *l, uint64_t v) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    uint64_t *bigger = realloc(l->v, cap * sizeof *bigger);
    if (!bigger) return false;
    l->v = bigger;
    l->cap = cap;
  }
  l->v[l->n++] = v;
  return true;
}

/* wire_elem: 0 varint, 5 fixed32, 1 fixed64. */
static bool list_add_field(u64_list *l, const pb_field *f, uint32_t wire_elem) {
  if (f->wire == wire_elem) return list_push(l, f->varint);
  if (f->wire != 2) return false;
  pb_cursor c = {f->bytes, f->bytes + f->len};
  while (c.p < c.end) {
    uint64_t v = 0;
    if (wire_elem == 0) {
      if (!read_varint(&c, &v)) return false;
    } else if (wire_elem == 5) {
      uint32_t w;
      if (c.end - c.p < 4) return false;
      memcpy(&w, c.p, 4);
      c.p += 4;
      v = w;
    } else {
      if (c.end - c.p < 8) return false;
      memcpy(&v, c.p, 8);
      c.p += 8;
    }
    if (!list_push(l, v)) return false;
  }
  return true;
}

static bool decode_tensor(const uint8_t *buf, size_t len, pb_tensor *t, char *err, size_t cap) {
  memset(t, 0, sizeof *t);
  pb_cursor c = {buf, buf + len};
  pb_field f;
  bool bad = false;
  u64_list dims = {0}, vals = {0};
  const uint8_t *raw = NULL;
  size_t raw_len = 0;
  bool has_raw = false, external = false, ok = false;
  uint32_t vals_field = 0;
  while (next_field(&c, &f, &bad)) {
    switch (f.number) {
    case 1:
      if (!list_add_field(&dims, &f, 0)) goto malformed;
      break;
    case 2:
      if (f.wire != 0) goto malformed;
      t->onnx_type = (int)f.varint;
      break;
    case 4: case 5: case 7: case 10: case 11:
      if (vals_field && vals_field != f.number) {
        set_err(err, cap, "TensorProto has values in two fields (%u and %u)", vals_field, f.number);
        goto done;
      }
      vals_field = f.number;
      if (!list_add_field(&vals, &f, f.number == 4 ? 5 : (f.number == 10 ? 1 : (f.number == 11 ? 0 : 0))))
        goto malformed;
      break;
    case 8:
      if (f.wire != 2) goto malformed;
      snprintf(t->name, sizeof t->name, "%.*s", (int)(f.len < 255 ? f.len : 255), (const char *)f.bytes);
      break;
    case 9:
      if (f.wire != 2) goto malformed;
      raw = f.bytes;
      raw_len = f.len;
      has_raw = true;
      break;
    case 14:
      if (f.wire == 0 && f.varint == 1) external = true;
      break;
    default:
      break; /* segment, string_data (counted below through the type), doc_string, external_data */
    }
  }
  if (bad) goto malformed;
  if (external) {
    set_err(err, cap, "TensorProto '%s' keeps its data in an external file, which the runner does not read", t->name);
    goto done;
  }
  if (dims.n > TB_MAX_DIMS) {
    set_err(err, cap, "TensorProto '%s' has %zu dims; TensorBridge has at most %d", t->name, dims.n, TB_MAX_DIMS);
    goto done;
  }
  t->ndim = dims.n;
  t->numel = 1;
  for (size_t i = 0; i < dims.n; i++) {
    int64_t d = (int64_t)dims.v[i];
    if (d < 0 || (d > 0 && t->numel > INT64_MAX / 16 / d)) {
      set_err(err, cap, "TensorProto '%s' dim %zu is %lld", t->name, i, (long long)d);
      goto done;
    }
    t->dims[i] = d;
    t->numel *= d;
  }
  t->has_dtype = dtype_of(t->onnx_type, &t->dtype);
  /* UINT16 has no tb_dtype, but ONNX's tests store bfloat16 data as UINT16 bits: keep the bytes (as
   * 2-byte elements) so the caller can read them as bf16 when the model says the value is bf16. */
  bool bits16 = !t->has_dtype && t->onnx_type == PB_ONNX_UINT16;
  if (!t->has_dtype && !bits16) {
    ok = true;
    goto done;
  }
  size_t esize = bits16 ? 2 : tb_dtype_size(t->dtype);
  t->nbytes = (size_t)t->numel * esize;
  if (has_raw && raw_len != t->nbytes) {
    set_err(err, cap, "TensorProto '%s' raw_data has %zu bytes; %lld elements of %s need %zu", t->name, raw_len,
            (long long)t->numel, pb_onnx_type_name(t->onnx_type), t->nbytes);
    goto done;
  }
  if (!has_raw && vals.n != (size_t)t->numel) {
    set_err(err, cap, "TensorProto '%s' has %zu values for %lld elements", t->name, vals.n, (long long)t->numel);
    goto done;
  }
  t->data = malloc(t->nbytes ? t->nbytes : 1);
  if (!t->data) {
    set_err(err, cap, "out of memory for %zu bytes", t->nbytes);
    goto done;
  }
  if (has_raw) {
    memcpy(t->data, raw, raw_len);
    ok = true;
    goto done;
  }
  uint8_t *d = t->data;
  for (size_t i = 0; i < vals.n; i++) {
    uint64_t v = vals.v[i];
    switch (esize) {
    case 1: d[i] = (uint8_t)v; break;
    case 2: { uint16_t w = (uint16_t)v; memcpy(d + 2 * i, &w, 2); break; }
    case 4: { uint32_t w = (uint32_t)v; memcpy(d + 4 * i, &w, 4); break; }
    default: memcpy(d + 8 * i, &v, 8); break;
    }
  }
  ok = true;
  goto done;
malformed:
  set_err(err, cap, "malformed protobuf in TensorProto '%s' near byte %zu", t->name, (size_t)(c.p - buf));
done:
  free(dims.v);
  free(vals.v);
  if (!ok) {
    free(t->data);
    t->data = NULL;
  }
  return ok;
}

bool pb_tensor_read(const char *path, pb_tensor *out, char *err, size_t err_cap) {
  uint8_t *buf;
  size_t len;
  if (!read_file(path, &buf, &len, err, err_cap)) return false;
  bool ok = decode_tensor(buf, len, out, err, err_cap);
  free(buf);
  if (!ok) {
    size_t used = strlen(err);
    snprintf(err + used, err_cap - used, " (%s)", path);
  }
  return ok;
}

void pb_tensor_free(pb_tensor *t) {
  if (!t) return;
  free(t->data);
  t->data = NULL;
}

bool pb_tensor_as_bf16(pb_tensor *t) {
  if (t->has_dtype || t->onnx_type != PB_ONNX_UINT16 || !t->data) return false;
  t->has_dtype = true;
  t->dtype = TB_DTYPE_BF16;
  return true;
}

const char *pb_kind_name(pb_value_kind kind) {
  static const char *const names[] = {"tensor", "sequence", "map", "optional", "sparse tensor", "other"};
  return kind <= PB_KIND_OTHER ? names[kind] : "other";
}

/* ---- model.onnx facts -------------------------------------------------------------------------- */

static bool str_eq(const pb_field *f, const char *s) { return f->len == strlen(s) && memcmp(f->bytes, s, f->len) == 0; }

/* ValueInfoProto -> name and kind of its TypeProto. */
static void value_info(const pb_field *vi, char *name, size_t name_cap, pb_value_kind *kind) {
  pb_cursor c = {vi->bytes, vi->bytes + vi->len};
  pb_field f;
  bool bad;
  name[0] = '\0';
  *kind = PB_KIND_OTHER;
  while (next_field(&c, &f, &bad)) {
    if (f.number == 1 && f.wire == 2) {
      snprintf(name, name_cap, "%.*s", (int)(f.len < name_cap - 1 ? f.len : name_cap - 1), (const char *)f.bytes);
    } else if (f.number == 2 && f.wire == 2) {
      pb_cursor tc = {f.bytes, f.bytes + f.len};
      pb_field tf;
      while (next_field(&tc, &tf, &bad)) {
        if (tf.wire != 2) continue;
        if (tf.number == 1) *kind = PB_KIND_TENSOR;
        else if (tf.number == 4) *kind = PB_KIND_SEQUENCE;
        else if (tf.number == 5) *kind = PB_KIND_MAP;
        else if (tf.number == 9) *kind = PB_KIND_OPTIONAL;
        else if (tf.number == 8) *kind = PB_KIND_SPARSE;
      }
    }
  }
}

static bool is_initializer(const pb_field *graph, const char *name) {
  pb_cursor c = {graph->bytes, graph->bytes + graph->len};
  pb_field f;
  bool bad;
  while (next_field(&c, &f, &bad)) {
    if (f.number != 5 || f.wire != 2) continue;
    pb_cursor tc = {f.bytes, f.bytes + f.len};
    pb_field tf;
    while (next_field(&tc, &tf, &bad))
      if (tf.number == 8 && tf.wire == 2 && str_eq(&tf, name)) return true;
  }
  return false;
}

static void add_op(pb_model_info *m, const pb_field *op) {
  char name[128];
  snprintf(name, sizeof name, "%.*s", (int)(op->len < 127 ? op->len : 127), (const char *)op->bytes);
  if (m->node_count == 1) snprintf(m->first_op, sizeof m->first_op, "%s", name);
  /* distinct, comma-separated */
  const char *p = m->ops;
  size_t nlen = strlen(name);
  while (*p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == nlen && memcmp(p, name, len) == 0) return;
    p = comma ? comma + 1 : p + len;
  }
  size_t used = strlen(m->ops);
  if (used + nlen + 2 < sizeof m->ops) snprintf(m->ops + used, sizeof m->ops - used, "%s%s", used ? "," : "", name);
}

bool pb_model_info_read(const char *path, pb_model_info *m, char *err, size_t err_cap) {
  memset(m, 0, sizeof *m);
  uint8_t *buf;
  size_t len;
  if (!read_file(path, &buf, &len, err, err_cap)) return false;
  pb_cursor c = {buf, buf + len};
  pb_field f, graph = {0};
  bool bad = false, have_graph = false;
  while (next_field(&c, &f, &bad))
    if (f.number == 7 && f.wire == 2) {
      graph = f;
      have_graph = true;
    }
  if (bad || !have_graph) {
    set_err(err, err_cap, "%s: %s", path, bad ? "malformed protobuf" : "no graph");
    free(buf);
    return false;
  }
  pb_cursor g = {graph.bytes, graph.bytes + graph.len};
  while (next_field(&g, &f, &bad)) {
    if (f.wire != 2) continue;
    if (f.number == 1) {
      m->node_count++;
      pb_cursor nc = {f.bytes, f.bytes + f.len};
      pb_field nf;
      while (next_field(&nc, &nf, &bad))
        if (nf.number == 4 && nf.wire == 2) add_op(m, &nf);
    } else if (f.number == 11 && m->input_count < PB_MAX_IO) {
      char name[128];
      pb_value_kind kind;
      value_info(&f, name, sizeof name, &kind);
      if (is_initializer(&graph, name)) continue;
      snprintf(m->input_names[m->input_count], sizeof m->input_names[0], "%s", name);
      m->input_kinds[m->input_count++] = kind;
    } else if (f.number == 12 && m->output_count < PB_MAX_IO) {
      char name[128];
      value_info(&f, name, sizeof name, &m->output_kinds[m->output_count++]);
    }
  }
  free(buf);
  if (bad) {
    set_err(err, err_cap, "%s: malformed protobuf in the graph", path);
    return false;
  }
  return true;
}
