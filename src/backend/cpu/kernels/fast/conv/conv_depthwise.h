/* Internal: what the depthwise convolution's driver (conv_depthwise.c) shares with its per-instruction-set
 * row kernels (conv_depthwise_avx512.c, conv_depthwise_avx2.c; the portable one is in the driver).
 * The driver stages the input rows a block of output rows needs: each row with its pads as zeros and, for
 * a horizontal stride s > 1, split into s phases (padded column pc goes to phase pc % s, index pc / s), so
 * that tap kx of output column ox is element ox + (kx * dw) / s of phase (kx * dw) % s: every tap of a
 * vector of output columns is one contiguous load, with no permute and no border case. A phase is
 * phase_len floats, enough for every column block the kernels read (ow rounded up to 32, plus the taps'
 * reach), and rows outside the input point at a row of zeros. */
#ifndef TB_CPU_KERNELS_FAST_CONV_DEPTHWISE_H
#define TB_CPU_KERNELS_FAST_CONV_DEPTHWISE_H
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* The most output rows one kernel call computes (the AVX-512 kernel keeps 8 rows x 16 columns, or 4 rows x
 * 32 columns, of accumulators in registers). */
enum { TB_DW_MAX_ROWS = 8 };

/* n_rows (1..TB_DW_MAX_ROWS) output rows of one channel: y[r * ldy + ox] = bias + sum over taps of
 * w[ky * kw + kx] * in[r * kh + ky][phase (kx dw) % sw, index ox + (kx dw) / sw] (+ res[r * ldy + ox] when res
 * is not NULL), ox < ow. No activation: the driver applies it to the rows while they are in cache. */
typedef struct tb_dw_rows {
  const float *const *in; /* n_rows * kh staged rows (phase 0's first element) */
  const float *w;         /* kh * kw taps */
  float bias;
  int64_t kh, kw, dw, sw, phase_len, ow, n_rows;
  bool rows_shift; /* in[(r + 1) * kh + ky] == in[r * kh + ky + 1] (row stride 1; the driver passes every
                    * dilation-th output row): output rows share input rows, which a kernel may load once
                    * for all of them */
  const float *res; /* NULL or n_rows rows of ow, row stride ldy */
  float *y;         /* n_rows rows of ow, row stride ldy */
  int64_t ldy;
} tb_dw_rows;

void tb_dw_rows_portable(const tb_dw_rows *a);
void tb_dw_rows_avx2(const tb_dw_rows *a);   /* AVX2 + FMA (target attribute; the caller checks cpuid) */
void tb_dw_rows_avx512(const tb_dw_rows *a); /* AVX-512F (target attribute; the caller checks cpuid) */

/* phases[0][j] = line[2 j], phases[1][j] = line[2 j + 1] (phase 1 starts at dst + phase_len), j < phase_len
 * (a multiple of 16); line holds 2 * phase_len floats. */
void tb_dw_split2_avx2(float *dst, const float *line, int64_t phase_len);
/* The same straight from the input row: line[pc] = xr[pc - pad] for pad <= pc < pad + n, else 0 (masked
 * loads: nothing outside xr[0 .. n) is read). */
void tb_dw_stage2_avx512(float *dst, const float *xr, int64_t pad, int64_t n, int64_t phase_len);

/* tb_conv_depthwise_run (conv_fast.h) always on the row kernels, whatever the cost rule says. */
bool tb_conv_depthwise_rows_run(tb_gemm_path path, const tb_conv_geom *g, const float *x, const float *w, const float *bias,
                                const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool);

#endif
