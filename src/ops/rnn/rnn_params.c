/* Parsing the recurrent operators' shared parameters (see rnn_params.h). Activation names match without
 * regard to case, as exporters write both "Tanh" and "tanh"; alpha and beta values are consumed in order
 * by the activations that take them, the others keep the ONNX defaults. */
#include "ops/rnn/rnn_params.h"
#include <string.h>
#include <strings.h>
#include "core/error.h"

typedef struct act_info {
  const char *name;
  tb_rnn_act_kind kind;
  int params; /* 0: none, 1: alpha, 2: alpha and beta */
  float alpha, beta;
} act_info;

static const act_info ACTS[] = {
    {"Sigmoid", TB_RNN_ACT_SIGMOID, 0, 0.0f, 0.0f},
    {"Tanh", TB_RNN_ACT_TANH, 0, 0.0f, 0.0f},
    {"Relu", TB_RNN_ACT_RELU, 0, 0.0f, 0.0f},
    {"Affine", TB_RNN_ACT_AFFINE, 2, 1.0f, 0.0f},
    {"LeakyRelu", TB_RNN_ACT_LEAKY_RELU, 1, 0.01f, 0.0f},
    {"ThresholdedRelu", TB_RNN_ACT_THRESHOLDED_RELU, 1, 1.0f, 0.0f},
    {"ScaledTanh", TB_RNN_ACT_SCALED_TANH, 2, 1.0f, 1.0f},
    {"HardSigmoid", TB_RNN_ACT_HARD_SIGMOID, 2, 0.2f, 0.5f},
    {"Elu", TB_RNN_ACT_ELU, 1, 1.0f, 0.0f},
    {"Softsign", TB_RNN_ACT_SOFTSIGN, 0, 0.0f, 0.0f},
    {"Softplus", TB_RNN_ACT_SOFTPLUS, 0, 0.0f, 0.0f},
};
enum { ACT_COUNT = sizeof ACTS / sizeof ACTS[0] };

const char *tb_rnn_act_name(tb_rnn_act_kind kind) {
  for (size_t i = 0; i < ACT_COUNT; i++)
    if (ACTS[i].kind == kind) return ACTS[i].name;
  return "?";
}

static const act_info *act_lookup(const char *name) {
  for (size_t i = 0; i < ACT_COUNT; i++)
    if (strcasecmp(ACTS[i].name, name) == 0) return &ACTS[i];
  return NULL;
}

static const char *const DEFAULT_ACTS[][3] = {
    [TB_RNN_CELL_RNN] = {"Tanh", NULL, NULL},
    [TB_RNN_CELL_GRU] = {"Sigmoid", "Tanh", NULL},
    [TB_RNN_CELL_LSTM] = {"Sigmoid", "Tanh", "Tanh"},
};

static tb_status read_direction(const tb_graph *g, const tb_node *n, tb_rnn_params *out) {
  const char *dir = NULL;
  tb_status st = tb_attr_string(g, n, "direction", "forward", &dir);
  if (st != TB_OK) return st;
  if (strcmp(dir, "forward") == 0) {
    out->num_directions = 1;
  } else if (strcmp(dir, "reverse") == 0) {
    out->num_directions = 1;
    out->reverse = true;
  } else if (strcmp(dir, "bidirectional") == 0) {
    out->num_directions = 2;
  } else {
    char label[160];
    return tb_error(TB_ERR_MODEL, "%s: direction '%s' is not one of forward, reverse, bidirectional",
                    tb_node_label(g, n, label, sizeof label), dir);
  }
  return TB_OK;
}

