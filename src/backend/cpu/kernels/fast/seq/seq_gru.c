/* Level-2 fp32 GRU (ONNX GRU, every attribute; see seq_rnn.h for the driver): gates in the order z, r, h
 * with the direction's activations f and g. Per step: h R_zr^T for the batch (one GEMM), then per row
 *   z = f(Xz + Rz h + Wbz + Rbz)   r = f(Xr + Rr h + Wbr + Rbr)
 * then the h gate's GEMM on r . h (linear_before_reset 0) or on h (1), then per row
 *   h~ = g(Xh + Rh (r . h) + Rbh + Wbh)  or  g(Xh + r . (Rh h + Rbh) + Wbh);   h' = (1 - z) . h~ + z . h
 * clip, when given, applied to every activation's input. */
#include <string.h>
#include "backend/cpu/kernels/fast/seq/seq_rnn.h"
#include "backend/cpu/kernels/fast/seq/seq_vec.h"

static void gru_gates(seq_dir *s, int64_t k, int64_t b) {
  const seq_dims *m = s->m;
  const tb_rnn_params *a = s->a;
  int64_t hid = m->hidden, t = seq_row_time(s, b, k);
  float *g = s->g + b * 3 * hid;
  const float *xw = s->xw + seq_x_row(m, t, b) * 3 * hid;
  for (int64_t j = 0; j < 2 * hid; j++) g[j] += xw[j];
  tb_seq_vec_activate(s->path, &s->acts[0], a->has_clip, a->clip, g, 2 * hid);
  if (!a->linear_before_reset) {
    const float *r = g + hid, *h = s->h + b * hid;
    float *rh = s->tmp + b * hid;
    for (int64_t j = 0; j < hid; j++) rh[j] = r[j] * h[j];
  }
}

static void gru_out(seq_dir *s, int64_t k, int64_t b) {
  const seq_dims *m = s->m;
  const tb_rnn_params *a = s->a;
  int64_t hid = m->hidden, t = seq_row_time(s, b, k);
  float *g = s->g + b * 3 * hid, *h = s->h + b * hid;
  const float *xw = s->xw + seq_x_row(m, t, b) * 3 * hid + 2 * hid;
  const float *z = g, *r = g + hid;
  float *hh = g + 2 * hid;
  if (a->linear_before_reset)
    for (int64_t j = 0; j < hid; j++) hh[j] = xw[j] + r[j] * (hh[j] + s->rb[j]);
  else
    for (int64_t j = 0; j < hid; j++) hh[j] = xw[j] + hh[j] + s->rb[j];
  tb_seq_vec_activate(s->path, &s->acts[1], a->has_clip, a->clip, hh, hid);
  for (int64_t j = 0; j < hid; j++) h[j] = (1.0f - z[j]) * hh[j] + z[j] * h[j];
  if (s->y) memcpy(s->y + seq_y_at(m, t, s->d, b), h, (size_t)hid * sizeof(float));
}

static bool gru_step(seq_dir *s, int64_t k) {
  int64_t hid = s->m->hidden;
  if (!tb_seq_recurrent_gemm(s, s->h, s->r[0], 2 * hid, s->g, 3 * hid)) return false;
  tb_seq_for_rows(s, k, gru_gates);
  if (!tb_seq_recurrent_gemm(s, s->a->linear_before_reset ? s->h : s->tmp, s->r[1], hid, s->g + 2 * hid, 3 * hid))
    return false;
  tb_seq_for_rows(s, k, gru_out);
  return true;
}

static bool gru_accepts(const tb_kernel_query *q) {
  return tb_seq_rnn_accepts(q, TB_RNN_CELL_GRU);
}

#define GRU_ENTRY(...) SEQ_RNN_ENTRY(gru, "GRU", TB_RNN_CELL_GRU, gru_accepts, gru_step, __VA_ARGS__)

GRU_ENTRY(f32_avx512, TB_KERNEL_FAST, TB_GEMM_AVX512, -1, SEQ_FMA_AVX512, NULL)
GRU_ENTRY(f32_avx2, TB_KERNEL_FAST, TB_GEMM_AVX2, -1, SEQ_FMA_AVX2, NULL)
GRU_ENTRY(f32_portable, TB_KERNEL_FAST, TB_GEMM_PORTABLE, -1, 0, NULL)
