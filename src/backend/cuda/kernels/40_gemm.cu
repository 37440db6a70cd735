// Float32 matrix products, the backend's own (cuBLASLt runs them where it is installed; these run where it
// is absent or refuses a shape): C[b] = act(alpha * A[b] B[b] (or / alpha) + s0 * add0[b] + s1 * add1[b]),
// for every index b of the batch dims, with any element strides, so one kernel covers MatMul with any
// broadcast of its batch dims, Gemm with its transposes and its C, the fused products' bias, residual and
// activation, and the attention's two products (the mask an addend). C is contiguous [batch..., m, n].
//
// tb_cu_gemm_f32: a 1-D grid whose blocks stride over the output's 64 x 64 tiles (batch-major); 256 threads
// per block, each accumulating a 4 x 4 register block of the tile from 16-deep slices of A and B staged in
// shared memory. Any m, n, k (k 0: only the epilogue), any strides (a transpose is a swap of A's strides).
// tb_cu_gemm_epilogue_f32: the same epilogue in place over C (after a cuBLASLt product), any grid.

#define TB_GEMM_TILE 64
#define TB_GEMM_DEPTH 16
#define TB_GEMM_THREADS 256
#define TB_GEMM_MAX_BATCH 6 // TB_MAX_RANK less the two matrix dims

// A product's shape, passed by value (the host mirrors it: cuda_gemm.h, 376 bytes). Element (i, p) of
// A[b] is a[a_off(b) + i * a_rs + p * a_cs], element (p, j) of B[b] is b[b_off(b) + p * b_rs + j * b_cs],
// the addends' (i, j) likewise; X_off(b) sums batch index d times X_batch[d] (0 where X broadcasts).
struct tb_gemm_desc {
  int batch_rank; // 0 to TB_GEMM_MAX_BATCH
  int act;        // TB_ACT_* (00_common.cu)
  tb_index batch_dims[TB_GEMM_MAX_BATCH];
  tb_index a_batch[TB_GEMM_MAX_BATCH], b_batch[TB_GEMM_MAX_BATCH];
  tb_index add0_batch[TB_GEMM_MAX_BATCH], add1_batch[TB_GEMM_MAX_BATCH];
  tb_index batch; // the product of batch_dims (1 for none)
  tb_index m, n, k;
  tb_index a_rs, a_cs, b_rs, b_cs;
  tb_index add0_rs, add0_cs, add1_rs, add1_cs;
  float alpha, add0_scale, add1_scale;
  float act_alpha, act_beta, act_min, act_max;
  int divide; // 1: the product is divided by alpha (the attention's scale_divide), else multiplied
};

__device__ inline float tb_gemm_activate(const tb_gemm_desc &d, float x) {
  return tb_fused_act(d.act, x, d.act_alpha, d.act_beta, d.act_min, d.act_max);
}

// The offsets of product b into A, B and the two addends.
__device__ inline void tb_gemm_batch_offsets(const tb_gemm_desc &d, tb_index b, tb_index *a, tb_index *bo, tb_index *s0,
                                             tb_index *s1) {
  tb_index oa = 0, ob = 0, o0 = 0, o1 = 0;
  for (int r = d.batch_rank - 1; r >= 0; r--) {
    tb_index c = b % d.batch_dims[r];
    b /= d.batch_dims[r];
    oa += c * d.a_batch[r];
    ob += c * d.b_batch[r];
    o0 += c * d.add0_batch[r];
    o1 += c * d.add1_batch[r];
  }
  *a = oa;
  *bo = ob;
  *s0 = o0;
  *s1 = o1;
}

// The epilogue of element (i, j): alpha (or / alpha), the addends, the activation.
__device__ inline float tb_gemm_finish(const tb_gemm_desc &d, float acc, const float *add0, const float *add1, tb_index o0,
                                       tb_index o1, tb_index i, tb_index j) {
  float v = d.divide ? acc / d.alpha : acc * d.alpha;
  if (add0) v += d.add0_scale * add0[o0 + i * d.add0_rs + j * d.add0_cs];
  if (add1) v += d.add1_scale * add1[o1 + i * d.add1_rs + j * d.add1_cs];
  return tb_gemm_activate(d, v);
}

// Element i of an fp32 operand as fp32 (41_gemm_lowp.cu has the 16-bit ones).
struct tb_gemm_load_f32 {
  __device__ float operator()(const float *p, tb_index i) const { return p[i]; }
};

