/* Constant folding's evaluator: run one node whose inputs are all constants with the CPU reference kernel
 * (found through the kernel registry, on tensors of a CPU backend) and turn its outputs into constants. */
#include "model/passes/fold_eval.h"
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/kernel.h"
#include "core/error.h"
#include "model/engine.h"
#include "model/params.h"
#include "ops/op.h"

/* The type a constant has, from its own dims. */
static void const_type(const tb_ir_tensor *t, tb_value_type *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_VALUE_TENSOR;
  out->has_dtype = true;
  out->dtype = t->dtype;
  out->has_shape = true;
  out->ndim = t->ndim;
  for (size_t d = 0; d < t->ndim; d++) {
    out->dims[d].value = t->dims[d];
    out->dims[d].symbol = -1;
  }
}

static bool type_bytes(const tb_value_type *t, size_t *bytes) {
  if (!t->has_dtype || !t->has_shape) return false;
  size_t n = tb_dtype_size(t->dtype);
  for (size_t d = 0; d < t->ndim; d++) {
    if (t->dims[d].value < 0) return false;
    if (t->dims[d].value > 0 && n > SIZE_MAX / (size_t)t->dims[d].value) n = SIZE_MAX;
    else n *= (size_t)t->dims[d].value;
  }
  *bytes = n;
  return true;
}

typedef struct fold_run {
  size_t n_in, n_out;
  tb_value_type in_types[16], out_types[16];
  const tb_value_type *in_ptrs[16];
  const tb_ir_tensor *in_values[16];
  tb_tensor *inputs[16];
  tb_tensor *outputs[16];
} fold_run;

static void fold_run_free(fold_run *r) {
  for (size_t i = 0; i < r->n_in; i++) tb_tensor_destroy(r->inputs[i]);
  for (size_t i = 0; i < r->n_out; i++) tb_tensor_destroy(r->outputs[i]);
}

static tb_status make_inputs(fold_run *r, tb_backend *cpu) {
  for (size_t i = 0; i < r->n_in; i++) {
    const tb_ir_tensor *t = r->in_values[i];
    if (!t) continue;
    tb_status s = tb_tensor_create(cpu, t->dtype, t->ndim, t->dims, &r->inputs[i]);
    if (s == TB_OK && t->nbytes > 0) s = tb_tensor_copy_from_host(r->inputs[i], t->data, t->nbytes);
    if (s != TB_OK) return s;
  }
  return TB_OK;
}

/* Store output o of the run as the constant of value v. */
static bool adopt_output(tb_graph *g, int v, tb_tensor *t) {
  size_t bytes = tb_tensor_nbytes(t);
  void *data = NULL;
  tb_ir_tensor *c =
      tb_graph_new_tensor(g, g->values[v].name, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), &data);
  if (!c || (bytes > 0 && tb_tensor_copy_to_host(t, data, bytes) != TB_OK)) return false;
  tb_tbp_set_const(g, v, c);
  return true;
}

tb_status tb_tbp_fold_eval(tb_graph *g, int node, tb_backend **cpu, size_t max_bytes, bool *folded) {
  *folded = false;
  const tb_node *n = &g->nodes[node];
  if (n->n_inputs > 16 || n->n_outputs > 16) return TB_OK;
  fold_run r;
  memset(&r, 0, sizeof r);
  r.n_in = n->n_inputs;
  r.n_out = n->n_outputs;
  for (size_t i = 0; i < r.n_in; i++) {
    if (n->inputs[i] < 0) continue;
    r.in_values[i] = tb_tbp_const(g, n->inputs[i]);
    if (!r.in_values[i]) return TB_OK;
    const_type(r.in_values[i], &r.in_types[i]);
    r.in_ptrs[i] = &r.in_types[i];
  }
  /* Output shapes: preallocate what inference knows; skip outputs that would be too large. */
  if (tb_infer_node(g, n, r.in_ptrs, r.in_values, r.out_types) != TB_OK) return TB_OK;
  for (size_t o = 0; o < r.n_out; o++) {
    size_t bytes;
    if (n->outputs[o] >= 0 && type_bytes(&r.out_types[o], &bytes) && bytes > max_bytes) return TB_OK;
  }
  /* A node whose attributes do not parse is left for prepare, where the error is reported. */
  if (tb_node_parse_params(g, &g->nodes[node]) != TB_OK) return TB_OK;
  if (!*cpu) {
    tb_status s = tb_backend_create_kind(TB_BACKEND_CPU, 0, cpu);
    if (s != TB_OK) return s;
  }
  tb_kernel_query q = tb_kernel_query_for(n, r.in_ptrs, TB_KERNEL_REFERENCE, 0);
  const tb_kernel *k = (*cpu)->ops->find_kernel ? (*cpu)->ops->find_kernel((*cpu)->state, &q) : NULL;
  if (!k) return TB_OK;
  tb_status s = make_inputs(&r, *cpu);
  for (size_t o = 0; o < r.n_out && s == TB_OK; o++) {
    const tb_value_type *t = &r.out_types[o];
    size_t bytes;
    if (n->outputs[o] < 0 || !type_bytes(t, &bytes)) continue;
    int64_t dims[TB_MAX_DIMS];
    for (size_t d = 0; d < t->ndim; d++) dims[d] = t->dims[d].value;
    s = tb_tensor_create(*cpu, t->dtype, t->ndim, dims, &r.outputs[o]);
  }
  if (s != TB_OK) {
    fold_run_free(&r);
    return s == TB_ERR_OUT_OF_MEMORY ? s : TB_OK;
  }
  tb_kernel_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.graph = g;
  ctx.node = n;
  ctx.n_inputs = r.n_in;
  ctx.inputs = r.inputs;
  ctx.n_outputs = r.n_out;
  ctx.outputs = r.outputs;
  ctx.backend = *cpu;
  ctx.threads = 1;
  ctx.params = n->params;
  ctx.domain = q.domain;
  ctx.op_type = n->op_type;
  ctx.opset = n->opset;
  ctx.in_types = r.in_ptrs;
  ctx.omitted_outputs = tb_kernel_omitted_outputs(n);
  ctx.constant_inputs = tb_kernel_constant_inputs(g, n);
  ctx.name = n->name ? n->name : "";
  /* A kernel error (an integer division by zero...) is left for run time, where it is reported. */
  bool ok = k->run(&ctx) == TB_OK;
  for (size_t o = 0; o < r.n_out && ok; o++)
    if (n->outputs[o] >= 0 && (!r.outputs[o] || tb_tensor_nbytes(r.outputs[o]) > max_bytes)) ok = false;
  if (!ok) {
    fold_run_free(&r);
    return TB_OK;
  }
  tb_tbp_kill(g, node);
  *folded = true;
  for (size_t o = 0; o < r.n_out && s == TB_OK; o++)
    if (g->nodes[node].outputs[o] >= 0 && !adopt_output(g, g->nodes[node].outputs[o], r.outputs[o]))
      s = tb_error(TB_ERR_OUT_OF_MEMORY, "constant folding: no memory for the %zu-byte value '%s'",
                   tb_tensor_nbytes(r.outputs[o]), g->values[g->nodes[node].outputs[o]].name);
  fold_run_free(&r);
  return s;
}
