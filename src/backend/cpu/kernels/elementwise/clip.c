/* Reference kernel for Clip: bounds read once (attributes before opset 11, scalar inputs after), then
 * y = x below min -> min, above max -> max, compared in the compute type (ints in int64). NaN stays NaN. */
#include <float.h>
#include "backend/cpu/kernels/elementwise/ew_kernel.h"
#include "ops/elementwise/ew_params.h"

typedef struct clip_params {
  bool has_lo, has_hi;
  double lo, hi;         /* for float compute types */
  int64_t lo_i, hi_i;    /* for integers */
} clip_params;
#define P ((const clip_params *)params)

#define FLOAT_LOOP(sfx, T, DT)                                                             \
  static T clip_one_##sfx(T x, const clip_params *p) {                                     \
    if (p->has_lo && x < (T)p->lo) x = (T)p->lo;                                           \
    if (p->has_hi && x > (T)p->hi) x = (T)p->hi;                                           \
    return x;                                                                              \
  }                                                                                        \
  TB_EW_LOOP1(clip_##sfx, T, T, clip_one_##sfx(x, P))
#define INT_LOOP(sfx, T, DT)                                                               \
  static T clip_one_##sfx(T x, const clip_params *p) {                                     \
    if (p->has_lo && x < p->lo_i) x = (T)p->lo_i;                                          \
    if (p->has_hi && x > p->hi_i) x = (T)p->hi_i;                                          \
    return x;                                                                              \
  }                                                                                        \
  TB_EW_LOOP1(clip_##sfx, T, T, clip_one_##sfx(x, P))
TB_EW_FLOATS(FLOAT_LOOP)
TB_EW_SINTS(INT_LOOP)
TB_EW_UINTS(INT_LOOP)

#define CLIP_ENTRY(sfx, T, DT) {DT, clip_##sfx},
static const tb_ew_loop_entry clip_loops[] = {TB_EW_FLOATS(CLIP_ENTRY) TB_EW_SINTS(CLIP_ENTRY) TB_EW_UINTS(CLIP_ENTRY)};

static tb_status run_clip(tb_kernel_ctx *ctx) {
  clip_params p;
  memset(&p, 0, sizeof p);
  const tb_clip_params *cp = ctx->params;
  if (cp->attr_form) {
    p.has_lo = p.has_hi = true;
    p.lo = cp->min;
    p.hi = cp->max;
  } else {
    for (size_t i = 1; i < 3; i++) {
      if (i >= ctx->n_inputs || !ctx->inputs[i]) continue;
      double v;
      int64_t vi;
      tb_status st = tb_ew_scalar(ctx, i, TB_DTYPE_F64, &v);
      if (st == TB_OK) st = tb_ew_scalar(ctx, i, TB_DTYPE_I64, &vi);
      if (st != TB_OK) return st;
      if (i == 1) {
        p.has_lo = true;
        p.lo = v;
        p.lo_i = vi;
      } else {
        p.has_hi = true;
        p.hi = v;
        p.hi_i = vi;
      }
    }
  }
  tb_dtype dt = tb_tensor_dtype(ctx->inputs[0]);
  tb_ew_call call;
  memset(&call, 0, sizeof call);
  call.loop = tb_ew_find_loop(clip_loops, TB_EW_COUNT(clip_loops), tb_ew_compute_dtype(dt));
  if (!call.loop) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no kernel for %s inputs", tb_dtype_name(dt));
  call.n_in = 1;
  call.in[0] = ctx->inputs[0];
  call.in_compute[0] = tb_ew_compute_dtype(dt);
  call.out_dtype = dt;
  call.out_compute = tb_ew_compute_dtype(dt);
  call.params = &p;
  return tb_ew_map(ctx, &call);
}

const tb_kernel tb_kernel_clip = {.domain = "", .name = "Clip", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_clip};
