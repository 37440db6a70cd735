/* TensorProto -> tb_ir_tensor: element type, dims, and the data from whichever field holds it —
 * raw_data (used in place when aligned for the type), the typed repeated fields, or external data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/onnx/onnx_internal.h"
#include "model/weights.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the ONNX reader assumes a little-endian host (ONNX raw_data is little-endian)"
#endif

/* Unaligned data of at least this many bytes is used in place, unaligned (readers copy it or read it with
 * memcpy); smaller data is copied to an aligned block. */
enum { TB_ONNX_IN_PLACE_UNALIGNED = 64 * 1024 };

enum {
  F_DIMS = 1, F_DATA_TYPE = 2, F_SEGMENT = 3, F_FLOAT = 4, F_INT32 = 5, F_STRING = 6, F_INT64 = 7, F_NAME = 8,
  F_RAW = 9, F_DOUBLE = 10, F_UINT64 = 11, F_EXTERNAL = 13, F_LOCATION = 14, F_MAX = 16
};

typedef struct tensor_scan {
  const char *name;
  int64_t data_type;
  int64_t dims[TB_MAX_DIMS];
  size_t ndim;
  tb_pb_field raw;
  size_t count[F_MAX];   /* elements (or occurrences) of each field */
  int64_t location;
  const char *ext_location;
  uint64_t ext_offset, ext_length;
  bool has_length;
} tensor_scan;

static bool add_dim(void *ctx, uint64_t v) {
  tensor_scan *s = ctx;
  if (s->ndim < TB_MAX_DIMS) s->dims[s->ndim] = (int64_t)v;
  s->ndim++;
  return true;
}

static const char *field_name(int number) {
  switch (number) {
  case F_FLOAT: return "float_data";
  case F_INT32: return "int32_data";
  case F_STRING: return "string_data";
  case F_INT64: return "int64_data";
  case F_DOUBLE: return "double_data";
  case F_UINT64: return "uint64_data";
  default: return "?";
  }
}

/* The typed field that may hold this dtype's data (onnx.proto's comments on each field). */
static int typed_field_for(tb_dtype d) {
  switch (d) {
  case TB_DTYPE_F32: return F_FLOAT;
  case TB_DTYPE_F64: return F_DOUBLE;
  case TB_DTYPE_I64: return F_INT64;
  default: return F_INT32;
  }
}

/* A decimal offset/length of external_data: digits only, fits in 63 bits. */
static bool parse_u64(const char *s, uint64_t *out) {
  if (!*s) return false;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return false;
    if (v > (UINT64_C(0x7fffffffffffffff) - (uint64_t)(*s - '0')) / 10) return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return true;
}

static tb_status read_external_entry(const onnx_ctx *c, tb_arena *arena, const tb_pb_field *f, const char *where,
                                     tensor_scan *s) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  const char *key = NULL, *value = NULL;
  int rc;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number != 1 && e.number != 2) continue;
    if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "external_data", &e);
    const uint8_t *nul = e.len ? memchr(e.data, 0, e.len) : NULL;
    if (nul)
      return tb_onnx_fail(c, TB_ERR_MODEL, where,
                       "an external_data %s has a NUL byte at position %zu of its %zu ('%.*s' then more); it would cut "
                       "the text short: remove the NUL from the model",
                       e.number == 1 ? "key" : "value", (size_t)(nul - e.data), e.len, (int)(nul - e.data > 200 ? 200 : nul - e.data),
                       (const char *)e.data);
    char *str = tb_onnx_strdup(arena, &e);
    if (!str) return tb_onnx_oom(c, where);
    if (e.number == 1) key = str;
    else value = str;
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  if (!key) return tb_onnx_fail(c, TB_ERR_MODEL, where, "an external_data entry has no key");
  if (!value) value = "";
  if (!strcmp(key, "location")) {
    s->ext_location = value;
  } else if (!strcmp(key, "offset")) {
    if (!parse_u64(value, &s->ext_offset))
      return tb_onnx_fail(c, TB_ERR_MODEL, where, "external_data offset '%.40s' is not a non-negative integer", value);
  } else if (!strcmp(key, "length")) {
    if (!parse_u64(value, &s->ext_length))
      return tb_onnx_fail(c, TB_ERR_MODEL, where, "external_data length '%.40s' is not a non-negative integer", value);
    s->has_length = true;
  }
  return TB_OK; /* "checksum" and unknown keys are ignored */
}

