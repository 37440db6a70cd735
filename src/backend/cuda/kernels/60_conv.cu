// Convolutions on float32 NCHW (1 to 3 spatial axes; the host pads fewer axes with size-1 ones): the
// backend's own kernels where cuDNN is absent or refuses the shape. Every kernel of this file and of
// 61_pool_norm.cu takes six pointers, then a tb_cnn_desc by value (0 for a pointer it does not use), and
// any grid (threads stride over the outputs).
//   tb_cu_cnn_conv_f32           (x, w, bias, residual, y, -): one thread per output element, a direct
//                                loop over the group's input channels and the kernel taps, then
//                                y = act(sum + bias[m] + residual): Conv and tb::FusedConv with few
//                                output channels per group (depthwise) or a shallow reduction
//   tb_cu_cnn_conv_igemm_f32     (x, w, bias, residual, y, -): the same as an implicit GEMM in shared-memory
//                                tiles, for the rest
//   tb_cu_cnn_conv_transpose_f32 (x, w, bias, -, y, -): ConvTranspose as a gather: each output element
//                                sums the input positions whose taps land on it (no atomics)
//   tb_cu_cnn_epilogue_f32       (y, bias, residual, -, -, -): y = act(y + bias[m] + residual) in place,
//                                after a cuDNN convolution that did not fuse them
// The direct and implicit-GEMM bodies are templates over the element type of X and W (tb_cnn_conv_direct,
// tb_cnn_conv_igemm): 63_conv_lowp.cu instantiates them for bf16 and fp16 inputs.

// The C mirror is tb_cuda_cnn_desc (kernels/cuda_cnn.h), 384 bytes.
struct tb_cnn_desc {
  tb_index counts[6]; // the 4-byte words each pointer reaches (for the test fake's checks; unused here)
  tb_index n, c, k, groups; // batch, input channels, output channels, groups
  tb_index in[4], out[4], kernel[4], stride[4], dilation[4], pad[4], pad_end[4]; // spatial axes, outermost first
  int rank;  // axes used in the arrays (convolutions: 3; pools: 3; resize: 4)
  int kind;  // pools: 0 max, 1 average; resize: taps per axis (1 nearest, 2 linear, 4 cubic)
  int flag;  // pools: count_include_pad; 16-bit convolutions and their epilogue: the copy y16 written too (0 none, 1 bf16, 2 fp16)
  int act;   // the activation (tb_fused_act_kind's numbering)
  float alpha, beta, lo, hi; // the activation's: LeakyRelu's slope, HardSigmoid's alpha and beta, Clip's bounds
  float eps; // normalizations; resize: the extrapolation value
  float unused_f[3];
  tb_index base[4]; // resize: where each axis's entries start in the tap tables
};

// The activation epilogue of tb::FusedConv, as the CPU reference computes it (kernels/fused/fused_epilogue.c).
__device__ inline float tb_cnn_act(float x, const tb_cnn_desc &d) { return tb_fused_act(d.act, x, d.alpha, d.beta, d.lo, d.hi); }

// The output at i of output channel m from its sum s: act(s + bias[m] + residual[i]), each term when given.
__device__ inline float tb_cnn_finish(float s, const float *bias, tb_index m, const float *residual, tb_index i, const tb_cnn_desc &d) {
  if (bias) s += bias[m];
  if (residual) s += residual[i];
  return tb_cnn_act(s, d);
}

// y[i] = v, and when y16 is given (a consumer's conversion fused into this convolution: cuda_handoff.h) v again as
// bf16 (d.flag 1) or fp16 (d.flag 2), rounded to nearest even as tb_cu_dm_cast rounds it.
__device__ inline void tb_cnn_store(float *y, unsigned short *y16, tb_index i, float v, const tb_cnn_desc &d) {
  y[i] = v;
  if (y16) y16[i] = d.flag == 2 ? tb_f32_to_f16(v) : tb_f32_to_bf16(v);
}

