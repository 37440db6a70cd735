/* The fp32 GEMM's path choice, the packing of plain operands into micro-kernel slivers (MR rows of op(A)
 * or NR columns of op(B) per sliver, zero-padded past the edge) and operands packed once (weights), which
 * the general driver (gemm_driver.c, with the classic strided entry tb_gemm_f32) builds on. */
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/device.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"

tb_gemm_path tb_gemm_path_for(uint64_t features) {
  uint64_t fma = TB_FEATURE_BIT(TB_FEATURE_FMA);
  uint64_t avx512 = TB_FEATURE_BIT(TB_FEATURE_AVX512F) | fma, avx2 = TB_FEATURE_BIT(TB_FEATURE_AVX2) | fma;
  if ((features & avx512) == avx512) return TB_GEMM_AVX512;
  if ((features & avx2) == avx2) return TB_GEMM_AVX2;
  return TB_GEMM_PORTABLE;
}

const tb_gemm_kernel *tb_gemm_kernel_for(tb_gemm_path path) {
  if (path == TB_GEMM_AVX512 && tb_gemm_kernel_avx512.ukr) return &tb_gemm_kernel_avx512;
  if (path == TB_GEMM_AVX2 && tb_gemm_kernel_avx2.ukr) return &tb_gemm_kernel_avx2;
  return &tb_gemm_kernel_portable;
}

/* Element (o, p) of op(X) where o runs along the packed side: for A, row o of op(A) is row o of A
 * (column o when transposed); for B, column o of op(B) is column o of B (row o when transposed). */
void tb_gemm_pack_plain(const tb_gemm_kernel *kr, const tb_gemm_operand *op, bool as_a, int64_t o0, int64_t outer,
                        int64_t p0, int64_t kc, int width, float *dst) {
  const float *x = op->data;
  int64_t ld = op->ld;
  /* contiguous along o: A transposed, B plain; else contiguous along p */
  bool o_contig = as_a ? op->trans : !op->trans;
  for (int64_t os = 0; os < outer; os += width) {
    int64_t cnt = outer - os < width ? outer - os : width;
    if (o_contig) {
      for (int64_t p = 0; p < kc; p++) {
        float *d = dst + p * width;
        memcpy(d, x + (p0 + p) * ld + o0 + os, (size_t)cnt * sizeof(float));
        for (int64_t o = cnt; o < width; o++) d[o] = 0;
      }
    } else if (kr && kr->pack_rows) {
      kr->pack_rows(x + (o0 + os) * ld + p0, ld, cnt, kc, width, dst);
    } else {
      for (int64_t o = 0; o < cnt; o++) {
        const float *src = x + (o0 + os + o) * ld + p0;
        for (int64_t p = 0; p < kc; p++) dst[p * width + o] = src[p];
      }
      for (int64_t p = 0; p < kc; p++)
        for (int64_t o = cnt; o < width; o++) dst[p * width + o] = 0;
    }
    dst += kc * width;
  }
}

int64_t tb_gemm_depth_block(int64_t k) {
  if (k <= 0) return 0;
  int64_t blocks = (k + GEMM_KC / 2) / GEMM_KC, least = (k + GEMM_KC_MAX - 1) / GEMM_KC_MAX;
  if (blocks < least) blocks = least;
  if (blocks < 1) blocks = 1;
  return (k + blocks - 1) / blocks;
}

static tb_gemm_packed *pack_once(tb_gemm_path path, const tb_gemm_operand *x, bool is_a, int64_t outer, int64_t k) {
  if (!x || outer < 0 || k < 0 || (!x->data && !x->pack)) return NULL;
  const tb_gemm_kernel *kr = tb_gemm_kernel_for(path);
  tb_gemm_packed *pk = calloc(1, sizeof *pk);
  if (!pk) return NULL;
  pk->is_a = is_a;
  pk->width = is_a ? kr->mr : kr->nr;
  pk->outer = outer;
  pk->k = k;
  pk->outer_pad = (outer + pk->width - 1) / pk->width * pk->width;
  size_t bytes = (size_t)(pk->outer_pad * k) * sizeof(float);
  if (bytes == 0) return pk;
  pk->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!pk->data) {
    free(pk);
    return NULL;
  }
  int64_t kb = tb_gemm_depth_block(k);
  for (int64_t p0 = 0; p0 < k; p0 += kb) {
    int64_t kc = k - p0 < kb ? k - p0 : kb;
    float *dst = pk->data + p0 * pk->outer_pad;
    if (x->data) tb_gemm_pack_plain(kr, x, is_a, 0, outer, p0, kc, pk->width, dst);
    else x->pack(x->pack_ctx, 0, outer, p0, kc, pk->width, dst);
  }
  return pk;
}

tb_gemm_packed *tb_gemm_pack_a(tb_gemm_path path, const tb_gemm_operand *a, int64_t m, int64_t k) {
  return pack_once(path, a, true, m, k);
}

tb_gemm_packed *tb_gemm_pack_b(tb_gemm_path path, const tb_gemm_operand *b, int64_t k, int64_t n) {
  return pack_once(path, b, false, n, k);
}

void tb_gemm_packed_free(tb_gemm_packed *packed) {
  if (!packed) return;
  free(packed->data);
  free(packed);
}
