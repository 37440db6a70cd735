/* The AMX path's packing (gemm_bf16_amx_pack.h). B is the shared pair-interleaved layout, so its AVX-512
 * version is the AVX512-BF16 path's packing followed by the zero pairs up to a whole tile. A is line by
 * line: from line-contiguous sources 16 values are rounded at a time; from depth-contiguous ones (A
 * transposed, a convolution's patch slivers) 16 x 16 blocks are transposed in registers first. */
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_amx_pack.h"
#include <string.h>
#include <tensorbridge/device.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "core/convert_features.h"
#if defined(__x86_64__)
#include "backend/cpu/kernels/fast/vec/bf16_round_avx512.h"
#include "backend/cpu/kernels/fast/vec/transpose_avx512.h"
#endif

static int64_t padded_pairs(int64_t kc) {
  return ((kc + 1) / 2 + TB_AMX_PAIR_BLOCK - 1) / TB_AMX_PAIR_BLOCK * TB_AMX_PAIR_BLOCK;
}

/* ---- plain C ---- */

/* B: element (p, o) at ((p / 2) * width + o) * 2 + p % 2; A: at o * kpp * 2 + p; zeros past kc and outer. */
static void pack_scalar(tb_amx_pack_kind kind, const float *src, int64_t ld, int64_t kc, int64_t outer, int width,
                        uint16_t *dst) {
  int64_t kpp = padded_pairs(kc);
  bool is_b = kind == TB_AMX_PACK_B_O || kind == TB_AMX_PACK_B_P;
  bool o_contiguous = kind == TB_AMX_PACK_A_O || kind == TB_AMX_PACK_B_O;
  memset(dst, 0, (size_t)(kpp * 2 * width) * sizeof *dst);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t p = 0; p < kc; p++) {
      float x = o_contiguous ? src[p * ld + o] : src[o * ld + p];
      dst[is_b ? ((p / 2) * width + o) * 2 + p % 2 : o * kpp * 2 + p] = tb_bf16_round(x);
    }
}

/* ---- AVX-512 ---- */

#if defined(__x86_64__)
static __mmask16 lanes(int64_t count) {
  return count >= 16 ? (__mmask16)0xFFFF : count <= 0 ? 0 : (__mmask16)((1u << count) - 1u);
}

/* A from line-contiguous lines: each line's kc values rounded 16 at a time, then its zero padding. */
TB_TARGET_BF16 static void pack_a_p_avx512(const float *src, int64_t ld, int64_t kc, int64_t outer, int width,
                                           uint16_t *dst) {
  int64_t line = padded_pairs(kc) * 2;
  for (int64_t o = 0; o < width; o++) {
    uint16_t *d = dst + o * line;
    int64_t filled = o < outer ? kc : 0;
    for (int64_t p = 0; p < filled; p += 16) {
      __mmask16 m = lanes(filled - p);
      __m512i r = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(m, src + o * ld + p));
      _mm256_mask_storeu_epi16(d + p, m, _mm512_cvtepi32_epi16(r));
    }
    memset(d + filled, 0, (size_t)(line - filled) * sizeof *d);
  }
}

/* A from depth-contiguous rows: 16 depths x 16 lines loaded, transposed to 16 lines x 16 depths, rounded
 * and stored; lines past outer load as zeros. width is a multiple of 16 (the AMX path's 32). */
TB_TARGET_BF16 static void pack_a_o_avx512(const float *src, int64_t ld, int64_t kc, int64_t outer, int width,
                                           uint16_t *dst) {
  int64_t line = padded_pairs(kc) * 2;
  for (int64_t o0 = 0; o0 < width; o0 += 16) {
    __mmask16 present = lanes(outer - o0);
    for (int64_t p0 = 0; p0 < kc; p0 += 16) {
      __m512 r[16];
      for (int i = 0; i < 16; i++)
        r[i] = p0 + i < kc ? _mm512_maskz_loadu_ps(present, src + (p0 + i) * ld + o0) : _mm512_setzero_ps();
      tb_transpose16_ps(r);
      __mmask16 depth = lanes(kc - p0);
      for (int i = 0; i < 16; i++)
        _mm256_mask_storeu_epi16(dst + (o0 + i) * line + p0, depth, _mm512_cvtepi32_epi16(tb_round_bf16_avx512(r[i])));
    }
    for (int i = 0; i < 16; i++) memset(dst + (o0 + i) * line + kc, 0, (size_t)(line - kc) * sizeof *dst);
  }
}
#endif

bool tb_amx_pack_avx512_runs(void) {
  uint64_t need = TB_GEMM_BF16_AVX512BF16_FEATURES | TB_FEATURE_BIT(TB_FEATURE_AVX512VL);
  return tb_gemm_bf16_kernel_avx512bf16.ukr && (tb_convert_hardware_features() & need) == need;
}

void tb_amx_pack(tb_amx_pack_kind kind, bool avx512, const float *src, int64_t ld, int64_t kc, int64_t outer,
                 int width, uint16_t *dst) {
#if defined(__x86_64__)
  if (avx512 && width % 16 == 0) {
    const tb_gemm_bf16_kernel *v = &tb_gemm_bf16_kernel_avx512bf16;
    int64_t kp = (kc + 1) / 2, kpp = padded_pairs(kc);
    switch (kind) {
    case TB_AMX_PACK_A_O: pack_a_o_avx512(src, ld, kc, outer, width, dst); return;
    case TB_AMX_PACK_A_P: pack_a_p_avx512(src, ld, kc, outer, width, dst); return;
    case TB_AMX_PACK_B_O: v->pack_o_contiguous(src, ld, kc, outer, width, dst); break;
    case TB_AMX_PACK_B_P: v->pack_p_contiguous(src, ld, kc, outer, width, dst); break;
    }
    memset(dst + kp * width * 2, 0, (size_t)((kpp - kp) * width * 2) * sizeof *dst);
    return;
  }
#else
  (void)avx512;
#endif
  pack_scalar(kind, src, ld, kc, outer, width, dst);
}
