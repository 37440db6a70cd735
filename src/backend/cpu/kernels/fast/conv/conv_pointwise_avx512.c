/* The AVX-512 block of the direct pointwise convolution (conv_pointwise.h): 8 output channels x 48 pixels
 * (3 vectors) of sums in registers, each input channel's 3 vectors loaded once from X's plane and each
 * weight broadcast from the packed chunk; the bias starts the sums, the residual and the activation are
 * applied as they are stored (masked for the last pixels and the channels past M): Relu, LeakyRelu, Clip,
 * Sigmoid, HardSigmoid, HardSwish and SiLU with the vec_ops table's formulas (vec_math.h on the same
 * AVX-512 hooks), so each output has the bits the table's loop would give it. Compiled for AVX-512 as a
 * whole (-mavx512f -mfma in CMakeLists.txt); the driver calls it only on the AVX-512 path. */
#include "backend/cpu/kernels/fast/conv/conv_pointwise.h"

#if defined(__x86_64__)
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_isa_avx512.h"
#include "backend/cpu/kernels/fast/vec/vec_math.h"

enum { TILE = 48 };

/* min(max(t, 0), 1) keeping NaN, as vec_loops.h's vl_clamp01. */
static inline __attribute__((always_inline)) vf clamp01(vf t) { return V_MIN(vm_splat(1.0f), V_MAX(vm_splat(0.0f), t)); }

/* The activation (a compile-time constant where inlined) as the vec_ops table's unary loop computes it. */
static inline __attribute__((always_inline)) __m512 act_regs(__m512 x, int act, __m512 alpha, __m512 beta, __m512 lo,
                                                             __m512 hi) {
  const __m512 zero = _mm512_setzero_ps();
  const vf v = (vf)x;
  switch (act) {
    case TB_FUSED_ACT_RELU: return _mm512_max_ps(zero, x); /* the scalar rules: NaN passes, -0 stays -0 */
    case TB_FUSED_ACT_LEAKY_RELU: return _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, alpha);
    case TB_FUSED_ACT_CLIP:
      x = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), lo);
      return _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), hi);
    case TB_FUSED_ACT_SIGMOID: return (__m512)vm_sigmoid(v);
    case TB_FUSED_ACT_HARD_SIGMOID: return (__m512)clamp01(V_FMA(v, (vf)alpha, (vf)beta));
    case TB_FUSED_ACT_HARD_SWISH: return (__m512)(v * clamp01(V_FMA(v, vm_splat(1.0f / 6.0f), vm_splat(0.5f))));
    case TB_FUSED_ACT_SILU: return (__m512)(v * vm_sigmoid(v));
    default: return x;
  }
}

/* One tile: rows (<= R, R = 1, 2, 4 or 8 at compile time: a short last chunk computes no more rows than it
 * stores, a head of 2 classes say) output channels from the chunk wc (k x 8 weights) at pixel p of planes n
 * apart, masks m0..m2 for the tile's three vectors. */
static inline __attribute__((always_inline)) void tile(const float *wc, int64_t k, const float *x, int64_t n,
                                                              const float *bias, const float *res, float *y, int rows,
                                                              __mmask16 m0, __mmask16 m1, __mmask16 m2, int act,
                                                              __m512 alpha, __m512 beta, __m512 lo, __m512 hi, const int R) {
  __m512 a[8][3];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    __m512 b = _mm512_set1_ps(bias && r < rows ? bias[r] : 0.0f);
    a[r][0] = a[r][1] = a[r][2] = b;
  }
  for (int64_t c = 0; c < k; c++) {
    const float *xr = x + c * n;
    __m512 x0 = _mm512_maskz_loadu_ps(m0, xr), x1 = _mm512_maskz_loadu_ps(m1, xr + 16), x2 = _mm512_maskz_loadu_ps(m2, xr + 32);
    const float *wr = wc + c * 8;
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
      __m512 w = _mm512_set1_ps(wr[r]);
      a[r][0] = _mm512_fmadd_ps(w, x0, a[r][0]);
      a[r][1] = _mm512_fmadd_ps(w, x1, a[r][1]);
      a[r][2] = _mm512_fmadd_ps(w, x2, a[r][2]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    if (r >= rows) break;
    __m512 v0 = a[r][0], v1 = a[r][1], v2 = a[r][2];
    if (res) {
      const float *rr = res + r * n;
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, rr));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, rr + 16));
      v2 = _mm512_add_ps(v2, _mm512_maskz_loadu_ps(m2, rr + 32));
    }
    float *yr = y + r * n;
    _mm512_mask_storeu_ps(yr, m0, act_regs(v0, act, alpha, beta, lo, hi));
    _mm512_mask_storeu_ps(yr + 16, m1, act_regs(v1, act, alpha, beta, lo, hi));
    _mm512_mask_storeu_ps(yr + 32, m2, act_regs(v2, act, alpha, beta, lo, hi));
  }
}

static inline __mmask16 lane_mask(int64_t left) {
  return left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1);
}

