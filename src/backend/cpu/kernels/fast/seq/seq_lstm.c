/* Level-2 fp32 and level-3 bf16 LSTM (ONNX LSTM, every attribute; see seq_rnn.h for the driver): the gates
 * G = X W^T + (Wb + Rb) [precomputed for all steps] + h R^T [one GEMM for the batch], then per row, gates
 * in the order i, o, f, c and peepholes i, o, f, with the direction's activations f, g, h:
 *   i = f(Gi + Pi . c)   f = f(Gf + Pf . c) (1 - i with input_forget)   c' = f . c + i . g(Gc)
 *   o = f(Go + Po . c')  h' = o . h(c')
 * clip, when given, applied to every activation's input. The fp32 AVX-512 and AVX2 entries and the
 * AVX512-BF16 one run the fused step (here; its work items in seq_lstm_avx512.c and seq_lstm_avx2.c) on R
 * packed by tb_seq_lstm_pack_r (seq_lstm_pack.c); the portable ones the GEMM and the rows. Level 3
 * (precision bf16) runs both GEMMs on bf16 operands with fp32 sums; the gate math and the states stay fp32. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "backend/cpu/kernels/fast/seq/seq_rnn.h"
#include "backend/cpu/kernels/fast/seq/seq_vec.h"
#include "core/threadpool.h"

static void lstm_row(seq_dir *s, int64_t k, int64_t b) {
  const seq_dims *m = s->m;
  const tb_rnn_params *a = s->a;
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
  tb_seq_vec_activate(s->path, &s->acts[0], a->has_clip, a->clip, gi, hid);
  if (a->input_forget)
    for (int64_t j = 0; j < hid; j++) gf[j] = 1.0f - gi[j];
  else
    tb_seq_vec_activate(s->path, &s->acts[0], a->has_clip, a->clip, gf, hid);
  tb_seq_vec_activate(s->path, &s->acts[1], a->has_clip, a->clip, gc, hid);
  for (int64_t j = 0; j < hid; j++) c[j] = gf[j] * c[j] + gi[j] * gc[j];
  if (po)
    for (int64_t j = 0; j < hid; j++) go[j] += po[j] * c[j];
  tb_seq_vec_activate(s->path, &s->acts[0], a->has_clip, a->clip, go, hid);
  memcpy(gc, c, (size_t)hid * sizeof(float));
  tb_seq_vec_activate(s->path, &s->acts[2], a->has_clip, a->clip, gc, hid);
  for (int64_t j = 0; j < hid; j++) h[j] = go[j] * gc[j];
  if (s->y) memcpy(s->y + seq_y_at(m, t, s->d, b), h, (size_t)hid * sizeof(float));
}

/* Multiply-adds per step (rows counted as at least 4: fewer do not fill the FMA pipes) below which the fused
 * step stays on one thread: about 8 us of work at this machine's AVX-512 peak. Measured at 2 threads, 64
 * steps x 2 layers: batch 1 x hidden 256 (1M) 1.25 -> 0.95 ms and batch 8 x 256 (2M) 3.97 -> 2.07 ms split;
 * batch 4 x 128 and 8 x 64 (256K, 128K) 0.58 -> 0.65 ms and 0.35 -> 0.50 ms split: those stay serial. */
enum { FUSED_PARALLEL_MIN = 1 << 20 };

typedef struct fused_job {
  seq_dir *s;
  int64_t k, blocks, chunks;
  size_t parts;
  void (*item)(seq_dir *s, int64_t k, int64_t j, int64_t b0, int rows);
} fused_job;

/* Part p of the step: the work items [p * items / parts, (p + 1) * items / parts), unit block major. */
static void fused_part(void *ctx, size_t begin, size_t end) {
  const fused_job *j = ctx;
  int64_t items = j->blocks * j->chunks, batch = j->s->m->batch;
  for (size_t p = begin; p < end; p++)
    for (int64_t w = items * (int64_t)p / (int64_t)j->parts; w < items * (int64_t)(p + 1) / (int64_t)j->parts; w++) {
      int64_t b0 = (w % j->chunks) * SEQ_LSTM_ROWS;
      j->item(j->s, j->k, w / j->chunks, b0, (int)(batch - b0 < SEQ_LSTM_ROWS ? batch - b0 : SEQ_LSTM_ROWS));
    }
}

