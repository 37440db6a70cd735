/* GraphProto -> tb_graph: initializers, inputs, outputs, value infos (their types and shapes), nodes.
 * Only structure is checked here (names, types, duplicates); whether ops exist and inputs are defined
 * is for tb_graph_check at prepare, so a model with an op we lack still loads. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/onnx/onnx_internal.h"
#include "model/weights.h"

enum { G_NODE = 1, G_NAME = 2, G_INITIALIZER = 5, G_INPUT = 11, G_OUTPUT = 12, G_VALUE_INFO = 13, G_SPARSE = 15 };
enum { N_INPUT = 1, N_OUTPUT = 2, N_NAME = 3, N_OP_TYPE = 4, N_ATTRIBUTE = 5, N_DOMAIN = 7 };

/* ---- Types -------------------------------------------------------------------------------------- */

static tb_status read_shape(const onnx_ctx *c, const tb_pb_field *f, const char *where, bool strict,
                            tb_value_type *out) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  size_t ndim = 0;
  tb_dim dims[TB_MAX_DIMS];
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number != 1) continue;
    if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "shape.dim", &e);
    tb_dim d = {.value = -1, .symbol = -1};
    tb_pb dr = tb_pb_init(e.data, e.len, NULL);
    tb_pb_field de;
    int drc;
    while ((drc = tb_pb_next(&dr, &de)) > 0) {
      if (de.number == 1) {
        if (de.wire != TB_PB_VARINT) return tb_onnx_wire_fail(c, where, "dim_value", &de);
        if ((int64_t)de.u < 0)
          return tb_onnx_fail(c, TB_ERR_MODEL, where, "shape dim %zu has dim_value %lld, which is negative", ndim,
                           (long long)(int64_t)de.u);
        d.value = (int64_t)de.u;
        d.symbol = -1;
      } else if (de.number == 2) {
        if (de.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "dim_param", &de);
        if (de.len == 0) continue;
        char name[256];
        size_t n = de.len < sizeof name - 1 ? de.len : sizeof name - 1;
        memcpy(name, de.data, n);
        name[n] = '\0';
        int sym = tb_ir_model_symbol(c->m, name);
        if (sym < 0) return tb_onnx_oom(c, where);
        d.value = -1;
        d.symbol = sym;
      }
    }
    if (drc < 0) return tb_onnx_pb_fail(c, where, &dr);
    if (ndim < TB_MAX_DIMS) dims[ndim] = d;
    ndim++;
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  if (ndim > TB_MAX_DIMS) {
    if (strict)
      return tb_onnx_fail(c, TB_ERR_UNSUPPORTED, where, "rank %zu is above the %d dimensions supported", ndim, TB_MAX_DIMS);
    return TB_OK; /* an intermediate value: leave its shape unknown */
  }
  out->has_shape = true;
  out->ndim = ndim;
  memcpy(out->dims, dims, ndim * sizeof dims[0]);
  return TB_OK;
}

static tb_status read_tensor_type(const onnx_ctx *c, const tb_pb_field *f, const char *where, bool strict,
                                  tb_value_type *out) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number == 1) {
      if (e.wire != TB_PB_VARINT) return tb_onnx_wire_fail(c, where, "elem_type", &e);
      int64_t code = (int64_t)e.u;
      if (code == 0) continue; /* undefined: unknown */
      tb_dtype d;
      tb_status st = tb_onnx_dtype(code, &d);
      if (st == TB_ERR_MODEL)
        return tb_onnx_fail(c, st, where, "elem_type %lld is not an ONNX element type", (long long)code);
      if (st != TB_OK) {
        if (strict)
          return tb_onnx_fail(c, st, where, "element type %s (elem_type %lld) is not supported", tb_onnx_dtype_name(code),
                           (long long)code);
        continue;
      }
      out->has_dtype = true;
      out->dtype = d;
    } else if (e.number == 2) {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "shape", &e);
      tb_status st = read_shape(c, &e, where, strict, out);
      if (st != TB_OK) return st;
    }
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

/* Sequence / Optional: the element's TypeProto in field 1 gives dtype and shape of the elements. */
static tb_status read_wrapped(const onnx_ctx *c, const tb_pb_field *f, const char *where, bool strict, int depth,
                              tb_value_kind kind, tb_value_type *out) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number != 1) continue;
    if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "elem_type", &e);
    tb_status st = tb_onnx_read_type(c, &e, where, strict, depth + 1, out);
    if (st != TB_OK) return st;
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  out->kind = kind;
  return TB_OK;
}

