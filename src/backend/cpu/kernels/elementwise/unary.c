/* Reference kernels for the unary math ops (see src/ops/elementwise/unary.c): the C library function of
 * the compute type (sqrtf for f32, sqrt for f64, ...), as numpy's ufuncs compute them. Integer Neg and
 * Abs wrap (-INT_MIN is INT_MIN, as in numpy). */
#include <math.h>
#include "backend/cpu/kernels/elementwise/ew_kernel.h"
#include "ops/elementwise/ew_params.h"

#define MATH_f32(fn) fn##f
#define MATH_f64(fn) fn
#define M(sfx, fn) MATH_##sfx(fn)

typedef struct isinf_params {
  bool negative, positive;
} isinf_params;

#define FLOAT_LOOPS(sfx, T, DT)                                                                    \
  TB_EW_LOOP1(sqrt_##sfx, T, T, M(sfx, sqrt)(x))                                                   \
  TB_EW_LOOP1(exp_##sfx, T, T, M(sfx, exp)(x))                                                     \
  TB_EW_LOOP1(log_##sfx, T, T, M(sfx, log)(x))                                                     \
  TB_EW_LOOP1(tanh_##sfx, T, T, M(sfx, tanh)(x))                                                   \
  TB_EW_LOOP1(erf_##sfx, T, T, M(sfx, erf)(x))                                                     \
  TB_EW_LOOP1(reciprocal_##sfx, T, T, (T)1 / x)                                                    \
  TB_EW_LOOP1(floor_##sfx, T, T, M(sfx, floor)(x))                                                 \
  TB_EW_LOOP1(ceil_##sfx, T, T, M(sfx, ceil)(x))                                                   \
  TB_EW_LOOP1(round_##sfx, T, T, M(sfx, nearbyint)(x))                                             \
  TB_EW_LOOP1(sin_##sfx, T, T, M(sfx, sin)(x))                                                     \
  TB_EW_LOOP1(cos_##sfx, T, T, M(sfx, cos)(x))                                                     \
  TB_EW_LOOP1(tan_##sfx, T, T, M(sfx, tan)(x))                                                     \
  TB_EW_LOOP1(asin_##sfx, T, T, M(sfx, asin)(x))                                                   \
  TB_EW_LOOP1(acos_##sfx, T, T, M(sfx, acos)(x))                                                   \
  TB_EW_LOOP1(atan_##sfx, T, T, M(sfx, atan)(x))                                                   \
  TB_EW_LOOP1(sinh_##sfx, T, T, M(sfx, sinh)(x))                                                   \
  TB_EW_LOOP1(cosh_##sfx, T, T, M(sfx, cosh)(x))                                                   \
  TB_EW_LOOP1(asinh_##sfx, T, T, M(sfx, asinh)(x))                                                 \
  TB_EW_LOOP1(acosh_##sfx, T, T, M(sfx, acosh)(x))                                                 \
  TB_EW_LOOP1(atanh_##sfx, T, T, M(sfx, atanh)(x))                                                 \
  TB_EW_LOOP1(softsign_##sfx, T, T, x / ((T)1 + M(sfx, fabs)(x)))                                  \
  TB_EW_LOOP1(neg_##sfx, T, T, -x)                                                                 \
  TB_EW_LOOP1(abs_##sfx, T, T, M(sfx, fabs)(x))                                                    \
  TB_EW_LOOP1(sign_##sfx, T, T, x > 0 ? (T)1 : x < 0 ? (T)-1 : x)                                  \
  TB_EW_LOOP1(isnan_##sfx, uint8_t, T, isnan(x) ? 1 : 0)                                           \
  TB_EW_LOOP1(isinf_##sfx, uint8_t, T,                                                             \
              isinf(x) && ((x > 0 && ((const isinf_params *)params)->positive) ||                  \
                           (x < 0 && ((const isinf_params *)params)->negative)))

#define SINT_LOOPS(sfx, T, DT)                                                 \
  TB_EW_LOOP1(neg_##sfx, T, T, TB_EW_WRAP(T, 0 - (uint64_t)x))                 \
  TB_EW_LOOP1(abs_##sfx, T, T, x < 0 ? TB_EW_WRAP(T, 0 - (uint64_t)x) : x)     \
  TB_EW_LOOP1(sign_##sfx, T, T, (x > 0) - (x < 0))
#define UINT_LOOPS(sfx, T, DT)   \
  TB_EW_LOOP1(abs_##sfx, T, T, x) \
  TB_EW_LOOP1(sign_##sfx, T, T, x > 0)

TB_EW_FLOATS(FLOAT_LOOPS)
TB_EW_SINTS(SINT_LOOPS)
TB_EW_UINTS(UINT_LOOPS)

#define F(name) {TB_DTYPE_F32, name##_f32}, {TB_DTYPE_F64, name##_f64}
#define INT_ENTRY(name, sfx, T, DT) {DT, name##_##sfx},
#define NEG_ENTRY(sfx, T, DT) INT_ENTRY(neg, sfx, T, DT)
#define ABS_ENTRY(sfx, T, DT) INT_ENTRY(abs, sfx, T, DT)
#define SIGN_ENTRY(sfx, T, DT) INT_ENTRY(sign, sfx, T, DT)

#define TABLE(name) static const tb_ew_loop_entry name##_loops[] = {F(name)};
TABLE(sqrt) TABLE(exp) TABLE(log) TABLE(tanh) TABLE(erf) TABLE(reciprocal) TABLE(floor) TABLE(ceil) TABLE(round)
TABLE(sin) TABLE(cos) TABLE(tan) TABLE(asin) TABLE(acos) TABLE(atan) TABLE(sinh) TABLE(cosh) TABLE(asinh)
TABLE(acosh) TABLE(atanh) TABLE(softsign) TABLE(isnan) TABLE(isinf)
static const tb_ew_loop_entry neg_loops[] = {F(neg), TB_EW_SINTS(NEG_ENTRY)};
static const tb_ew_loop_entry abs_loops[] = {F(abs), TB_EW_SINTS(ABS_ENTRY) TB_EW_UINTS(ABS_ENTRY)};
static const tb_ew_loop_entry sign_loops[] = {F(sign), TB_EW_SINTS(SIGN_ENTRY) TB_EW_UINTS(SIGN_ENTRY)};

#define RUN_SAME(name)                                                                                 \
  static tb_status run_##name(tb_kernel_ctx *ctx) {                                                    \
    tb_dtype dt = tb_tensor_dtype(ctx->inputs[0]);                                                     \
    return tb_ew_simple(ctx, name##_loops, TB_EW_COUNT(name##_loops), 0, dt, tb_ew_compute_dtype(dt), NULL); \
  }
RUN_SAME(sqrt) RUN_SAME(exp) RUN_SAME(log) RUN_SAME(tanh) RUN_SAME(erf) RUN_SAME(reciprocal) RUN_SAME(floor)
RUN_SAME(ceil) RUN_SAME(round) RUN_SAME(sin) RUN_SAME(cos) RUN_SAME(tan) RUN_SAME(asin) RUN_SAME(acos)
RUN_SAME(atan) RUN_SAME(sinh) RUN_SAME(cosh) RUN_SAME(asinh) RUN_SAME(acosh) RUN_SAME(atanh) RUN_SAME(softsign)
RUN_SAME(neg) RUN_SAME(abs) RUN_SAME(sign)

static tb_status run_isnan(tb_kernel_ctx *ctx) {
  return tb_ew_simple(ctx, isnan_loops, TB_EW_COUNT(isnan_loops), 0, TB_DTYPE_BOOL, TB_DTYPE_BOOL, NULL);
}

static tb_status run_isinf(tb_kernel_ctx *ctx) {
  const tb_isinf_params *ip = ctx->params;
  isinf_params p = {ip->detect_negative, ip->detect_positive};
  return tb_ew_simple(ctx, isinf_loops, TB_EW_COUNT(isinf_loops), 0, TB_DTYPE_BOOL, TB_DTYPE_BOOL, &p);
}

#define KERNEL(var, op) const tb_kernel tb_kernel_##var = {.domain = "", .name = op, .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_##var};
KERNEL(sqrt, "Sqrt") KERNEL(exp, "Exp") KERNEL(log, "Log") KERNEL(tanh, "Tanh") KERNEL(erf, "Erf")
KERNEL(reciprocal, "Reciprocal") KERNEL(floor, "Floor") KERNEL(ceil, "Ceil") KERNEL(round, "Round")
KERNEL(sin, "Sin") KERNEL(cos, "Cos") KERNEL(tan, "Tan") KERNEL(asin, "Asin") KERNEL(acos, "Acos")
KERNEL(atan, "Atan") KERNEL(sinh, "Sinh") KERNEL(cosh, "Cosh") KERNEL(asinh, "Asinh") KERNEL(acosh, "Acosh")
KERNEL(atanh, "Atanh") KERNEL(softsign, "Softsign") KERNEL(neg, "Neg") KERNEL(abs, "Abs") KERNEL(sign, "Sign")
KERNEL(isnan, "IsNaN") KERNEL(isinf, "IsInf")
