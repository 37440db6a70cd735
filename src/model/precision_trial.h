/* Internal: bf16 only where it wins (docs/engine.md). At O3 with precision auto, a node whose best CPU kernel
 * computes in bf16 gets a short trial at prepare: its fp32 and bf16 kernels each run a few times on the node's
 * real shapes (its constants, stand-in activations), and bf16 is kept only when its fastest run beats fp32's by
 * TB_BF16_WIN. The bf16 kernels read and write fp32 tensors, so a trial's bf16 time includes the casts that a
 * bf16 node between fp32 nodes pays. Results are cached per process by op, shapes, attributes, threads and CPU
 * features; a prepare spends at most TB_BF16_TRIAL_BUDGET_MS on trials. */
#ifndef TB_MODEL_PRECISION_TRIAL_H
#define TB_MODEL_PRECISION_TRIAL_H
#include <stdbool.h>
#include <stddef.h>
#include "model/exec_impl.h"

/* bf16 runs a node only when fp32_ms >= TB_BF16_WIN * bf16_ms: a smaller win is within the trial's noise on
 * a loaded machine and not worth bf16's rounding. */
#define TB_BF16_WIN 1.05
/* The trial time one prepare may spend, over all its nodes (a node's trial that starts below it finishes). */
#define TB_BF16_TRIAL_BUDGET_MS 2000.0

/* The decision for measured times: true for bf16; the result's sentence ("bf16: 1.8x faster than fp32 on this
 * shape (trial: 0.23 vs 0.41 ms)", "fp32: bf16 1.8x slower on this shape (trial: 0.41 vs 0.23 ms)") in why. */
bool tb_bf16_trial_decide(double fp32_ms, double bf16_ms, bool cached, char *why, size_t cap);

/* Choose between node `step`'s bf16 kernel and its fp32 one (CPU kernels for input types `in`): the trial, its
 * cached result, or fp32 when no trial can run (shapes unknown, budget spent, a kernel failed); *use_bf16 and
 * the sentence in why. Spends from e->trial_ms_left. Never fails: a trial that cannot run keeps fp32. */
void tb_bf16_trial_choose(tb_exec *e, size_t step, const tb_value_type *const *in, const tb_kernel *bf16,
                          const tb_kernel *fp32, bool *use_bf16, char *why, size_t cap);

/* TEST ONLY: while set, a trial asks fn for the node's times instead of running the kernels (the cache is
 * neither read nor written); fn returns false to let the trial run. NULL removes it. Not thread-safe. */
typedef bool (*tb_bf16_trial_hook_fn)(void *ctx, const char *node_name, const char *op_type, double *fp32_ms,
                                      double *bf16_ms);
void tb_bf16_trial_set_hook(tb_bf16_trial_hook_fn fn, void *ctx);
/* The process's cache of trial results: how many there are, and emptying it (tests). */
size_t tb_bf16_trial_cache_count(void);
void tb_bf16_trial_cache_clear(void);

#endif