/* The fused step: every work item, one contiguous range per thread (each thread keeps its part of R in
 * its cache; the pool's join is the step's only barrier), then h and h_next swap. */
static void fused_step(seq_dir *s, int64_t k) {
  const seq_dims *m = s->m;
  if (s->hb && k == 0) /* the initial h in bf16; later steps write it with h */
    for (int64_t b = 0; b < m->batch; b++)
      for (int64_t u = 0; u < s->hb_ld; u++)
        s->hb[b * s->hb_ld + u] = u < m->hidden ? tb_bf16_round(s->h[b * m->hidden + u]) : 0;
  fused_job j = {.s = s,
                 .k = k,
                 .blocks = (m->hidden + SEQ_LSTM_UNITS - 1) / SEQ_LSTM_UNITS,
                 .chunks = (m->batch + SEQ_LSTM_ROWS - 1) / SEQ_LSTM_ROWS,
                 .item = s->path == TB_GEMM_AVX512 ? tb_seq_lstm_item_avx512 : tb_seq_lstm_item_avx2};
  int64_t threads = tb_pool_threads(s->pool), items = j.blocks * j.chunks;
  if ((m->batch < 4 ? 4 : m->batch) * 4 * m->hidden * m->hidden < FUSED_PARALLEL_MIN) threads = 1;
  j.parts = (size_t)(threads < items ? threads : items);
  if (j.parts > 1)
    tb_pool_parallel_for(s->pool, j.parts, fused_part, &j);
  else
    fused_part(&j, 0, 1);
  float *h = s->h;
  s->h = s->h_next;
  s->h_next = h;
  uint16_t *hb = s->hb;
  s->hb = s->hb_next;
  s->hb_next = hb;
}

static bool lstm_step(seq_dir *s, int64_t k) {
  if (s->fused) {
    fused_step(s, k);
    return true;
  }
  int64_t gh = 4 * s->m->hidden;
  if (!tb_seq_recurrent_gemm(s, s->h, s->r[0], gh, s->g, gh)) return false;
  tb_seq_for_rows(s, k, lstm_row);
  return true;
}

static bool lstm_accepts(const tb_kernel_query *q) {
  return tb_seq_rnn_accepts(q, TB_RNN_CELL_LSTM);
}

#define LSTM_ENTRY(...) SEQ_RNN_ENTRY(lstm, "LSTM", TB_RNN_CELL_LSTM, lstm_accepts, lstm_step, __VA_ARGS__)

LSTM_ENTRY(f32_avx512, TB_KERNEL_FAST, TB_GEMM_AVX512, -1, SEQ_FMA_AVX512, NULL)
LSTM_ENTRY(f32_avx2, TB_KERNEL_FAST, TB_GEMM_AVX2, -1, SEQ_FMA_AVX2, NULL)
LSTM_ENTRY(f32_portable, TB_KERNEL_FAST, TB_GEMM_PORTABLE, -1, 0, NULL)
/* Level 3: the GEMMs in bf16 (AVX512-BF16, or the portable bf16 GEMM), the gate math in fp32. */
LSTM_ENTRY(bf16_avx512bf16, TB_KERNEL_REDUCED, TB_GEMM_AVX512, TB_GEMM_BF16_AVX512BF16,
           SEQ_FMA_AVX512 | TB_FEATURE_BIT(TB_FEATURE_AVX512BW) | TB_FEATURE_BIT(TB_FEATURE_AVX512BF16), "bf16")
LSTM_ENTRY(bf16_portable, TB_KERNEL_REDUCED, TB_GEMM_PORTABLE, TB_GEMM_BF16_PORTABLE, 0, "bf16")