// Element i of an fp32 X or W as fp32 (63_conv_lowp.cu reads bf16 and fp16 ones with 41_gemm_lowp.cu's loads).
struct tb_cnn_load_f32 {
  __device__ float operator()(const float *p, tb_index i) const { return p[i]; }
};

// The direct convolution over X and W of type T read as fp32 by Load, accumulated in fp32: tb_cu_cnn_conv_f32 and
// the reduced-precision kernels of 63_conv_lowp.cu.
template <typename T, typename Load>
__device__ void tb_cnn_conv_direct(const T *__restrict__ x, const T *__restrict__ w, const float *__restrict__ bias,
                                   const float *__restrict__ residual, float *__restrict__ y, unsigned short *__restrict__ y16,
                                   const tb_cnn_desc &d) {
  const Load load{};
  tb_index o_plane = d.out[0] * d.out[1] * d.out[2], i_plane = d.in[0] * d.in[1] * d.in[2];
  tb_index taps = d.kernel[0] * d.kernel[1] * d.kernel[2];
  tb_index cg = d.c / d.groups, mg = d.k / d.groups;
  TB_GRID_LOOP(i, d.n * d.k * o_plane) {
    tb_index op = i % o_plane, m = (i / o_plane) % d.k, b = i / (o_plane * d.k);
    tb_index o2 = op % d.out[2], o1 = (op / d.out[2]) % d.out[1], o0 = op / (d.out[2] * d.out[1]);
    tb_index g = m / mg;
    float s = 0.0f;
    for (tb_index ci = 0; ci < cg; ci++) {
      tb_index px = (b * d.c + g * cg + ci) * i_plane, pw = (m * cg + ci) * taps;
      for (tb_index k0 = 0; k0 < d.kernel[0]; k0++) {
        tb_index p0 = o0 * d.stride[0] + k0 * d.dilation[0] - d.pad[0];
        if (p0 < 0 || p0 >= d.in[0]) continue;
        for (tb_index k1 = 0; k1 < d.kernel[1]; k1++) {
          tb_index p1 = o1 * d.stride[1] + k1 * d.dilation[1] - d.pad[1];
          if (p1 < 0 || p1 >= d.in[1]) continue;
          tb_index row = px + (p0 * d.in[1] + p1) * d.in[2], wrow = pw + (k0 * d.kernel[1] + k1) * d.kernel[2];
          for (tb_index k2 = 0; k2 < d.kernel[2]; k2++) {
            tb_index p2 = o2 * d.stride[2] + k2 * d.dilation[2] - d.pad[2];
            if (p2 >= 0 && p2 < d.in[2]) s += load(x, row + p2) * load(w, wrow + k2);
          }
        }
      }
    }
    tb_cnn_store(y, y16, i, tb_cnn_finish(s, bias, m, residual, i, d), d);
  }
}

// The sixth pointer, y16: Y again in 16 bits (NULL: none), as every convolution kernel and the epilogue take it.
extern "C" __global__ void tb_cu_cnn_conv_f32(const float *__restrict__ x, const float *__restrict__ w,
                                              const float *__restrict__ bias, const float *__restrict__ residual,
                                              float *__restrict__ y, unsigned short *__restrict__ y16, tb_cnn_desc d) {
  tb_cnn_conv_direct<float, tb_cnn_load_f32>(x, w, bias, residual, y, y16, d);
}

