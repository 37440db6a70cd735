/* The AVX-512 table of the vectorised fp32 loops (vec_ops.h): 16 lanes, fused multiply-add. Only this file
 * is compiled for AVX-512 (GCC target pragma); the kernels use the table only when cpuid has AVX512F and
 * FMA. On other architectures it is the portable body under this name (never chosen there). */
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
#define VW 16
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
typedef double vd __attribute__((vector_size(128)));
#define V_FMA(a, b, c) ((vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define V_SQRT(x) ((vf)_mm512_sqrt_ps((__m512)(x)))
#else
#include "backend/cpu/kernels/fast/vec_portable_prims.h"
#endif
#define VEC_TABLE tb_vec_ops_avx512
#define VEC_TABLE_NAME "avx512"
#include "backend/cpu/kernels/fast/vec_loops.h"
#if defined(__x86_64__)
#pragma GCC pop_options
#endif
