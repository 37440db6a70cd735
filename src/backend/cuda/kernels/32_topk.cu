// TopK of rows longer than 31_index_reduce.cu's shared-memory sort (TB_IX_SORT_MAX), one block per row of the
// [outer, len, inner] view (12_math.cu's parameter list; y values and z int64 indices, both [outer, k, inner]):
//   1. a radix select finds the k-th key: each element's rank key (an unsigned integer whose order is TopK's:
//      the largest first under largest, else the smallest; NaN above every number, -0 equal to +0), then one
//      256-bin histogram of the next 8 bits per pass over the elements that share the digits chosen so far;
//   2. the winners (keys above the k-th, then the first ties by index) gathered into z by an ordered count:
//      each thread a contiguous chunk of the row, its offsets from a scan of the chunks' counts;
//   3. z's k indices sorted in place by (key, index) with 31_index_reduce.cu's tb_ix_bitonic_sort (the
//      out-of-range partners of a length that is not a power of two count as after everything, so their comparisons
//      are skipped);
//   4. the values copied from the input bit for bit.
// The order is the CPU's (ties by the lower index), so values and indices are the CPU's bit for bit. The passes
// are ceil(bits / 8) for the key width of the dtype (1 for int8 / uint8, 2 for int16, 4 for the 32-bit types and
// the halves, compared as float, 8 for float64 and int64). blockDim.x at most 1024, any grid.

#define TB_TK_BINS 256

