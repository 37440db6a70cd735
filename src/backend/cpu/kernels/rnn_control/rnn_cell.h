/* Internal: the recurrent kernels' shared driver (rnn_seq.c) and the three cells (lstm.c, gru.c,
 * rnn.c). The driver checks shapes, walks directions, batch rows and time steps (reversed for the
 * reverse direction, stopping at each row's sequence length), handles both layouts, and writes Y, Y_h
 * and Y_c; a cell computes one time step of one batch row. */
#ifndef TB_CPU_KERNELS_RNN_CELL_H
#define TB_CPU_KERNELS_RNN_CELL_H
#include "backend/cpu/kernels/kernel.h"
#include "ops/rnn/rnn_params.h"

/* One direction's parameters, as doubles. */
typedef struct rnn_dir_params {
  const double *w;         /* [G*H, I] */
  const double *r;         /* [G*H, H] */
  const double *wb, *rb;   /* [G*H] each (zeros when B is omitted) */
  const double *p;         /* LSTM peepholes [3*H] (i, o, f), or NULL */
  const tb_rnn_act *acts;  /* this direction's activations */
} rnn_dir_params;

/* One step: h (and c for LSTM) hold the previous state on entry and the new one on return. scratch
 * has room for 2*G*H doubles. */
typedef void (*rnn_step_fn)(const tb_rnn_params *a, const rnn_dir_params *p, size_t hidden, size_t input,
                            const double *x, double *h, double *c, double *scratch);

/* The whole operator for `cell`: inputs X, W, R, [B, sequence_lens, initial_h, initial_c, P]. */
tb_status tb_rnn_run(tb_kernel_ctx *ctx, tb_rnn_cell cell, rnn_step_fn step);

/* An activation applied to x. */
double tb_rnn_activate(const tb_rnn_act *act, double x);
/* x clipped to [-clip, clip] when the node has a clip. */
double tb_rnn_clip(const tb_rnn_params *a, double x);
/* out[j] += sum_k m[j, k] * v[k] for j < rows (m is rows x cols, row-major). */
void tb_rnn_gemv(size_t rows, size_t cols, const double *m, const double *v, double *out);

/* Whether the kernel takes this X dtype (f32, f64, f16, bf16). */
bool tb_rnn_accepts(const tb_kernel_query *q);

#endif
