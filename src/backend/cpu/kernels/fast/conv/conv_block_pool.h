/* Internal: the convolution output block's epilogue (conv_fast.h: tb_conv_block_init, _from_t, _act) split
 * over a pool in whole output-channel rows, for a GEMM that runs alone with the pool inside it (one image's
 * convolution on a small map: MobileNetV3's and EfficientNet's 14x14 and 7x7 layers): run on the caller,
 * that epilogue was the serial part of those layers at 2 threads. Each task touches its own rows, so the
 * result does not depend on the split. A NULL pool (or a small block) runs the plain function. */
#ifndef TB_CPU_KERNELS_FAST_CONV_BLOCK_POOL_H
#define TB_CPU_KERNELS_FAST_CONV_BLOCK_POOL_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

struct tb_pool;

void tb_conv_block_init_pool(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *bias,
                             const float *res, int64_t ldr, struct tb_pool *pool);
void tb_conv_block_from_t_pool(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *ct,
                               int64_t ldt, const float *bias, const float *res, int64_t ldr, struct tb_pool *pool);
void tb_conv_block_act_pool(tb_gemm_path path, const tb_gemm_epilogue *ep, float *y, int64_t ldy, int64_t rows, int64_t cols,
                            struct tb_pool *pool);

#endif
