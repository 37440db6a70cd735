/* Internal: a float32 Einsum of two inputs that is a batched matrix product after permutations (cuda_ops_einsum.c's
 * second route): the operands copied on the device into [batch, rows, summed] and [batch, summed, cols], one GEMM
 * (cuda_gemm.h: cuBLASLt or the own kernel), the product copied into the output's label order when it differs. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_EINSUM_PERMUTE_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_EINSUM_PERMUTE_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/kernel.h"
#include "ops/nn/einsum_parse.h"

/* Input i's (t's) elements per unit of label l (0 when it lacks l, has it as a broadcast 1, or l is -1). */
int64_t tb_cuda_einsum_step(const tb_tensor *t, const nn_einsum *e, size_t i, int l);
/* How often each label stands in input 0, input 1 (count[0], count[1]) and the output (count[2]); e has two inputs. */
void tb_cuda_einsum_label_counts(const nn_einsum *e, int count[3][NN_EINSUM_LABELS]);
/* Whether e (two inputs) is such a product: no label twice in one input, none summed within one input only. */
bool tb_cuda_einsum_permutable(const nn_einsum *e);
/* Run it into y (float32, the output's shape) with the label sizes; nothing for an empty output. Every summed label
 * non-empty (an empty sum is the generic kernel's: zeros). */
tb_status tb_cuda_einsum_permuted(tb_kernel_ctx *ctx, const nn_einsum *e, const int64_t *sizes, tb_tensor *y);

#endif
