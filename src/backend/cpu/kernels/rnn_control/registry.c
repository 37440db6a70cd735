/* The CPU reference kernels of the rnn and control family: LSTM, GRU, RNN here, and the control-flow kernels
 * every backend shares (If, Loop, Scan: backend/control/). */
#include "backend/control/control_kernels.h"
#include "backend/cpu/kernels/kernel.h"

extern const tb_kernel tb_kernel_lstm, tb_kernel_gru, tb_kernel_rnn;

static const tb_kernel *const kernels[] = {&tb_kernel_lstm,          &tb_kernel_gru,           &tb_kernel_rnn,
                                           &tb_control_kernels[0], &tb_control_kernels[1], &tb_control_kernels[2]};
const tb_kernel_family tb_kernels_rnn_control = {kernels, sizeof kernels / sizeof kernels[0]};
