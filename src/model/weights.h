/* Internal: letting go of constants' original bytes once nothing needs them.
 *
 * Loaded models register the file-backed (mmapped, read-only, MAP_PRIVATE) ranges their constants live in;
 * such pages can be dropped at any time with MADV_DONTNEED: the kernel reads them again from the file if
 * anything touches them later, so dropping them is always correct and only costs a page fault.
 *
 * A kernel whose prepare() copied what it needs of a constant input (packed weights) says so with
 * tb_kernel_constant_consumed(ctx, input): run() will not read that input's bytes while this state lives.
 * When every node reading a constant has said so, the executor drops the pages of its CPU tensor: a copy
 * the executor made (unaligned data) has its pages returned (its bytes read as zeros until they are needed
 * again, when the executor copies them back from the model: model/exec_release.h), a tensor over the file
 * has its pages dropped. The model itself is never changed, so a model can be prepared again. */
#ifndef TB_MODEL_WEIGHTS_H
#define TB_MODEL_WEIGHTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/kernel.h"

/* tb_kernel_constant_consumed (declared with the kernel contract, backend/kernel.h) is
 * implemented in weights.c. */

/* Counters since the process started (for tests and reports). */
typedef struct tb_weights_stats {
  uint64_t file_bytes_dropped;  /* pages of mapped model files dropped (to be read again from the file) */
  uint64_t copy_bytes_dropped;  /* pages of the executor's copies of constants returned */
  uint64_t copy_bytes_restored; /* bytes copied back into a returned copy because a node needed them again */
  uint64_t constants_released;  /* constants whose every reader consumed them */
} tb_weights_stats;
void tb_weights_stats_get(tb_weights_stats *out);

/* Loaders: [addr, addr + size) is a read-only private mapping of a file, belonging to `owner` (the
 * tb_ir_model). false on OOM (then it is simply never dropped). */
bool tb_weights_register(const void *owner, const void *addr, size_t size);
/* Forget every range of owner (before unmapping them). */
void tb_weights_unregister(const void *owner);
/* Whether [p, p + n) lies inside a registered file-backed range. */
bool tb_weights_file_backed(const void *p, size_t n);
/* Drop the whole pages inside [p, p + n) when it is file-backed; returns the bytes dropped (0 otherwise). */
size_t tb_weights_drop_file(const void *p, size_t n);
/* Drop every registered range of owner; returns the bytes dropped. */
size_t tb_weights_drop_owner(const void *owner);
/* Return the whole pages inside [p, p + n) of anonymous memory the caller owns (a heap block); their
 * bytes read as zeros afterwards. Returns the bytes returned. */
size_t tb_weights_drop_copy(void *p, size_t n);
/* Count bytes copied back by the executor. */
void tb_weights_note_restored(size_t n);
void tb_weights_note_released(void);

#endif