tb_status tb_onnx_read_type(const onnx_ctx *c, const tb_pb_field *f, const char *where, bool strict, int depth,
                         tb_value_type *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_VALUE_TENSOR;
  if (depth > TB_ONNX_MAX_TYPE_DEPTH)
    return tb_onnx_fail(c, TB_ERR_MODEL, where, "type nests more than %d levels deep", TB_ONNX_MAX_TYPE_DEPTH);
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "type", f);
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    tb_status st = TB_OK;
    if (e.number == 1 || e.number == 4 || e.number == 5 || e.number == 8 || e.number == 9) {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "type", &e);
      memset(out, 0, sizeof *out);
    }
    switch (e.number) {
    case 1: out->kind = TB_VALUE_TENSOR; st = read_tensor_type(c, &e, where, strict, out); break;
    case 4: st = read_wrapped(c, &e, where, false, depth, TB_VALUE_SEQUENCE, out); break;
    case 9: st = read_wrapped(c, &e, where, false, depth, TB_VALUE_OPTIONAL, out); break;
    case 5: out->kind = TB_VALUE_MAP; break;
    case 8: out->kind = TB_VALUE_OTHER; break; /* sparse tensor */
    default: break;
    }
    if (st != TB_OK) return st;
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

/* ---- Value infos -------------------------------------------------------------------------------- */

/* Parse a ValueInfoProto: its name (required) and its type (when present). */
static tb_status read_value_info(const onnx_ctx *c, tb_graph *g, const tb_pb_field *f, const char *where,
                                 const char *what, size_t index, bool strict, int *out_value, tb_value_type *type,
                                 bool *has_type) {
  char at[TB_ONNX_WHERE];
  tb_onnx_at(at, "%s: %s #%zu", where, what, index);
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, what, f);
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e, type_field = {0};
  int rc;
  const char *name = NULL;
  *has_type = false;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number == 1) {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "name", &e);
      if (!(name = tb_onnx_strdup(&g->arena, &e))) return tb_onnx_oom(c, at);
    } else if (e.number == 2) {
      type_field = e;
      *has_type = true;
    }
  }
  if (rc < 0) return tb_onnx_pb_fail(c, at, &r);
  if (!name || !*name) return tb_onnx_fail(c, TB_ERR_MODEL, where, "%s #%zu has no name", what, index);
  tb_onnx_at(at, "%s: %s '%.128s'", where, what, name);
  if (*has_type) {
    tb_status st = tb_onnx_read_type(c, &type_field, at, strict, 0, type);
    if (st != TB_OK) return st;
  }
  int v = tb_graph_value(g, name);
  if (v < 0) return tb_onnx_oom(c, at);
  *out_value = v;
  return TB_OK;
}

/* ---- Nodes -------------------------------------------------------------------------------------- */