/* One function per activation, each with the four row counts R inlined as compile-time constants: eight
 * functions of four tiles rather than one of 32 (clang's AddressSanitizer took minutes over the one). */
#define PW_TILES(NAME, ACT)                                                                                        \
  static __attribute__((noinline)) void NAME(const float *wc, int64_t k, const float *x, int64_t n, const float *b, \
                                             const float *r, float *yo, int rows, __mmask16 m0, __mmask16 m1,      \
                                             __mmask16 m2, __m512 alpha, __m512 beta, __m512 lo, __m512 hi, int R) { \
    switch (R) {                                                                                                   \
      case 1: tile(wc, k, x, n, b, r, yo, rows, m0, m1, m2, ACT, alpha, beta, lo, hi, 1); break;                   \
      case 2: tile(wc, k, x, n, b, r, yo, rows, m0, m1, m2, ACT, alpha, beta, lo, hi, 2); break;                   \
      case 4: tile(wc, k, x, n, b, r, yo, rows, m0, m1, m2, ACT, alpha, beta, lo, hi, 4); break;                   \
      default: tile(wc, k, x, n, b, r, yo, rows, m0, m1, m2, ACT, alpha, beta, lo, hi, 8); break;                  \
    }                                                                                                              \
  }
PW_TILES(tiles_none, TB_FUSED_ACT_NONE)
PW_TILES(tiles_relu, TB_FUSED_ACT_RELU)
PW_TILES(tiles_leaky_relu, TB_FUSED_ACT_LEAKY_RELU)
PW_TILES(tiles_clip, TB_FUSED_ACT_CLIP)
PW_TILES(tiles_sigmoid, TB_FUSED_ACT_SIGMOID)
PW_TILES(tiles_hard_sigmoid, TB_FUSED_ACT_HARD_SIGMOID)
PW_TILES(tiles_hard_swish, TB_FUSED_ACT_HARD_SWISH)
PW_TILES(tiles_silu, TB_FUSED_ACT_SILU)
#undef PW_TILES

typedef void (*tiles_fn)(const float *, int64_t, const float *, int64_t, const float *, const float *, float *, int,
                         __mmask16, __mmask16, __mmask16, __m512, __m512, __m512, __m512, int);

static tiles_fn tiles_for(int act) {
  switch (act) {
    case TB_FUSED_ACT_RELU: return tiles_relu;
    case TB_FUSED_ACT_LEAKY_RELU: return tiles_leaky_relu;
    case TB_FUSED_ACT_CLIP: return tiles_clip;
    case TB_FUSED_ACT_SIGMOID: return tiles_sigmoid;
    case TB_FUSED_ACT_HARD_SIGMOID: return tiles_hard_sigmoid;
    case TB_FUSED_ACT_HARD_SWISH: return tiles_hard_swish;
    case TB_FUSED_ACT_SILU: return tiles_silu;
    default: return tiles_none;
  }
}

void tb_conv_pointwise_block_avx512(const tb_conv_pointwise_weights *pw, const float *x, int64_t n, int64_t p0,
                                           int64_t np, const float *bias, const float *res, const tb_gemm_epilogue *ep,
                                           float *y) {
  /* the others: the driver's, after */
  const int act = tb_conv_pointwise_act_in_regs(ep->act) ? ep->act : TB_FUSED_ACT_NONE;
  const tiles_fn tiles = tiles_for(act);
  const __m512 alpha = _mm512_set1_ps(ep->act_alpha), beta = _mm512_set1_ps(ep->act_beta);
  const __m512 lo = _mm512_set1_ps(ep->act_min), hi = _mm512_set1_ps(ep->act_max);
  const int64_t k = pw->in_c, m = pw->out_c;
  for (int64_t c = 0; c < pw->chunks; c++) { /* one chunk over the block's pixels: its 8 output rows in order */
    const int64_t o = c * 8;
    const int rows = m - o < 8 ? (int)(m - o) : 8;
    const float *b = bias ? bias + o : NULL, *wc = pw->w + c * k * 8;
    const int R = rows > 4 ? 8 : rows > 2 ? 4 : rows; /* 1, 2, 4 or 8 */
    for (int64_t p = p0; p < p0 + np; p += TILE) {
      const int64_t left = p0 + np - p;
      const float *r = res ? res + o * n + p : NULL;
      tiles(wc, k, x + p, n, b, r, y + o * n + p, rows, lane_mask(left), lane_mask(left - 16), lane_mask(left - 32),
            alpha, beta, lo, hi, R);
    }
  }
}

#else
void tb_conv_pointwise_block_avx512(const tb_conv_pointwise_weights *pw, const float *x, int64_t n, int64_t p0, int64_t np,
                                    const float *bias, const float *res, const tb_gemm_epilogue *ep, float *y) {
  (void)pw, (void)x, (void)n, (void)p0, (void)np, (void)bias, (void)res, (void)ep, (void)y;
}
#endif
