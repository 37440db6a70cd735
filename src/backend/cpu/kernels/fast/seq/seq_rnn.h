/* Internal: the level-2 fp32 LSTM and GRU driver (seq_rnn.c) and their cells (seq_lstm.c, seq_gru.c).
 * Per direction: the input projection X W^T + bias for every time step as one GEMM, then per time step
 * the recurrent product h R^T for the whole batch as one GEMM on R packed once (at prepare when R is a
 * constant, else once per run), and the cell's gate math row by row (rows split over the pool when the
 * batch is large). Semantics are the reference's (rnn_control/rnn_seq.c): both layouts, directions,
 * sequence_lens (a row runs its own length; reversed rows start at their last step; Y is zero past it),
 * initial states, peepholes, clip, every activation, input_forget, linear_before_reset. The LSTM on
 * AVX-512 (fp32 and AVX512-BF16) and AVX2 (fp32) fuses each step instead (seq_lstm.c runs the step,
 * seq_lstm_avx512.c / seq_lstm_avx2.c the work items): R packed by hidden-unit blocks, the recurrent
 * product and the cell update of a block in one pass, the bias added there, the blocks of a step split
 * over the pool with one barrier per step. With a bf16 precision (level 3) both GEMMs round their
 * operands to bf16 (weights once, when packed) and sum in fp32; the gate math and the state stay fp32. */
#ifndef TB_CPU_KERNELS_FAST_SEQ_RNN_H
#define TB_CPU_KERNELS_FAST_SEQ_RNN_H
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/kernel.h"
#include "ops/rnn/rnn_params.h"

enum { SEQ_MAX_R = 2 }; /* packed recurrent operands per direction: LSTM R^T; GRU R_zr^T and R_h^T */

/* How a kernel entry computes: the vector path of the gate math (and of the fp32 GEMMs), and the bf16
 * GEMM path, or -1 for fp32 GEMMs. */
typedef struct seq_prec {
  tb_gemm_path path;
  int bf16;
} seq_prec;

typedef struct seq_dims {
  int64_t seq, batch, input, hidden, dirs, gates;
  int layout;
} seq_dims;

/* Everything one direction's time steps need. */
typedef struct seq_dir {
  const tb_rnn_params *a;
  tb_gemm_path path;
  int bf16; /* tb_gemm_bf16_path, or -1: fp32 GEMMs */
  const seq_dims *m;
  int64_t d;
  bool reverse;
  const tb_rnn_act *acts;   /* this direction's activations */
  const float *peep;        /* LSTM: P for this direction [3H] (i, o, f), or NULL */
  const float *rb;          /* GRU: the recurrent bias of the h gate [H] (zeros when B is omitted) */
  const void *r[SEQ_MAX_R]; /* tb_gemm_packed, or tb_gemm_bf16_packed when bf16 >= 0 */
  const float *xw;          /* [rows of X, G*H]: X W^T + bias; row of (t, b) from seq_x_row */
  const float *cell_bias;   /* NULL, or [G*H]: the bias, left out of xw, for the fused step to add */
  float *g;                 /* [batch, G*H]: the recurrent products of this step */
  float *tmp;               /* [batch, H] scratch (GRU: r . h) */
  float *h, *c;             /* [batch, H] state */
  float *h_next;            /* [batch, H]: the fused LSTM step writes the new h here, then swaps it with h */
  bool fused;               /* LSTM: r[0] is tb_seq_lstm_pack_r's layout and the step is the fused one */
  uint16_t *hb, *hb_next;   /* fused bf16 step: h and the new h rounded to bf16, rows of hb_ld (H rounded up
                             * to SEQ_LSTM_UNITS, zeros past H); NULL otherwise */
  int64_t hb_ld;
  const int64_t *lens;      /* [batch] or NULL */
  float *y;                 /* Y's data, or NULL when the node has no Y */
  struct tb_pool *pool;
} seq_dir;

/* One time step k (0-based, counted from each row's start) of every row still running. False when a
 * GEMM buffer cannot be allocated. */
typedef bool (*seq_step_fn)(seq_dir *s, int64_t k);

/* Which rows run at step k, and the time index each is at. */
static inline bool seq_row_active(const seq_dir *s, int64_t b, int64_t k) {
  return k < (s->lens ? s->lens[b] : s->m->seq);
}
static inline int64_t seq_row_time(const seq_dir *s, int64_t b, int64_t k) {
  int64_t len = s->lens ? s->lens[b] : s->m->seq;
  return s->reverse ? len - 1 - k : k;
}
/* The row of X (and of xw) holding time t of batch row b. */
static inline int64_t seq_x_row(const seq_dims *m, int64_t t, int64_t b) {
  return m->layout == 0 ? t * m->batch + b : b * m->seq + t;
}
/* Where Y[t, d, b] starts (either layout). */
static inline int64_t seq_y_at(const seq_dims *m, int64_t t, int64_t d, int64_t b) {
  return (m->layout == 0 ? (t * m->dirs + d) * m->batch + b : (b * m->seq + t) * m->dirs + d) * m->hidden;
}

