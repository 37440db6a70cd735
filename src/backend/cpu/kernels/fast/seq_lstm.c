/* Level-2 fp32 and level-3 bf16 LSTM (ONNX LSTM, every attribute; see seq_rnn.h for the driver): the gates
 * G = X W^T + (Wb + Rb) [precomputed for all steps] + h R^T [one GEMM for the batch], then per row, gates
 * in the order i, o, f, c and peepholes i, o, f, with the direction's activations f, g, h:
 *   i = f(Gi + Pi . c)   f = f(Gf + Pf . c) (1 - i with input_forget)   c' = f . c + i . g(Gc)
 *   o = f(Go + Po . c')  h' = o . h(c')
 * clip, when given, applied to every activation's input. Level 3 (precision bf16) runs both GEMMs on
 * bf16 operands with fp32 sums; the gate math and the states stay fp32. */
#include <string.h>
#include "backend/cpu/kernels/fast/seq_rnn.h"
#include "backend/cpu/kernels/fast/seq_vec.h"

static void lstm_row(seq_dir *s, int64_t k, int64_t b) {
  const seq_dims *m = s->m;
  const tb_rnn_attrs *a = s->a;
  int64_t hid = m->hidden, t = seq_row_time(s, b, k);
  float *g = s->g + b * 4 * hid, *c = s->c + b * hid, *h = s->h + b * hid;
  const float *xw = s->xw + seq_x_row(m, t, b) * 4 * hid;
  for (int64_t j = 0; j < 4 * hid; j++) g[j] += xw[j];
  float *gi = g, *go = g + hid, *gf = g + 2 * hid, *gc = g + 3 * hid;
  const float *pi = s->peep, *po = s->peep ? s->peep + hid : NULL, *pf = s->peep ? s->peep + 2 * hid : NULL;
  if (pi)
    for (int64_t j = 0; j < hid; j++) {
      gi[j] += pi[j] * c[j];
      gf[j] += pf[j] * c[j];
    }
  seq_vec_activate(s->path, &s->acts[0], a->has_clip, a->clip, gi, hid);
  if (a->input_forget)
    for (int64_t j = 0; j < hid; j++) gf[j] = 1.0f - gi[j];
  else
    seq_vec_activate(s->path, &s->acts[0], a->has_clip, a->clip, gf, hid);
  seq_vec_activate(s->path, &s->acts[1], a->has_clip, a->clip, gc, hid);
  for (int64_t j = 0; j < hid; j++) c[j] = gf[j] * c[j] + gi[j] * gc[j];
  if (po)
    for (int64_t j = 0; j < hid; j++) go[j] += po[j] * c[j];
  seq_vec_activate(s->path, &s->acts[0], a->has_clip, a->clip, go, hid);
  memcpy(gc, c, (size_t)hid * sizeof(float));
  seq_vec_activate(s->path, &s->acts[2], a->has_clip, a->clip, gc, hid);
  for (int64_t j = 0; j < hid; j++) h[j] = go[j] * gc[j];
  if (s->y) memcpy(s->y + seq_y_at(m, t, s->d, b), h, (size_t)hid * sizeof(float));
}

static bool lstm_step(seq_dir *s, int64_t k) {
  int64_t gh = 4 * s->m->hidden;
  if (!seq_recurrent_gemm(s, s->h, s->r[0], gh, s->g, gh)) return false;
  seq_for_rows(s, k, lstm_row);
  return true;
}

static bool lstm_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  return seq_rnn_accepts(g, n, in, TB_RNN_CELL_LSTM);
}

#define LSTM_ENTRY(suffix, level_, path_, bf16_, features, precision_)              \
  static tb_status run_##suffix(tb_kernel_ctx *ctx) {                               \
    return seq_rnn_run(ctx, TB_RNN_CELL_LSTM, (seq_prec){path_, bf16_}, lstm_step); \
  }                                                                                 \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) {             \
    return seq_rnn_prepare(ctx, TB_RNN_CELL_LSTM, (seq_prec){path_, bf16_}, state); \
  }                                                                                 \
  const tb_cpu_kernel tb_kernel_lstm_##suffix = {.domain = "",                      \
                                                 .name = "LSTM",                    \
                                                 .level = level_,                   \
                                                 .cpu_features = features,          \
                                                 .accepts = lstm_accepts,           \
                                                 .run = run_##suffix,               \
                                                 .prepare = prepare_##suffix,       \
                                                 .release = seq_rnn_release,        \
                                                 .precision = precision_};

#define FMA_AVX512 (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define FMA_AVX2 (TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))

LSTM_ENTRY(f32_avx512, 2, TB_GEMM_AVX512, -1, FMA_AVX512, NULL)
LSTM_ENTRY(f32_avx2, 2, TB_GEMM_AVX2, -1, FMA_AVX2, NULL)
LSTM_ENTRY(f32_portable, 2, TB_GEMM_PORTABLE, -1, 0, NULL)
/* Level 3: the GEMMs in bf16 (AVX512-BF16, or the portable bf16 GEMM), the gate math in fp32. */
LSTM_ENTRY(bf16_avx512bf16, 3, TB_GEMM_AVX512, TB_GEMM_BF16_AVX512BF16,
           FMA_AVX512 | TB_FEATURE_BIT(TB_FEATURE_AVX512BW) | TB_FEATURE_BIT(TB_FEATURE_AVX512BF16), "bf16")
LSTM_ENTRY(bf16_portable, 3, TB_GEMM_PORTABLE, TB_GEMM_BF16_PORTABLE, 0, "bf16")
