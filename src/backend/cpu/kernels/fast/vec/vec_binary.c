/* Level-2 fp32 Add, Sub, Mul, Div for the shapes transformers and CNNs use: equal shapes, a scalar operand,
 * and the trailing broadcast of one operand whose dims, after dropping 1s, are one contiguous run of the
 * output's: a bias vector [C] against [.., C], a column [N, 1] against [N, C], a per-channel [C, 1, 1]
 * against [N, C, H, W]. The output is then [P, M, Q] with the small operand indexed by M: rows of Q
 * elements against one scalar each (Q > 1), or rows of M elements against the whole vector (Q = 1).
 * Anything else (both operands broadcasting, the pre-opset-7 axis broadcast) stays with the reference. */
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"

typedef struct bin_plan {
  size_t ndim;
  int64_t shape[TB_MAX_DIMS]; /* the output's */
  int64_t total, m, q;
  bool small_is_b;
} bin_plan;

/* The plan for shapes a and b; false when the shapes are not one of the handled broadcasts. */
static bool bin_make_plan(size_t na, const int64_t *as, size_t nb, const int64_t *bs, bin_plan *p) {
  size_t r = na > nb ? na : nb;
  int64_t a[TB_MAX_DIMS], b[TB_MAX_DIMS];
  if (r > TB_MAX_DIMS) return false;
  p->ndim = r;
  p->total = 1;
  bool a_full = true, b_full = true;
  for (size_t d = 0; d < r; d++) {
    a[d] = d < r - na ? 1 : as[d - (r - na)];
    b[d] = d < r - nb ? 1 : bs[d - (r - nb)];
    if (a[d] < 0 || b[d] < 0) return false;
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1) return false;
    p->shape[d] = a[d] == 1 ? b[d] : a[d];
    p->total *= p->shape[d];
    a_full = a_full && a[d] == p->shape[d];
    b_full = b_full && b[d] == p->shape[d];
  }
  if (!a_full && !b_full) return false;
  p->small_is_b = a_full;
  const int64_t *s = a_full ? b : a;
  /* the small operand's non-1 dims of the output: covered (equal) dims must be one run */
  size_t first = r, last = 0;
  for (size_t d = 0; d < r; d++)
    if (p->shape[d] != 1 && s[d] == p->shape[d]) {
      if (first == r) first = d;
      last = d;
    }
  p->m = 1;
  p->q = 1;
  if (first == r) { /* a scalar (or all-1s) operand */
    p->q = p->total;
    return true;
  }
  for (size_t d = first; d <= last; d++) {
    if (p->shape[d] != 1 && s[d] != p->shape[d]) return false; /* a broadcast dim inside the run */
    p->m *= p->shape[d];
  }
  for (size_t d = last + 1; d < r; d++) p->q *= p->shape[d];
  return true;
}

static bool binary_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (q->n_inputs < 2 || q->opset < 7 || !tb_fast_accepts_f32(in, 2) || !in[1]) return false;
  if (!in[0]->has_shape || !in[1]->has_shape) return true; /* run() decides on the real shapes */
  int64_t as[TB_MAX_DIMS], bs[TB_MAX_DIMS];
  for (size_t d = 0; d < in[0]->ndim; d++) as[d] = in[0]->dims[d].value;
  for (size_t d = 0; d < in[1]->ndim; d++) bs[d] = in[1]->dims[d].value;
  for (size_t d = 0; d < in[0]->ndim; d++)
    if (as[d] < 0) return true;
  for (size_t d = 0; d < in[1]->ndim; d++)
    if (bs[d] < 0) return true;
  bin_plan p;
  return bin_make_plan(in[0]->ndim, as, in[1]->ndim, bs, &p);
}

typedef struct bin_job {
  const vec_ops *ops;
  vec_binop op;
  const bin_plan *plan;
  const float *full, *small;
  float *y;
} bin_job;

static void bin_chunks(void *arg, size_t begin, size_t end) {
  const bin_job *j = arg;
  const bin_plan *p = j->plan;
  int64_t i = (int64_t)begin * VEC_CHUNK, hi = (int64_t)end * VEC_CHUNK;
  if (hi > p->total) hi = p->total;
  bool b = p->small_is_b;
  while (i < hi) {
    const float *s;
    bool scalar = p->q > 1;
    int64_t len;
    if (!scalar) {
      int64_t k = i % p->m;
      s = j->small + k;
      len = p->m - k;
    } else {
      s = j->small + (i / p->q) % p->m;
      len = p->q - i % p->q;
    }
    if (len > hi - i) len = hi - i;
    if (b)
      j->ops->binary(j->op, j->full + i, false, s, scalar, j->y + i, len);
    else
      j->ops->binary(j->op, s, scalar, j->full + i, false, j->y + i, len);
    i += len;
  }
}

static tb_status binary_run(tb_kernel_ctx *ctx, const vec_ops *ops, vec_binop op) {
  if (ctx->n_inputs < 2 || !ctx->inputs[1] || !tb_vec_inputs_ok(ctx, 2) || ctx->opset < 7) return tb_vec_fallback(ctx);
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  bin_plan p;
  if (!bin_make_plan(tb_tensor_ndim(a), tb_tensor_shape(a), tb_tensor_ndim(b), tb_tensor_shape(b), &p))
    return tb_vec_fallback(ctx);
  float *y = NULL;
  tb_status st;
  if (!tb_vec_output(ctx, 0, p.ndim, p.shape, &y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  bin_job j = {ops, op, &p, tb_tensor_host_data(p.small_is_b ? a : b), tb_tensor_host_data(p.small_is_b ? b : a), y};
  tb_vec_parallel(ctx, (size_t)((p.total + VEC_CHUNK - 1) / VEC_CHUNK), p.total, bin_chunks, &j);
  return TB_OK;
}

#define BINARY(sym, name, op)                                                                             \
  static tb_status sym##_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return binary_run(ctx, ops, op); } \
  VEC_KERNELS(sym, "", name, binary_accepts, sym##_run)
BINARY(add, "Add", VEC_ADD)
BINARY(sub, "Sub", VEC_SUB)
BINARY(mul, "Mul", VEC_MUL)
BINARY(div, "Div", VEC_DIV)