// Conv as an implicit GEMM, per (batch, group): Y[m, p] = sum over k of W[m, k] * X'[k, p], m an output
// channel of the group, p an output position, k = (input channel, tap) and X' the input patches (im2col)
// gathered on the fly. A block computes a 64 x 64 tile of Y through 16-deep slices of W and X' staged in
// shared memory, each of its 256 threads 4 x 4 outputs (rows ty + 16 i, columns tx + 16 j); blocks stride
// over the tiles (batch, group, row tile, column tile). blockDim.x must be 256. The epilogue is the direct
// kernel's: bias, residual, activation.
#define TB_IG_BM 64
#define TB_IG_BN 64
#define TB_IG_BK 16
// Over X and W of type T read as fp32 by Load, accumulated in fp32: tb_cu_cnn_conv_igemm_f32 and 63_conv_lowp.cu's.
template <typename T, typename Load>
__device__ void tb_cnn_conv_igemm(const T *__restrict__ x, const T *__restrict__ w, const float *__restrict__ bias,
                                  const float *__restrict__ residual, float *__restrict__ y, unsigned short *__restrict__ y16,
                                  const tb_cnn_desc &d) {
  const Load load{};
  __shared__ float a_tile[TB_IG_BK][TB_IG_BM];
  __shared__ float b_tile[TB_IG_BK][TB_IG_BN];
  tb_index o_plane = d.out[0] * d.out[1] * d.out[2], i_plane = d.in[0] * d.in[1] * d.in[2];
  tb_index taps = d.kernel[0] * d.kernel[1] * d.kernel[2];
  tb_index cg = d.c / d.groups, mg = d.k / d.groups, depth = cg * taps;
  tb_index m_tiles = (mg + TB_IG_BM - 1) / TB_IG_BM, n_tiles = (o_plane + TB_IG_BN - 1) / TB_IG_BN;
  tb_index tiles = d.n * d.groups * m_tiles * n_tiles;
  int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  for (tb_index t = blockIdx.x; t < tiles; t += gridDim.x) {
    tb_index nt = t % n_tiles, rest = t / n_tiles;
    tb_index mt = rest % m_tiles;
    rest /= m_tiles;
    tb_index g = rest % d.groups, b = rest / d.groups;
    tb_index m0 = mt * TB_IG_BM, n0 = nt * TB_IG_BN;
    const tb_index xg = (b * d.c + g * cg) * i_plane, wg = g * mg * depth;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) acc[i][j] = 0.0f;
    for (tb_index k0 = 0; k0 < depth; k0 += TB_IG_BK) {
      for (int e = tid; e < TB_IG_BK * TB_IG_BM; e += blockDim.x) {
        int kk = e / TB_IG_BM, mm = e % TB_IG_BM;
        tb_index m = m0 + mm, k = k0 + kk;
        a_tile[kk][mm] = m < mg && k < depth ? load(w, wg + m * depth + k) : 0.0f;
      }
      for (int e = tid; e < TB_IG_BK * TB_IG_BN; e += blockDim.x) {
        int kk = e / TB_IG_BN, nn = e % TB_IG_BN;
        tb_index p = n0 + nn, k = k0 + kk;
        float v = 0.0f;
        if (p < o_plane && k < depth) {
          tb_index ci = k / taps, tap = k % taps;
          tb_index kw = tap % d.kernel[2], kh = (tap / d.kernel[2]) % d.kernel[1], kd = tap / (d.kernel[2] * d.kernel[1]);
          tb_index ow = p % d.out[2], oh = (p / d.out[2]) % d.out[1], od = p / (d.out[2] * d.out[1]);
          tb_index p0 = od * d.stride[0] + kd * d.dilation[0] - d.pad[0];
          tb_index p1 = oh * d.stride[1] + kh * d.dilation[1] - d.pad[1];
          tb_index p2 = ow * d.stride[2] + kw * d.dilation[2] - d.pad[2];
          if (p0 >= 0 && p0 < d.in[0] && p1 >= 0 && p1 < d.in[1] && p2 >= 0 && p2 < d.in[2])
            v = load(x, xg + ci * i_plane + (p0 * d.in[1] + p1) * d.in[2] + p2);
        }
        b_tile[kk][nn] = v;
      }
      __syncthreads();
      for (int kk = 0; kk < TB_IG_BK; kk++) {
        float a[4], bv[4];
        for (int i = 0; i < 4; i++) a[i] = a_tile[kk][ty + 16 * i];
        for (int j = 0; j < 4; j++) bv[j] = b_tile[kk][tx + 16 * j];
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 4; j++) acc[i][j] += a[i] * bv[j];
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; i++) {
      tb_index m = m0 + ty + 16 * i;
      if (m >= mg) continue;
      tb_index mo = g * mg + m;
      for (int j = 0; j < 4; j++) {
        tb_index p = n0 + tx + 16 * j;
        if (p >= o_plane) continue;
        tb_index at = (b * d.k + mo) * o_plane + p;
        tb_cnn_store(y, y16, at, tb_cnn_finish(acc[i][j], bias, mo, residual, at, d), d);
      }
    }
  }
}

