/* Internal: float32 vector math for the level-2 sequence kernels (LSTM, GRU, attention): exp, sigmoid and
 * tanh over arrays on the AVX-512, AVX2 or portable path (the same tb_gemm_path the kernel entry runs),
 * the recurrent activations with clip, and a softmax row. Accuracy of the vector paths: exp within 2 ulp
 * (range reduction by ln 2, degree-7 Taylor polynomial), sigmoid within 3 ulp, tanh within 3e-7 absolute. */
#ifndef TB_CPU_KERNELS_FAST_SEQ_VEC_H
#define TB_CPU_KERNELS_FAST_SEQ_VEC_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "ops/rnn/rnn_params.h"

/* x[i] = exp(x[i]): gradual underflow below -87.3, 0 below -104, +inf from 88.72 up. */
void tb_seq_vec_exp(tb_gemm_path path, float *x, int64_t n);
/* x[i] = act(clip(x[i])): clip to [-clip, clip] first when has_clip; Sigmoid and Tanh vectorised, the
 * other ONNX recurrent activations element by element. */
void tb_seq_vec_activate(tb_gemm_path path, const tb_rnn_act *act, bool has_clip, float clip, float *x, int64_t n);
/* s[0..n) = softmax(s) in place (max subtracted first); n > 0. */
void tb_seq_vec_softmax(tb_gemm_path path, float *s, int64_t n);

#endif
