// Data movement, indexing, casts, comparisons, Where and layer normalisation, for every dtype the ops take.
// Every kernel here is named tb_cu_dm_* and has one parameter list: (a, b, c, y, n, tb_dm), three inputs (NULL
// where unused), the output, the element count of the index space and the descriptor below, passed by value.
// Data movement does not look at values, so those kernels come per element size (_b1, _b2, _b4, _b8: bool and
// u8, f16 and bf16, f32 and i32, f64 and i64); kernels that compute (Cast, the comparisons) read the dtypes
// from tb_dm.mode, with the host's tb_dtype numbering (TB_DT_* below). Every kernel takes any grid.

struct tb_dm {
  int rank; // dims used of the index space, 0 to TB_MAX_RANK
  int mode; // per kernel: Pad's mode, Cast's dtypes, the comparison and its dtype, the index dtype
  tb_index dims[TB_MAX_RANK];       // the index space, outermost first
  tb_index st[4][TB_MAX_RANK];      // per operand a, b, c, y: elements to step per unit of each dim (0: broadcast)
  tb_index off[4];                  // per operand: the first element
  tb_index bytes[4];                // per operand: the bytes behind its pointer (for checks; the kernels stay inside)
  tb_index p[4];                    // the kernel's integer scalars
  unsigned long long value;         // a constant's bits (Pad, ConstantOfShape) or a float's (LayerNorm's epsilon)
};

// The host's tb_dtype numbering (include/tensorbridge/dtype.h; the host checks it with _Static_assert).
#define TB_DT_F64 0
#define TB_DT_F32 1
#define TB_DT_F16 2
#define TB_DT_BF16 3
#define TB_DT_I64 6
#define TB_DT_I32 7
#define TB_DT_I16 8
#define TB_DT_I8 9
#define TB_DT_U8 10
#define TB_DT_BOOL 11

#define TB_DM_PARAMS const void *a, const void *b, const void *c, void *y, tb_index n, tb_dm d
// Not every kernel reads every parameter of the shared list.
#define TB_DM_USE() ((void)a, (void)b, (void)c, (void)y, (void)n, (void)d)

// The offsets of index i into operands 0 to count - 1.
__device__ inline void tb_dm_offsets(const tb_dm &d, tb_index i, int count, tb_index *off) {
  for (int k = 0; k < count; k++) off[k] = d.off[k];
  for (int r = d.rank - 1; r >= 0; r--) {
    tb_index dim = d.dims[r], c = i % dim;
    i /= dim;
    for (int k = 0; k < count; k++) off[k] += c * d.st[k][r];
  }
}

// ---- Strided copies: Transpose, Slice, Concat, Split, Expand, Tile (y's strides place it: Concat) ----

template <typename T>
__device__ inline void tb_dm_copy(const void *a, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  TB_GRID_LOOP(i, n) {
    tb_index off[4];
    tb_dm_offsets(d, i, 4, off);
    o[off[3]] = x[off[0]];
  }
}

// A batch of [R, C] matrices transposed to [C, R] (dims: batch, R, C; both contiguous) through 32 x 33 tiles
// of shared memory, so reads and writes both run along rows. blockDim.x a multiple of 32; each block takes
// tiles in turn.
template <typename T>
__device__ inline void tb_dm_transpose(const void *a, void *y, const tb_dm &d) {
  __shared__ T tile[32][33];
  const T *x = (const T *)a;
  T *o = (T *)y;
  tb_index batch = d.dims[0], R = d.dims[1], C = d.dims[2];
  tb_index tr = (R + 31) / 32, tc = (C + 31) / 32, tiles = batch * tr * tc;
  int tx = threadIdx.x % 32, ty = threadIdx.x / 32, rows = blockDim.x / 32;
  for (tb_index t = blockIdx.x; t < tiles; t += gridDim.x) {
    tb_index bi = t / (tr * tc), rest = t % (tr * tc), r0 = rest / tc * 32, c0 = rest % tc * 32;
    const T *xb = x + bi * R * C;
    T *yb = o + bi * R * C;
    for (int k = ty; k < 32; k += rows) {
      tb_index r = r0 + k, col = c0 + tx;
      if (r < R && col < C) tile[k][tx] = xb[r * C + col];
    }
    __syncthreads();
    for (int k = ty; k < 32; k += rows) {
      tb_index col = c0 + k, r = r0 + tx;
      if (r < R && col < C) yb[col * R + r] = tile[tx][k];
    }
    __syncthreads();
  }
}

