// More layout and index kernels on 70_data.cu's calling convention (a, b, c, y, n, tb_dm) and helpers
// (tb_dm_index, tb_dm_load, tb_dm_store): Trilu, ReverseSequence, OneHot and GatherND per element size
// (_b1 to _b8), the scatters' reductions (add, mul, min, max) on values of any computable dtype, and NonZero's
// two passes (count per chunk, then fill from the chunks' offsets). DepthToSpace and SpaceToDepth need no
// kernel of their own: they are 70_data.cu's strided copy over a 6-d view.
//
// The reductions are deterministic without atomics: the host gives each thread every update that can reach
// its outputs (ScatterElements: one line of the indices along the axis; ScatterND: one position of the slice, or
// with 73_scatter_nd.cu one target's rows),
// and the thread applies them in the indices' order, the order of the CPU reference's loop, so the results
// are the CPU's bit for bit and the same on every run.

// Trilu on the last two dims (p: rows, cols, k; mode 1 upper, 0 lower): y[i] = x[i] where kept, else 0.
template <typename T>
__device__ inline void tb_dm_trilu(const void *a, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  tb_index rows = d.p[0], cols = d.p[1], k = d.p[2];
  TB_GRID_LOOP(i, n) {
    tb_index j = i % cols, r = (i / cols) % rows;
    bool keep = d.mode ? j - r >= k : j - r <= k;
    o[i] = keep ? x[i] : (T)0;
  }
}

// ReverseSequence (dims: x's shape; st[0][0]: the time axis' stride; p: batch_axis, time_axis; mode: the
// lengths' dtype, checked in [0, time] by the host): the first len[b] steps of each batch reversed in time.
template <typename T>
__device__ inline void tb_dm_reverse_sequence(const void *a, const void *b, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  TB_GRID_LOOP(i, n) {
    tb_index rem = i, bi = 0, t = 0;
    for (int r = d.rank - 1; r >= 0; r--) {
      tb_index cc = rem % d.dims[r];
      rem /= d.dims[r];
      if (r == d.p[0]) bi = cc;
      if (r == d.p[1]) t = cc;
    }
    tb_index len = tb_dm_index(b, d.mode, bi, 0);
    tb_index from = t < len ? len - 1 - t : t;
    o[i] = x[i + (from - t) * d.st[0][0]];
  }
}

// OneHot (p: outer, depth, inner; mode: the indices' dtype; c: the [off, on] values): y[o, t, in] is on where
// the index at (o, in), truncated toward zero and wrapped once when negative, is t. An index that is not finite
// or beyond 9e18 in magnitude matches nothing, as on the CPU.
template <typename T>
__device__ inline void tb_dm_onehot(const void *a, const void *c, void *y, tb_index n, const tb_dm &d) {
  const T *values = (const T *)c;
  T *o = (T *)y;
  tb_index depth = d.p[1], inner = d.p[2];
  TB_GRID_LOOP(i, n) {
    tb_index in = i % inner, t = (i / inner) % depth, outer = i / (inner * depth);
    tb_dm_value v = tb_dm_load(a, d.mode, outer * inner + in);
    double f = v.integer ? (double)v.i : v.f;
    bool usable = f == f && f < 9e18 && f > -9e18;
    tb_index k = usable ? (tb_index)f : -1 - depth;
    if (k < 0 && k >= -depth) k += depth;
    o[i] = values[k == t ? 1 : 0];
  }
}

// GatherND (p: k, slice, tuples per batch, elements per batch of the data; dims[0..k): the indexed dims,
// st[0][0..k): their strides; mode: the indices' dtype): y[(b, t), s] = x[b, idx[b, t, 0..k), s] (c: the flag of
// a bad index, whose element is written 0).
template <typename T>
__device__ inline void tb_dm_gather_nd(const void *a, const void *b, const void *c, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  tb_index k = d.p[0], slice = d.p[1], tuples = d.p[2], per_batch = d.p[3];
  TB_GRID_LOOP(i, n) {
    tb_index s = i % slice, row = i / slice, off = row / tuples * per_batch;
    bool bad = false;
    for (tb_index j = 0; j < k; j++) {
      tb_index cc = tb_dm_index_checked(b, d.mode, row * k + j, d.dims[j], c);
      bad = bad || cc < 0;
      off += cc * d.st[0][j];
    }
    o[i] = bad ? (T)0 : x[off + s];
  }
}

