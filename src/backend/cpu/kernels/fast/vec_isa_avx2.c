/* The AVX2 table of the vectorised fp32 loops (vec_ops.h): 8 lanes, fused multiply-add. Only this file is
 * compiled for AVX2 (GCC target pragma); the kernels use the table only when cpuid has AVX2 and FMA. On
 * other architectures it is the portable body under this name (never chosen there). */
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define VW 8
typedef float vf __attribute__((vector_size(32)));
typedef int32_t vi __attribute__((vector_size(32)));
typedef double vd __attribute__((vector_size(64)));
#define V_FMA(a, b, c) ((vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define V_SQRT(x) ((vf)_mm256_sqrt_ps((__m256)(x)))
#else
#include "backend/cpu/kernels/fast/vec_portable_prims.h"
#endif
#define VEC_TABLE tb_vec_ops_avx2
#define VEC_TABLE_NAME "avx2"
#include "backend/cpu/kernels/fast/vec_loops.h"
#if defined(__x86_64__)
#pragma GCC pop_options
#endif
