/* The rnn and control operator definitions: LSTM, GRU, RNN (src/ops/rnn/) and If, Loop, Scan
 * (src/ops/control/). */
#include "ops/op.h"

extern const tb_op_def tb_op_lstm, tb_op_gru, tb_op_rnn, tb_op_if, tb_op_loop, tb_op_scan8, tb_op_scan;

static const tb_op_def *const defs[] = {&tb_op_lstm, &tb_op_gru, &tb_op_rnn, &tb_op_if, &tb_op_loop, &tb_op_scan8, &tb_op_scan};
const tb_op_family tb_ops_rnn_control = {defs, sizeof defs / sizeof defs[0]};