// Written out: the build lists the kernels by their literal names.
extern "C" __global__ void tb_cu_dm_trilu_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_trilu<unsigned char>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_trilu_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_trilu<unsigned short>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_trilu_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_trilu<unsigned int>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_trilu_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_trilu<unsigned long long>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_reverse_sequence_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_reverse_sequence<unsigned char>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_reverse_sequence_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_reverse_sequence<unsigned short>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_reverse_sequence_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_reverse_sequence<unsigned int>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_reverse_sequence_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_reverse_sequence<unsigned long long>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_onehot_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_onehot<unsigned char>(a, c, y, n, d))
extern "C" __global__ void tb_cu_dm_onehot_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_onehot<unsigned short>(a, c, y, n, d))
extern "C" __global__ void tb_cu_dm_onehot_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_onehot<unsigned int>(a, c, y, n, d))
extern "C" __global__ void tb_cu_dm_onehot_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_onehot<unsigned long long>(a, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_nd_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_nd<unsigned char>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_nd_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_nd<unsigned short>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_nd_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_nd<unsigned int>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_nd_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_nd<unsigned long long>(a, b, c, y, n, d))

// ---- The scatters' reductions: mode = dtype | reduction << 8 | index dtype << 16, reduction 1 add, 2 mul,
// 3 min, 4 max (0: none, the update replaces), as the CPU's scatter.c computes them: floats of up to 4 bytes in float (through double, which
// rounds to the same float), float64 in double, integers wrapping (add, mul) or compared signed (u8 as
// unsigned), bool as or (add, max) and and (mul, min); a NaN update leaves min and max alone. ----

__device__ inline double tb_dm_combine(double a, double b, int red) {
  return red == 1 ? a + b : red == 2 ? a * b : red == 3 ? (b < a ? b : a) : (b > a ? b : a);
}

// y[at] = reduce(y[at], u[j]); reduction 0 (Scatter) replaces it by its bytes.
__device__ inline void tb_dm_reduce_into(void *y, tb_index at, const void *u, tb_index j, int mode) {
  int dt = mode & 0xff, red = (mode >> 8) & 0xff;
  if (red == 0) {
    if (dt == TB_DT_F64 || dt == TB_DT_I64) ((unsigned long long *)y)[at] = ((const unsigned long long *)u)[j];
    else if (dt == TB_DT_F32 || dt == TB_DT_I32) ((unsigned int *)y)[at] = ((const unsigned int *)u)[j];
    else if (dt == TB_DT_F16 || dt == TB_DT_BF16 || dt == TB_DT_I16) ((unsigned short *)y)[at] = ((const unsigned short *)u)[j];
    else ((unsigned char *)y)[at] = ((const unsigned char *)u)[j];
    return;
  }
  tb_dm_value a = tb_dm_load(y, dt, at), b = tb_dm_load(u, dt, j);
  if (dt == TB_DT_BOOL) {
    a.i = red == 1 || red == 4 ? (a.i | b.i) : (a.i & b.i);
  } else if (a.integer) {
    unsigned long long x = (unsigned long long)a.i, v = (unsigned long long)b.i;
    if (red == 1) a.i = (long long)(x + v);
    if (red == 2) a.i = (long long)(x * v);
    if (red == 3 && b.i < a.i) a.i = b.i;
    if (red == 4 && b.i > a.i) a.i = b.i;
  } else if (dt == TB_DT_F64) {
    a.f = tb_dm_combine(a.f, b.f, red);
  } else {
    a.f = (double)(float)tb_dm_combine((double)(float)a.f, (double)(float)b.f, red);
  }
  tb_dm_store(y, dt, at, a);
}

// ScatterElements with a reduction, on y holding the data (dims: the indices' shape with the axis' dim 1,
// st[3]: y's strides; p: axis, axis_len, the indices' axis length, the indices' stride along the axis): one
// thread per line of the indices along the axis, its updates applied in order (c: the flag of a bad index, whose
// update is skipped).
extern "C" __global__ void tb_cu_dm_scatter_elements_reduce(TB_DM_PARAMS) {
  TB_DM_USE();
  int idt = (d.mode >> 16) & 0xff;
  tb_index axis = d.p[0], axis_len = d.p[1], len = d.p[2], step = d.p[3];
  TB_GRID_LOOP(line, n) {
    tb_index rem = line, first = 0, base = 0, mul = 1;
    for (int r = d.rank - 1; r >= 0; r--) {
      tb_index cc = rem % d.dims[r];
      rem /= d.dims[r];
      if (r != axis) base += cc * d.st[3][r];
      first += cc * mul; // the line's first element in the indices (its axis coordinate is 0)
      mul *= r == axis ? len : d.dims[r];
    }
    for (tb_index t = 0; t < len; t++) {
      tb_index j = first + t * step, k = tb_dm_index_checked(b, idt, j, axis_len, c);
      if (k >= 0) tb_dm_reduce_into(y, base + k * d.st[3][axis], a, j, d.mode);
    }
  }
}

