// The ONNX reductions (ReduceSum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp) on float32,
// over an input the host views as [outer, r, inner] (the reduced axes made one, contiguous), giving
// [outer, inner]:
//   _rows (inner == 1, the reduced elements contiguous): one block per output, any grid; blockDim.x a
//         multiple of warpSize, at most 1024;
//   _cols (inner > 1): one thread per output, the threads of a warp reading neighbouring columns.
// Each reduction is a start value, a map of each element, a combine and a finish from the combined value
// and the count r. LogSumExp subtracts the maximum first (a pass of its own), so e^x does not overflow.

struct tb_reduce_sum {
  static constexpr bool shifted = false;
  __device__ float start() const { return 0.0f; }
  __device__ float map(float v) const { return v; }
  __device__ float combine(float a, float b) const { return a + b; }
  __device__ float finish(float acc, tb_index) const { return acc; }
};
struct tb_reduce_mean : tb_reduce_sum {
  __device__ float finish(float acc, tb_index r) const { return acc / (float)r; }
};
struct tb_reduce_max {
  static constexpr bool shifted = false;
  __device__ float start() const { return -TB_INF; }
  __device__ float map(float v) const { return v; }
  __device__ float combine(float a, float b) const { return a != a || b != b ? a + b : fmaxf(a, b); }
  __device__ float finish(float acc, tb_index) const { return acc; }
};
struct tb_reduce_min {
  static constexpr bool shifted = false;
  __device__ float start() const { return TB_INF; }
  __device__ float map(float v) const { return v; }
  __device__ float combine(float a, float b) const { return a != a || b != b ? a + b : fminf(a, b); }
  __device__ float finish(float acc, tb_index) const { return acc; }
};
struct tb_reduce_prod {
  static constexpr bool shifted = false;
  __device__ float start() const { return 1.0f; }
  __device__ float map(float v) const { return v; }
  __device__ float combine(float a, float b) const { return a * b; }
  __device__ float finish(float acc, tb_index) const { return acc; }
};
struct tb_reduce_l1 : tb_reduce_sum {
  __device__ float map(float v) const { return fabsf(v); }
};
struct tb_reduce_sum_square : tb_reduce_sum {
  __device__ float map(float v) const { return v * v; }
};
struct tb_reduce_l2 : tb_reduce_sum_square {
  __device__ float finish(float acc, tb_index) const { return sqrtf(acc); }
};
struct tb_reduce_log_sum : tb_reduce_sum {
  __device__ float finish(float acc, tb_index) const { return logf(acc); }
};
struct tb_reduce_log_sum_exp : tb_reduce_sum { // map and finish take the row's maximum (shift)
  static constexpr bool shifted = true;
};

// A Combine functor over a reduction, for tb_block_reduce.
template <typename R>
struct tb_reduce_combine {
  __device__ float operator()(float a, float b) const { return R().combine(a, b); }
};

template <typename R>
__device__ inline void tb_reduce_rows(const float *__restrict__ x, float *__restrict__ y, tb_index rows, tb_index r) {
  R red;
  for (tb_index row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *xr = x + row * r;
    float shift = 0.0f;
    if (R::shifted) {
      float m = -TB_INF;
      for (tb_index c = threadIdx.x; c < r; c += blockDim.x) m = fmaxf(m, xr[c]);
      m = tb_block_reduce(m, tb_combine_max(), -TB_INF);
      shift = m == -TB_INF || m == TB_INF ? 0.0f : m;
    }
    float acc = red.start();
    for (tb_index c = threadIdx.x; c < r; c += blockDim.x)
      acc = red.combine(acc, R::shifted ? expf(xr[c] - shift) : red.map(xr[c]));
    acc = tb_block_reduce(acc, tb_reduce_combine<R>(), red.start());
    if (threadIdx.x == 0) y[row] = R::shifted ? logf(acc) + shift : red.finish(acc, r);
  }
}

template <typename R>
__device__ inline void tb_reduce_cols(const float *__restrict__ x, float *__restrict__ y, tb_index outer, tb_index r,
                                      tb_index inner) {
  R red;
  TB_GRID_LOOP(i, outer * inner) {
    const float *xc = x + (i / inner) * r * inner + i % inner;
    float shift = 0.0f;
    if (R::shifted) {
      float m = -TB_INF;
      for (tb_index k = 0; k < r; k++) m = fmaxf(m, xc[k * inner]);
      shift = m == -TB_INF || m == TB_INF ? 0.0f : m;
    }
    float acc = red.start();
    for (tb_index k = 0; k < r; k++) acc = red.combine(acc, R::shifted ? expf(xc[k * inner] - shift) : red.map(xc[k * inner]));
    y[i] = R::shifted ? logf(acc) + shift : red.finish(acc, r);
  }
}

#define TB_ROWS_PARAMS const float *__restrict__ x, float *__restrict__ y, tb_index rows, tb_index r
#define TB_COLS_PARAMS const float *__restrict__ x, float *__restrict__ y, tb_index outer, tb_index r, tb_index inner
extern "C" __global__ void tb_cu_reduce_sum_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_sum>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_mean_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_mean>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_max_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_max>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_min_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_min>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_prod_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_prod>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_l1_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_l1>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_l2_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_l2>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_sum_square_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_sum_square>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_log_sum_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_log_sum>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_log_sum_exp_f32_rows(TB_ROWS_PARAMS) { tb_reduce_rows<tb_reduce_log_sum_exp>(x, y, rows, r); }
extern "C" __global__ void tb_cu_reduce_sum_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_sum>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_mean_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_mean>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_max_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_max>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_min_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_min>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_prod_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_prod>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_l1_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_l1>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_l2_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_l2>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_sum_square_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_sum_square>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_log_sum_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_log_sum>(x, y, outer, r, inner); }
extern "C" __global__ void tb_cu_reduce_log_sum_exp_f32_cols(TB_COLS_PARAMS) { tb_reduce_cols<tb_reduce_log_sum_exp>(x, y, outer, r, inner); }
