/* ModelProto -> tb_ir_model: ir_version, opset imports, producer, the main graph; and the reader of a
 * lone serialized TensorProto (the conformance data's .pb files). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/error.h"
#include "core/regular_file.h"
#include "model/onnx/onnx_internal.h"

enum {
  M_IR_VERSION = 1, M_PRODUCER_NAME = 2, M_PRODUCER_VERSION = 3, M_DOMAIN = 4, M_DOC = 6, M_GRAPH = 7, M_OPSET = 8
};
enum { TB_ONNX_MIN_IR_VERSION = 3, TB_ONNX_MAX_IR_VERSION = 11 };

static tb_status read_opset(const onnx_ctx *c, const tb_pb_field *f, size_t index, tb_opset_import *out) {
  char at[TB_ONNX_WHERE];
  tb_onnx_at(at, "opset_import #%zu", index);
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, "", "opset_import", f);
  tb_pb r = tb_pb_init(f->data, f->len, NULL);
  tb_pb_field e;
  int rc;
  out->domain = "";
  out->version = 0;
  while ((rc = tb_pb_next(&r, &e)) > 0) {
    if (e.number == 1) {
      if (e.wire != TB_PB_LEN) return tb_onnx_wire_fail(c, at, "domain", &e);
      char *d = tb_onnx_strdup(&c->m->arena, &e);
      if (!d) return tb_onnx_oom(c, at);
      out->domain = strcmp(d, "ai.onnx") == 0 ? "" : d;
    } else if (e.number == 2) {
      if (e.wire != TB_PB_VARINT) return tb_onnx_wire_fail(c, at, "version", &e);
      out->version = (int64_t)e.u;
    }
  }
  if (rc < 0) return tb_onnx_pb_fail(c, at, &r);
  if (out->version <= 0 || out->version > 1000)
    return tb_onnx_fail(c, TB_ERR_MODEL, at, "domain '%.64s' has version %lld, which is not a valid opset version",
                     *out->domain ? out->domain : "ai.onnx", (long long)out->version);
  return TB_OK;
}

static tb_status read_string(const onnx_ctx *c, const tb_pb_field *f, const char *field, const char **out) {
  if (f->wire != TB_PB_LEN) return tb_onnx_wire_fail(c, "", field, f);
  char *s = tb_onnx_strdup(&c->m->arena, f);
  if (!s) return tb_onnx_oom(c, "");
  *out = s;
  return TB_OK;
}

tb_status tb_onnx_read_model(tb_ir_model *m, const void *data, size_t size, const tb_onnx_read_options *options) {
  onnx_ctx c = {.m = m, .label = options && options->label ? options->label : "model"};
  if (options) {
    c.base_dir = options->base_dir;
    c.external = options->external;
  }
  if (!data || size == 0) return tb_onnx_fail(&c, TB_ERR_MODEL, "", "the file is empty");
  if (m->graph) return tb_error(TB_ERR_INTERNAL, "tb_onnx_read_model: the model already has a graph");

  /* Walk the top level once: this checks its framing and counts the opset imports and graphs. */
  tb_pb r = tb_pb_init(data, size, NULL);
  tb_pb_field e, graph_field = {0};
  int rc;
  size_t n_opsets = 0, n_graphs = 0;
  bool has_ir_version = false;
  tb_status st = TB_OK;
  while (st == TB_OK && (rc = tb_pb_next(&r, &e)) > 0) {
    switch (e.number) {
    case M_IR_VERSION:
      if (e.wire != TB_PB_VARINT) return tb_onnx_wire_fail(&c, "", "ir_version", &e);
      m->ir_version = (int64_t)e.u;
      has_ir_version = true;
      break;
    case M_OPSET: n_opsets++; break;
    case M_GRAPH: graph_field = e; n_graphs++; break;
    case M_PRODUCER_NAME: st = read_string(&c, &e, "producer_name", &m->producer_name); break;
    case M_PRODUCER_VERSION: st = read_string(&c, &e, "producer_version", &m->producer_version); break;
    case M_DOMAIN: st = read_string(&c, &e, "domain", &m->domain); break;
    case M_DOC: st = read_string(&c, &e, "doc_string", &m->doc); break;
    default: break; /* model_version, metadata_props, training_info, functions, unknown fields */
    }
  }
  if (st != TB_OK) return st;
  if (rc < 0) return tb_onnx_pb_fail(&c, "", &r);
  if (!has_ir_version) return tb_onnx_fail(&c, TB_ERR_MODEL, "", "has no ir_version (is it an ONNX model?)");
  if (m->ir_version < TB_ONNX_MIN_IR_VERSION || m->ir_version > TB_ONNX_MAX_IR_VERSION)
    return tb_onnx_fail(&c, m->ir_version <= 0 ? TB_ERR_MODEL : TB_ERR_UNSUPPORTED, "",
                     "ir_version %lld is outside the versions this reader knows (%d to %d)", (long long)m->ir_version,
                     TB_ONNX_MIN_IR_VERSION, TB_ONNX_MAX_IR_VERSION);
  if (n_opsets == 0) return tb_onnx_fail(&c, TB_ERR_MODEL, "", "has no opset_import");
  if (n_graphs != 1)
    return tb_onnx_fail(&c, TB_ERR_MODEL, "", n_graphs ? "has more than one graph" : "has no graph");

  m->opsets = tb_arena_alloc(&m->arena, n_opsets * sizeof *m->opsets);
  if (!m->opsets) return tb_onnx_oom(&c, "");
  r = tb_pb_init(data, size, NULL);
  while (tb_pb_next(&r, &e) > 0) {
    if (e.number != M_OPSET) continue;
    tb_opset_import op;
    st = read_opset(&c, &e, m->n_opsets, &op);
    if (st != TB_OK) return st;
    for (size_t i = 0; i < m->n_opsets; i++)
      if (!strcmp(m->opsets[i].domain, op.domain))
        return tb_onnx_fail(&c, TB_ERR_MODEL, "", "opset_import lists domain '%.64s' twice",
                         *op.domain ? op.domain : "ai.onnx");
    m->opsets[m->n_opsets++] = op;
  }
  tb_graph *g;
  st = tb_onnx_read_graph(&c, &graph_field, NULL, "", &g);
  if (st != TB_OK) return st;
  m->graph = g;
  return TB_OK;
}

