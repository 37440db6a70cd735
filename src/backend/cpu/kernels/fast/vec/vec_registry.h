/* Internal: the registry entries of the level-2 vectorised kernels (vec_*.c), for fast/registry.c: each
 * kernel's AVX-512, AVX2 and portable entries, widest first. */
#ifndef TB_CPU_KERNELS_FAST_VEC_REGISTRY_H
#define TB_CPU_KERNELS_FAST_VEC_REGISTRY_H
#include "backend/cpu/kernels/kernel.h"

#define TB_VEC_KERNEL_LIST(X)                                                                                   \
  X(add)                                                                                                        \
  X(sub) X(mul) X(div) X(relu) X(sigmoid) X(tanh) X(erf) X(exp) X(sqrt) X(neg) X(reciprocal) X(gelu) X(softmax) \
      X(leaky_relu) X(hard_sigmoid) X(hard_swish) X(transpose) X(log_softmax) X(silu) X(mish) \
      X(layernorm) X(tb_layernorm) X(batchnorm) X(reduce_mean) X(reduce_sum) X(maxpool) X(averagepool)          \
          X(global_averagepool)

#define TB_VEC_DECLARE(s) \
  extern const tb_kernel tb_kernel_vec_##s##_avx512, tb_kernel_vec_##s##_avx2, tb_kernel_vec_##s##_portable;
TB_VEC_KERNEL_LIST(TB_VEC_DECLARE)
#undef TB_VEC_DECLARE

/* The array entries: &avx512, &avx2, &portable per kernel. */
#define TB_VEC_ENTRY(s) &tb_kernel_vec_##s##_avx512, &tb_kernel_vec_##s##_avx2, &tb_kernel_vec_##s##_portable,
#define TB_VEC_KERNEL_ENTRIES TB_VEC_KERNEL_LIST(TB_VEC_ENTRY)

#endif
