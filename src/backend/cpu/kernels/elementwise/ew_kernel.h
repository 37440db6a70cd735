/* Internal: what the elementwise CPU kernels share — presenting inputs in the dtype a loop computes in,
 * producing an output through a compute buffer, the one-call broadcasting map, and the macros that write
 * the typed 1-D loops.
 *
 * Numerics (the O0 baseline): f32 and f64 compute in their own type with the C math functions (what
 * numpy's float32/float64 ufuncs compute); f16 and bf16 inputs are widened exactly to f32, computed in
 * f32 and rounded once to the output dtype with tb_convert (nearest, ties to even). Integers compute in
 * their own type with wrap-around (two's complement) on overflow, never signed-overflow UB. */
#ifndef TB_CPU_KERNELS_ELEMENTWISE_EW_KERNEL_H
#define TB_CPU_KERNELS_ELEMENTWISE_EW_KERNEL_H
#include <string.h>
#include "backend/cpu/kernels/elementwise/broadcast.h"
#include "backend/cpu/kernels/kernel.h"

enum { TB_EW_MAX_INPUTS = TB_BCAST_MAX_OPERANDS - 1 };

/* The dtype a loop computes in for data of dtype d: f32 for f16 and bf16, d itself otherwise. */
tb_dtype tb_ew_compute_dtype(tb_dtype d);

/* The tensor's elements packed row-major: its own memory when contiguous, else a copy in *owned (the
 * caller frees it; NULL when not needed). */
tb_status tb_ew_packed(tb_kernel_ctx *ctx, const tb_tensor *t, const void **data, void **owned);

/* An input presented in a compute dtype: the tensor itself when it already has that dtype, else a
 * packed converted copy (owned, freed by tb_ew_staged_free). */
typedef struct tb_ew_staged {
  tb_bcast_operand op;
  int64_t shape[TB_MAX_DIMS];
  int64_t strides[TB_MAX_DIMS];
  void *owned;
} tb_ew_staged;

/* Stage tensor t in `compute`. shape_override (ndim entries, same element count) replaces the tensor's
 * shape for broadcasting (the legacy axis broadcast appends dims of 1); NULL keeps it. */
tb_status tb_ew_stage(tb_kernel_ctx *ctx, const tb_tensor *t, tb_dtype compute, size_t ndim,
                      const int64_t *shape_override, tb_ew_staged *s);
void tb_ew_staged_free(tb_ew_staged *s);

/* Output i of dtype `dtype` and the given shape, written through an operand in `compute`: the tensor
 * itself when the dtypes match, else a packed buffer converted into it by tb_ew_out_finish. */
typedef struct tb_ew_out {
  tb_tensor *tensor;
  tb_dtype compute;
  tb_bcast_operand op;
  int64_t shape[TB_MAX_DIMS];
  void *owned;
} tb_ew_out;
tb_status tb_ew_out_begin(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, tb_dtype compute, size_t ndim,
                          const int64_t *shape, tb_ew_out *o);
/* Convert the compute buffer into the tensor (when there is one) and free it; frees only on failure
 * of an earlier step when called with ok=false. */
tb_status tb_ew_out_finish(tb_kernel_ctx *ctx, tb_ew_out *o, bool ok);

/* A loop per compute dtype; the first entry whose dtype matches is used. */
typedef struct tb_ew_loop_entry {
  tb_dtype dtype;
  tb_bcast_loop loop;
} tb_ew_loop_entry;
tb_bcast_loop tb_ew_find_loop(const tb_ew_loop_entry *table, size_t count, tb_dtype dtype);

/* One elementwise call: output out_index = loop(inputs) over their broadcast shape (or out_shape when
 * given: inputs must then broadcast to it, as PRelu's slope does). */
typedef struct tb_ew_call {
  size_t n_in;
  const tb_tensor *in[TB_EW_MAX_INPUTS];
  tb_dtype in_compute[TB_EW_MAX_INPUTS];
  size_t in_ndim[TB_EW_MAX_INPUTS];           /* with in_shape[i] non-NULL: a shape override */
  const int64_t *in_shape[TB_EW_MAX_INPUTS];
  size_t out_index;
  tb_dtype out_dtype, out_compute;
  size_t out_ndim;
  const int64_t *out_shape;                   /* NULL: the broadcast of the inputs */
  tb_bcast_loop loop;
  const void *params;
} tb_ew_call;
tb_status tb_ew_map(tb_kernel_ctx *ctx, const tb_ew_call *call);

/* The common case: every present input in its compute dtype, output `out_dtype` computed in
 * `out_compute`, loop chosen from the table by the compute dtype of input `key`. TB_ERR_UNSUPPORTED
 * naming the node when no loop exists (inference rejects those dtypes first, so that is a bug). */
