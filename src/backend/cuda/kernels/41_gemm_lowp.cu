// Reduced-precision matrix products, the backend's own (cuBLASLt runs them on the tensor cores where it is
// installed; these run where it is absent or refuses a shape), so O3 and --precision bf16 / fp16 keep their
// numbers without cuBLASLt: A and B stored as bf16 or fp16 (the weights converted once at prepare, the
// activations per run by tb_cu_dm_cast), each element widened exactly to fp32 as it is staged, the products
// accumulated in fp32, the epilogue (alpha, addends, activation) in fp32 and C fp32, so the node's neighbours
// stay fp32. The same 64 x 64 tiling as tb_cu_gemm_f32 (40_gemm.cu's tb_gemm_tiled, the same descriptor and
// grid): no tensor-core instructions (mma is NVIDIA-only, outside the hipRTC subset), so these match the
// CPU's bf16 numbers, not cuBLASLt's speed.

struct tb_gemm_load_bf16 {
  __device__ float operator()(const unsigned short *p, tb_index i) const { return tb_bf16_to_f32(p[i]); }
};
struct tb_gemm_load_f16 {
  __device__ float operator()(const unsigned short *p, tb_index i) const { return tb_f16_to_f32(p[i]); }
};

extern "C" __global__ void tb_cu_gemm_bf16(const unsigned short *__restrict__ a, const unsigned short *__restrict__ b,
                                           float *__restrict__ c, const float *__restrict__ add0,
                                           const float *__restrict__ add1, tb_gemm_desc d) {
  tb_gemm_tiled<unsigned short, tb_gemm_load_bf16>(a, b, c, add0, add1, d);
}

extern "C" __global__ void tb_cu_gemm_f16(const unsigned short *__restrict__ a, const unsigned short *__restrict__ b,
                                          float *__restrict__ c, const float *__restrict__ add0,
                                          const float *__restrict__ add1, tb_gemm_desc d) {
  tb_gemm_tiled<unsigned short, tb_gemm_load_f16>(a, b, c, add0, add1, d);
}

// ---- The products writing C in bf16 / fp16 too (a consumer's conversion fused into its producer) ----
// The same kernels with one more pointer, c16 (C's elements again, as bf16 when c16_f16 is 0, else fp16, rounded as
// tb_cu_dm_cast rounds them), so a reduced-precision product reading this C needs no conversion launch of its own.

extern "C" __global__ void tb_cu_gemm_f32_out16(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
                                                const float *__restrict__ add0, const float *__restrict__ add1,
                                                unsigned short *__restrict__ c16, tb_gemm_desc d, int c16_f16) {
  tb_gemm_tiled<float, tb_gemm_load_f32>(a, b, c, add0, add1, d, c16, c16_f16);
}

extern "C" __global__ void tb_cu_gemm_bf16_out16(const unsigned short *__restrict__ a, const unsigned short *__restrict__ b,
                                                 float *__restrict__ c, const float *__restrict__ add0,
                                                 const float *__restrict__ add1, unsigned short *__restrict__ c16,
                                                 tb_gemm_desc d, int c16_f16) {
  tb_gemm_tiled<unsigned short, tb_gemm_load_bf16>(a, b, c, add0, add1, d, c16, c16_f16);
}

extern "C" __global__ void tb_cu_gemm_f16_out16(const unsigned short *__restrict__ a, const unsigned short *__restrict__ b,
                                                float *__restrict__ c, const float *__restrict__ add0,
                                                const float *__restrict__ add1, unsigned short *__restrict__ c16,
                                                tb_gemm_desc d, int c16_f16) {
  tb_gemm_tiled<unsigned short, tb_gemm_load_f16>(a, b, c, add0, add1, d, c16, c16_f16);
}

// 40_gemm.cu's tb_cu_gemm_epilogue_f32 (in place over C after a cuBLASLt product) writing c16 too; with no addend,
// no activation and alpha 1 (cuBLASLt fused the rest) it only writes c16.
extern "C" __global__ void tb_cu_gemm_epilogue_out16(float *__restrict__ c, const float *__restrict__ add0,
                                                     const float *__restrict__ add1, unsigned short *__restrict__ c16,
                                                     tb_gemm_desc d, int c16_f16) {
  const tb_index mn = d.m * d.n;
  TB_GRID_LOOP(e, d.batch * mn) {
    tb_index oa, ob, o0, o1;
    tb_gemm_batch_offsets(d, e / mn, &oa, &ob, &o0, &o1);
    tb_index i = e % mn / d.n, j = e % d.n;
    float v = tb_gemm_finish(d, c[e], add0, add1, o0, o1, i, j);
    c[e] = v;
    c16[e] = c16_f16 ? tb_f32_to_f16(v) : tb_f32_to_bf16(v);
  }
}

// ---- fp8 e4m3 operands with a per-tensor scale (--precision fp8: cuBLASLt's fp8 products read them) ----

// fp32 to fp8 e4m3 ("fn": no infinities, 0x7f / 0xff NaN, largest finite 448), rounding to nearest even and
// saturating at +-448 (ONNX's saturating Cast). Normal numbers from 2^-6, subnormals m * 2^-9 below.
__device__ inline unsigned char tb_f32_to_e4m3(float f) {
  unsigned x = __float_as_uint(f), sign = (x >> 24) & 0x80u;
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return (unsigned char)(sign | 0x7fu); // NaN
  float a = __uint_as_float(x);
  if (a >= 448.0f) return (unsigned char)(sign | 0x7eu);
  if (a < 0.015625f) return (unsigned char)(sign | (unsigned)rintf(a * 512.0f)); // 8 is 2^-6 exactly: 0x08
  x += 0x7ffffu + ((x >> 20) & 1u); // round the 23 mantissa bits to 3, half to even (a carry moves the exponent)
  unsigned v = (x >> 20) - ((127u - 7u) << 3);
  return (unsigned char)(sign | (v > 0x7eu ? 0x7eu : v));
}

// out[b] = the largest |x| (NaN ignored) of the elements block b visits as the grid strides over n; blocks of any
// warp multiple up to 1024 threads. One block gives the whole maximum: the host runs it on the blocks' results.
extern "C" __global__ void tb_cu_lowp_amax_f32(const float *__restrict__ x, float *__restrict__ out, tb_index n) {
  float m = 0.0f;
  TB_GRID_LOOP(i, n) m = fmaxf(m, fabsf(x[i]));
  m = tb_block_reduce(m, tb_combine_max(), 0.0f);
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}

// y = x / s in e4m3 with s = amax / 448 (1 when amax is 0 or not finite), written to scale[0] too, so that
// x is about y * s: the per-tensor scale cuBLASLt multiplies back. x is [rows, cols]; transpose stores y as
// [cols, rows] (a weight B [k, n] becomes [n, k], the layout cuBLASLt's fp8 products read). Any grid.
extern "C" __global__ void tb_cu_lowp_to_e4m3(const float *__restrict__ x, const float *__restrict__ amax,
                                              float *__restrict__ scale, unsigned char *__restrict__ y, tb_index rows,
                                              tb_index cols, tb_index transpose) {
  float m = amax[0];
  float s = m > 0.0f && m < TB_INF ? m / 448.0f : 1.0f;
  if (blockIdx.x == 0 && threadIdx.x == 0) scale[0] = s;
  TB_GRID_LOOP(i, rows * cols) {
    tb_index o = transpose ? i % cols * rows + i / cols : i;
    y[o] = tb_f32_to_e4m3(x[i] / s);
  }
}
