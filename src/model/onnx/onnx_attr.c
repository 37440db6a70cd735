/* AttributeProto -> tb_attr: scalars, strings, lists, tensors and subgraphs (the bodies of If, Loop and
 * Scan, read as graphs whose parent is the node's graph). The declared type must match the value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/onnx/onnx_internal.h"

enum {
  A_NAME = 1, A_F = 2, A_I = 3, A_S = 4, A_T = 5, A_G = 6, A_FLOATS = 7, A_INTS = 8, A_STRINGS = 9, A_TENSORS = 10,
  A_GRAPHS = 11, A_TP = 14, A_TYPE_PROTOS = 15, A_TYPE = 20, A_REF = 21, A_SPARSE = 22, A_SPARSES = 23, A_MAX = 24
};

static const char *const type_names[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS", "INTS",
                                         "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS",
                                         "TYPE_PROTO", "TYPE_PROTOS"};

/* The field that holds each attribute type's value. */
static const int value_field[] = {0, A_F, A_I, A_S, A_T, A_G, A_FLOATS, A_INTS, A_STRINGS, A_TENSORS, A_GRAPHS,
                                  A_SPARSE, A_SPARSES, A_TP, A_TYPE_PROTOS};

static const char *value_field_name(int field) {
  switch (field) {
  case A_F: return "f";
  case A_I: return "i";
  case A_S: return "s";
  case A_T: return "t";
  case A_G: return "g";
  case A_FLOATS: return "floats";
  case A_INTS: return "ints";
  case A_STRINGS: return "strings";
  case A_TENSORS: return "tensors";
  case A_GRAPHS: return "graphs";
  case A_TP: return "tp";
  case A_TYPE_PROTOS: return "type_protos";
  case A_SPARSE: return "sparse_tensor";
  case A_SPARSES: return "sparse_tensors";
  default: return "?";
  }
}

void tb_onnx_attr_release(tb_attr *a) {
  if (a->type == TB_ATTR_GRAPH && a->g) {
    tb_graph_destroy(a->g);
    a->g = NULL;
  }
  if (a->type == TB_ATTR_GRAPHS && a->graphs) {
    tb_graph **list = (tb_graph **)a->graphs;
    for (size_t i = 0; i < a->count; i++) {
      tb_graph_destroy(list[i]);
      list[i] = NULL;
    }
  }
}

typedef struct list_sink {
  void *out;
  size_t i;
  bool is_float;
} list_sink;

static bool list_put(void *ctx, uint64_t v) {
  list_sink *k = ctx;
  if (k->is_float) {
    uint32_t bits = (uint32_t)v;
    memcpy((float *)k->out + k->i, &bits, 4);
  } else {
    ((int64_t *)k->out)[k->i] = (int64_t)v;
  }
  k->i++;
  return true;
}

static tb_status read_value(onnx_ctx *c, tb_graph *g, const tb_pb_field *whole, const char *at, tb_attr *a,
                            const size_t *count) {
  int field = value_field[a->type];
  tb_pb r = tb_pb_init(whole->data, whole->len, NULL);
  tb_pb_field e;
  size_t n = count[field];
  a->count = 0;
  void *list = NULL;
  switch (a->type) {
  case TB_ATTR_FLOATS:
  case TB_ATTR_INTS:
    list = tb_graph_alloc(g, (n ? n : 1) * (a->type == TB_ATTR_FLOATS ? sizeof(float) : sizeof(int64_t)));
    break;
  case TB_ATTR_STRINGS: list = tb_graph_alloc(g, (n ? n : 1) * sizeof(char *)); break;
  case TB_ATTR_TENSORS: list = tb_graph_alloc(g, (n ? n : 1) * sizeof(tb_ir_tensor *)); break;
  case TB_ATTR_GRAPHS: list = tb_graph_alloc(g, (n ? n : 1) * sizeof(tb_graph *)); break;
  default: break;
  }
  if (a->type >= TB_ATTR_FLOATS && a->type <= TB_ATTR_GRAPHS && !list) return tb_onnx_oom(c, at);
  if (a->type == TB_ATTR_FLOATS) a->floats = list;
  if (a->type == TB_ATTR_INTS) a->ints = list;
  if (a->type == TB_ATTR_STRINGS) a->strings = list;
  if (a->type == TB_ATTR_TENSORS) a->tensors = list;
  if (a->type == TB_ATTR_GRAPHS) {
    memset(list, 0, (n ? n : 1) * sizeof(tb_graph *));
    a->graphs = list;
  }
  if (a->type == TB_ATTR_STRING) a->s = ""; /* proto2 default when s is absent */
  list_sink sink = {.out = list, .is_float = a->type == TB_ATTR_FLOATS};
  while (tb_pb_next(&r, &e) > 0) { /* the message was walked once already: it is well formed */
    if ((int)e.number != field) continue;
    tb_status st = TB_OK;
    switch (a->type) {
    case TB_ATTR_FLOAT: {
      if (e.wire != TB_PB_FIXED32) return tb_onnx_wire_fail(c, at, "f", &e);
      uint32_t bits = (uint32_t)e.u;
      memcpy(&a->f, &bits, 4);
      break;
    }
    case TB_ATTR_INT:
      if (e.wire != TB_PB_VARINT) return tb_onnx_wire_fail(c, at, "i", &e);
      a->i = (int64_t)e.u;
      break;
    case TB_ATTR_STRING: {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "s", &e);
      char *s = tb_onnx_strdup(&g->arena, &e);
      if (!s) return tb_onnx_oom(c, at);
      a->s = s;
      a->s_len = e.len;
      break;
    }
    case TB_ATTR_STRINGS: {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "strings", &e);
      char *s = tb_onnx_strdup(&g->arena, &e);
      if (!s) return tb_onnx_oom(c, at);
      ((const char **)list)[a->count++] = s;
      break;
    }
    case TB_ATTR_FLOATS:
    case TB_ATTR_INTS:
      if (!tb_pb_elements(&e, a->type == TB_ATTR_FLOATS ? TB_PB_FIXED32 : TB_PB_VARINT, list_put, &sink))
        return tb_onnx_wire_fail(c, at, value_field_name(field), &e);
      a->count = sink.i;
      break;
    case TB_ATTR_TENSOR:
      st = tb_onnx_read_tensor_field(c, &g->arena, &e, at, "tensor", &a->t);
      break;
    case TB_ATTR_TENSORS: {
      char what[48];
      snprintf(what, sizeof what, "tensor #%zu", a->count);
      tb_ir_tensor *t;
      st = tb_onnx_read_tensor_field(c, &g->arena, &e, at, what, &t);
      if (st == TB_OK) ((tb_ir_tensor **)list)[a->count++] = t;
      break;
    }
    case TB_ATTR_GRAPH:
      if (a->g) return tb_onnx_fail(c, TB_ERR_MODEL, at, "holds more than one graph");
      st = tb_onnx_read_graph(c, &e, g, at, &a->g);
      break;
    case TB_ATTR_GRAPHS: {
      tb_graph *sub;
      st = tb_onnx_read_graph(c, &e, g, at, &sub);
      if (st == TB_OK) ((tb_graph **)list)[a->count++] = sub;
      break;
    }
    default:
      break; /* TYPE_PROTO(S): accepted, not kept */
    }
    if (st != TB_OK) return st;
  }
  return TB_OK;
}

