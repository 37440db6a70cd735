// The reductions by index and the scans, over an input viewed as [outer, len, inner] (tb_ew.outer, len, inner;
// the axis in the middle), with 12_math.cu's parameter list (a, b, y, z, n, tb_ew):
//   ArgMax / ArgMin (int64 out) and Hardmax (one-hot, the input's type), as the CPU reference picks:
//     _rows (inner 1): one block per row, each thread the best of its stride, then a tree in shared memory;
//     _cols (inner > 1): one thread per output, walking its column as the CPU does;
//   CumSum: one thread per (outer, inner) column, summing in order (exclusive, reverse: tb_ew.flags); rows of
//     32 elements and more (inner 1) whose sums do not depend on the order of the additions (the integers,
//     wrapping; float16 in double, exact up to TB_IX_SCAN_F16_MAX elements) as a block scan, one block per row;
//   TopK: one block per row; a row of up to TB_IX_SORT_MAX elements is sorted whole in shared memory (bitonic),
//     a longer one goes to 32_topk.cu's radix select.
// The order of TopK is the CPU's: by value (NaN above every number), largest or smallest first, ties by the
// lower index. Every kernel comes for f32, f64, i8, i16, i32, i64 and u8, and for f16 and bf16 (12_math.cu's
// tb_ew_load: compared in float, exact; CumSum sums them in double and rounds each output once, as the CPU). Block kernels: blockDim.x at most 1024;
// rows n = outer * inner, any grid.

#define TB_IX_F_LAST 1      // ArgMax / ArgMin: select_last_index
#define TB_IX_F_MAX 2       // ArgMax (else ArgMin)
#define TB_IX_F_HARDMAX 4   // Hardmax's rule: the first maximum above -inf, else 0
#define TB_IX_F_EXCLUSIVE 1 // CumSum
#define TB_IX_F_REVERSE 2   // CumSum
#define TB_IX_F_LARGEST 1   // TopK
#define TB_IX_SORT_MAX 2048 // TopK: the longest row sorted in shared memory
#define TB_IX_SCAN_F16_MAX 8192 // CumSum: float16 sums of this many elements are exact in double (2^53 / (65504 * 2^24))

// Element t of row `row` of the [outer, len, inner] view.
__device__ inline tb_index tb_ix_at(const tb_ew &d, tb_index row, tb_index t) {
  return ((row / d.inner) * d.len + t) * d.inner + row % d.inner;
}

__device__ inline bool tb_ix_nan(float v) { return v != v; }
__device__ inline bool tb_ix_nan(double v) { return v != v; }
__device__ inline bool tb_ix_nan(signed char) { return false; }
__device__ inline bool tb_ix_nan(short) { return false; }
__device__ inline bool tb_ix_nan(int) { return false; }
__device__ inline bool tb_ix_nan(long long) { return false; }
__device__ inline bool tb_ix_nan(unsigned char) { return false; }
__device__ inline bool tb_ix_neg_inf(float v) { return v == -TB_INF; }
__device__ inline bool tb_ix_neg_inf(double v) { return v == -(double)TB_INF; }
__device__ inline bool tb_ix_neg_inf(signed char) { return false; }
__device__ inline bool tb_ix_neg_inf(short) { return false; }
__device__ inline bool tb_ix_neg_inf(int) { return false; }
__device__ inline bool tb_ix_neg_inf(long long) { return false; }
__device__ inline bool tb_ix_neg_inf(unsigned char) { return false; }

// Whether element i (value vi) comes before element j (vj) as the pick of ArgMax / ArgMin / Hardmax: NaN never
// does (the caller skips it), the larger (smaller) value does, ties by the first (last) index.
template <typename T>
__device__ inline bool tb_ix_arg_before(T vi, tb_index i, T vj, tb_index j, int flags) {
  if (vi != vj) return (flags & TB_IX_F_MAX) ? vi > vj : vi < vj;
  return (flags & TB_IX_F_LAST) ? i > j : i < j;
}