// Pad: y (dims: the output) reads the input at its coordinate minus the begin pad (st[1]: the input's dims,
// st[2]: the begin pads, st[0]: the input's strides), mapped back inside by the mode (1 reflect, 2 edge), or
// is the constant (mode 0): the one element of b (the constant_value input, read here on the device, so the host
// never waits for it) when given, else value's bits (the attribute of opsets before 11, or 0).
template <typename T>
__device__ inline void tb_dm_pad(const void *a, const void *b, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  const T constant = b ? *(const T *)b : (T)d.value;
  TB_GRID_LOOP(i, n) {
    tb_index rem = i, off = d.off[0];
    bool fill = false;
    for (int r = d.rank - 1; r >= 0; r--) {
      tb_index cc = rem % d.dims[r], dim = d.st[1][r];
      rem /= d.dims[r];
      tb_index s = cc - d.st[2][r];
      if (s < 0 || s >= dim) {
        if (d.mode == 0 || dim == 0) {
          fill = true;
          s = 0;
        } else if (d.mode == 2 || dim == 1) {
          s = s < 0 ? 0 : dim - 1;
        } else {
          tb_index period = 2 * (dim - 1);
          s %= period;
          if (s < 0) s += period;
          if (s >= dim) s = period - s;
        }
      }
      off += s * d.st[0][r];
    }
    o[i] = fill ? constant : x[off];
  }
}

template <typename T>
__device__ inline void tb_dm_fill(void *y, tb_index n, const tb_dm &d) {
  T *o = (T *)y;
  TB_GRID_LOOP(i, n) o[i] = (T)d.value;
}

// ---- Indexing: int32 or int64 indices (mode: TB_DT_I32 or TB_DT_I64), negatives counted from the end. The
// device checks them: an index outside its dim sets the flag c (when given) and its element is written 0
// (gathers) or not written (scatters); the host names it at the run's next synchronisation. ----

__device__ inline tb_index tb_dm_index(const void *p, int dtype, tb_index i, tb_index dim) {
  tb_index k = dtype == TB_DT_I32 ? (tb_index)((const int *)p)[i] : ((const long long *)p)[i];
  return k < 0 ? k + dim : k;
}

// Index i of the indices made non-negative and checked against dim: -1 for one outside [-dim, dim), which also
// sets the int32 flag (when given) that the host reads at the run's next synchronisation to name it.
__device__ inline tb_index tb_dm_index_checked(const void *p, int dtype, tb_index i, tb_index dim, const void *flag) {
  tb_index k = tb_dm_index(p, dtype, i, dim);
  if (k >= 0 && k < dim) return k;
  if (flag) tb_flag_raise_at(flag, i, tb_dm_index(p, dtype, i, 0)); // the index as given (dim 0: not made positive)
  return -1;
}

// GatherElements' and ScatterElements' walk of the indices tensor (dims: its shape; p: axis, axis_len): the offset,
// by strides st, of element i's coordinates with the one on the axis replaced by idx[i] (checked against
// axis_len); -1 for a bad index, which also sets the flag c (when given).
__device__ inline tb_index tb_dm_element_offset(const void *idx, const void *c, tb_index i, const tb_dm &d, const tb_index *st) {
  tb_index rem = i, off = 0;
  for (int r = d.rank - 1; r >= 0; r--) {
    tb_index cc = rem % d.dims[r];
    rem /= d.dims[r];
    if (r == d.p[0] && (cc = tb_dm_index_checked(idx, d.mode, i, d.p[1], c)) < 0) return -1;
    off += cc * st[r];
  }
  return off;
}

// Gather along one axis: y[o, j, in] = a[o, idx[j], in] (p: axis_len, n_idx, inner). The device checks the
// indices: one outside [-axis_len, axis_len) gives 0 and sets the int32 flag c (when given), which the host reads
// at the end of the run to name it.
template <typename T>
__device__ inline void tb_dm_gather(const void *a, const void *b, const void *c, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  tb_index axis_len = d.p[0], n_idx = d.p[1], inner = d.p[2];
  TB_GRID_LOOP(i, n) {
    tb_index in = i % inner, t = i / inner, j = t % n_idx, outer = t / n_idx, k = tb_dm_index(b, d.mode, j, axis_len);
    if (k < 0 || k >= axis_len) {
      o[i] = (T)0;
      if (c) tb_flag_raise_at(c, j, tb_dm_index(b, d.mode, j, 0)); // the index as given (dim 0: not made positive)
      continue;
    }
    o[i] = x[(outer * axis_len + k) * inner + in];
  }
}