// The tiled product over operands of type T read as fp32 by Load, accumulated in fp32: tb_cu_gemm_f32 and the
// reduced-precision kernels of 41_gemm_lowp.cu. Called by every thread of a 256-thread block. c16 (NULL: none):
// C written again as bf16 (c16_f16 0) or fp16 (1), rounded to nearest even as tb_cu_dm_cast rounds it (a consumer's
// conversion fused into this product: 41_gemm_lowp.cu's _out16 kernels).
template <typename T, typename Load>
__device__ void tb_gemm_tiled(const T *__restrict__ a, const T *__restrict__ b, float *__restrict__ c,
                              const float *__restrict__ add0, const float *__restrict__ add1, const tb_gemm_desc &d,
                              unsigned short *__restrict__ c16 = 0, int c16_f16 = 0) {
  const Load load{};
  __shared__ float as[TB_GEMM_DEPTH][TB_GEMM_TILE + 4]; // as[p][i]: A's slice, k-major
  __shared__ float bs[TB_GEMM_DEPTH][TB_GEMM_TILE + 4]; // bs[p][j]
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const tb_index tiles_m = (d.m + TB_GEMM_TILE - 1) / TB_GEMM_TILE, tiles_n = (d.n + TB_GEMM_TILE - 1) / TB_GEMM_TILE;
  const tb_index tiles = d.batch * tiles_m * tiles_n;
  // Which elements of a slice each thread loads: along the operand's unit stride, so neighbouring threads
  // read neighbouring addresses (a row-major A walks p, a transposed one i).
  const bool a_along_k = d.a_cs == 1, b_along_n = d.b_cs == 1;
  for (tb_index tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const tb_index batch = tile / (tiles_m * tiles_n), rest = tile % (tiles_m * tiles_n);
    const tb_index i0 = rest / tiles_n * TB_GEMM_TILE, j0 = rest % tiles_n * TB_GEMM_TILE;
    tb_index oa, ob, o0, o1;
    tb_gemm_batch_offsets(d, batch, &oa, &ob, &o0, &o1);
    float acc[4][4];
    for (int r = 0; r < 4; r++)
      for (int s = 0; s < 4; s++) acc[r][s] = 0.0f;
    for (tb_index p0 = 0; p0 < d.k; p0 += TB_GEMM_DEPTH) {
      for (int e = tid; e < TB_GEMM_DEPTH * TB_GEMM_TILE; e += TB_GEMM_THREADS) {
        int p = a_along_k ? e % TB_GEMM_DEPTH : e / TB_GEMM_TILE, i = a_along_k ? e / TB_GEMM_DEPTH : e % TB_GEMM_TILE;
        tb_index gi = i0 + i, gp = p0 + p;
        as[p][i] = gi < d.m && gp < d.k ? load(a, oa + gi * d.a_rs + gp * d.a_cs) : 0.0f;
        p = b_along_n ? e / TB_GEMM_TILE : e % TB_GEMM_DEPTH;
        int j = b_along_n ? e % TB_GEMM_TILE : e / TB_GEMM_DEPTH;
        tb_index gj = j0 + j;
        gp = p0 + p;
        bs[p][j] = gj < d.n && gp < d.k ? load(b, ob + gp * d.b_rs + gj * d.b_cs) : 0.0f;
      }
      __syncthreads();
      for (int p = 0; p < TB_GEMM_DEPTH; p++) {
        float ra[4], rb[4];
        for (int r = 0; r < 4; r++) ra[r] = as[p][ty + 16 * r];
        for (int s = 0; s < 4; s++) rb[s] = bs[p][tx + 16 * s];
        for (int r = 0; r < 4; r++)
          for (int s = 0; s < 4; s++) acc[r][s] += ra[r] * rb[s];
      }
      __syncthreads(); // the slice is read: the next one may overwrite it
    }
    float *cb = c + batch * d.m * d.n;
    for (int r = 0; r < 4; r++) {
      tb_index i = i0 + ty + 16 * r;
      if (i >= d.m) continue;
      for (int s = 0; s < 4; s++) {
        tb_index j = j0 + tx + 16 * s;
        if (j >= d.n) continue;
        float v = tb_gemm_finish(d, acc[r][s], add0, add1, o0, o1, i, j);
        cb[i * d.n + j] = v;
        if (c16) c16[batch * d.m * d.n + i * d.n + j] = c16_f16 ? tb_f32_to_f16(v) : tb_f32_to_bf16(v);
      }
    }
  }
}

extern "C" __global__ void tb_cu_gemm_f32(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
                                          const float *__restrict__ add0, const float *__restrict__ add1, tb_gemm_desc d) {
  tb_gemm_tiled<float, tb_gemm_load_f32>(a, b, c, add0, add1, d);
}

extern "C" __global__ void tb_cu_gemm_epilogue_f32(float *__restrict__ c, const float *__restrict__ add0,
                                                   const float *__restrict__ add1, tb_gemm_desc d) {
  const tb_index mn = d.m * d.n;
  TB_GRID_LOOP(e, d.batch * mn) {
    tb_index oa, ob, o0, o1;
    tb_gemm_batch_offsets(d, e / mn, &oa, &ob, &o0, &o1);
    tb_index i = e % mn / d.n, j = e % d.n;
    c[e] = tb_gemm_finish(d, c[e], add0, add1, o0, o1, i, j);
  }
}