// The rank key of a value: larger keys come first. ord is the order-preserving unsigned form (NaN the largest,
// -0 as +0); under smallest it is inverted within the key's width.
__device__ inline unsigned long long tb_tk_ord(float v) {
  if (v != v) return 0xffffffffull;
  unsigned u = __float_as_uint(v == 0.0f ? 0.0f : v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ inline unsigned long long tb_tk_ord(double v) {
  if (v != v) return 0xffffffffffffffffull;
  unsigned long long u = (unsigned long long)__double_as_longlong(v == 0.0 ? 0.0 : v);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ull);
}
__device__ inline unsigned long long tb_tk_ord(signed char v) { return (unsigned char)v ^ 0x80u; }
__device__ inline unsigned long long tb_tk_ord(short v) { return (unsigned short)v ^ 0x8000u; }
__device__ inline unsigned long long tb_tk_ord(int v) { return (unsigned)v ^ 0x80000000u; }
__device__ inline unsigned long long tb_tk_ord(long long v) { return (unsigned long long)v ^ 0x8000000000000000ull; }
__device__ inline unsigned long long tb_tk_ord(unsigned char v) { return v; }

// The width in bits of the rank key of the compute type T.
template <typename T>
__device__ inline int tb_tk_bits() { return sizeof(T) * 8 < 32 ? (int)sizeof(T) * 8 : sizeof(T) == 8 ? 64 : 32; }

template <typename S>
__device__ inline unsigned long long tb_tk_key(const S *x, const tb_ew &d, tb_index row, tb_index t, bool largest) {
  typedef typename tb_ew_compute<S>::type T;
  int bits = tb_tk_bits<T>();
  unsigned long long mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  unsigned long long o = tb_tk_ord(tb_ew_load(x, tb_ix_at(d, row, t)));
  return largest ? o : ~o & mask;
}

// Place s of the row's k outputs.
__device__ inline tb_index tb_tk_out(const tb_ew &d, tb_index row, tb_index s) {
  return ((row / d.inner) * d.k + s) * d.inner + row % d.inner;
}

// Step 1: the k-th largest rank key of the row (every thread gets it) and how many of the winners equal it.
template <typename S>
__device__ inline unsigned long long tb_tk_kth(const S *x, const tb_ew &d, tb_index row, bool largest, tb_index *ties) {
  typedef typename tb_ew_compute<S>::type T;
  __shared__ unsigned hist[TB_TK_BINS];
  __shared__ unsigned long long chosen;
  __shared__ tb_index still;
  unsigned long long want = 0, mask = 0;
  tb_index need = d.k;
  for (int shift = tb_tk_bits<T>() - 8; shift >= 0; shift -= 8) {
    for (int b = threadIdx.x; b < TB_TK_BINS; b += blockDim.x) hist[b] = 0;
    __syncthreads();
    for (tb_index t = threadIdx.x; t < d.len; t += blockDim.x) {
      unsigned long long r = tb_tk_key(x, d, row, t, largest);
      if ((r & mask) == want) atomicAdd(&hist[(r >> shift) & 0xff], 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0) { // the digit, from the top, whose bin holds the need-th key
      int b = TB_TK_BINS - 1;
      while (b > 0 && (tb_index)hist[b] < need) need -= hist[b--];
      chosen = want | ((unsigned long long)b << shift);
      still = need;
    }
    __syncthreads();
    want = chosen;
    need = still;
    mask |= 0xffull << shift;
    __syncthreads(); // chosen and still are read before the next pass writes them
  }
  *ties = need;
  return want;
}

// Step 2: the winners' indices into z in the row's index order: those above the k-th key, then the first `ties`
// equal to it. Each thread walks a contiguous chunk; its offsets come from an exclusive scan of the chunk counts.
template <typename S>
__device__ inline void tb_tk_gather(const S *x, long long *oi, const tb_ew &d, tb_index row, bool largest, unsigned long long kth,
                                    tb_index ties) {
  __shared__ tb_index above[1024], equal[1024];
  tb_index chunk = (d.len + blockDim.x - 1) / blockDim.x, first = threadIdx.x * chunk;
  tb_index last = first + chunk < d.len ? first + chunk : d.len, gt = 0, eq = 0;
  for (tb_index t = first; t < last; t++) {
    unsigned long long r = tb_tk_key(x, d, row, t, largest);
    gt += r > kth;
    eq += r == kth;
  }
  above[threadIdx.x] = gt;
  equal[threadIdx.x] = eq;
  __syncthreads();
  if (threadIdx.x == 0) { // exclusive scans of both counts
    tb_index sg = 0, se = 0;
    for (unsigned i = 0; i < blockDim.x; i++) {
      tb_index g = above[i], e = equal[i];
      above[i] = sg;
      equal[i] = se;
      sg += g;
      se += e;
    }
  }
  __syncthreads();
  tb_index at_gt = above[threadIdx.x], at_eq = equal[threadIdx.x], n_gt = d.k - ties;
  for (tb_index t = first; t < last; t++) {
    unsigned long long r = tb_tk_key(x, d, row, t, largest);
    if (r > kth) oi[tb_tk_out(d, row, at_gt++)] = t;
    else if (r == kth && at_eq < ties) oi[tb_tk_out(d, row, n_gt + at_eq++)] = t;
  }
  __syncthreads();
}

// Step 3's places: z's k indices of the row, in TopK's order by (key, index) (larger key first, then lower index).
template <typename S>
struct tb_tk_places {
  const S *x;
  long long *oi;
  const tb_ew *d;
  tb_index row;
  bool largest;
  __device__ bool before(tb_index b, tb_index a) const {
    long long ib = oi[tb_tk_out(*d, row, b)], ia = oi[tb_tk_out(*d, row, a)];
    unsigned long long kb = tb_tk_key(x, *d, row, ib, largest), ka = tb_tk_key(x, *d, row, ia, largest);
    return kb != ka ? kb > ka : ib < ia;
  }
  __device__ void swap(tb_index a, tb_index b) const {
    tb_index pa = tb_tk_out(*d, row, a), pb = tb_tk_out(*d, row, b);
    long long v = oi[pa];
    oi[pa] = oi[pb];
    oi[pb] = v;
  }
};

template <typename S>
__device__ inline void tb_tk_radix(const void *a, void *y, void *z, tb_index rows, const tb_ew &d) {
  const S *x = (const S *)a;
  S *ov = (S *)y;
  long long *oi = (long long *)z;
  bool largest = (d.flags & TB_IX_F_LARGEST) != 0;
  for (tb_index row = blockIdx.x; row < rows; row += gridDim.x) {
    tb_index ties = 0;
    unsigned long long kth = tb_tk_kth(x, d, row, largest, &ties);
    tb_tk_gather(x, oi, d, row, largest, kth, ties);
    const tb_tk_places<S> places = {x, oi, &d, row, largest};
    tb_ix_bitonic_sort(d.k, places); // step 3: 31_index_reduce.cu's network, in place in z
    for (tb_index s = threadIdx.x; s < d.k; s += blockDim.x) {
      tb_index at = tb_tk_out(d, row, s);
      ov[at] = x[tb_ix_at(d, row, oi[at])];
    }
    __syncthreads(); // the row's shared counts are free again for the next row
  }
}

extern "C" __global__ void tb_cu_ew_topk_radix_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<float>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<double>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<int>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<long long>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<signed char>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<short>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<unsigned char>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<tb_ew_half>(a, y, z, n, d); }
extern "C" __global__ void tb_cu_ew_topk_radix_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_tk_radix<tb_ew_bhalf>(a, y, z, n, d); }