static tb_status scan_tensor(const onnx_ctx *c, tb_arena *arena, const tb_pb_field *f, const char *where,
                             tensor_scan *s) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    switch (e.number) {
    case F_DIMS:
      if (!tb_pb_elements(&e, TB_PB_VARINT, add_dim, s)) return tb_onnx_wire_fail(c, where, "dims", &e);
      break;
    case F_DATA_TYPE:
      if (e.wire != TB_PB_VARINT) return tb_onnx_wire_fail(c, where, "data_type", &e);
      s->data_type = (int64_t)e.u;
      break;
    case F_NAME:
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "name", &e);
      if (!(s->name = tb_onnx_strdup(arena, &e))) return tb_onnx_oom(c, where);
      break;
    case F_RAW:
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "raw_data", &e);
      s->raw = e;
      s->count[F_RAW]++;
      break;
    case F_LOCATION:
      if (e.wire != TB_PB_VARINT) return tb_onnx_wire_fail(c, where, "data_location", &e);
      s->location = (int64_t)e.u;
      break;
    case F_EXTERNAL: {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "external_data", &e);
      tb_status st = read_external_entry(c, arena, &e, where, s);
      if (st != TB_OK) return st;
      s->count[F_EXTERNAL]++;
      break;
    }
    case F_SEGMENT:
    case F_STRING:
      s->count[e.number]++;
      break;
    case F_FLOAT:
    case F_INT32:
    case F_INT64:
    case F_DOUBLE:
    case F_UINT64: {
      int kind = e.number == F_FLOAT ? TB_PB_FIXED32 : e.number == F_DOUBLE ? TB_PB_FIXED64 : TB_PB_VARINT;
      if (!tb_pb_count(&e, kind, &s->count[e.number])) return tb_onnx_wire_fail(c, where, field_name((int)e.number), &e);
      break;
    }
    default:
      break; /* doc_string, metadata_props, unknown fields */
    }
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

/* Filling a typed tensor from one repeated field. */
typedef struct fill_sink {
  tb_dtype dtype;
  unsigned char *out;
  size_t i, n;
  bool range_error;
  int64_t bad_value;
  size_t bad_index;
} fill_sink;

static bool fill_one(void *ctx, uint64_t v) {
  fill_sink *k = ctx;
  if (k->i >= k->n) return false;
  int64_t sv = (int64_t)v;
  int64_t lo = 0, hi = 0;
  size_t es = tb_dtype_size(k->dtype);
  switch (k->dtype) {
  case TB_DTYPE_F32: {
    uint32_t bits = (uint32_t)v;
    memcpy(k->out + k->i * 4, &bits, 4);
    k->i++;
    return true;
  }
  case TB_DTYPE_F64:
  case TB_DTYPE_I64:
    memcpy(k->out + k->i * 8, &v, 8);
    k->i++;
    return true;
  case TB_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
  case TB_DTYPE_I16: lo = INT16_MIN; hi = INT16_MAX; break;
  case TB_DTYPE_I8: lo = INT8_MIN; hi = INT8_MAX; break;
  case TB_DTYPE_U8: lo = 0; hi = UINT8_MAX; break;
  case TB_DTYPE_BOOL: lo = 0; hi = 1; break;
  case TB_DTYPE_F16:
  case TB_DTYPE_BF16: lo = 0; hi = UINT16_MAX; break;
  default: lo = 0; hi = UINT8_MAX; break; /* fp8: the bit pattern */
  }
  if (sv < lo || sv > hi) {
    k->range_error = true;
    k->bad_value = sv;
    k->bad_index = k->i;
    return false;
  }
  uint32_t u = (uint32_t)sv; /* two's complement: the low bytes are the narrow value */
  memcpy(k->out + k->i * es, &u, es);
  k->i++;
  return true;
}