// ScatterND with a reduction, on y holding the data (dims[0..k): the indexed dims, st[3][0..k): their strides;
// p: k, slice, rows): one thread per position of the slice, the rows applied in order (c: the flag of a bad index,
// whose row is skipped). The host runs it for a single row; more rows go to 73_scatter_nd.cu, parallel over them.
extern "C" __global__ void tb_cu_dm_scatter_nd_reduce(TB_DM_PARAMS) {
  TB_DM_USE();
  int idt = (d.mode >> 16) & 0xff;
  tb_index k = d.p[0], slice = d.p[1], rows = d.p[2];
  TB_GRID_LOOP(s, n) {
    for (tb_index m = 0; m < rows; m++) {
      tb_index off = 0;
      bool bad = false;
      for (tb_index j = 0; j < k; j++) {
        tb_index cc = tb_dm_index_checked(b, idt, m * k + j, d.dims[j], c);
        bad = bad || cc < 0;
        off += cc * d.st[3][j];
      }
      if (!bad) tb_dm_reduce_into(y, off + s, a, m * slice + s, d.mode);
    }
  }
}

// ---- NonZero: the input cut into n chunks of p[1] elements (p[0] in all; mode: its dtype). A value counts
// when it is not zero (floats: -0 is zero, NaN is not). ----

__device__ inline bool tb_dm_nonzero(const void *x, int dt, tb_index i) {
  tb_dm_value v = tb_dm_load(x, dt, i);
  return v.integer ? v.i != 0 : v.f != 0.0;
}

// y[ch] = the count of chunk ch (ch < n). The last block to finish (its ticket, a 32-bit atomicAdd on y[n + 1], which
// the host zeroes before the launch, is the grid's last) turns the counts into each chunk's first column in place (an
// exclusive scan: each thread a contiguous run of chunks, the runs' sums scanned by thread 0) and writes the total at
// y[n]: the host reads that one word to size the output, and the fill reads the starts where they are.
extern "C" __global__ void tb_cu_dm_nonzero_count(TB_DM_PARAMS) {
  TB_DM_USE();
  long long *counts = (long long *)y;
  tb_index total = d.p[0], chunk = d.p[1];
  TB_GRID_LOOP(ch, n) {
    tb_index end = (ch + 1) * chunk < total ? (ch + 1) * chunk : total, count = 0;
    for (tb_index i = ch * chunk; i < end; i++) count += tb_dm_nonzero(a, d.mode, i);
    counts[ch] = count;
  }
  __shared__ bool last;
  __shared__ long long runs[1024];
  __threadfence(); // this block's counts visible to the grid before its ticket
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd((unsigned *)(counts + n + 1), 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  volatile long long *cs = counts; // read past any cache: the other blocks wrote them
  tb_index per = (n + blockDim.x - 1) / blockDim.x, first = threadIdx.x * per, end = first + per < n ? first + per : n;
  long long sum = 0;
  for (tb_index i = first; i < end; i++) sum += cs[i];
  runs[threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long at = 0;
    for (unsigned t = 0; t < blockDim.x; t++) {
      long long v = runs[t];
      runs[t] = at;
      at += v;
    }
    cs[n] = at;
  }
  __syncthreads();
  long long at = runs[threadIdx.x];
  for (tb_index i = first; i < end; i++) {
    long long v = cs[i];
    cs[i] = at;
    at += v;
  }
}

// y [rank, p[2]] (int64): chunk ch writes the coordinates (dims: the input's shape) of its values from column
// b[ch] (the counts before it) on, in order.
extern "C" __global__ void tb_cu_dm_nonzero_fill(TB_DM_PARAMS) {
  TB_DM_USE();
  const long long *starts = (const long long *)b;
  long long *o = (long long *)y;
  tb_index total = d.p[0], chunk = d.p[1], count = d.p[2];
  TB_GRID_LOOP(ch, n) {
    tb_index end = (ch + 1) * chunk < total ? (ch + 1) * chunk : total, at = starts[ch];
    for (tb_index i = ch * chunk; i < end; i++) {
      if (!tb_dm_nonzero(a, d.mode, i)) continue;
      tb_index rem = i;
      for (int r = d.rank - 1; r >= 0; r--) {
        o[r * count + at] = rem % d.dims[r];
        rem /= d.dims[r];
      }
      at++;
    }
  }
}
