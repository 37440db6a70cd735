/* Reference kernels for Add, Sub, Mul, Div (numpy broadcasting, legacy axis broadcast for opset < 7).
 * Integers wrap on overflow; integer division by zero gives 0 and INT_MIN / -1 gives INT_MIN (ONNX
 * leaves both undefined; this is TensorBridge's definition). */
#include "backend/cpu/kernels/elementwise/ew_kernel.h"

#define FLOAT_LOOPS(sfx, T, DT)                \
  TB_EW_LOOP2(add_##sfx, T, T, T, a + b)       \
  TB_EW_LOOP2(sub_##sfx, T, T, T, a - b)       \
  TB_EW_LOOP2(mul_##sfx, T, T, T, a * b)       \
  TB_EW_LOOP2(div_##sfx, T, T, T, a / b)
#define INT_LOOPS(sfx, T, DT)                                                  \
  TB_EW_LOOP2(add_##sfx, T, T, T, TB_EW_WRAP(T, (uint64_t)a + (uint64_t)b))    \
  TB_EW_LOOP2(sub_##sfx, T, T, T, TB_EW_WRAP(T, (uint64_t)a - (uint64_t)b))    \
  TB_EW_LOOP2(mul_##sfx, T, T, T, TB_EW_WRAP(T, (uint64_t)a * (uint64_t)b))
#define SDIV_LOOP(sfx, T, DT) \
  TB_EW_LOOP2(div_##sfx, T, T, T, b == 0 ? 0 : b == -1 ? TB_EW_WRAP(T, 0 - (uint64_t)a) : a / b)
#define UDIV_LOOP(sfx, T, DT) TB_EW_LOOP2(div_##sfx, T, T, T, b == 0 ? 0 : a / b)

TB_EW_FLOATS(FLOAT_LOOPS)
TB_EW_SINTS(INT_LOOPS)
TB_EW_UINTS(INT_LOOPS)
TB_EW_SINTS(SDIV_LOOP)
TB_EW_UINTS(UDIV_LOOP)

#define ALL_NUMERIC(X) TB_EW_FLOATS(X) TB_EW_SINTS(X) TB_EW_UINTS(X)
#define ADD_ENTRY(sfx, T, DT) {DT, add_##sfx},
#define SUB_ENTRY(sfx, T, DT) {DT, sub_##sfx},
#define MUL_ENTRY(sfx, T, DT) {DT, mul_##sfx},
#define DIV_ENTRY(sfx, T, DT) {DT, div_##sfx},
static const tb_ew_loop_entry add_loops[] = {ALL_NUMERIC(ADD_ENTRY)};
static const tb_ew_loop_entry sub_loops[] = {ALL_NUMERIC(SUB_ENTRY)};
static const tb_ew_loop_entry mul_loops[] = {ALL_NUMERIC(MUL_ENTRY)};
static const tb_ew_loop_entry div_loops[] = {ALL_NUMERIC(DIV_ENTRY)};

static tb_status same_type(tb_kernel_ctx *ctx, const tb_ew_loop_entry *table, size_t count) {
  tb_dtype dt = tb_tensor_dtype(ctx->inputs[0]);
  return tb_ew_simple(ctx, table, count, 0, dt, tb_ew_compute_dtype(dt), NULL);
}
static tb_status run_add(tb_kernel_ctx *ctx) { return same_type(ctx, add_loops, TB_EW_COUNT(add_loops)); }
static tb_status run_sub(tb_kernel_ctx *ctx) { return same_type(ctx, sub_loops, TB_EW_COUNT(sub_loops)); }
static tb_status run_mul(tb_kernel_ctx *ctx) { return same_type(ctx, mul_loops, TB_EW_COUNT(mul_loops)); }
static tb_status run_div(tb_kernel_ctx *ctx) { return same_type(ctx, div_loops, TB_EW_COUNT(div_loops)); }

const tb_kernel tb_kernel_add = {.domain = "", .name = "Add", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_add};
const tb_kernel tb_kernel_sub = {.domain = "", .name = "Sub", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_sub};
const tb_kernel tb_kernel_mul = {.domain = "", .name = "Mul", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_mul};
const tb_kernel tb_kernel_div = {.domain = "", .name = "Div", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_div};