static void *owned_block(const onnx_ctx *c, size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) return NULL;
  if (!tb_ir_model_own(c->m, p)) return NULL;
  return p;
}

static const char *shape_text(const tensor_scan *s, tb_dtype d, char *buf, size_t cap) {
  size_t used = (size_t)snprintf(buf, cap, "%s[", tb_onnx_name_of(d));
  for (size_t i = 0; i < s->ndim && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? "," : "", (long long)s->dims[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
  return buf;
}

static tb_status fill_typed(const onnx_ctx *c, const tb_pb_field *whole, const char *where, int field, tb_dtype d,
                            size_t numel, void *out) {
  fill_sink k = {.dtype = d, .out = out, .n = numel};
  int kind = field == F_FLOAT ? TB_PB_FIXED32 : field == F_DOUBLE ? TB_PB_FIXED64 : TB_PB_VARINT;
  tb_pb r = tb_pb_init(whole->data, whole->len, NULL);
  tb_pb_field e;
  int rc;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if ((int)e.number != field) continue;
    if (!tb_pb_elements(&e, kind, fill_one, &k)) {
      if (k.range_error)
        return tb_onnx_fail(c, TB_ERR_MODEL, where, "%s[%zu] = %lld is out of range for %s", field_name(field),
                         k.bad_index, (long long)k.bad_value, tb_onnx_name_of(d));
      return tb_onnx_wire_fail(c, where, field_name(field), &e);
    }
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

tb_status tb_onnx_read_tensor_field(const onnx_ctx *c, tb_arena *arena, const tb_pb_field *f, const char *where,
                           const char *what, tb_ir_tensor **out) {
  *out = NULL;
  char at[TB_ONNX_WHERE];
  tb_onnx_at(at, "%s%s%s", where && *where ? where : "", where && *where ? ": " : "", what);
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "tensor", f);
  tensor_scan s;
  memset(&s, 0, sizeof s);
  tb_status st = scan_tensor(c, arena, f, at, &s);
  if (st != TB_OK) return st;
  tb_onnx_at(at, "%s%s%s '%.128s'", where && *where ? where : "", where && *where ? ": " : "", what,
           s.name ? s.name : "");

  if (s.count[F_SEGMENT]) return tb_onnx_fail(c, TB_ERR_UNSUPPORTED, at, "segmented tensors are not supported");
  if (s.data_type == 0) return tb_onnx_fail(c, TB_ERR_MODEL, at, "has no data_type");
  tb_dtype d;
  st = tb_onnx_dtype(s.data_type, &d);
  if (st == TB_ERR_MODEL)
    return tb_onnx_fail(c, st, at, "data_type %lld is not an ONNX element type", (long long)s.data_type);
  if (st != TB_OK)
    return tb_onnx_fail(c, st, at, "element type %s (data_type %lld) is not supported", tb_onnx_dtype_name(s.data_type),
                     (long long)s.data_type);
  if (s.ndim > TB_MAX_DIMS)
    return tb_onnx_fail(c, TB_ERR_UNSUPPORTED, at, "rank %zu is above the %d dimensions supported", s.ndim, TB_MAX_DIMS);
  size_t es = tb_dtype_size(d);
  uint64_t numel = 1;
  for (size_t i = 0; i < s.ndim; i++) {
    if (s.dims[i] < 0) return tb_onnx_fail(c, TB_ERR_MODEL, at, "dims[%zu] = %lld is negative", i, (long long)s.dims[i]);
    uint64_t dim = (uint64_t)s.dims[i];
    if (dim && numel > (UINT64_C(1) << 62) / es / dim)
      return tb_onnx_fail(c, TB_ERR_MODEL, at, "dims multiply to more bytes than can be addressed");
    numel *= dim;
  }
  if (numel * es > SIZE_MAX / 2) return tb_onnx_fail(c, TB_ERR_MODEL, at, "dims multiply to more bytes than can be addressed");
  size_t nbytes = (size_t)(numel * es);
  char shape[160];

  if (s.location != 0 && s.location != 1)
    return tb_onnx_fail(c, TB_ERR_MODEL, at, "data_location %lld is neither DEFAULT (0) nor EXTERNAL (1)",
                     (long long)s.location);
  if (s.count[F_STRING]) return tb_onnx_fail(c, TB_ERR_UNSUPPORTED, at, "string_data is not supported");
  int typed = typed_field_for(d);
  size_t sources = (s.count[F_RAW] ? 1u : 0u) + (s.location == 1 ? 1u : 0u);
  for (int fld = F_FLOAT; fld <= F_UINT64; fld++) {
    if (fld == F_STRING || fld == F_NAME || fld == F_RAW || !s.count[fld]) continue;
    if (fld != typed)
      return tb_onnx_fail(c, TB_ERR_MODEL, at, "%s cannot hold a %s tensor", field_name(fld), tb_onnx_name_of(d));
    sources++;
  }
  if (sources > 1) return tb_onnx_fail(c, TB_ERR_MODEL, at, "has its data in more than one field (raw_data, %s, external)",
                                    field_name(typed));

  tb_ir_tensor *t = tb_arena_alloc(arena, sizeof *t);
  if (!t) return tb_onnx_oom(c, at);
  memset(t, 0, sizeof *t);
  t->name = s.name ? s.name : "";
  t->dtype = d;
  t->ndim = s.ndim;
  memcpy(t->dims, s.dims, s.ndim * sizeof s.dims[0]);
  t->nbytes = nbytes;
  t->data = "";

  const uint8_t *bytes = NULL;
  if (s.location == 1) {
    if (!s.count[F_EXTERNAL] || !s.ext_location)
      return tb_onnx_fail(c, TB_ERR_MODEL, at, "data_location is EXTERNAL but external_data has no 'location'");
    if (s.has_length && s.ext_length != nbytes)
      return tb_onnx_fail(c, TB_ERR_MODEL, at, "external_data length %llu, %zu expected for %s",
                       (unsigned long long)s.ext_length, nbytes, shape_text(&s, d, shape, sizeof shape));
    st = tb_onnx_external_bytes(c, at, s.ext_location, s.ext_offset, s.has_length, s.ext_length, nbytes, &bytes);
    if (st != TB_OK) return st;
  } else if (s.count[F_RAW]) {
    if (s.raw.len != nbytes)
      return tb_onnx_fail(c, TB_ERR_MODEL, at, "raw_data has %zu bytes, %zu expected for %s", s.raw.len, nbytes,
                       shape_text(&s, d, shape, sizeof shape));
    bytes = s.raw.data;
  } else if (s.count[typed]) {
    if (s.count[typed] != numel)
      return tb_onnx_fail(c, TB_ERR_MODEL, at, "%s has %zu elements, %llu expected for %s", field_name(typed),
                       s.count[typed], (unsigned long long)numel, shape_text(&s, d, shape, sizeof shape));
    void *data = owned_block(c, nbytes);
    if (!data) return tb_onnx_oom(c, at);
    st = fill_typed(c, f, at, typed, d, (size_t)numel, data);
    if (st != TB_OK) return st;
    t->data = data;
  } else if (numel > 0) {
    return tb_onnx_fail(c, TB_ERR_MODEL, at, "has no data for %s", shape_text(&s, d, shape, sizeof shape));
  }
  if (bytes && nbytes) {
    if ((uintptr_t)bytes % es == 0 || nbytes >= TB_ONNX_IN_PLACE_UNALIGNED) {
      /* used in place: the file outlives the model's graph. Large unaligned data is not copied either: a
       * second copy would stay resident for the model's life; the executor makes its own aligned copy and
       * lets it go once the kernels have packed it (model/weights.h). */
      t->data = bytes;
      /* parsing maps in the pages around each header (a whole large folio of the page cache): let the
       * data's pages go now so loading never holds the file resident (they are read again when needed) */
      if (nbytes >= TB_ONNX_IN_PLACE_UNALIGNED) tb_weights_drop_file(bytes, nbytes);
    } else {
      void *copy = owned_block(c, nbytes);
      if (!copy) return tb_onnx_oom(c, at);
      memcpy(copy, bytes, nbytes);
      t->data = copy;
    }
  }
  *out = t;
  return TB_OK;
}
