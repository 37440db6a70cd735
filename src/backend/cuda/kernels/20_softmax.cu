// Softmax and LogSoftmax on float32. _rows: over the rows of a [rows, cols] matrix (the softmax axis last,
// the rest flattened into rows): one block per row, in three passes over the row (max, sum of
// e^(x - max), output) that stay in the L1/L2 caches for rows up to some thousands of columns. A row of -inf
// or with a NaN gives NaN, as the CPU reference does. Any grid (blocks stride over the rows); blockDim.x a
// multiple of warpSize, at most 1024. _cols: along a middle axis, the input viewed as [outer, len, inner]
// with inner > 1: one thread per (outer, inner) column, a warp's threads on neighbouring columns; any grid.

template <bool LOG>
__device__ inline void tb_softmax_rows(const float *__restrict__ x, float *__restrict__ y, tb_index rows, tb_index cols) {
  for (tb_index row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *xr = x + row * cols;
    float *yr = y + row * cols;
    float m = -TB_INF;
    for (tb_index c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = tb_block_reduce(m, tb_combine_max(), -TB_INF);
    float s = 0.0f;
    for (tb_index c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
    s = tb_block_reduce(s, tb_combine_add(), 0.0f);
    if (LOG) {
      float shift = m + logf(s);
      for (tb_index c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] - shift;
    } else {
      float inv = 1.0f / s;
      for (tb_index c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) * inv;
    }
  }
}

extern "C" __global__ void tb_cu_softmax_f32_rows(const float *__restrict__ x, float *__restrict__ y, tb_index rows, tb_index cols) {
  tb_softmax_rows<false>(x, y, rows, cols);
}
extern "C" __global__ void tb_cu_log_softmax_f32_rows(const float *__restrict__ x, float *__restrict__ y, tb_index rows, tb_index cols) {
  tb_softmax_rows<true>(x, y, rows, cols);
}

template <bool LOG>
__device__ inline void tb_softmax_cols(const float *__restrict__ x, float *__restrict__ y, tb_index outer, tb_index len,
                                       tb_index inner) {
  TB_GRID_LOOP(i, outer * inner) {
    tb_index base = (i / inner) * len * inner + i % inner;
    float m = -TB_INF;
    for (tb_index k = 0; k < len; k++) m = fmaxf(m, x[base + k * inner]);
    float s = 0.0f;
    for (tb_index k = 0; k < len; k++) s += expf(x[base + k * inner] - m);
    if (LOG) {
      float shift = m + logf(s);
      for (tb_index k = 0; k < len; k++) y[base + k * inner] = x[base + k * inner] - shift;
    } else {
      float inv = 1.0f / s;
      for (tb_index k = 0; k < len; k++) y[base + k * inner] = expf(x[base + k * inner] - m) * inv;
    }
  }
}

extern "C" __global__ void tb_cu_softmax_f32_cols(const float *__restrict__ x, float *__restrict__ y, tb_index outer,
                                                  tb_index len, tb_index inner) {
  tb_softmax_cols<false>(x, y, outer, len, inner);
}
extern "C" __global__ void tb_cu_log_softmax_f32_cols(const float *__restrict__ x, float *__restrict__ y, tb_index outer,
                                                      tb_index len, tb_index inner) {
  tb_softmax_cols<true>(x, y, outer, len, inner);
}