// GatherElements (dims: the indices' shape; st[0]: the data's strides; p: axis, axis_len): y[i] is the data
// at i's coordinates with the one on the axis replaced by idx[i] (c: the flag of a bad index).
template <typename T>
__device__ inline void tb_dm_gather_elements(const void *a, const void *b, const void *c, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  TB_GRID_LOOP(i, n) {
    tb_index off = tb_dm_element_offset(b, c, i, d, d.st[0]);
    o[i] = off < 0 ? (T)0 : x[off];
  }
}

// ScatterElements without reduction, on y already holding the data: y at the coordinates of updates element
// i, the axis' one replaced by idx[i], is a[i] (dims: the indices' shape; st[3]: y's strides; p: axis,
// axis_len; c: the flag of a bad index).
template <typename T>
__device__ inline void tb_dm_scatter_elements(const void *a, const void *b, const void *c, void *y, tb_index n, const tb_dm &d) {
  const T *u = (const T *)a;
  T *o = (T *)y;
  TB_GRID_LOOP(i, n) {
    tb_index off = tb_dm_element_offset(b, c, i, d, d.st[3]);
    if (off >= 0) o[off] = u[i];
  }
}

// ScatterND without reduction, on y already holding the data: indices [m, k] (int64), updates [m, slice]; the
// first k dims of the data are dims[0..k) with strides st[3] (p: k, slice).
template <typename T>
__device__ inline void tb_dm_scatter_nd(const void *a, const void *b, const void *c, void *y, tb_index n, const tb_dm &d) {
  const T *u = (const T *)a;
  T *o = (T *)y;
  tb_index k = d.p[0], slice = d.p[1];
  TB_GRID_LOOP(i, n) {
    tb_index m = i / slice, s = i % slice, off = 0;
    bool bad = false;
    for (tb_index j = 0; j < k; j++) {
      tb_index cc = tb_dm_index_checked(b, d.mode, m * k + j, d.dims[j], c);
      bad = bad || cc < 0;
      off += cc * d.st[3][j];
    }
    if (!bad) o[off + s] = u[i];
  }
}

// Where: y[i] = cond ? b : c, the three broadcast to y (st[0..2]; y contiguous).
template <typename T>
__device__ inline void tb_dm_where(const void *a, const void *b, const void *c, void *y, tb_index n, const tb_dm &d) {
  const unsigned char *cond = (const unsigned char *)a;
  const T *x = (const T *)b, *z = (const T *)c;
  T *o = (T *)y;
  TB_GRID_LOOP(i, n) {
    tb_index off[3];
    tb_dm_offsets(d, i, 3, off);
    o[i] = cond[off[0]] ? x[off[1]] : z[off[2]];
  }
}