/* Run fn(s, k, b) for every row b, over the pool when the batch is large enough to pay for it. */
typedef void (*seq_row_fn)(seq_dir *s, int64_t k, int64_t b);
void tb_seq_for_rows(seq_dir *s, int64_t k, seq_row_fn fn);

/* h R^T-style product for a step: C[batch x n] (row stride ldc) = A[batch x H] (row stride H) times the
 * packed operand. False when a buffer cannot be allocated. */
bool tb_seq_recurrent_gemm(const seq_dir *s, const float *a, const void *r, int64_t n, float *c, int64_t ldc);

/* The fused LSTM step (seq_lstm_avx512.c), fp32 or bf16 (AVX512-BF16). R of one direction ([4H, H],
 * gates i, o, f, c) packed by blocks of SEQ_LSTM_UNITS hidden units: block j, gate pair p (0: i and o,
 * 1: f and c), depth k holds the 2 x SEQ_LSTM_UNITS values R[gate * H + u][k] for the pair's two gates and
 * the block's units u (zeros past H), 64-byte aligned. bf16: rounded (tb_bf16_round) and k in pairs, each
 * column's two values for k = 2q, 2q + 1 in one 32-bit word (zero for k = H when H is odd). */
enum { SEQ_LSTM_UNITS = 16, SEQ_LSTM_ROWS = 8 };
/* Whether this path runs the fused step: AVX-512 fp32 and AVX512-BF16, AVX2 fp32 (seq_lstm_pack.c, with the
 * packing of R). */
bool tb_seq_lstm_fused(tb_gemm_path path, int bf16);
void *tb_seq_lstm_pack_r(const float *r, int64_t hidden, bool bf16); /* NULL when out of memory; free() it */
/* One work item of step k: hidden-unit block j for rows b0 .. b0+rows (rows <= SEQ_LSTM_ROWS): the gates
 * from h and R, then the cell update: the new h in s->h_next (and s->hb_next), rows past their length
 * keeping theirs; c in place; Y written. The step (seq_lstm.c) runs every item, then swaps h and h_next. */
void tb_seq_lstm_item_avx512(seq_dir *s, int64_t k, int64_t j, int64_t b0, int rows);
void tb_seq_lstm_item_avx2(seq_dir *s, int64_t k, int64_t j, int64_t b0, int rows); /* fp32 only */

/* The kernel pieces for a cell on a path: accepts, prepare, release and the whole run. */
bool tb_seq_rnn_accepts(const tb_kernel_query *q, tb_rnn_cell cell);
tb_status tb_seq_rnn_prepare(tb_kernel_ctx *ctx, tb_rnn_cell cell, seq_prec prec, void **state);
void tb_seq_rnn_release(void *state);
tb_status tb_seq_rnn_run(tb_kernel_ctx *ctx, tb_rnn_cell cell, seq_prec prec, seq_step_fn step);

/* One level-2/3 kernel entry of a cell: tb_kernel_<kernel>_<suffix> running tb_seq_rnn_run with `step` on the
 * path and bf16 path (-1: fp32), needing `features` (TB_FEATURE_BIT mask), precision NULL or "bf16". */
#define SEQ_RNN_ENTRY(kernel, op, cell, accepts_, step, suffix, level_, path_, bf16_, features, precision_)           \
  static tb_status run_##suffix(tb_kernel_ctx *ctx) { return tb_seq_rnn_run(ctx, cell, (seq_prec){path_, bf16_}, step); } \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) {                                          \
    return tb_seq_rnn_prepare(ctx, cell, (seq_prec){path_, bf16_}, state);                                         \
  }                                                                                                              \
  const tb_kernel tb_kernel_##kernel##_##suffix = {.domain = "",                                              \
                                                     .name = op,                                                \
                                                     .level = level_,                                           \
                                                     .cpu_features = features,                                  \
                                                     .accepts = accepts_,                                       \
                                                     .run = run_##suffix,                                       \
                                                     .prepare = prepare_##suffix,                               \
                                                     .release = tb_seq_rnn_release,                                \
                                                     .precision = precision_};
#define SEQ_FMA_AVX512 (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define SEQ_FMA_AVX2 (TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))

#endif