bool tb_onnx_read_metadata(const void *data, size_t size, tb_arena *arena, const char ***keys, const char ***values,
                           size_t *count) {
  *keys = *values = NULL;
  *count = 0;
  size_t n = 0;
  tb_pb r = tb_pb_init(data, size, NULL);
  tb_pb_field e;
  while (tb_pb_next(&r, &e) > 0)
    if (e.number == 14 && e.wire == TB_PB_LEN) n++;
  if (!n) return true;
  const char **k = tb_arena_alloc(arena, n * sizeof *k), **v = tb_arena_alloc(arena, n * sizeof *v);
  if (!k || !v) return false;
  r = tb_pb_init(data, size, NULL);
  while (tb_pb_next(&r, &e) > 0) {
    if (e.number != 14 || e.wire != TB_PB_LEN) continue;
    tb_pb er = tb_pb_init(e.data, e.len, NULL);
    tb_pb_field kv;
    const char *key = NULL, *value = "";
    while (tb_pb_next(&er, &kv) > 0) {
      if (kv.wire != TB_PB_LEN || (kv.number != 1 && kv.number != 2)) continue;
      char *str = tb_onnx_strdup(arena, &kv);
      if (!str) return false;
      if (kv.number == 1) key = str;
      else value = str;
    }
    if (!key || !*key) continue;
    k[*count] = key;
    v[*count] = value;
    (*count)++;
  }
  *keys = k;
  *values = v;
  return true;
}

tb_status tb_onnx_read_tensor(tb_ir_model *m, const void *data, size_t size, const char *label, tb_ir_tensor **out) {
  *out = NULL;
  onnx_ctx c = {.m = m, .label = label ? label : "tensor"};
  if (!data) data = "";
  tb_pb_field whole = {.wire = TB_PB_LEN, .data = data, .len = size};
  return tb_onnx_read_tensor_field(&c, &m->arena, &whole, "", "tensor", out);
}

tb_status tb_onnx_read_tensor_file(tb_ir_model *m, const char *path, tb_ir_tensor **out) {
  *out = NULL;
  int fd;
  struct stat st;
  tb_status opened = tb_fs_open_regular(path, "tensor file", &fd, &st);
  if (opened != TB_OK) return opened;
  size_t size = (size_t)st.st_size;
  unsigned char *buf = malloc(size ? size : 1);
  if (!buf) {
    close(fd);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no memory for its %zu bytes", path, size);
  }
  size_t got = 0;
  while (got < size) {
    ssize_t n = read(fd, buf + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      close(fd);
      free(buf);
      return tb_error(TB_ERR_IO, "%s: read failed after %zu of %zu bytes: %s", path, got, size, strerror(err));
    }
    got += (size_t)n;
  }
  close(fd);
  if (!tb_ir_model_own(m, buf)) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  return tb_onnx_read_tensor(m, buf, size, path, out);
}
