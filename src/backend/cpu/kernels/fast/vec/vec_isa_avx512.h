/* Internal: the AVX-512 vector types and vec_math.h's hooks as single AVX-512F instructions (vpermps table
 * lookups, min / max, a mask blend, vscalefps, and division by vrcp14ps with one correction step), for a
 * file compiled for AVX-512 as a whole (-mavx512f -mfma in CMakeLists.txt): the vec_ops table
 * (vec_isa_avx512.c) and the kernels that apply its activations in registers with the same bits
 * (conv_pointwise_avx512.c). x86-64 only. */
#ifndef TB_CPU_KERNELS_FAST_VEC_ISA_AVX512_H
#define TB_CPU_KERNELS_FAST_VEC_ISA_AVX512_H
#include <stdint.h>
#include <immintrin.h>
#define VW 16
typedef float vf __attribute__((vector_size(64)));
typedef int32_t vi __attribute__((vector_size(64)));
typedef double vd __attribute__((vector_size(128)));
#define V_FMA(a, b, c) ((vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define V_SQRT(x) ((vf)_mm512_sqrt_ps((__m512)(x)))
#define V_HAS_FMA 1
#define V_LOOKUP16(tab, idx) ((vf)_mm512_permutexvar_ps((__m512i)(idx), _mm512_load_ps(tab)))
#define V_MIN(a, b) ((vf)_mm512_min_ps((__m512)(a), (__m512)(b)))
#define V_MAX(a, b) ((vf)_mm512_max_ps((__m512)(a), (__m512)(b)))
#define V_SEL_LT(x, y, a, b) \
  ((vf)_mm512_mask_blend_ps(_mm512_cmp_ps_mask((__m512)(x), (__m512)(y), _CMP_LT_OQ), (__m512)(b), (__m512)(a)))
/* some lane x < c (ordered: false for NaN): one compare into a mask */
#define V_ANY_LT(x, c) (_mm512_cmp_ps_mask((__m512)(x), _mm512_set1_ps(c), _CMP_LT_OQ) != 0)
#define V_SCALE(p, n) ((vf)_mm512_scalef_ps((__m512)(p), (__m512)(n)))
/* a / b: the 14-bit reciprocal estimate, q = a r, then one correction q + (a - b q) r (2^-28 + rounding). */
static inline vf v_div(vf a, vf b) {
  __m512 r = _mm512_rcp14_ps((__m512)b), q = _mm512_mul_ps((__m512)a, r);
  return (vf)_mm512_fmadd_ps(_mm512_fnmadd_ps((__m512)b, q, (__m512)a), r, q);
}
#define V_DIV(a, b) v_div((a), (b))
/* The first n < 16 lanes (the rest `fill` on loads, untouched on stores): one masked move each. */
#define V_LOAD_PART(p, n, fill) \
  ((vf)_mm512_mask_loadu_ps(_mm512_set1_ps(fill), (__mmask16)((1u << (n)) - 1u), (p)))
#define V_STORE_PART(p, v, n) _mm512_mask_storeu_ps((p), (__mmask16)((1u << (n)) - 1u), (__m512)(v))
#endif
