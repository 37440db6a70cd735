/* Reading a node's attributes with their types checked, and the elements of constant tensors. */
#include <string.h>
#include "core/error.h"
#include "ir/ir.h"

const tb_attr *tb_node_attr(const tb_node *n, const char *name) {
  if (!n || !name) return NULL;
  for (size_t i = 0; i < n->n_attrs; i++)
    if (n->attrs[i].name && strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
  return NULL;
}

static const char *type_name(tb_attr_type t) {
  static const char *const names[] = {"undefined", "float",   "int",     "string",        "tensor",
                                      "graph",     "floats",  "ints",    "strings",       "tensors",
                                      "graphs",    "sparse_tensor", "sparse_tensors", "type_proto", "type_protos"};
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

/* The attribute when present with type `want` (*out NULL when absent); TB_ERR_MODEL when of another type. */
static tb_status lookup(const tb_graph *g, const tb_node *n, const char *name, tb_attr_type want, const tb_attr **out) {
  *out = NULL;
  const tb_attr *a = tb_node_attr(n, name);
  if (!a) return TB_OK;
  if (a->type != want) {
    char label[160];
    return tb_error(TB_ERR_MODEL, "%s: attribute '%s' is of type %s; %s expected", tb_node_label(g, n, label, sizeof label),
                    name, type_name(a->type), type_name(want));
  }
  *out = a;
  return TB_OK;
}

tb_status tb_attr_int(const tb_graph *g, const tb_node *n, const char *name, int64_t dflt, int64_t *out) {
  const tb_attr *a;
  tb_status st = lookup(g, n, name, TB_ATTR_INT, &a);
  *out = a ? a->i : dflt;
  return st;
}

tb_status tb_attr_float(const tb_graph *g, const tb_node *n, const char *name, float dflt, float *out) {
  const tb_attr *a;
  tb_status st = lookup(g, n, name, TB_ATTR_FLOAT, &a);
  *out = a ? a->f : dflt;
  return st;
}

tb_status tb_attr_string(const tb_graph *g, const tb_node *n, const char *name, const char *dflt, const char **out) {
  const tb_attr *a;
  tb_status st = lookup(g, n, name, TB_ATTR_STRING, &a);
  *out = a && a->s ? a->s : dflt;
  return st;
}

tb_status tb_attr_ints(const tb_graph *g, const tb_node *n, const char *name, const int64_t **out, size_t *count) {
  const tb_attr *a;
  tb_status st = lookup(g, n, name, TB_ATTR_INTS, &a);
  *out = a ? a->ints : NULL;
  *count = a ? a->count : 0;
  return st;
}

tb_status tb_attr_floats(const tb_graph *g, const tb_node *n, const char *name, const float **out, size_t *count) {
  const tb_attr *a;
  tb_status st = lookup(g, n, name, TB_ATTR_FLOATS, &a);
  *out = a ? a->floats : NULL;
  *count = a ? a->count : 0;
  return st;
}

tb_status tb_attr_graph(const tb_graph *g, const tb_node *n, const char *name, tb_graph **out) {
  const tb_attr *a;
  tb_status st = lookup(g, n, name, TB_ATTR_GRAPH, &a);
  *out = a ? a->g : NULL;
  return st;
}

tb_status tb_attr_tensor(const tb_graph *g, const tb_node *n, const char *name, const tb_ir_tensor **out) {
  const tb_attr *a;
  tb_status st = lookup(g, n, name, TB_ATTR_TENSOR, &a);
  *out = a ? a->t : NULL;
  return st;
}

int64_t tb_ir_tensor_numel(const tb_ir_tensor *t) {
  if (!t) return 0;
  int64_t n = 1;
  for (size_t i = 0; i < t->ndim; i++) n *= t->dims[i];
  return n;
}

/* v = x saturated to int64 (NaN: 0); always true (the element's reader returns it). */
static bool double_to_int(double x, int64_t *v) {
  if (x != x) *v = 0;
  else if (x >= 9.2233720368547758e18) *v = INT64_MAX;
  else if (x <= -9.2233720368547758e18) *v = INT64_MIN;
  else *v = (int64_t)x;
  return true;
}

/* Element i as a double and an int64 (float32 and float64 read directly: this runs per element in the
 * constant passes, where a tb_convert call per element dominated prepare). */
static bool element(const tb_ir_tensor *t, int64_t i, double *d, int64_t *v) {
  size_t size = tb_dtype_size(t->dtype);
  if (!t->data || i < 0 || size == 0 || (uint64_t)i >= t->nbytes / size) return false;
  const unsigned char *p = (const unsigned char *)t->data + (size_t)i * size;
  switch (t->dtype) {
  case TB_DTYPE_I64: { int64_t x; memcpy(&x, p, 8); *v = x; *d = (double)x; return true; }
  case TB_DTYPE_I32: { int32_t x; memcpy(&x, p, 4); *v = x; *d = x; return true; }
  case TB_DTYPE_I16: { int16_t x; memcpy(&x, p, 2); *v = x; *d = x; return true; }
  case TB_DTYPE_I8: { int8_t x; memcpy(&x, p, 1); *v = x; *d = x; return true; }
  case TB_DTYPE_U8: *v = p[0]; *d = p[0]; return true;
  case TB_DTYPE_BOOL: *v = p[0] != 0; *d = (double)*v; return true;
  case TB_DTYPE_F32: { float x; memcpy(&x, p, 4); *d = x; return double_to_int(x, v); }
  case TB_DTYPE_F64: memcpy(d, p, 8); return double_to_int(*d, v);
  default: break;
  }
  double x = 0, raw = 0; /* the element copied out first: large constants may be unaligned (onnx_reader.h) */
  if (size > sizeof raw) return false;
  memcpy(&raw, p, size);
  if (tb_convert(t->dtype, &raw, TB_DTYPE_F64, &x, 1, true) != TB_OK) return false;
  *d = x;
  return double_to_int(x, v);
}

int64_t tb_ir_tensor_int(const tb_ir_tensor *t, int64_t i) {
  double d;
  int64_t v;
  return t && element(t, i, &d, &v) ? v : 0;
}

double tb_ir_tensor_double(const tb_ir_tensor *t, int64_t i) {
  double d;
  int64_t v;
  return t && element(t, i, &d, &v) ? d : 0.0;
}
