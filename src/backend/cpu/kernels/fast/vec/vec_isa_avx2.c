/* The AVX2 table of the vectorised fp32 loops (vec_ops.h): 8 lanes, fused multiply-add, and vec_math.h's
 * hooks as AVX2 instructions (16-entry table lookups as two permutes and a blend, 8-entry ones as one
 * permute, min / max, blendv). Only this file is compiled for AVX2 (-mavx2 -mfma, set for it alone in
 * CMakeLists.txt); the kernels use the table only when cpuid has AVX2 and FMA. On other architectures it
 * is the portable body under this name (never chosen there). */
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#define VW 8
typedef float vf __attribute__((vector_size(32)));
typedef int32_t vi __attribute__((vector_size(32)));
typedef double vd __attribute__((vector_size(64)));
#define V_FMA(a, b, c) ((vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define V_SQRT(x) ((vf)_mm256_sqrt_ps((__m256)(x)))
#define V_HAS_FMA 1
/* tab[idx & 15]: a permute of each half, the half chosen by bit 3 (moved to the sign bit for blendv). */
static inline vf v_lookup16(const float *tab, vi idx) {
  __m256i i = (__m256i)idx;
  __m256 lo = _mm256_permutevar8x32_ps(_mm256_load_ps(tab), i);
  __m256 hi = _mm256_permutevar8x32_ps(_mm256_load_ps(tab + 8), i);
  return (vf)_mm256_blendv_ps(lo, hi, _mm256_castsi256_ps(_mm256_slli_epi32(i, 28)));
}
#define V_LOOKUP16(tab, idx) v_lookup16((tab), (idx))
/* tab[idx & 7]: one vpermps (the GELU's R then comes from its 8-slot table, vec_math.h). */
#define V_LOOKUP8(tab, idx) ((vf)_mm256_permutevar8x32_ps(_mm256_load_ps(tab), (__m256i)(idx)))
/* every lane x < c (ordered: a NaN lane makes it false): one compare and a movemask */
#define V_ALL_LT(x, c) (_mm256_movemask_ps(_mm256_cmp_ps((__m256)(x), (__m256)(c), _CMP_LT_OQ)) == 0xff)
/* some lane x < c (ordered: false for NaN): one compare and a movemask */
#define V_ANY_LT(x, c) (_mm256_movemask_ps(_mm256_cmp_ps((__m256)(x), _mm256_set1_ps(c), _CMP_LT_OQ)) != 0)
#define V_MIN(a, b) ((vf)_mm256_min_ps((__m256)(a), (__m256)(b)))
#define V_MAX(a, b) ((vf)_mm256_max_ps((__m256)(a), (__m256)(b)))
#define V_SEL_LT(x, y, a, b) \
  ((vf)_mm256_blendv_ps((__m256)(b), (__m256)(a), _mm256_cmp_ps((__m256)(x), (__m256)(y), _CMP_LT_OQ)))
/* The first n < 8 lanes (the rest `fill` on loads, untouched on stores): vmaskmovps with lanes i < n. */
static inline __m256i v_first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vf v_load_part(const float *p, int64_t n, float fill) {
  __m256i m = v_first_lanes(n);
  return (vf)_mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
#define V_LOAD_PART(p, n, fill) v_load_part((p), (n), (fill))
#define V_STORE_PART(p, v, n) _mm256_maskstore_ps((p), v_first_lanes(n), (__m256)(v))
#else
#include "backend/cpu/kernels/fast/vec/vec_portable_prims.h"
#endif
#define VEC_TABLE tb_vec_ops_avx2
#define VEC_TABLE_NAME "avx2"
#include "backend/cpu/kernels/fast/vec/vec_loops.h"
