/* Internal: what the level-2 fp32 Resize (resize_fast.c) shares with its row loops (resize_rows.c, and
 * resize_rows_x86.c for AVX2 and AVX-512): one axis's taps laid out for vector loops, and the loops that
 * interpolate one output row along the width and blend rows along the height. */
#ifndef TB_CPU_KERNELS_FAST_RESIZE_FAST_H
#define TB_CPU_KERNELS_FAST_RESIZE_FAST_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"

/* The taps of every output coordinate of one axis: tap t of coordinate j reads input idx[t * n + j] with
 * weight w[t * n + j] (w unused for nearest, taps 1). outside[j]: the coordinate is outside the input
 * (tf_crop_and_resize), its output is the extrapolation value. */
typedef struct tb_resize_axis {
  int64_t n, in; /* output and input sizes */
  int taps;
  int32_t *idx;
  float *w;
  bool *outside;
  bool any_outside;
  /* Per tap t and block b of TB_RESIZE_BLOCK output coordinates (win[t * blocks + b], blocks = ceil(n /
   * TB_RESIZE_BLOCK)): the first of 2 * TB_RESIZE_BLOCK consecutive inputs that hold every tap t of the
   * block (a vector loop then loads them and permutes instead of gathering), or -1 when they spread wider
   * (downscaling by more than 2, an outside coordinate). */
  int32_t *win;
} tb_resize_axis;

enum { TB_RESIZE_BLOCK = 16 };

/* The loops of one instruction set; ax is the width axis, row one input row (ax->in values). */
typedef struct tb_resize_rows {
  /* out[j] = row[ax->idx[j]], j < ax->n (nearest) */
  void (*gather)(const float *row, const tb_resize_axis *ax, float *out);
  /* out[j] = sum over t < ax->taps of w[t * n + j] * row[idx[t * n + j]] (n = ax->n), summed in tap order */
  void (*interp)(const float *row, const tb_resize_axis *ax, float *out);
  /* out[j] = sum over t < taps of wy[t] * rows[t][j], summed in tap order */
  void (*blend)(const float *const *rows, const float *wy, int taps, int64_t n, float *out);
} tb_resize_rows;

extern const tb_resize_rows tb_resize_rows_portable, tb_resize_rows_avx2, tb_resize_rows_avx512;

/* The loops for a GEMM path's instruction set (AVX-512: AVX512F + FMA; AVX2: AVX2 + FMA). */
const tb_resize_rows *tb_resize_rows_for(tb_gemm_path path);

#endif