static tb_status read_node(onnx_ctx *c, tb_graph *g, const tb_pb_field *f, const char *where, size_t index) {
  char at[TB_ONNX_WHERE];
  tb_onnx_at(at, "%s: node #%zu", where, index);
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "node", f);
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  const char *name = "", *op_type = NULL, *domain = "";
  size_t n_in = 0, n_out = 0, n_attr = 0;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    const char **dst = NULL;
    switch (e.number) {
    case N_INPUT: n_in++; break;
    case N_OUTPUT: n_out++; break;
    case N_ATTRIBUTE: n_attr++; break;
    case N_NAME: dst = &name; break;
    case N_OP_TYPE: dst = &op_type; break;
    case N_DOMAIN: dst = &domain; break;
    default: continue;
    }
    if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "node field", &e);
    if (dst && !(*dst = tb_onnx_strdup(&g->arena, &e))) return tb_onnx_oom(c, at);
  }
  if (rc < 0) return tb_onnx_pb_fail(c, at, &r);
  if (*name) tb_onnx_at(at, "%s: node '%.128s' (%.64s)", where, name, op_type ? op_type : "?");
  else tb_onnx_at(at, "%s: node #%zu (%.64s)", where, index, op_type ? op_type : "?");
  if (!op_type || !*op_type) return tb_onnx_fail(c, TB_ERR_MODEL, at, "has no op_type");

  int *inputs = malloc((n_in + n_out + 1) * sizeof *inputs);
  tb_attr *attrs = calloc(n_attr + 1, sizeof *attrs);
  if (!inputs || !attrs) {
    free(inputs);
    free(attrs);
    return tb_onnx_oom(c, at);
  }
  int *outputs = inputs + n_in;
  size_t i_in = 0, i_out = 0, i_attr = 0;
  tb_status st = TB_OK;
  r = tb_pb_init(f->data, f->len, NULL);
  while (st == TB_OK && tb_pb_next(&r, &e) > 0) {
    if (e.number == N_INPUT || e.number == N_OUTPUT) {
      int v = -1;
      if (e.len) {
        const char *vname = tb_onnx_strdup(&g->arena, &e);
        if (!vname || (v = tb_graph_value(g, vname)) < 0) st = tb_onnx_oom(c, at);
      }
      if (e.number == N_INPUT) inputs[i_in++] = v;
      else outputs[i_out++] = v;
    } else if (e.number == N_ATTRIBUTE) {
      st = tb_onnx_read_attr(c, g, &e, at, &attrs[i_attr]);
      if (st == TB_OK) {
        for (size_t k = 0; k < i_attr; k++)
          if (!strcmp(attrs[k].name, attrs[i_attr].name)) {
            st = tb_onnx_fail(c, TB_ERR_MODEL, at, "attribute '%.64s' is given twice", attrs[k].name);
            break;
          }
        i_attr++; /* released below on failure too */
      }
    }
  }
  if (st == TB_OK && tb_graph_add_node(g, name, op_type, domain, inputs, n_in, outputs, n_out, attrs, n_attr) < 0)
    st = tb_onnx_oom(c, at);
  if (st != TB_OK)
    for (size_t k = 0; k < i_attr; k++) tb_onnx_attr_release(&attrs[k]);
  free(inputs);
  free(attrs);
  return st;
}

/* ---- The graph ---------------------------------------------------------------------------------- */

static tb_status sparse_name(const onnx_ctx *c, const tb_pb_field *f, const char *where, char *name, size_t cap) {
  name[0] = '\0';
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number != 1 || e.wire != TB_PB_LEN) continue; /* values: a TensorProto with the name */
    tb_pb vr = tb_pb_init(e.data, e.len, NULL);
    tb_pb_field ve;
    int vrc;
    while ((vrc = tb_pb_next(&vr, &ve)) > 0)
      if (ve.number == 8 && ve.wire == TB_PB_LEN) snprintf(name, cap, "%.*s", (int)(ve.len < 128 ? ve.len : 128), ve.data);
    if (vrc < 0) return tb_onnx_pb_fail(c, where, &vr);
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

/* The graph's fields are walked several times, and each touch of an initializer's header maps the
 * page-cache folio around it (up to 2 MiB) into the process: drop the file's pages behind the walk once it
 * passes a large initializer, so loading never holds the weights resident. No-op unless f is in a mapped
 * file (model/weights.h). */
static void drop_behind(const tb_pb_field *f, const tb_pb_field *e) {
  if (e->number == G_INITIALIZER && e->len >= (size_t)64 * 1024)
    tb_weights_drop_file(f->data, (size_t)(e->data + e->len - f->data));
}

static tb_status read_initializers(onnx_ctx *c, tb_graph *g, const tb_pb_field *f, const char *where) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  size_t index = 0;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number == G_SPARSE) {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, where, "sparse_initializer", &e);
      char name[160];
      tb_status st = sparse_name(c, &e, where, name, sizeof name);
      if (st != TB_OK) return st;
      return tb_onnx_fail(c, TB_ERR_UNSUPPORTED, where, "sparse_initializer '%s' is not supported (sparse tensors)", name);
    }
    if (e.number != G_INITIALIZER) continue;
    tb_ir_tensor *t;
    tb_status st = tb_onnx_read_tensor_field(c, &g->arena, &e, where, "initializer", &t);
    if (st != TB_OK) return st;
    drop_behind(f, &e);
    if (!*t->name) return tb_onnx_fail(c, TB_ERR_MODEL, where, "initializer #%zu has no name", index);
    int v = tb_graph_find(g, t->name);
    if (v >= 0 && g->values[v].is_initializer)
      return tb_onnx_fail(c, TB_ERR_MODEL, where, "initializer '%.128s' is given twice", t->name);
    if (v < 0 && (v = tb_graph_value(g, t->name)) < 0) return tb_onnx_oom(c, where);
    tb_value *val = &g->values[v];
    val->constant = t;
    val->is_initializer = true;
    val->type.kind = TB_VALUE_TENSOR;
    val->type.has_dtype = true;
    val->type.dtype = t->dtype;
    val->type.has_shape = true;
    val->type.ndim = t->ndim;
    for (size_t i = 0; i < t->ndim; i++) val->type.dims[i] = (tb_dim){.value = t->dims[i], .symbol = -1};
    index++;
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