extern "C" __global__ void tb_cu_cnn_conv_igemm_f32(const float *__restrict__ x, const float *__restrict__ w,
                                                    const float *__restrict__ bias, const float *__restrict__ residual,
                                                    float *__restrict__ y, unsigned short *__restrict__ y16, tb_cnn_desc d) {
  tb_cnn_conv_igemm<float, tb_cnn_load_f32>(x, w, bias, residual, y, y16, d);
}

// The input position of output position o through tap k on one axis, or -1 when no input lands there.
__device__ inline tb_index tb_cnn_transpose_source(tb_index o, tb_index k, const tb_cnn_desc &d, int axis) {
  tb_index t = o + d.pad[axis] - k * d.dilation[axis];
  if (t < 0 || t % d.stride[axis] != 0) return -1;
  t /= d.stride[axis];
  return t < d.in[axis] ? t : -1;
}

extern "C" __global__ void tb_cu_cnn_conv_transpose_f32(const float *__restrict__ x, const float *__restrict__ w,
                                                        const float *__restrict__ bias, const float *__restrict__,
                                                        float *__restrict__ y, const float *__restrict__, tb_cnn_desc d) {
  tb_index o_plane = d.out[0] * d.out[1] * d.out[2], i_plane = d.in[0] * d.in[1] * d.in[2];
  tb_index taps = d.kernel[0] * d.kernel[1] * d.kernel[2];
  tb_index cg = d.c / d.groups, mg = d.k / d.groups;
  TB_GRID_LOOP(i, d.n * d.k * o_plane) {
    tb_index op = i % o_plane, m = (i / o_plane) % d.k, b = i / (o_plane * d.k);
    tb_index o2 = op % d.out[2], o1 = (op / d.out[2]) % d.out[1], o0 = op / (d.out[2] * d.out[1]);
    tb_index g = m / mg, mm = m % mg;
    float s = bias ? bias[m] : 0.0f;
    for (tb_index k0 = 0; k0 < d.kernel[0]; k0++) {
      tb_index p0 = tb_cnn_transpose_source(o0, k0, d, 0);
      if (p0 < 0) continue;
      for (tb_index k1 = 0; k1 < d.kernel[1]; k1++) {
        tb_index p1 = tb_cnn_transpose_source(o1, k1, d, 1);
        if (p1 < 0) continue;
        for (tb_index k2 = 0; k2 < d.kernel[2]; k2++) {
          tb_index p2 = tb_cnn_transpose_source(o2, k2, d, 2);
          if (p2 < 0) continue;
          tb_index at = (p0 * d.in[1] + p1) * d.in[2] + p2, tap = (k0 * d.kernel[1] + k1) * d.kernel[2] + k2;
          for (tb_index ci = 0; ci < cg; ci++) {
            tb_index c = g * cg + ci;
            s += x[(b * d.c + c) * i_plane + at] * w[(c * mg + mm) * taps + tap];
          }
        }
      }
    }
    y[i] = s;
  }
}

extern "C" __global__ void tb_cu_cnn_epilogue_f32(float *__restrict__ y, const float *__restrict__ bias,
                                                  const float *__restrict__ residual, const float *__restrict__,
                                                  const float *__restrict__, unsigned short *__restrict__ y16,
                                                  tb_cnn_desc d) {
  tb_index o_plane = d.out[0] * d.out[1] * d.out[2];
  TB_GRID_LOOP(i, d.n * d.k * o_plane) {
    tb_cnn_store(y, y16, i, tb_cnn_finish(y[i], bias, (i / o_plane) % d.k, residual, i, d), d);
  }
}
