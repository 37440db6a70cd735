/* The ONNX reader's shared helpers: error sentences with their location, strings, element types. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "model/onnx/onnx_internal.h"

tb_status tb_onnx_fail(const onnx_ctx *c, tb_status st, const char *where, const char *fmt, ...) {
  char reason[768], message[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  const char *label = c && c->label ? c->label : "model";
  if (where && *where) snprintf(message, sizeof message, "%s: %s: %s", label, where, reason);
  else snprintf(message, sizeof message, "%s: %s", label, reason);
  for (char *p = message; *p; p++) /* names come from the file: keep control characters out of messages */
    if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  return tb_error(st, "%s", message);
}

void tb_onnx_at(char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(at, TB_ONNX_WHERE, fmt, ap);
  va_end(ap);
}

tb_status tb_onnx_pb_fail(const onnx_ctx *c, const char *where, const tb_pb *r) {
  return tb_onnx_fail(c, TB_ERR_MODEL, where, "malformed protobuf at byte %zu: %s (the file is truncated or corrupt)",
                   r->error_at, r->error ? r->error : "unknown");
}

tb_status tb_onnx_wire_fail(const onnx_ctx *c, const char *where, const char *field, const tb_pb_field *f) {
  return tb_onnx_fail(c, TB_ERR_MODEL, where, "field '%s' (#%u) at byte %zu has wire type %d, which does not fit its type",
                   field, (unsigned)f->number, f->offset, f->wire);
}

tb_status tb_onnx_oom(const onnx_ctx *c, const char *where) {
  return tb_onnx_fail(c, TB_ERR_OUT_OF_MEMORY, where, "out of host memory while reading the model");
}

char *tb_onnx_strdup(tb_arena *arena, const tb_pb_field *f) {
  if (f->len == SIZE_MAX) return NULL;
  char *s = tb_arena_alloc(arena, f->len + 1);
  if (!s) return NULL;
  if (f->len) memcpy(s, f->data, f->len);
  s[f->len] = '\0';
  return s;
}

typedef struct onnx_type_row {
  const char *name;
  int dtype; /* tb_dtype, or -1 when ONNX has it and we do not */
} onnx_type_row;

static const onnx_type_row onnx_types[] = {
    [1] = {"float", TB_DTYPE_F32},
    [2] = {"uint8", TB_DTYPE_U8},
    [3] = {"int8", TB_DTYPE_I8},
    [4] = {"uint16", -1},
    [5] = {"int16", TB_DTYPE_I16},
    [6] = {"int32", TB_DTYPE_I32},
    [7] = {"int64", TB_DTYPE_I64},
    [8] = {"string", -1},
    [9] = {"bool", TB_DTYPE_BOOL},
    [10] = {"float16", TB_DTYPE_F16},
    [11] = {"double", TB_DTYPE_F64},
    [12] = {"uint32", -1},
    [13] = {"uint64", -1},
    [14] = {"complex64", -1},
    [15] = {"complex128", -1},
    [16] = {"bfloat16", TB_DTYPE_BF16},
    [17] = {"float8e4m3fn", TB_DTYPE_FP8_E4M3FN},
    [18] = {"float8e4m3fnuz", -1},
    [19] = {"float8e5m2", TB_DTYPE_FP8_E5M2},
    [20] = {"float8e5m2fnuz", -1},
    [21] = {"uint4", -1},
    [22] = {"int4", -1},
    [23] = {"float4e2m1", -1},
};

enum { ONNX_TYPE_COUNT = (int)(sizeof onnx_types / sizeof onnx_types[0]) };

const char *tb_onnx_dtype_name(int64_t code) {
  if (code <= 0 || code >= ONNX_TYPE_COUNT) return "?";
  return onnx_types[code].name;
}

tb_status tb_onnx_dtype(int64_t code, tb_dtype *out) {
  if (code <= 0 || code >= ONNX_TYPE_COUNT) return TB_ERR_MODEL;
  if (onnx_types[code].dtype < 0) return TB_ERR_UNSUPPORTED;
  *out = (tb_dtype)onnx_types[code].dtype;
  return TB_OK;
}

const char *tb_onnx_name_of(tb_dtype dtype) {
  for (int i = 1; i < ONNX_TYPE_COUNT; i++)
    if (onnx_types[i].dtype == (int)dtype) return onnx_types[i].name;
  return "?";
}
