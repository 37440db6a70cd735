/* The AVX-512 table of the vectorised fp32 loops (vec_ops.h): 16 lanes, fused multiply-add, and vec_math.h's
 * hooks as single AVX-512F instructions (vpermps table lookups, min / max, a mask blend, vscalefps, and
 * division by vrcp14ps with one correction step; vec_isa_avx512.h). This file is compiled for AVX-512
 * (-mavx512f -mfma, in CMakeLists.txt; so is conv_pointwise_avx512.c, which applies these activations in
 * registers); the kernels use the table only when cpuid has AVX512F and FMA. On
 * other architectures it is the portable body under this name (never chosen there). */
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include "backend/cpu/kernels/fast/vec/vec_isa_avx512.h"
#else
#include "backend/cpu/kernels/fast/vec/vec_portable_prims.h"
#endif
#define VEC_TABLE tb_vec_ops_avx512
#define VEC_TABLE_NAME "avx512"
#include "backend/cpu/kernels/fast/vec/vec_loops.h"
