// Einsum's generic contraction (tb_cu_dm_einsum), the equations the GEMM routes do not take (diagonals, labels summed
// within one input, float64, float16, bfloat16, the integers), on 70_data.cu's calling convention (a, b, c, y, n,
// tb_dm): one or two inputs, each output element the sum over the summed labels (at most 4, sizes p[0..3], the
// summed space walked in row-major order) of the product of one element of each input, computed in double as the CPU
// reference does. Each input steps st[0] / st[1] (a / b) per unit of each output label (dims, rank of them) and
// st[2] / st[3] per unit of each summed label: a repeated label adds its axes' strides (a diagonal), an axis of size 1
// steps 0 (the ellipsis' broadcast). mode: the summed labels (bits 0-3), the inputs (4-5), the grouping (6-7), a's,
// b's and y's dtypes (TB_DT_*: bits 8-15, 16-23, 24-31).
//
// The grouping, chosen by the host from the summed space's size: 0, one thread per output summing in the CPU's
// order (short sums: the CPU's bits); 1, one warp per output; 2, one block per output. A warp or a block sums its
// output as a tree in a fixed order (each lane or thread adds the terms s = lane, lane + width, ... in order, then
// the warp's shuffles or the block's tb_block_reduce combine the partial sums in one pattern), so a result is the
// same on every run, but its additions are not the CPU's sequential ones: equal where every partial sum is exact in
// double (integers below 2^53, halves, short floats), else within a few ulps of the sum of |terms| (docs/cuda.md).

#define TB_ES_THREAD 0
#define TB_ES_WARP 1
#define TB_ES_BLOCK 2

// Element k of a tensor of dtype dt as a double (70_data.cu's load; integers exact below 2^53, as the CPU's).
__device__ inline double tb_es_load(const void *p, int dt, tb_index k) {
  tb_dm_value v = tb_dm_load(p, dt, k);
  return v.integer ? (double)v.i : v.f;
}

// The sum stored as dtype dt the way the CPU's tb_convert stores a double: float32 rounded once, the halves rounded
// once (to float rounding to odd, then to nearest even: 12_math.cu's tb_ew_to_odd), the integers truncated and
// saturated (NaN 0).
__device__ inline void tb_es_store(void *p, int dt, tb_index k, double v) {
  switch (dt) {
    case TB_DT_F64: ((double *)p)[k] = v; return;
    case TB_DT_F32: ((float *)p)[k] = (float)v; return;
    case TB_DT_F16: ((unsigned short *)p)[k] = tb_f32_to_f16(tb_ew_to_odd(v)); return;
    case TB_DT_BF16: ((unsigned short *)p)[k] = tb_f32_to_bf16(tb_ew_to_odd(v)); return;
    case TB_DT_I64: ((long long *)p)[k] = tb_dm_saturate(v, -9223372036854775807LL - 1, 9223372036854775807LL); return;
    case TB_DT_I32: ((int *)p)[k] = (int)tb_dm_saturate(v, -2147483647LL - 1, 2147483647LL); return;
    case TB_DT_I16: ((short *)p)[k] = (short)tb_dm_saturate(v, -32768, 32767); return;
    case TB_DT_I8: ((signed char *)p)[k] = (signed char)tb_dm_saturate(v, -128, 127); return;
    default: ((unsigned char *)p)[k] = (unsigned char)tb_dm_saturate(v, 0, 255); return;
  }
}

struct tb_es_add {
  __device__ double operator()(double u, double v) const { return u + v; }
};

// One output's contraction: its offsets into a and b (off), the summed space's terms s = first, first + step, ...
// added in order.
struct tb_es_plan {
  int n_sum, two, dta, dtb;
  tb_index space;
};

__device__ inline double tb_es_partial(const void *a, const void *b, const tb_dm &d, const tb_es_plan &e, const tb_index *off,
                                       tb_index first, tb_index step) {
  double acc = 0.0;
  for (tb_index s = first; s < e.space; s += step) {
    tb_index rem = s, oa = off[0], ob = off[1];
    for (int k = e.n_sum - 1; k >= 0; k--) {
      tb_index at = rem % d.p[k];
      rem /= d.p[k];
      oa += at * d.st[2][k];
      ob += at * d.st[3][k];
    }
    double prod = 1.0 * tb_es_load(a, e.dta, oa);
    if (e.two) prod *= tb_es_load(b, e.dtb, ob);
    acc += prod;
  }
  return acc;
}

extern "C" __global__ void tb_cu_dm_einsum(TB_DM_PARAMS) {
  TB_DM_USE();
  tb_es_plan e = {d.mode & 0xf, ((d.mode >> 4) & 0x3) == 2, (d.mode >> 8) & 0xff, (d.mode >> 16) & 0xff, 1};
  int group = (d.mode >> 6) & 0x3, dty = (d.mode >> 24) & 0xff;
  for (int k = 0; k < e.n_sum; k++) e.space *= d.p[k];
  if (group == TB_ES_BLOCK) { // every thread of the block reaches tb_block_reduce the same number of times
    for (tb_index i = blockIdx.x; i < n; i += gridDim.x) {
      tb_index off[2];
      tb_dm_offsets(d, i, 2, off);
      double acc = tb_block_reduce(tb_es_partial(a, b, d, e, off, threadIdx.x, blockDim.x), tb_es_add(), 0.0);
      if (threadIdx.x == 0) tb_es_store(y, dty, i, acc);
    }
  } else if (group == TB_ES_WARP) { // blockDim.x a multiple of warpSize: a warp's lanes stay together
    tb_index lane = threadIdx.x % warpSize, warp = ((tb_index)blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
    tb_index warps = (tb_index)gridDim.x * blockDim.x / warpSize, rounds = (n + warps - 1) / warps;
    for (tb_index r = 0; r < rounds; r++) { // the whole warp in every round, past n too: the shuffles need every lane
      tb_index i = r * warps + warp, off[2] = {0, 0};
      if (i < n) tb_dm_offsets(d, i, 2, off);
      double acc = tb_warp_reduce(i < n ? tb_es_partial(a, b, d, e, off, lane, warpSize) : 0.0, tb_es_add());
      if (i < n && lane == 0) tb_es_store(y, dty, i, acc);
    }
  } else {
    TB_GRID_LOOP(i, n) {
      tb_index off[2];
      tb_dm_offsets(d, i, 2, off);
      tb_es_store(y, dty, i, tb_es_partial(a, b, d, e, off, 0, 1));
    }
  }
}