// The CPU's answer from the best non-NaN element (-1: none) of a row whose first element is v0 (the value at
// best: vb): ArgMax / ArgMin keep index 0 when it is NaN (nothing compares above it); Hardmax takes the first
// maximum above -inf, else 0.
template <typename T>
__device__ inline tb_index tb_ix_arg_finish(tb_index best, T v0, T vb, int flags) {
  if (flags & TB_IX_F_HARDMAX) return best < 0 || tb_ix_neg_inf(vb) ? 0 : best;
  return best < 0 || tb_ix_nan(v0) ? 0 : best;
}

// The block's pick of the candidate indices (one per thread, -1 for none) by Before; every thread gets it.
// Every thread of the block must call it.
template <typename Before>
__device__ inline tb_index tb_ix_block_pick(tb_index mine, const Before &before) {
  __shared__ tb_index cand[1024];
  unsigned t = threadIdx.x;
  cand[t] = mine;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x; s <<= 1) {
    if (t % (2 * s) == 0 && t + s < blockDim.x) {
      tb_index o = cand[t + s];
      if (o >= 0 && (cand[t] < 0 || before(o, cand[t]))) cand[t] = o;
    }
    __syncthreads();
  }
  tb_index r = cand[0];
  __syncthreads(); // cand is free again for the next call
  return r;
}

template <typename S>
struct tb_ix_arg_order {
  const S *x;
  const tb_ew *d;
  tb_index row;
  __device__ bool operator()(tb_index i, tb_index j) const {
    return tb_ix_arg_before(tb_ew_load(x, tb_ix_at(*d, row, i)), i, tb_ew_load(x, tb_ix_at(*d, row, j)), j, d->flags);
  }
};

// Write the row's pick: ArgMax / ArgMin its index (y int64 [outer, inner]); Hardmax 1 there and 0 elsewhere
// (y of the input's type and shape), by the threads in [first, first + step, ...).
template <typename S>
__device__ inline void tb_ix_arg_write(void *y, const tb_ew &d, tb_index row, tb_index best, tb_index first, tb_index step) {
  typedef typename tb_ew_compute<S>::type T;
  if (d.flags & TB_IX_F_HARDMAX) {
    S *o = (S *)y;
    for (tb_index t = first; t < d.len; t += step) tb_ew_store(o, tb_ix_at(d, row, t), t == best ? (T)1 : (T)0);
  } else if (first == 0) {
    ((long long *)y)[row] = best;
  }
}

template <typename S>
__device__ inline void tb_ix_arg_rows(const void *a, void *y, tb_index rows, const tb_ew &d) {
  const S *x = (const S *)a;
  for (tb_index row = blockIdx.x; row < rows; row += gridDim.x) {
    tb_ix_arg_order<S> before = {x, &d, row};
    tb_index mine = -1;
    for (tb_index t = threadIdx.x; t < d.len; t += blockDim.x)
      if (!tb_ix_nan(tb_ew_load(x, tb_ix_at(d, row, t))) && (mine < 0 || before(t, mine))) mine = t;
    tb_index best = tb_ix_block_pick(mine, before);
    best = tb_ix_arg_finish(best, tb_ew_load(x, tb_ix_at(d, row, 0)), tb_ew_load(x, tb_ix_at(d, row, best < 0 ? 0 : best)), d.flags);
    tb_ix_arg_write<S>(y, d, row, best, threadIdx.x, blockDim.x);
  }
}

template <typename S>
__device__ inline void tb_ix_arg_cols(const void *a, void *y, tb_index rows, const tb_ew &d) {
  const S *x = (const S *)a;
  TB_GRID_LOOP(row, rows) {
    tb_ix_arg_order<S> before = {x, &d, row};
    tb_index best = -1;
    for (tb_index t = 0; t < d.len; t++)
      if (!tb_ix_nan(tb_ew_load(x, tb_ix_at(d, row, t))) && (best < 0 || before(t, best))) best = t;
    best = tb_ix_arg_finish(best, tb_ew_load(x, tb_ix_at(d, row, 0)), tb_ew_load(x, tb_ix_at(d, row, best < 0 ? 0 : best)), d.flags);
    tb_ix_arg_write<S>(y, d, row, best, 0, 1);
  }
}

