/* Internal: the bf16 / fp16 copies of an activation that its producer writes in its own launch for a consumer that
 * would otherwise convert it (docs/cuda.md "Reduced precision": the conversion fused into the producer). The
 * executor pairs them at prepare (tb_kernel_reads_reduced / tb_kernel_writes_reduced, backend/kernel.h); at run the
 * producer keeps the copy in its node state and publishes it under the fp32 output's device address, and the consumer
 * finds it there. A consumer that finds nothing (the producer could not write it this run) converts for itself. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_HANDOFF_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_HANDOFF_H
#include <stdbool.h>
#include <stddef.h>
#include "backend/cuda/kernels/cuda_launch.h"

/* Whether conversions may be fused into producers: TB_CUDA_FUSE_CASTS unset or on; off keeps one conversion launch
 * per consumer (the path before, for comparing); another value warns and counts as on. */
bool tb_cuda_fuse_casts_wanted(void);

/* A producer's copy of one output, kept in its node state (zeroed: none yet). */
typedef struct tb_cuda_handoff {
  tb_tensor *t;          /* bf16 / fp16, out's shape; reused while the shape and dtype hold */
  tb_cu_deviceptr at;    /* the fp32 output's address it is published under (0: not published) */
  const void *publisher; /* the producer and run that write it now (tb_kernel_reduced_source), set by _out */
  uint64_t run;
} tb_cuda_handoff;

/* At a producer's run, before its launch: withdraws whatever copy is published at out's address (an earlier value
 * there); when ctx asks for output `output` in a reduced dtype (tb_kernel_reduced_outputs) and out is a plain device
 * tensor, *copy is h's tensor of out's shape in that dtype (made or remade) and *f16 whether it is fp16; else *copy
 * NULL. Out of device memory: its status, nothing published. */
tb_status tb_cuda_handoff_out(tb_kernel_ctx *ctx, tb_cuda_handoff *h, size_t output, const tb_tensor *out, tb_tensor **copy,
                              int *f16);
/* After the launch writing *copy was queued: published under out's address for the consumers. */
void tb_cuda_handoff_publish(tb_cuda_handoff *h, const tb_tensor *out);
/* At a consumer's run: the copy of input `input` (x, fp32) in dtype its producer published, when ctx says it hands
 * one over (tb_kernel_reduced_inputs) and one of x's shape is published at x's address by THAT paired producer in
 * THIS run of the executor (tb_kernel_reduced_source); else NULL (convert it). An entry left by a dead value, by a
 * producer whose kernel was re-chosen or moved to the CPU, or by another model is never taken. */
const tb_tensor *tb_cuda_handoff_find(const tb_kernel_ctx *ctx, size_t input, const tb_tensor *x, tb_dtype dtype);
/* At the producer's release: withdrawn and freed. */
void tb_cuda_handoff_release(tb_cuda_handoff *h);

#endif
