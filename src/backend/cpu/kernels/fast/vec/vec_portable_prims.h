/* Internal: the primitives of the portable vec_ops body (vec_loops.h): 4-lane GNU C vectors, which any
 * GCC target lowers to its baseline SIMD (SSE2 on x86-64, NEON on AArch64) or to scalars; a separate
 * multiply and add (no FMA assumed) and the C library's square root per lane. */
#ifndef TB_CPU_KERNELS_FAST_VEC_PORTABLE_PRIMS_H
#define TB_CPU_KERNELS_FAST_VEC_PORTABLE_PRIMS_H
#include <math.h>
#include <stdint.h>
#define VW 4
typedef float vf __attribute__((vector_size(16)));
typedef int32_t vi __attribute__((vector_size(16)));
typedef double vd __attribute__((vector_size(32)));
#define V_FMA(a, b, c) ((a) * (b) + (c))
static inline vf vp_sqrt(vf x) {
  for (int i = 0; i < VW; i++) x[i] = sqrtf(x[i]);
  return x;
}
#define V_SQRT(x) vp_sqrt(x)
#endif
