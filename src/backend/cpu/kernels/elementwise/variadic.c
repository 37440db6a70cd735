/* Reference kernels for Sum, Mean, Min and Max: an accumulator of the broadcast shape in the compute
 * type (f32 for f16/bf16, so those round once at the end), folded with each input in order. Mean divides
 * the sum by the input count. Min and Max propagate NaN. */
#include <math.h>
#include "backend/cpu/kernels/elementwise/ew_kernel.h"

#define FMAX(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) >= (b) ? (a) : (b))
#define FMIN(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) <= (b) ? (a) : (b))

#define FLOAT_LOOPS(sfx, T, DT)                                   \
  TB_EW_LOOP1(copy_##sfx, T, T, x)                                \
  TB_EW_LOOP2(sum_##sfx, T, T, T, a + b)                          \
  TB_EW_LOOP2(max_##sfx, T, T, T, FMAX(a, b))                     \
  TB_EW_LOOP2(min_##sfx, T, T, T, FMIN(a, b))                     \
  TB_EW_LOOP1(scale_##sfx, T, T, x / (T)(*(const double *)params))
#define INT_LOOPS(sfx, T, DT)                     \
  TB_EW_LOOP1(copy_##sfx, T, T, x)                \
  TB_EW_LOOP2(max_##sfx, T, T, T, a >= b ? a : b) \
  TB_EW_LOOP2(min_##sfx, T, T, T, a <= b ? a : b)
TB_EW_FLOATS(FLOAT_LOOPS)
TB_EW_SINTS(INT_LOOPS)
TB_EW_UINTS(INT_LOOPS)

#define ALL_NUMERIC(X) TB_EW_FLOATS(X) TB_EW_SINTS(X) TB_EW_UINTS(X)
#define COPY_ENTRY(sfx, T, DT) {DT, copy_##sfx},
#define MAX_ENTRY(sfx, T, DT) {DT, max_##sfx},
#define MIN_ENTRY(sfx, T, DT) {DT, min_##sfx},
#define F(name) {TB_DTYPE_F32, name##_f32}, {TB_DTYPE_F64, name##_f64}
static const tb_ew_loop_entry copy_loops[] = {ALL_NUMERIC(COPY_ENTRY)};
static const tb_ew_loop_entry max_loops[] = {ALL_NUMERIC(MAX_ENTRY)};
static const tb_ew_loop_entry min_loops[] = {ALL_NUMERIC(MIN_ENTRY)};
static const tb_ew_loop_entry sum_loops[] = {F(sum)};
static const tb_ew_loop_entry scale_loops[] = {F(scale)};

static tb_status fold(tb_kernel_ctx *ctx, const tb_ew_loop_entry *table, size_t count, bool mean) {
  size_t n = ctx->n_inputs;
  if (n == 0) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "no inputs");
  /* The broadcast shape of all inputs, folded pairwise. */
  size_t ndim = 0;
  int64_t shape[TB_MAX_DIMS];
  for (size_t i = 0; i < n; i++) {
    if (!ctx->inputs[i]) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu is missing", i);
    int64_t acc[TB_MAX_DIMS];
    memcpy(acc, shape, ndim * sizeof *acc);
    size_t ndims[2] = {ndim, tb_tensor_ndim(ctx->inputs[i])};
    const int64_t *shapes[2] = {acc, tb_tensor_shape(ctx->inputs[i])};
    if (!tb_bcast_shape(i == 0 ? 1 : 2, i == 0 ? ndims + 1 : ndims, i == 0 ? shapes + 1 : shapes, &ndim, shape))
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu does not broadcast with the inputs before it", i);
  }
  tb_dtype dt = tb_tensor_dtype(ctx->inputs[0]), compute = tb_ew_compute_dtype(dt);
  tb_bcast_loop copy = tb_ew_find_loop(copy_loops, TB_EW_COUNT(copy_loops), compute);
  tb_bcast_loop step = tb_ew_find_loop(table, count, compute);
  tb_bcast_loop scale = tb_ew_find_loop(scale_loops, TB_EW_COUNT(scale_loops), compute);
  if (!copy || !step || (mean && !scale))
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no kernel for %s inputs", tb_dtype_name(dt));

  tb_ew_out out;
  tb_status st = tb_ew_out_begin(ctx, 0, dt, compute, ndim, shape, &out);
  for (size_t i = 0; i < n && st == TB_OK; i++) {
    tb_ew_staged in;
    st = tb_ew_stage(ctx, ctx->inputs[i], compute, 0, NULL, &in);
    if (st != TB_OK) break;
    tb_bcast_operand ops[3] = {out.op, out.op, in.op};
    bool ok = i == 0 ? tb_bcast_walk((tb_bcast_operand[]){out.op, in.op}, 2, copy, NULL)
                     : tb_bcast_walk(ops, 3, step, NULL);
    tb_ew_staged_free(&in);
    if (!ok) st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu does not broadcast to the output", i);
  }
  if (st == TB_OK && mean) {
    double count_d = (double)n;
    tb_bcast_operand ops[2] = {out.op, out.op};
    tb_bcast_walk(ops, 2, scale, &count_d);
  }
  if (out.tensor || out.owned) {
    tb_status fin = tb_ew_out_finish(ctx, &out, st == TB_OK);
    if (st == TB_OK) st = fin;
  }
  return st;
}

static tb_status run_sum(tb_kernel_ctx *ctx) { return fold(ctx, sum_loops, TB_EW_COUNT(sum_loops), false); }
static tb_status run_mean(tb_kernel_ctx *ctx) { return fold(ctx, sum_loops, TB_EW_COUNT(sum_loops), true); }
static tb_status run_max(tb_kernel_ctx *ctx) { return fold(ctx, max_loops, TB_EW_COUNT(max_loops), false); }
static tb_status run_min(tb_kernel_ctx *ctx) { return fold(ctx, min_loops, TB_EW_COUNT(min_loops), false); }

const tb_kernel tb_kernel_sum = {.domain = "", .name = "Sum", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_sum};
const tb_kernel tb_kernel_mean = {.domain = "", .name = "Mean", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_mean};
const tb_kernel tb_kernel_max = {.domain = "", .name = "Max", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_max};
const tb_kernel tb_kernel_min = {.domain = "", .name = "Min", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_min};