// A double rounded once to float16 / bfloat16: 12_math.cu's tb_ew_to_odd, then to nearest even.
__device__ inline void tb_ix_store_sum(tb_ew_half *p, tb_index i, double v) { p[i].bits = tb_f32_to_f16(tb_ew_to_odd(v)); }
__device__ inline void tb_ix_store_sum(tb_ew_bhalf *p, tb_index i, double v) { p[i].bits = tb_f32_to_bf16(tb_ew_to_odd(v)); }
template <typename T, typename A>
__device__ inline void tb_ix_store_sum(T *p, tb_index i, A v) { p[i] = (T)v; }

// CumSum of one column in order, in T's own arithmetic (A: the accumulator type; unsigned for the integers, so
// an overflow wraps as the CPU's; double for the halves, each output rounded once, as the CPU's).
template <typename T, typename A>
__device__ inline void tb_ix_cumsum(const void *a, void *y, tb_index rows, const tb_ew &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  bool exclusive = (d.flags & TB_IX_F_EXCLUSIVE) != 0, reverse = (d.flags & TB_IX_F_REVERSE) != 0;
  TB_GRID_LOOP(row, rows) {
    A sum = (A)0;
    for (tb_index s = 0; s < d.len; s++) {
      tb_index at = tb_ix_at(d, row, reverse ? d.len - 1 - s : s);
      A v = (A)tb_ew_load(x, at);
      if (!exclusive) sum = (A)(sum + v);
      tb_ix_store_sum(o, at, sum);
      if (exclusive) sum = (A)(sum + v);
    }
  }
}

// CumSum of rows (inner 1) as a block scan, for the types whose sums are the same in any order: the integers in
// their unsigned twin A (wrapping as the CPU's sequential sum does) and float16 in double (every partial sum of up to
// TB_IX_SCAN_F16_MAX halves is exact, +-inf and NaN whatever the order). One block per row, walking it in tiles of
// blockDim.x elements (from the end under reverse): each tile scanned in shared memory (Hillis-Steele, log2
// blockDim.x steps), offset by the total of the tiles before it; the exclusive sum is the scan one place back.
template <typename T, typename A>
__device__ inline void tb_ix_cumsum_scan(const void *a, void *y, tb_index rows, const tb_ew &d) {
  __shared__ A part[1024];
  const T *x = (const T *)a;
  T *o = (T *)y;
  bool exclusive = (d.flags & TB_IX_F_EXCLUSIVE) != 0, reverse = (d.flags & TB_IX_F_REVERSE) != 0;
  int t = threadIdx.x, nb = blockDim.x;
  for (tb_index row = blockIdx.x; row < rows; row += gridDim.x) {
    A carry = (A)0;
    for (tb_index start = 0; start < d.len; start += nb) {
      tb_index s = start + t, at = row * d.len + (reverse ? d.len - 1 - s : s);
      part[t] = s < d.len ? (A)tb_ew_load(x, at) : (A)0;
      __syncthreads();
      for (int off = 1; off < nb; off <<= 1) {
        A add = t >= off ? part[t - off] : (A)0;
        __syncthreads();
        part[t] = (A)(part[t] + add);
        __syncthreads();
      }
      A before = t > 0 ? part[t - 1] : (A)0;
      if (s < d.len) tb_ix_store_sum(o, at, (A)(carry + (exclusive ? before : part[t])));
      carry = (A)(carry + part[nb - 1]);
      __syncthreads(); // every thread has read the tile's sums before the next tile writes them
    }
  }
}

// TopK's order: whether (vi, i) comes before (vj, j); NaN counts above every number; ties by the lower index.
template <typename T>
__device__ inline bool tb_ix_topk_before(T vi, tb_index i, T vj, tb_index j, bool largest) {
  bool ni = tb_ix_nan(vi), nj = tb_ix_nan(vj);
  int c = ni || nj ? (ni && nj ? 0 : ni ? 1 : -1) : (vi < vj ? -1 : vi > vj ? 1 : 0);
  if (largest) c = -c;
  return c != 0 ? c < 0 : i < j;
}