// The kernels by element size (written out: the build lists the kernels by their literal names).
#define TB_DM_BODY(call) { TB_DM_USE(); call; }
extern "C" __global__ void tb_cu_dm_copy_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_copy<unsigned char>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_copy_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_copy<unsigned short>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_copy_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_copy<unsigned int>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_copy_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_copy<unsigned long long>(a, y, n, d))
extern "C" __global__ void tb_cu_dm_transpose_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_transpose<unsigned char>(a, y, d))
extern "C" __global__ void tb_cu_dm_transpose_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_transpose<unsigned short>(a, y, d))
extern "C" __global__ void tb_cu_dm_transpose_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_transpose<unsigned int>(a, y, d))
extern "C" __global__ void tb_cu_dm_transpose_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_transpose<unsigned long long>(a, y, d))
extern "C" __global__ void tb_cu_dm_pad_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_pad<unsigned char>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_pad_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_pad<unsigned short>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_pad_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_pad<unsigned int>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_pad_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_pad<unsigned long long>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_fill_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_fill<unsigned char>(y, n, d))
extern "C" __global__ void tb_cu_dm_fill_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_fill<unsigned short>(y, n, d))
extern "C" __global__ void tb_cu_dm_fill_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_fill<unsigned int>(y, n, d))
extern "C" __global__ void tb_cu_dm_fill_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_fill<unsigned long long>(y, n, d))
extern "C" __global__ void tb_cu_dm_gather_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather<unsigned char>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather<unsigned short>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather<unsigned int>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather<unsigned long long>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_elements_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_elements<unsigned char>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_elements_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_elements<unsigned short>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_elements_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_elements<unsigned int>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_gather_elements_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_gather_elements<unsigned long long>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_elements_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_elements<unsigned char>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_elements_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_elements<unsigned short>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_elements_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_elements<unsigned int>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_elements_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_elements<unsigned long long>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_nd_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_nd<unsigned char>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_nd_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_nd<unsigned short>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_nd_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_nd<unsigned int>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_scatter_nd_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_scatter_nd<unsigned long long>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_where_b1(TB_DM_PARAMS) TB_DM_BODY(tb_dm_where<unsigned char>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_where_b2(TB_DM_PARAMS) TB_DM_BODY(tb_dm_where<unsigned short>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_where_b4(TB_DM_PARAMS) TB_DM_BODY(tb_dm_where<unsigned int>(a, b, c, y, n, d))
extern "C" __global__ void tb_cu_dm_where_b8(TB_DM_PARAMS) TB_DM_BODY(tb_dm_where<unsigned long long>(a, b, c, y, n, d))

// ---- Values of any dtype (float16 and bfloat16 by their bits: 00_common.cu's tb_f16_to_f32 and kin) ----

// A value read as what it is: an integer (ints, bool) or a double (the float types).
struct tb_dm_value {
  bool integer;
  long long i;
  double f;
};

__device__ inline tb_dm_value tb_dm_load(const void *p, int dt, tb_index k) {
  tb_dm_value v = {true, 0, 0.0};
  switch (dt) {
    case TB_DT_F64: v.integer = false, v.f = ((const double *)p)[k]; break;
    case TB_DT_F32: v.integer = false, v.f = ((const float *)p)[k]; break;
    case TB_DT_F16: v.integer = false, v.f = tb_f16_to_f32(((const unsigned short *)p)[k]); break;
    case TB_DT_BF16: v.integer = false, v.f = tb_bf16_to_f32(((const unsigned short *)p)[k]); break;
    case TB_DT_I64: v.i = ((const long long *)p)[k]; break;
    case TB_DT_I32: v.i = ((const int *)p)[k]; break;
    case TB_DT_I16: v.i = ((const short *)p)[k]; break;
    case TB_DT_I8: v.i = ((const signed char *)p)[k]; break;
    case TB_DT_U8: v.i = ((const unsigned char *)p)[k]; break;
    default: v.i = ((const unsigned char *)p)[k] != 0; break; // bool
  }
  return v;
}

// A float to an integer of [lo, hi] as the CPU's tb_convert does it (ONNX Cast): truncated toward zero,
// saturated at the ends, NaN 0.
__device__ inline long long tb_dm_saturate(double f, long long lo, long long hi) {
  if (f != f) return 0;
  if (f <= (double)lo) return lo;
  if (f >= (double)hi + 1.0) return hi;
  return (long long)f;
}

// Store v as dtype dt: floats rounded to nearest even (to float16 / bfloat16 through float32: exact for
// float32 and integers below 2^24, a double rounding is possible from float64 or larger integers), floats to
// integers truncated and saturated, integers to narrower integers wrapped (the low bits), anything to bool as
// != 0 (NaN is true).
__device__ inline void tb_dm_store(void *p, int dt, tb_index k, tb_dm_value v) {
  double f = v.integer ? (double)v.i : v.f;
  switch (dt) {
    case TB_DT_F64: ((double *)p)[k] = f; return;
    case TB_DT_F32: ((float *)p)[k] = v.integer ? (float)v.i : (float)v.f; return;
    case TB_DT_F16: ((unsigned short *)p)[k] = tb_f32_to_f16(v.integer ? (float)v.i : (float)v.f); return;
    case TB_DT_BF16: ((unsigned short *)p)[k] = tb_f32_to_bf16(v.integer ? (float)v.i : (float)v.f); return;
    case TB_DT_BOOL: ((unsigned char *)p)[k] = v.integer ? v.i != 0 : f != 0.0; return;
    default: break;
  }
  switch (dt) {
    case TB_DT_I64: ((long long *)p)[k] = v.integer ? v.i : tb_dm_saturate(f, -9223372036854775807LL - 1, 9223372036854775807LL); return;
    case TB_DT_I32: ((int *)p)[k] = (int)(v.integer ? v.i : tb_dm_saturate(f, -2147483647LL - 1, 2147483647LL)); return;
    case TB_DT_I16: ((short *)p)[k] = (short)(v.integer ? v.i : tb_dm_saturate(f, -32768, 32767)); return;
    case TB_DT_I8: ((signed char *)p)[k] = (signed char)(v.integer ? v.i : tb_dm_saturate(f, -128, 127)); return;
    default: ((unsigned char *)p)[k] = (unsigned char)(v.integer ? v.i : tb_dm_saturate(f, 0, 255)); return;
  }
}

// Cast over n contiguous elements: mode = from | to << 8.
extern "C" __global__ void tb_cu_dm_cast(TB_DM_PARAMS) {
  TB_DM_USE();
  int from = d.mode & 0xff, to = d.mode >> 8;
  TB_GRID_LOOP(i, n) tb_dm_store(y, to, i, tb_dm_load(a, from, i));
}

// Comparisons with broadcasting (st[0], st[1]; y bool, contiguous): mode = op | dtype << 8, op 0 Equal,
// 1 Less, 2 Greater, 3 LessOrEqual, 4 GreaterOrEqual. A NaN compares false, as in C.
extern "C" __global__ void tb_cu_dm_compare(TB_DM_PARAMS) {
  TB_DM_USE();
  int op = d.mode & 0xff, dt = d.mode >> 8;
  unsigned char *o = (unsigned char *)y;
  TB_GRID_LOOP(i, n) {
    tb_index off[2];
    tb_dm_offsets(d, i, 2, off);
    tb_dm_value u = tb_dm_load(a, dt, off[0]), v = tb_dm_load(b, dt, off[1]);
    bool r;
    if (u.integer) {
      r = op == 0 ? u.i == v.i : op == 1 ? u.i < v.i : op == 2 ? u.i > v.i : op == 3 ? u.i <= v.i : u.i >= v.i;
    } else {
      r = op == 0 ? u.f == v.f : op == 1 ? u.f < v.f : op == 2 ? u.f > v.f : op == 3 ? u.f <= v.f : u.f >= v.f;
    }
    o[i] = r;
  }
}

// And, Or, Xor (mode 0, 1, 2) of two bool tensors with broadcasting, Not (mode 3) of a.
extern "C" __global__ void tb_cu_dm_logic(TB_DM_PARAMS) {
  TB_DM_USE();
  const unsigned char *u = (const unsigned char *)a, *v = (const unsigned char *)b;
  unsigned char *o = (unsigned char *)y;
  TB_GRID_LOOP(i, n) {
    tb_index off[2];
    tb_dm_offsets(d, i, 2, off); // Not: b's strides are 0 and b is not read
    bool p = u[off[0]] != 0, q = d.mode == 3 ? false : v[off[1]] != 0;
    o[i] = d.mode == 0 ? (p && q) : d.mode == 1 ? (p || q) : d.mode == 2 ? (p != q) : !p;
  }
}

// LayerNormalization on float32 rows (p: rows, cols; value: epsilon's bits): one block per row, the mean
// and then the variance around it (two passes over the row), y = (x - mean) / sqrt(var + eps) * scale + bias
// with scale and bias (c may be NULL) stepping st[1][0] and st[2][0] (1, or 0 for one value).
extern "C" __global__ void tb_cu_dm_layer_norm_f32(TB_DM_PARAMS) {
  TB_DM_USE();
  const float *x = (const float *)a, *scale = (const float *)b, *bias = (const float *)c;
  float *o = (float *)y;
  tb_index rows = d.p[0], cols = d.p[1], ss = d.st[1][0], bs = d.st[2][0];
  float eps = __uint_as_float((unsigned)d.value);
  for (tb_index row = blockIdx.x; row < rows; row += gridDim.x) {
    const float *xr = x + row * cols;
    float *yr = o + row * cols;
    float sum = 0.0f;
    for (tb_index j = threadIdx.x; j < cols; j += blockDim.x) sum += xr[j];
    float mean = tb_block_reduce(sum, tb_combine_add(), 0.0f) / (float)cols;
    float sq = 0.0f;
    for (tb_index j = threadIdx.x; j < cols; j += blockDim.x) sq += (xr[j] - mean) * (xr[j] - mean);
    float inv = 1.0f / sqrtf(tb_block_reduce(sq, tb_combine_add(), 0.0f) / (float)cols + eps);
    for (tb_index j = threadIdx.x; j < cols; j += blockDim.x)
      yr[j] = (xr[j] - mean) * inv * scale[j * ss] + (bias ? bias[j * bs] : 0.0f);
  }
}

// tb::Gelu's tanh form (the erf form is 10_elementwise.cu's tb_cu_gelu_f32) over n contiguous float32 values:
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
extern "C" __global__ void tb_cu_dm_gelu_tanh_f32(TB_DM_PARAMS) {
  TB_DM_USE();
  const float *x = (const float *)a;
  float *o = (float *)y;
  TB_GRID_LOOP(i, n) {
    float v = x[i];
    o[i] = tb_gelu_tanh(v);
  }
}
