/* O1 pass: fold an inference BatchNormalization into the Conv before it. With s = scale / sqrt(var + eps)
 * per output channel m: W'[m] = W[m] * s[m] and B'[m] = (B[m] - mean[m]) * s[m] + bias[m], computed in
 * double and rounded once to the weight dtype. Matches the unfolded graph within float rounding (about
 * 1e-6 relative for float32): the BatchNormalization's arithmetic is reassociated into the weights. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/passes/pass_util.h"

static bool float_dtype(tb_dtype d) {
  return d == TB_DTYPE_F32 || d == TB_DTYPE_F64 || d == TB_DTYPE_F16 || d == TB_DTYPE_BF16;
}

/* The BatchNormalization at node bn is in inference form: one used output, training_mode 0. */
static bool bn_inference(const tb_graph *g, const tb_node *bn) {
  for (size_t o = 1; o < bn->n_outputs; o++) {
    int v = bn->outputs[o];
    if (v >= 0 && (g->values[v].is_output || tb_tbp_use_count(g, v) > 0 || tb_tbp_captured(g, v))) return false;
  }
  int64_t training = 0, spatial = 1;
  if (tb_attr_int(g, bn, "training_mode", 0, &training) != TB_OK || training != 0) return false;
  if (tb_attr_int(g, bn, "spatial", 1, &spatial) != TB_OK || spatial != 1) return false;
  if (tb_attr_int(g, bn, "is_test", 1, &training) != TB_OK) return false;
  return bn->n_inputs == 5 && bn->n_outputs >= 1 && bn->outputs[0] >= 0;
}

static bool per_channel(const tb_ir_tensor *t, int64_t m, tb_dtype dtype) {
  return t && t->dtype == dtype && tb_ir_tensor_numel(t) == m;
}

/* Fold node bn into conv; false when the pair does not qualify. */
static tb_status fold_pair(tb_graph *g, int conv, int bn, bool *done) {
  *done = false;
  const tb_node *c = &g->nodes[conv], *b = &g->nodes[bn];
  if (c->n_inputs < 2 || c->n_outputs != 1 || !bn_inference(g, b) || b->inputs[0] != c->outputs[0]) return TB_OK;
  const tb_ir_tensor *w = tb_tbp_const(g, c->inputs[1]);
  if (!w || w->ndim < 3 || !float_dtype(w->dtype)) return TB_OK;
  int64_t m = w->dims[0];
  const tb_ir_tensor *bias0 = NULL;
  if (c->n_inputs > 2 && c->inputs[2] >= 0 && !per_channel(bias0 = tb_tbp_const(g, c->inputs[2]), m, w->dtype))
    return TB_OK;
  const tb_ir_tensor *p[4];
  for (int k = 0; k < 4; k++)
    if (!per_channel(p[k] = tb_tbp_const(g, b->inputs[1 + k]), m, w->dtype)) return TB_OK;
  float eps = 1e-5f;
  if (tb_attr_float(g, b, "epsilon", 1e-5f, &eps) != TB_OK) return TB_OK;

  int64_t per = m > 0 ? tb_ir_tensor_numel(w) / m : 0;
  size_t wd_bytes = ((size_t)tb_ir_tensor_numel(w) + (size_t)m + 1) * sizeof(double);
  double *wd = malloc(wd_bytes);
  if (!wd) return tb_tbp_out_of_memory(g, "conv_bn_folding", "the folded weights in f64", wd_bytes);
  double *bd = wd + tb_ir_tensor_numel(w);
  for (int64_t ch = 0; ch < m; ch++) {
    double s = tb_ir_tensor_double(p[0], ch) / sqrt(tb_ir_tensor_double(p[3], ch) + (double)eps);
    for (int64_t i = 0; i < per; i++) wd[ch * per + i] = tb_ir_tensor_double(w, ch * per + i) * s;
    double b0 = bias0 ? tb_ir_tensor_double(bias0, ch) : 0.0;
    bd[ch] = (b0 - tb_ir_tensor_double(p[2], ch)) * s + tb_ir_tensor_double(p[1], ch);
  }
  void *wdata = NULL, *bdata = NULL;
  int64_t bdims[1] = {m};
  int64_t wdims[TB_MAX_DIMS];
  memcpy(wdims, w->dims, w->ndim * sizeof wdims[0]);
  tb_dtype dtype = w->dtype;
  size_t wndim = w->ndim;
  int wv = tb_tbp_new_const(g, "bn_folded_W", dtype, wndim, wdims, &wdata);
  int bv = wv < 0 ? -1 : tb_tbp_new_const(g, "bn_folded_B", dtype, 1, bdims, &bdata);
  tb_status s = bv < 0 ? tb_tbp_out_of_memory(g, "conv_bn_folding", "the folded W and B constants", wd_bytes) : TB_OK;
  if (s == TB_OK) s = tb_convert(TB_DTYPE_F64, wd, dtype, wdata, (size_t)(m * per), true);
  if (s == TB_OK) s = tb_convert(TB_DTYPE_F64, bd, dtype, bdata, (size_t)m, true);
  free(wd);
  if (s != TB_OK) return s;
  c = &g->nodes[conv];
  b = &g->nodes[bn];
  int inputs[3] = {c->inputs[0], wv, bv};
  int out = b->outputs[0];
  int fused = tb_tbp_add_node(g, c->name, "Conv", "", c->opset, inputs, 3, &out, 1, c->attrs, c->n_attrs);
  const int replaced[2] = {conv, bn};
  s = tb_tbp_replace(g, "conv_bn_folding", fused, replaced, 2, out);
  if (s != TB_OK) return s;
  *done = true;
  return TB_OK;
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  size_t *folded = ctx;
  size_t n_nodes = g->n_nodes;
  for (size_t i = 0; i < n_nodes; i++) {
    if (!tb_tbp_is_op(g, (int)i, "Conv") || g->nodes[i].n_outputs != 1) continue;
    int bn = tb_tbp_sole_consumer(g, g->nodes[i].outputs[0]);
    if (bn < 0 || !tb_tbp_is_op(g, bn, "BatchNormalization")) continue;
    bool done = false;
    tb_status s = fold_pair(g, (int)i, bn, &done);
    if (s != TB_OK) return s;
    if (done) (*folded)++;
  }
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status conv_bn_folding(tb_graph *g, tb_pass_stats *stats) {
  size_t folded = 0;
  tb_status s = run_graph(g, &folded);
  stats->changed = stats->nodes_fused = folded;
  stats->nodes_removed = folded;
  tb_tbp_summary(stats, "folded %zu BatchNormalization into Conv", folded);
  return s;
}

const tb_pass tb_pass_conv_bn_folding = {"conv_bn_folding", TB_LEVEL_O1, conv_bn_folding};