tb_status tb_onnx_read_attr(onnx_ctx *c, tb_graph *g, const tb_pb_field *f, const char *where, tb_attr *a) {
  memset(a, 0, sizeof *a);
  char at[TB_ONNX_WHERE];
  tb_onnx_at(at, "%s: attribute", where);
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "attribute", f);
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  size_t count[A_MAX] = {0};
  bool present[A_MAX] = {false};
  int64_t type = 0;
  const char *name = NULL;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number >= A_MAX) continue;
    present[e.number] = true;
    switch (e.number) {
    case A_NAME:
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "name", &e);
      if (!(name = tb_onnx_strdup(&g->arena, &e))) return tb_onnx_oom(c, at);
      break;
    case A_TYPE:
      if (e.wire != TB_PB_VARINT) return tb_onnx_wire_fail(c, at, "type", &e);
      type = (int64_t)e.u;
      break;
    case A_FLOATS:
      if (!tb_pb_count(&e, TB_PB_FIXED32, &count[e.number])) return tb_onnx_wire_fail(c, at, "floats", &e);
      break;
    case A_INTS:
      if (!tb_pb_count(&e, TB_PB_VARINT, &count[e.number])) return tb_onnx_wire_fail(c, at, "ints", &e);
      break;
    default:
      count[e.number]++;
      break;
    }
  }
  if (rc < 0) return tb_onnx_pb_fail(c, at, &r);
  if (!name || !*name) return tb_onnx_fail(c, TB_ERR_MODEL, at, "has no name");
  tb_onnx_at(at, "%s: attribute '%.64s'", where, name);
  a->name = name;
  if (present[A_REF])
    return tb_onnx_fail(c, TB_ERR_MODEL, at, "refers to a function attribute (ref_attr_name), which is only valid inside a function");
  if (type == 0) { /* old files leave the type out: take it from the one value field present */
    int found = 0;
    for (int t = 1; t <= TB_ATTR_TYPE_PROTOS; t++)
      if (present[value_field[t]]) {
        if (found) return tb_onnx_fail(c, TB_ERR_MODEL, at, "has no type and several values");
        found = t;
      }
    if (!found) return tb_onnx_fail(c, TB_ERR_MODEL, at, "has no type and no value");
    type = found;
  }
  if (type < 0 || type > TB_ATTR_TYPE_PROTOS)
    return tb_onnx_fail(c, TB_ERR_MODEL, at, "type %lld is not an ONNX attribute type", (long long)type);
  a->type = (tb_attr_type)type;
  for (int t = 1; t <= TB_ATTR_TYPE_PROTOS; t++) {
    int fld = value_field[t];
    if (t != type && present[fld] && fld != value_field[type])
      return tb_onnx_fail(c, TB_ERR_MODEL, at, "has type %s but holds '%s', a %s value", type_names[type],
                       value_field_name(fld), type_names[t]);
  }
  if (a->type == TB_ATTR_SPARSE_TENSOR || a->type == TB_ATTR_SPARSE_TENSORS)
    return tb_onnx_fail(c, TB_ERR_UNSUPPORTED, at, "sparse tensor attributes are not supported");
  if ((a->type == TB_ATTR_TENSOR || a->type == TB_ATTR_GRAPH) && !present[value_field[type]])
    return tb_onnx_fail(c, TB_ERR_MODEL, at, "has type %s but no value", type_names[type]);
  if (a->type == TB_ATTR_TENSOR && count[A_T] > 1) return tb_onnx_fail(c, TB_ERR_MODEL, at, "holds more than one tensor");
  tb_status st = read_value(c, g, f, at, a, count);
  if (st != TB_OK) {
    tb_onnx_attr_release(a);
    memset(a, 0, sizeof *a);
  }
  return st;
}
