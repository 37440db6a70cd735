/* Internal: what the level-2 fp32 Resize (resize_fast.c) shares with its row loops (resize_rows.c, and
 * resize_rows_x86.c for AVX2 and AVX-512): one axis's taps laid out for vector loops, and the loops that
 * interpolate one output row along the width and blend rows along the height. */
#ifndef TB_CPU_KERNELS_FAST_RESIZE_FAST_H
#define TB_CPU_KERNELS_FAST_RESIZE_FAST_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/gemm_f32.h"

/* The taps of every output coordinate of one axis: tap t of coordinate j reads input idx[t * n + j] with
 * weight w[t * n + j] (w unused for nearest, taps 1). outside[j]: the coordinate is outside the input
 * (tf_crop_and_resize), its output is the extrapolation value. */
typedef struct tb_resize_axis {
  int64_t n;
  int taps;
  int32_t *idx;
  float *w;
  bool *outside;
  bool any_outside;
} tb_resize_axis;

/* The loops of one instruction set. */
typedef struct tb_resize_rows {
  /* out[j] = row[idx[j]], j < n */
  void (*gather)(const float *row, const int32_t *idx, int64_t n, float *out);
  /* out[j] = sum over t < taps of w[t * n + j] * row[idx[t * n + j]], summed in tap order */
  void (*interp)(const float *row, const int32_t *idx, const float *w, int taps, int64_t n, float *out);
  /* out[j] = sum over t < taps of wy[t] * rows[t][j], summed in tap order */
  void (*blend)(const float *const *rows, const float *wy, int taps, int64_t n, float *out);
} tb_resize_rows;

extern const tb_resize_rows tb_resize_rows_portable, tb_resize_rows_avx2, tb_resize_rows_avx512;

/* The loops for a GEMM path's instruction set (AVX-512: AVX512F + FMA; AVX2: AVX2 + FMA). */
const tb_resize_rows *tb_resize_rows_for(tb_gemm_path path);

#endif