static size_t count_field(const tb_pb_field *f, uint32_t number) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  size_t n = 0;
  while (tb_pb_next(&r, &e) > 0) {
    if (e.number == number) n++;
    drop_behind(f, &e);
  }
  return n;
}

/* Graph inputs, outputs and value infos: names and declared types. */
static tb_status read_interface(onnx_ctx *c, tb_graph *g, const tb_pb_field *f, const char *where) {
  size_t n_in = count_field(f, G_INPUT), n_out = count_field(f, G_OUTPUT);
  g->inputs = tb_graph_alloc(g, (n_in + 1) * sizeof(int));
  g->outputs = tb_graph_alloc(g, (n_out + 1) * sizeof(int));
  if (!g->inputs || !g->outputs) return tb_onnx_oom(c, where);
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  size_t i_in = 0, i_out = 0, i_info = 0;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    drop_behind(f, &e);
    if (e.number != G_INPUT && e.number != G_OUTPUT && e.number != G_VALUE_INFO) continue;
    bool io = e.number != G_VALUE_INFO;
    const char *what = e.number == G_INPUT ? "input" : e.number == G_OUTPUT ? "output" : "value_info";
    size_t index = e.number == G_INPUT ? i_in : e.number == G_OUTPUT ? i_out : i_info++;
    tb_value_type type;
    bool has_type = false;
    int v = -1;
    tb_status st = read_value_info(c, g, &e, where, what, index, io, &v, &type, &has_type);
    if (st != TB_OK) return st;
    tb_value *val = &g->values[v];
    if (e.number == G_INPUT) {
      if (val->is_input)
        return tb_onnx_fail(c, TB_ERR_MODEL, where, "input '%.128s' is declared twice", val->name);
      val->is_input = true;
      if (!val->is_initializer) g->inputs[g->n_inputs++] = v;
      i_in++;
    } else if (e.number == G_OUTPUT) {
      val->is_output = true;
      g->outputs[g->n_outputs++] = v;
      i_out++;
    }
    if (has_type && !val->is_initializer && (io || (!val->type.has_dtype && !val->type.has_shape))) val->type = type;
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

static tb_status read_nodes(onnx_ctx *c, tb_graph *g, const tb_pb_field *f, const char *where) {
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  size_t index = 0;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    drop_behind(f, &e);
    if (e.number != G_NODE) continue;
    tb_status st = read_node(c, g, &e, where, index++);
    if (st != TB_OK) return st;
  }
  if (rc < 0) return tb_onnx_pb_fail(c, where, &r);
  return TB_OK;
}

tb_status tb_onnx_read_graph(onnx_ctx *c, const tb_pb_field *f, tb_graph *parent, const char *where, tb_graph **out) {
  *out = NULL;
  char at[TB_ONNX_WHERE];
  const char *prefix = where && *where ? where : "";
  const char *sep = *prefix ? ": " : "";
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, prefix, "graph", f);
  if (c->graph_depth >= TB_ONNX_MAX_GRAPH_DEPTH)
    return tb_onnx_fail(c, TB_ERR_MODEL, prefix, "subgraphs nest more than %d levels deep", TB_ONNX_MAX_GRAPH_DEPTH);
  /* The name first, for messages; and the whole message checked once, so later passes may skip errors. */
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  char name[160] = "";
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number == G_NAME && e.wire == TB_PB_LEN) snprintf(name, sizeof name, "%.*s", (int)(e.len < 128 ? e.len : 128), e.data);
    drop_behind(f, &e);
  }
  tb_onnx_at(at, "%s%sgraph '%s'", prefix, sep, name);
  if (rc < 0) return tb_onnx_pb_fail(c, at, &r);

  tb_graph *g = tb_graph_new(c->m, parent, name);
  if (!g) return tb_onnx_oom(c, at);
  c->graph_depth++;
  tb_status st = read_initializers(c, g, f, at);
  if (st == TB_OK) st = read_interface(c, g, f, at);
  if (st == TB_OK) st = read_nodes(c, g, f, at);
  c->graph_depth--;
  if (st != TB_OK) {
    tb_graph_destroy(g);
    return st;
  }
  *out = g;
  return TB_OK;
}
