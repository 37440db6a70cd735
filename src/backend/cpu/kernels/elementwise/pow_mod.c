/* Reference kernels for Pow, Mod and BitShift.
 *
 * Pow: a float base computes powf/pow in its compute type (the exponent converted to it); an integer
 * base with an integer exponent multiplies exactly in int64 with wrap-around (a negative exponent gives
 * the truncated real result: 1 for base 1, +-1 for base -1, else 0); an integer base with a float
 * exponent computes pow in double and converts like Cast (truncate, saturate).
 * Mod: fmod=1 is C's remainder (dividend's sign), fmod=0 Python's (divisor's sign); an integer divisor
 * of 0 gives 0 (ONNX leaves it undefined), and x % -1 is 0 with no INT_MIN trap.
 * BitShift: a shift by the bit width or more gives 0. */
#include <math.h>
#include "backend/cpu/kernels/elementwise/ew_kernel.h"
#include "ops/elementwise/ew_params.h"

static int64_t ipow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t result = 1, b = (uint64_t)base;
  while (e > 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return (int64_t)result;
}

TB_EW_LOOP2(pow_f32, float, float, float, powf(a, b))
TB_EW_LOOP2(pow_f64, double, double, double, pow(a, b))
TB_EW_LOOP2(pow_i64, int64_t, int64_t, int64_t, ipow(a, b))
static const tb_ew_loop_entry pow_loops[] = {{TB_DTYPE_F32, pow_f32}, {TB_DTYPE_F64, pow_f64}, {TB_DTYPE_I64, pow_i64}};

static bool is_float(tb_dtype d) {
  return d == TB_DTYPE_F32 || d == TB_DTYPE_F64 || d == TB_DTYPE_F16 || d == TB_DTYPE_BF16;
}

static tb_status run_pow(tb_kernel_ctx *ctx) {
  const tb_tensor *base = ctx->inputs[0], *expo = ctx->inputs[1];
  tb_dtype bt = tb_tensor_dtype(base), et = tb_tensor_dtype(expo);
  tb_dtype compute = is_float(bt) ? tb_ew_compute_dtype(bt) : is_float(et) ? TB_DTYPE_F64 : TB_DTYPE_I64;
  tb_ew_call call;
  memset(&call, 0, sizeof call);
  call.loop = tb_ew_find_loop(pow_loops, TB_EW_COUNT(pow_loops), compute);
  call.n_in = 2;
  call.in[0] = base;
  call.in[1] = expo;
  call.in_compute[0] = call.in_compute[1] = compute;
  int64_t legacy[TB_MAX_DIMS];
  tb_status st = tb_ew_use_legacy_shape(ctx, &call, legacy);
  if (st != TB_OK) return st;
  call.out_dtype = bt;
  call.out_compute = compute;
  return tb_ew_map(ctx, &call);
}

/* Mod */
#define SMOD_LOOPS(sfx, T, DT)                                                              \
  TB_EW_LOOP2(cmod_##sfx, T, T, T, (b == 0 || b == -1) ? 0 : a % b)                       \
  TB_EW_LOOP2(pymod_##sfx, T, T, T, pyrem_##sfx(a, b))
#define SMOD_HELPER(sfx, T, DT)                                  \
  static T pyrem_##sfx(T a, T b) {                               \
    if (b == 0 || b == -1) return 0;                             \
    T r = (T)(a % b);                                            \
    return (T)((r != 0 && ((r < 0) != (b < 0))) ? r + b : r);    \
  }
TB_EW_SINTS(SMOD_HELPER)
TB_EW_SINTS(SMOD_LOOPS)
TB_EW_LOOP2(cmod_u8, uint8_t, uint8_t, uint8_t, b == 0 ? 0 : a % b)
TB_EW_LOOP2(fmod_f32, float, float, float, fmodf(a, b))
TB_EW_LOOP2(fmod_f64, double, double, double, fmod(a, b))

#define CMOD_ENTRY(sfx, T, DT) {DT, cmod_##sfx},
#define PYMOD_ENTRY(sfx, T, DT) {DT, pymod_##sfx},
static const tb_ew_loop_entry cmod_loops[] = {
    {TB_DTYPE_F32, fmod_f32}, {TB_DTYPE_F64, fmod_f64}, TB_EW_SINTS(CMOD_ENTRY){TB_DTYPE_U8, cmod_u8}};
static const tb_ew_loop_entry pymod_loops[] = {TB_EW_SINTS(PYMOD_ENTRY){TB_DTYPE_U8, cmod_u8}};

static tb_status run_mod(tb_kernel_ctx *ctx) {
  const tb_mod_params *p = ctx->params;
  tb_dtype dt = tb_tensor_dtype(ctx->inputs[0]);
  if (p->fmod) return tb_ew_simple(ctx, cmod_loops, TB_EW_COUNT(cmod_loops), 0, dt, tb_ew_compute_dtype(dt), NULL);
  return tb_ew_simple(ctx, pymod_loops, TB_EW_COUNT(pymod_loops), 0, dt, tb_ew_compute_dtype(dt), NULL);
}

/* BitShift */
TB_EW_LOOP2(shl_u8, uint8_t, uint8_t, uint8_t, b >= 8 ? 0 : (uint8_t)(a << b))
TB_EW_LOOP2(shr_u8, uint8_t, uint8_t, uint8_t, b >= 8 ? 0 : a >> b)
static const tb_ew_loop_entry shl_loops[] = {{TB_DTYPE_U8, shl_u8}};
static const tb_ew_loop_entry shr_loops[] = {{TB_DTYPE_U8, shr_u8}};

static tb_status run_bitshift(tb_kernel_ctx *ctx) {
  const tb_bitshift_params *p = ctx->params;
  bool left = p->left;
  tb_dtype dt = tb_tensor_dtype(ctx->inputs[0]);
  return left ? tb_ew_simple(ctx, shl_loops, 1, 0, dt, dt, NULL) : tb_ew_simple(ctx, shr_loops, 1, 0, dt, dt, NULL);
}

const tb_kernel tb_kernel_pow = {.domain = "", .name = "Pow", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_pow};
const tb_kernel tb_kernel_mod = {.domain = "", .name = "Mod", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_mod};
const tb_kernel tb_kernel_bitshift = {.domain = "", .name = "BitShift", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_bitshift};
