/* The fp32 direct convolution's source and weight layout (conv_direct.h), shared by its AVX-512 and AVX2
 * micro-kernels: the source is X with its pads written as zeros, one plane per channel; the weights of a
 * column block are, per input channel and tap, its `cols` output channels' values one after another. */
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_direct.h"

/* The source planes of channels [c0, c0 + n_c): zeros around the input, which sits at row pt, column pl.
 * x and src point at channel 0 / unit 0 of the image's group. */
void tb_conv_direct_make_source_f32(const float *x, int64_t ih, int64_t iw, int64_t c0, int64_t n_c, int64_t src_h,
                                    int64_t src_w, int64_t pt, int64_t pl, void *src) {
  for (int64_t c = c0; c < c0 + n_c; c++) {
    const float *xc = x + c * ih * iw;
    float *d = (float *)src + c * src_h * src_w;
    memset(d, 0, (size_t)(pt * src_w) * sizeof *d);
    for (int64_t i = 0; i < ih; i++) {
      float *row = d + (pt + i) * src_w;
      memset(row, 0, (size_t)pl * sizeof *row);
      memcpy(row + pl, xc + i * iw, (size_t)iw * sizeof *row);
      memset(row + pl + iw, 0, (size_t)(src_w - pl - iw) * sizeof *row);
    }
    memset(d + (pt + ih) * src_w, 0, (size_t)((src_h - pt - ih) * src_w) * sizeof *d);
  }
}

/* dst[(u * n_taps + t) * cols + j] = W[m0 + j][u][t] (0 past mg). */
void tb_conv_direct_pack_weights_f32(const float *w, int64_t mg, int64_t cg, int n_taps, int64_t m0, int cols, void *dst) {
  float *d = dst;
  for (int64_t u = 0; u < cg; u++)
    for (int t = 0; t < n_taps; t++, d += cols)
      for (int j = 0; j < cols; j++) d[j] = m0 + j < mg ? w[((m0 + j) * cg + u) * n_taps + t] : 0.0f;
}
