/* The CPU reference kernels of the rnn and control family: LSTM, GRU, RNN, If, Loop, Scan. */
#include "backend/cpu/kernels/kernel.h"

extern const tb_kernel tb_kernel_lstm, tb_kernel_gru, tb_kernel_rnn, tb_kernel_if, tb_kernel_loop, tb_kernel_scan;

static const tb_kernel *const kernels[] = {&tb_kernel_lstm, &tb_kernel_gru, &tb_kernel_rnn,
                                               &tb_kernel_if,   &tb_kernel_loop, &tb_kernel_scan};
const tb_kernel_family tb_kernels_rnn_control = {kernels, sizeof kernels / sizeof kernels[0]};