tb_status tb_ew_simple(tb_kernel_ctx *ctx, const tb_ew_loop_entry *table, size_t count, size_t key, tb_dtype out_dtype,
                       tb_dtype out_compute, const void *params);
/* The legacy (opset < 7) broadcast of Add, Sub, ...: with attribute broadcast=1, B's shape aligned at
 * `axis` of A; sets *ndim/shape to B's shape with the trailing 1s that make numpy's rule do the same.
 * Leaves *ndim 0 and returns TB_OK when the node uses numpy broadcasting. */
tb_status tb_ew_legacy_shape(tb_kernel_ctx *ctx, size_t *ndim, int64_t *shape);
/* tb_ew_legacy_shape applied to call: input 1 seen with the legacy shape, kept in `shape` (the caller's
 * TB_MAX_DIMS entries, alive until the call is mapped). */
tb_status tb_ew_use_legacy_shape(tb_kernel_ctx *ctx, tb_ew_call *call, int64_t *shape);

/* Whether the node has output i (tb_kernel_has_output: an omitted optional output has none). */
bool tb_ew_has_output(const tb_kernel_ctx *ctx, size_t i);

/* The scalar value of input i (one element) converted to `dtype` into out; TB_ERR_MODEL naming the node
 * when it has more than one element. */
tb_status tb_ew_scalar(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, void *out);

/* ---- Typed 1-D loops. EXPR sees the loaded values a, b, c (or x) and `params`. --------------------- */

#define TB_EW_LOOP1(fname, TO, TX, EXPR)                                                  \
  static void fname(char *const *p_, const int64_t *s_, int64_t n_, const void *params) { \
    (void)params;                                                                         \
    char *o_ = p_[0];                                                                     \
    const char *x_ = p_[1];                                                               \
    for (int64_t i_ = 0; i_ < n_; i_++, o_ += s_[0], x_ += s_[1]) {                       \
      TX x;                                                                               \
      memcpy(&x, x_, sizeof x);                                                           \
      TO r_ = (TO)(EXPR);                                                                 \
      memcpy(o_, &r_, sizeof r_);                                                         \
    }                                                                                     \
  }

#define TB_EW_LOOP2(fname, TO, TA, TB, EXPR)                                                          \
  static void fname(char *const *p_, const int64_t *s_, int64_t n_, const void *params) {             \
    (void)params;                                                                                     \
    char *o_ = p_[0];                                                                                 \
    const char *a_ = p_[1], *b_ = p_[2];                                                              \
    for (int64_t i_ = 0; i_ < n_; i_++, o_ += s_[0], a_ += s_[1], b_ += s_[2]) {                      \
      TA a;                                                                                           \
      TB b;                                                                                           \
      memcpy(&a, a_, sizeof a);                                                                       \
      memcpy(&b, b_, sizeof b);                                                                       \
      TO r_ = (TO)(EXPR);                                                                             \
      memcpy(o_, &r_, sizeof r_);                                                                     \
    }                                                                                                 \
  }

#define TB_EW_LOOP3(fname, TO, TA, TB, TC, EXPR)                                                      \
  static void fname(char *const *p_, const int64_t *s_, int64_t n_, const void *params) {             \
    (void)params;                                                                                     \
    char *o_ = p_[0];                                                                                 \
    const char *a_ = p_[1], *b_ = p_[2], *c_ = p_[3];                                                 \
    for (int64_t i_ = 0; i_ < n_; i_++, o_ += s_[0], a_ += s_[1], b_ += s_[2], c_ += s_[3]) {         \
      TA a;                                                                                           \
      TB b;                                                                                           \
      TC c;                                                                                           \
      memcpy(&a, a_, sizeof a);                                                                       \
      memcpy(&b, b_, sizeof b);                                                                       \
      memcpy(&c, c_, sizeof c);                                                                       \
      TO r_ = (TO)(EXPR);                                                                             \
      memcpy(o_, &r_, sizeof r_);                                                                     \
    }                                                                                                 \
  }

/* X-macro lists of (suffix, C type, dtype) for instantiating loops. */
#define TB_EW_FLOATS(X) X(f32, float, TB_DTYPE_F32) X(f64, double, TB_DTYPE_F64)
#define TB_EW_SINTS(X) \
  X(i64, int64_t, TB_DTYPE_I64) X(i32, int32_t, TB_DTYPE_I32) X(i16, int16_t, TB_DTYPE_I16) X(i8, int8_t, TB_DTYPE_I8)
#define TB_EW_UINTS(X) X(u8, uint8_t, TB_DTYPE_U8)

#define TB_EW_ENTRY(name, sfx, T, DT) {DT, name##_##sfx},
#define TB_EW_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* Integer arithmetic that wraps instead of overflowing (computed in uint64_t, truncated to T). */
#define TB_EW_WRAP(T, expr) ((T)(uint64_t)(expr))

#endif