static tb_status read_activations(const tb_graph *g, const tb_node *n, tb_rnn_params *out) {
  size_t want = out->acts_per_direction * (size_t)out->num_directions;
  const tb_attr *names = tb_node_attr(n, "activations");
  const float *alphas = NULL, *betas = NULL;
  size_t n_alpha = 0, n_beta = 0;
  tb_status st = tb_attr_floats(g, n, "activation_alpha", &alphas, &n_alpha);
  if (st == TB_OK) st = tb_attr_floats(g, n, "activation_beta", &betas, &n_beta);
  if (st != TB_OK) return st;
  out->n_alpha = n_alpha;
  out->n_beta = n_beta;
  char label[160];
  if (names && names->type != TB_ATTR_STRINGS)
    return tb_error(TB_ERR_MODEL, "%s: attribute 'activations' must be a list of strings",
                    tb_node_label(g, n, label, sizeof label));
  if (names && names->count != want)
    return tb_error(TB_ERR_MODEL, "%s: 'activations' has %zu names, expected %zu (%zu per direction, %d direction%s)",
                    tb_node_label(g, n, label, sizeof label), names->count, want, out->acts_per_direction,
                    out->num_directions, out->num_directions == 1 ? "" : "s");
  size_t ia = 0, ib = 0;
  for (size_t k = 0; k < want; k++) {
    const char *name = names ? names->strings[k] : DEFAULT_ACTS[out->cell][k % out->acts_per_direction];
    const act_info *info = act_lookup(name ? name : "");
    if (!info)
      return tb_error(TB_ERR_MODEL,
                      "%s: unknown activation '%s' (expected one of Sigmoid, Tanh, Relu, Affine, LeakyRelu, "
                      "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)",
                      tb_node_label(g, n, label, sizeof label), name ? name : "");
    tb_rnn_act *act = &out->acts[k];
    act->kind = info->kind;
    act->alpha = info->alpha;
    act->beta = info->beta;
    if (info->params >= 1 && ia < n_alpha) act->alpha = alphas[ia++];
    if (info->params >= 2 && ib < n_beta) act->beta = betas[ib++];
  }
  return TB_OK;
}

tb_status tb_rnn_attrs_read(const tb_graph *g, const tb_node *n, tb_rnn_cell cell, tb_rnn_params *out) {
  memset(out, 0, sizeof *out);
  out->cell = cell;
  out->acts_per_direction = cell == TB_RNN_CELL_LSTM ? 3 : cell == TB_RNN_CELL_GRU ? 2 : 1;
  tb_status st = read_direction(g, n, out);
  if (st != TB_OK) return st;
  st = read_activations(g, n, out);
  if (st != TB_OK) return st;

  int64_t hidden = -1, input_forget = 0, lbr = 0, layout = 0;
  st = tb_attr_int(g, n, "hidden_size", -1, &hidden);
  if (st == TB_OK) st = tb_attr_int(g, n, "input_forget", 0, &input_forget);
  if (st == TB_OK) st = tb_attr_int(g, n, "linear_before_reset", 0, &lbr);
  if (st == TB_OK) st = tb_attr_int(g, n, "layout", 0, &layout);
  if (st != TB_OK) return st;
  if (tb_node_attr(n, "hidden_size") && hidden <= 0)
    return tb_node_error(g, n, TB_ERR_MODEL, "hidden_size must be positive (got %lld)", (long long)hidden);
  if (layout != 0 && layout != 1)
    return tb_node_error(g, n, TB_ERR_MODEL, "layout must be 0 or 1 (got %lld)", (long long)layout);
  if (layout != 0 && n->opset > 0 && n->opset < 14)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'layout' needs opset 14 or later (the model imports %d)",
                         n->opset);
  out->hidden_size = hidden;
  out->input_forget = input_forget != 0;
  out->linear_before_reset = lbr != 0;
  out->layout = (int)layout;

  if (tb_node_attr(n, "clip")) {
    st = tb_attr_float(g, n, "clip", 0.0f, &out->clip);
    if (st != TB_OK) return st;
    if (!(out->clip >= 0.0f))
      return tb_node_error(g, n, TB_ERR_MODEL, "clip must be a non-negative number (got %g)", (double)out->clip);
    out->has_clip = true;
  }
  return TB_OK;
}

tb_status tb_lstm_parse(const tb_graph *g, const tb_node *n, void *params) {
  return tb_rnn_attrs_read(g, n, TB_RNN_CELL_LSTM, params);
}

tb_status tb_gru_parse(const tb_graph *g, const tb_node *n, void *params) {
  return tb_rnn_attrs_read(g, n, TB_RNN_CELL_GRU, params);
}

tb_status tb_rnn_parse(const tb_graph *g, const tb_node *n, void *params) {
  return tb_rnn_attrs_read(g, n, TB_RNN_CELL_RNN, params);
}
