/* The portable row loops of the level-2 Resize (resize_fast.h), and the table per instruction set. */
#include "backend/cpu/kernels/fast/resize/resize_fast.h"

static void gather_portable(const float *row, const tb_resize_axis *ax, float *out) {
  for (int64_t j = 0; j < ax->n; j++) out[j] = row[ax->idx[j]];
}

static void interp_portable(const float *row, const tb_resize_axis *ax, float *out) {
  int64_t n = ax->n;
  for (int64_t j = 0; j < n; j++) {
    float s = 0.0f;
    for (int t = 0; t < ax->taps; t++) s += ax->w[t * n + j] * row[ax->idx[t * n + j]];
    out[j] = s;
  }
}

static void blend_portable(const float *const *rows, const float *wy, int taps, int64_t n, float *out) {
  for (int64_t j = 0; j < n; j++) {
    float s = 0.0f;
    for (int t = 0; t < taps; t++) s += wy[t] * rows[t][j];
    out[j] = s;
  }
}

const tb_resize_rows tb_resize_rows_portable = {gather_portable, interp_portable, blend_portable};

const tb_resize_rows *tb_resize_rows_for(tb_gemm_path path) {
#if defined(__x86_64__) || defined(__i386__)
  if (path == TB_GEMM_AVX512) return &tb_resize_rows_avx512;
  if (path == TB_GEMM_AVX2) return &tb_resize_rows_avx2;
#endif
  (void)path;
  return &tb_resize_rows_portable;
}
