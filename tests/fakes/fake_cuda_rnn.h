/* fake_cuda.c's knowledge of the recurrent kernels (src/backend/cuda/kernels/50_rnn.cu): their parameter lists,
 * how many leading parameters are device pointers, and the elements each pointer must hold, read from the
 * tb_rnn_desc passed by value (its layout mirrored here; the library checks its own mirror with a
 * _Static_assert of the same size). Included by fake_cuda.c only. */
#ifndef TB_FAKE_CUDA_RNN_H
#define TB_FAKE_CUDA_RNN_H
#include <string.h>
#include "fake_cuda_launch.h"

typedef struct fake_rnn_desc {
  int cell, layout, dirs, reverse, has_clip, input_forget, linear_before_reset, lens_kind;
  int act[6];
  float alpha[6], beta[6];
  float clip;
  int unused;
  long long seq, batch, input, hidden;
} fake_rnn_desc;

enum { FAKE_RNN_SEQ_POINTERS = 12 };

/* The parameter sizes of tb_cu_rnn_transpose_f32 (r, rt, mats, rows, cols) and tb_cu_rnn_seq_f32 (twelve
 * pointers, desc); 0 for another name. */
static int fake_rnn_params(const char *name, unsigned *sizes) {
  if (strcmp(name, "tb_cu_rnn_transpose_f32") == 0) {
    for (int i = 0; i < 5; i++) sizes[i] = 8;
    return 5;
  }
  if (strcmp(name, "tb_cu_rnn_seq_f32") != 0) return 0;
  for (int i = 0; i < FAKE_RNN_SEQ_POINTERS; i++) sizes[i] = 8;
  sizes[FAKE_RNN_SEQ_POINTERS] = sizeof(fake_rnn_desc);
  return FAKE_RNN_SEQ_POINTERS + 1;
}

/* The leading pointer parameters of a recurrent kernel (0 for another name). */
static int fake_rnn_pointers(const char *name) {
  return strcmp(name, "tb_cu_rnn_transpose_f32") == 0 ? 2 : strcmp(name, "tb_cu_rnn_seq_f32") == 0 ? FAKE_RNN_SEQ_POINTERS : 0;
}

/* Whether every pointer of a recurrent launch holds what the kernel would touch (covers(l, i, floats): the fake's
 * check of argument i); a NULL optional pointer is none. -1 for a malformed descriptor. */
static int fake_rnn_in_bounds(const fake_launch *l, long long (*arg)(const fake_launch *, int),
                              int (*covers)(const fake_launch *, int, long long)) {
  if (strcmp(l->name, "tb_cu_rnn_transpose_f32") == 0) {
    long long n = arg(l, 2) * arg(l, 3) * arg(l, 4);
    return covers(l, 0, n) && covers(l, 1, n);
  }
  fake_rnn_desc d;
  memcpy(&d, l->args + l->arg_offset[FAKE_RNN_SEQ_POINTERS], sizeof d);
  if ((d.cell != 1 && d.cell != 3 && d.cell != 4) || d.dirs < 1 || d.dirs > 2 || d.seq < 0 || d.batch < 0 || d.hidden < 0 ||
      d.lens_kind < 0 || d.lens_kind > 2)
    return -1;
  long long gh = d.cell * d.hidden, state = d.dirs * d.batch * d.hidden;
  /* xw, rt, bias, p, lens (in floats: 4 bytes each), h0, c0, y, yh, yc, work, the int32 flag of bad lengths */
  const long long need[FAKE_RNN_SEQ_POINTERS] = {d.dirs * d.seq * d.batch * gh, d.dirs * d.hidden * gh, d.dirs * 2 * gh, d.dirs * 3 * d.hidden,
                                                 d.batch * d.lens_kind, state, state, d.seq * state, state, state,
                                                 d.dirs * d.batch * (d.cell + 4) * d.hidden, 1};
  static const int required[FAKE_RNN_SEQ_POINTERS] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
  for (int i = 0; i < FAKE_RNN_SEQ_POINTERS; i++) {
    if (!arg(l, i)) {
      if (required[i] && need[i] > 0) return 0;
      continue;
    }
    if (!covers(l, i, need[i])) return 0;
  }
  return 1;
}

#endif
