/* Internal: what the level-2 vectorised kernels (vec_*.c) share: the f32 / contiguous checks, running the
 * level-0 reference kernel for a node whose shapes a fast kernel does not handle (accepts() decides on
 * types; run() meets the real shapes and hands anything else back to the reference), splitting work over
 * ctx->pool, and the macro that makes the AVX-512, AVX2 and portable registry entries of one kernel. */
#ifndef TB_CPU_KERNELS_FAST_VEC_KERNEL_H
#define TB_CPU_KERNELS_FAST_VEC_KERNEL_H
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "backend/cpu/kernels/kernel.h"
#include "backend/kernel_params.h"
#include "core/threadpool.h"
#include "ops/fused/fused_params.h"

/* Elements below which a kernel runs on the calling thread alone (the pool's wake-up costs more). */
enum { VEC_PARALLEL_MIN = 1 << 15, VEC_CHUNK = 1 << 13 };

/* True when every present input among the first n has dtype float32 (known). */
bool tb_fast_accepts_f32(const tb_value_type *const *in, size_t n);
/* Run the reference kernel of ctx's op (its parameters and input types) on ctx's inputs and outputs. */
tb_status tb_vec_fallback(tb_kernel_ctx *ctx);
/* The first n inputs: every present one float32, contiguous and host-readable; input 0 present. */
bool tb_vec_inputs_ok(const tb_kernel_ctx *ctx, size_t n);
/* Output i as float32 of this shape (made or checked by tb_kernel_output); false with *st TB_OK when a
 * preallocated output is not contiguous (the caller falls back), false with the error otherwise. */
bool tb_vec_output(tb_kernel_ctx *ctx, size_t i, size_t ndim, const int64_t *shape, float **data, tb_status *st);
/* fn over [0, n_tasks) on ctx->pool when total_work (elements) is worth it, else on the caller. */
void tb_vec_parallel(const tb_kernel_ctx *ctx, size_t n_tasks, int64_t total_work, tb_pool_fn fn, void *arg);
/* The input type i is known to be a tensor of rank r (false when unknown or different). */
bool tb_vec_rank_is(const tb_value_type *const *in, size_t i, size_t r);

#define VEC_FEATURES_AVX512 (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define VEC_FEATURES_AVX2 (TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))

/* tb_kernel_vec_<sym>_{avx512,avx2,portable}: op (domain, name) at level 2, each calling
 * run(ctx, &tb_vec_ops_<isa>), with the given accepts. */
#define VEC_KERNELS(sym, dom, op, accepts_fn, run_fn)                                               \
  static tb_status sym##_avx512(tb_kernel_ctx *ctx) { return run_fn(ctx, &tb_vec_ops_avx512); }     \
  static tb_status sym##_avx2(tb_kernel_ctx *ctx) { return run_fn(ctx, &tb_vec_ops_avx2); }         \
  static tb_status sym##_portable(tb_kernel_ctx *ctx) { return run_fn(ctx, &tb_vec_ops_portable); } \
  const tb_kernel tb_kernel_vec_##sym##_avx512 = {.domain = dom,                                \
                                                      .name = op,                                   \
                                                      .level = TB_KERNEL_FAST,                                   \
                                                      .cpu_features = VEC_FEATURES_AVX512,          \
                                                      .accepts = accepts_fn,                        \
                                                      .run = sym##_avx512};                         \
  const tb_kernel tb_kernel_vec_##sym##_avx2 = {.domain = dom,                                  \
                                                    .name = op,                                     \
                                                    .level = TB_KERNEL_FAST,                                     \
                                                    .cpu_features = VEC_FEATURES_AVX2,              \
                                                    .accepts = accepts_fn,                          \
                                                    .run = sym##_avx2};                             \
  const tb_kernel tb_kernel_vec_##sym##_portable = {                                            \
      .domain = dom, .name = op, .level = TB_KERNEL_FAST, .cpu_features = 0, .accepts = accepts_fn, .run = sym##_portable};

#endif