// An in-place bitonic sort by the block of places [0, count): places.before(b, a) says whether place b's element
// comes before place a's, places.swap(a, b) exchanges them. Every comparator puts the earlier element first (each
// merge begins by comparing mirrored places), so a count that is not a power of two needs no padding: the places past
// it count as after everything and their comparators are skipped. With a strict total order the result is the one
// sorted order. Shared by the short rows' sort below and 32_topk.cu's radix select (its winners in the output).
template <typename Places>
__device__ inline void tb_ix_bitonic_sort(tb_index count, const Places &places) {
  tb_index p = 1;
  while (p < count) p <<= 1;
  for (tb_index size = 2; size <= p; size <<= 1) {
    tb_index half = size >> 1;
    for (tb_index i = threadIdx.x; i < p / 2; i += blockDim.x) {
      tb_index a = i / half * size + i % half, b = i / half * size + size - 1 - i % half;
      if (b < count && places.before(b, a)) places.swap(a, b);
    }
    __syncthreads();
    for (tb_index j = half >> 1; j > 0; j >>= 1) {
      for (tb_index i = threadIdx.x; i < p / 2; i += blockDim.x) {
        tb_index a = i / j * 2 * j + i % j, b = a + j;
        if (b < count && places.before(b, a)) places.swap(a, b);
      }
      __syncthreads();
    }
  }
}

// The short rows' places: keys and indices in shared memory.
template <typename T>
struct tb_ix_row_places {
  T *keys;
  int *idx;
  bool largest;
  __device__ bool before(tb_index b, tb_index a) const { return tb_ix_topk_before(keys[b], idx[b], keys[a], idx[a], largest); }
  __device__ void swap(tb_index a, tb_index b) const {
    T kv = keys[a];
    keys[a] = keys[b];
    keys[b] = kv;
    int iv = idx[a];
    idx[a] = idx[b];
    idx[b] = iv;
  }
};

// Rows of up to TB_IX_SORT_MAX elements: the row and its indices in shared memory, sorted by tb_ix_bitonic_sort; the
// first k written to y (values) and z (int64 indices), both [outer, k, inner]; the keys in the compute type, the
// values copied from the input bit for bit.
template <typename S>
__device__ inline void tb_ix_topk_sort(const void *a, void *y, void *z, tb_index rows, const tb_ew &d) {
  typedef typename tb_ew_compute<S>::type T;
  __shared__ T keys[TB_IX_SORT_MAX];
  __shared__ int idx[TB_IX_SORT_MAX];
  const S *x = (const S *)a;
  S *ov = (S *)y;
  long long *oi = (long long *)z;
  const tb_ix_row_places<T> places = {keys, idx, (d.flags & TB_IX_F_LARGEST) != 0};
  for (tb_index row = blockIdx.x; row < rows; row += gridDim.x) {
    for (int t = threadIdx.x; t < d.len; t += blockDim.x) {
      idx[t] = t;
      keys[t] = tb_ew_load(x, tb_ix_at(d, row, t));
    }
    __syncthreads();
    tb_ix_bitonic_sort(d.len, places);
    tb_index outer = row / d.inner, inner = row % d.inner;
    for (int t = threadIdx.x; t < d.k; t += blockDim.x) {
      tb_index at = (outer * d.k + t) * d.inner + inner;
      ov[at] = x[tb_ix_at(d, row, idx[t])];
      oi[at] = idx[t];
    }
    __syncthreads(); // keys and idx are free again for the next row
  }
}

extern "C" __global__ void tb_cu_ew_arg_rows_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<float>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<double>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<int>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<long long>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<signed char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<short>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<float>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<double>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<int>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<long long>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<signed char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<short>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<float, float>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<double, double>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<int, unsigned>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<long long, unsigned long long>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<signed char, unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<short, unsigned short>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<unsigned char, unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<float>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<double>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<int>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<long long>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<signed char>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<short>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<unsigned char>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<tb_ew_half>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_rows_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_rows<tb_ew_bhalf>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<tb_ew_half>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_arg_cols_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_arg_cols<tb_ew_bhalf>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<tb_ew_half, double>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum<tb_ew_bhalf, double>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<tb_ew_half>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_sort_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_topk_sort<tb_ew_bhalf>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_scan_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum_scan<signed char, unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_scan_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum_scan<short, unsigned short>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_scan_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum_scan<int, unsigned>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_scan_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum_scan<long long, unsigned long long>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_scan_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum_scan<unsigned char, unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_cumsum_scan_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ix_cumsum_scan<tb_ew_half, double>(a, y, n, d); }
