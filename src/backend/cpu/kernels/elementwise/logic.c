/* Reference kernels for the comparisons, the bool logic ops and Where. Comparisons of f16/bf16 compare
 * the exactly widened f32 values; NaN compares unequal and unordered (every comparison false). A bool
 * element is true when its byte is nonzero; results are 0 or 1. */
#include "backend/cpu/kernels/elementwise/ew_kernel.h"

#define CMP_LOOPS(sfx, T, DT)                     \
  TB_EW_LOOP2(eq_##sfx, uint8_t, T, T, a == b)    \
  TB_EW_LOOP2(lt_##sfx, uint8_t, T, T, a < b)     \
  TB_EW_LOOP2(gt_##sfx, uint8_t, T, T, a > b)     \
  TB_EW_LOOP2(le_##sfx, uint8_t, T, T, a <= b)    \
  TB_EW_LOOP2(ge_##sfx, uint8_t, T, T, a >= b)
TB_EW_FLOATS(CMP_LOOPS)
TB_EW_SINTS(CMP_LOOPS)
TB_EW_UINTS(CMP_LOOPS)
TB_EW_LOOP2(eq_bool, uint8_t, uint8_t, uint8_t, (a != 0) == (b != 0))
TB_EW_LOOP2(and_bool, uint8_t, uint8_t, uint8_t, (a != 0) && (b != 0))
TB_EW_LOOP2(or_bool, uint8_t, uint8_t, uint8_t, (a != 0) || (b != 0))
TB_EW_LOOP2(xor_bool, uint8_t, uint8_t, uint8_t, (a != 0) != (b != 0))
TB_EW_LOOP1(not_bool, uint8_t, uint8_t, x == 0)

#define ALL_NUMERIC(X) TB_EW_FLOATS(X) TB_EW_SINTS(X) TB_EW_UINTS(X)
#define EQ_ENTRY(sfx, T, DT) {DT, eq_##sfx},
#define LT_ENTRY(sfx, T, DT) {DT, lt_##sfx},
#define GT_ENTRY(sfx, T, DT) {DT, gt_##sfx},
#define LE_ENTRY(sfx, T, DT) {DT, le_##sfx},
#define GE_ENTRY(sfx, T, DT) {DT, ge_##sfx},
static const tb_ew_loop_entry eq_loops[] = {ALL_NUMERIC(EQ_ENTRY){TB_DTYPE_BOOL, eq_bool}};
static const tb_ew_loop_entry lt_loops[] = {ALL_NUMERIC(LT_ENTRY)};
static const tb_ew_loop_entry gt_loops[] = {ALL_NUMERIC(GT_ENTRY)};
static const tb_ew_loop_entry le_loops[] = {ALL_NUMERIC(LE_ENTRY)};
static const tb_ew_loop_entry ge_loops[] = {ALL_NUMERIC(GE_ENTRY)};
static const tb_ew_loop_entry and_loops[] = {{TB_DTYPE_BOOL, and_bool}};
static const tb_ew_loop_entry or_loops[] = {{TB_DTYPE_BOOL, or_bool}};
static const tb_ew_loop_entry xor_loops[] = {{TB_DTYPE_BOOL, xor_bool}};
static const tb_ew_loop_entry not_loops[] = {{TB_DTYPE_BOOL, not_bool}};

#define RUN_BOOL(name)                                                                                     \
  static tb_status run_##name(tb_kernel_ctx *ctx) {                                                        \
    return tb_ew_simple(ctx, name##_loops, TB_EW_COUNT(name##_loops), 0, TB_DTYPE_BOOL, TB_DTYPE_BOOL, NULL); \
  }
RUN_BOOL(eq) RUN_BOOL(lt) RUN_BOOL(gt) RUN_BOOL(le) RUN_BOOL(ge) RUN_BOOL(and) RUN_BOOL(or) RUN_BOOL(xor)
RUN_BOOL(not)

/* Where copies elements whole, whatever their dtype: one loop per element size. */
#define WHERE_LOOP(bytes, T) TB_EW_LOOP3(where_##bytes, T, uint8_t, T, T, a ? b : c)
WHERE_LOOP(1, uint8_t)
WHERE_LOOP(2, uint16_t)
WHERE_LOOP(4, uint32_t)
WHERE_LOOP(8, uint64_t)

static tb_status run_where(tb_kernel_ctx *ctx) {
  tb_ew_call call;
  memset(&call, 0, sizeof call);
  if (ctx->n_inputs != 3 || !ctx->inputs[0] || !ctx->inputs[1] || !ctx->inputs[2])
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "Where needs three inputs");
  tb_dtype dt = tb_tensor_dtype(ctx->inputs[1]);
  switch (tb_dtype_size(dt)) {
    case 1: call.loop = where_1; break;
    case 2: call.loop = where_2; break;
    case 4: call.loop = where_4; break;
    case 8: call.loop = where_8; break;
    default: return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no kernel for %s inputs", tb_dtype_name(dt));
  }
  call.n_in = 3;
  for (size_t k = 0; k < 3; k++) {
    call.in[k] = ctx->inputs[k];
    call.in_compute[k] = tb_tensor_dtype(ctx->inputs[k]);
  }
  call.in_compute[0] = TB_DTYPE_BOOL;
  call.out_dtype = call.out_compute = dt;
  return tb_ew_map(ctx, &call);
}

const tb_kernel tb_kernel_equal = {.domain = "", .name = "Equal", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_eq};
const tb_kernel tb_kernel_less = {.domain = "", .name = "Less", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_lt};
const tb_kernel tb_kernel_greater = {.domain = "", .name = "Greater", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_gt};
const tb_kernel tb_kernel_lessorequal = {.domain = "", .name = "LessOrEqual", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_le};
const tb_kernel tb_kernel_greaterorequal = {.domain = "", .name = "GreaterOrEqual", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_ge};
const tb_kernel tb_kernel_and = {.domain = "", .name = "And", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_and};
const tb_kernel tb_kernel_or = {.domain = "", .name = "Or", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_or};
const tb_kernel tb_kernel_xor = {.domain = "", .name = "Xor", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_xor};
const tb_kernel tb_kernel_not = {.domain = "", .name = "Not", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_not};
const tb_kernel tb_kernel_where = {.domain = "", .name = "Where", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_where};
