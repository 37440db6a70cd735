/* Internal: the typed parameters the recurrent operators (RNN, GRU, LSTM) share — direction, hidden_size,
 * activations with their alpha/beta, clip, input_forget, linear_before_reset, layout — read and checked
 * once by the op's parse function, for the operator definitions (inference) and every backend's kernels. */
#ifndef TB_OPS_RNN_PARAMS_H
#define TB_OPS_RNN_PARAMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

typedef enum tb_rnn_cell {
  TB_RNN_CELL_RNN = 1, /* the value is the number of gates */
  TB_RNN_CELL_GRU = 3,
  TB_RNN_CELL_LSTM = 4
} tb_rnn_cell;

typedef enum tb_rnn_act_kind {
  TB_RNN_ACT_SIGMOID,
  TB_RNN_ACT_TANH,
  TB_RNN_ACT_RELU,
  TB_RNN_ACT_AFFINE,
  TB_RNN_ACT_LEAKY_RELU,
  TB_RNN_ACT_THRESHOLDED_RELU,
  TB_RNN_ACT_SCALED_TANH,
  TB_RNN_ACT_HARD_SIGMOID,
  TB_RNN_ACT_ELU,
  TB_RNN_ACT_SOFTSIGN,
  TB_RNN_ACT_SOFTPLUS
} tb_rnn_act_kind;

typedef struct tb_rnn_act {
  tb_rnn_act_kind kind;
  float alpha, beta; /* the operator defaults when the node gives none */
} tb_rnn_act;

enum { TB_RNN_MAX_ACTS = 6 }; /* LSTM: f, g, h per direction, two directions */

typedef struct tb_rnn_params {
  tb_rnn_cell cell;
  int num_directions;       /* 1 or 2 */
  bool reverse;             /* direction "reverse" (num_directions 1) */
  int64_t hidden_size;      /* -1 when the attribute is absent */
  size_t acts_per_direction; /* LSTM 3 (f, g, h), GRU 2 (f, g), RNN 1 (f) */
  tb_rnn_act acts[TB_RNN_MAX_ACTS]; /* direction d's activation k at acts[d * acts_per_direction + k] */
  size_t n_alpha, n_beta;   /* how many activation_alpha / activation_beta values the node gives */
  bool has_clip;
  float clip;
  bool input_forget;        /* LSTM: forget gate = 1 - input gate */
  bool linear_before_reset; /* GRU */
  int layout;               /* 0: [seq, batch, ...]; 1: [batch, seq, ...] (opset 14) */
} tb_rnn_params;

/* Read and check the node's attributes. An unknown direction or activation name, a wrong number of
 * activations, a negative clip or hidden_size, a layout other than 0/1 are TB_ERR_MODEL naming the node
 * and the value. */
tb_status tb_rnn_attrs_read(const tb_graph *g, const tb_node *n, tb_rnn_cell cell, tb_rnn_params *out);

/* tb_op_def.parse of LSTM, GRU and RNN: tb_rnn_attrs_read for that cell into a zeroed tb_rnn_params. */
tb_status tb_lstm_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_gru_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_rnn_parse(const tb_graph *g, const tb_node *n, void *params);

/* The ONNX name of an activation ("Sigmoid"). */
const char *tb_rnn_act_name(tb_rnn_act_kind kind);

#endif
