// The CUDA kernels' shared part: the index type, grid-stride loops, the broadcast layout, and warp and
// block reductions. All kernels are written in the part of CUDA C that hipRTC also compiles (docs/cuda.md):
// no #include (NVRTC has no standard headers unless told where they are), no inline PTX, no cooperative
// groups, no cub; warp shuffles only through TB_SHFL_XOR; the warp size is read from warpSize (32 on NVIDIA,
// 64 on most AMD GPUs), never assumed. The files of this folder are compiled as one source, in name order.

#if defined(__HIPCC_RTC__) || defined(__HIP_DEVICE_COMPILE__)
#define TB_SHFL_XOR(v, mask) __shfl_xor((v), (mask))
#else
#define TB_SHFL_XOR(v, mask) __shfl_xor_sync(0xffffffffu, (v), (mask))
#endif

typedef long long tb_index; // element counts and offsets: tensors may hold more than 2^31 elements

#define TB_INF __int_as_float(0x7f800000)
#define TB_MAX_RANK 8
#define TB_MAX_WARPS 32 // blockDim.x <= 1024 and warpSize >= 32

// The device's checks of its inputs (cuda_index_flag.c): a check's flag is ten ints, [0] set by a kernel that found
// bad input, [1] the number of the node's call in the run (written by the host before each call), [2..3] the address
// of the run-wide word of the model's run (0: none), set with it, so that the host reads that one word at each of the
// run's synchronisations and the nodes' flags only when it is set; [4..9] the first bad input of the run (all ones:
// none): three 64-bit atomicMin words, (call, position), (position, the value's low 32 bits), (position, its high
// 32 bits). Only the first bad call writes them (a later call finds an earlier call in the first), and a position
// has one value, so the three agree: the host names the first bad call's first bad position and its value, as the
// CPU (which stops there) does.
#ifndef TB_DEVICE_ADDRESS
#define TB_DEVICE_ADDRESS(a) (a) // the host emulator (tests/cuda_emu) maps the fake driver's addresses to its memory
#endif
__device__ inline void tb_flag_raise(const void *flag) {
  int *f = static_cast<int *>(const_cast<void *>(flag));
  f[0] = 1;
  unsigned long long word = (unsigned long long)(unsigned)f[2] | ((unsigned long long)(unsigned)f[3] << 32);
  if (word) *reinterpret_cast<int *>(TB_DEVICE_ADDRESS(word)) = 1;
}

// The flag raised for the input at `position` holding `value`, recorded when it is the run's first bad one.
__device__ inline void tb_flag_raise_at(const void *flag, long long position, long long value) {
  int *f = static_cast<int *>(const_cast<void *>(flag));
  unsigned long long call = (unsigned)f[1];
  unsigned long long at = position < 0xffffffffll ? (unsigned long long)position : 0xffffffffull; // all ones: too far
  unsigned long long *first = reinterpret_cast<unsigned long long *>(f + 4);
  if ((first[0] >> 32) >= call) { // no earlier call found a bad input
    atomicMin(&first[0], call << 32 | at);
    if (at != 0xffffffffull) {
      atomicMin(&first[1], at << 32 | ((unsigned long long)value & 0xffffffffull));
      atomicMin(&first[2], at << 32 | ((unsigned long long)value >> 32));
    }
  }
  tb_flag_raise(flag);
}

// for (tb_index i = ...) over [0, n) with every thread of the grid.
#define TB_GRID_LOOP(i, n) \
  for (tb_index i = (tb_index)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (tb_index)gridDim.x * blockDim.x)

// A binary operation's broadcast (ONNX multidirectional broadcasting), passed by value: the output's dims,
// outermost first, and for each input the elements to step per unit of each output dim (0 along a dim the
// input broadcasts, its own stride otherwise). The host mirrors this layout: 8 + 3 * 64 bytes.
struct tb_broadcast {
  int rank; // 1 to TB_MAX_RANK
  int unused;
  tb_index dims[TB_MAX_RANK];
  tb_index a_strides[TB_MAX_RANK];
  tb_index b_strides[TB_MAX_RANK];
};

// The offsets into a and b of output element i.
__device__ inline void tb_broadcast_offsets(const tb_broadcast &s, tb_index i, tb_index *a, tb_index *b) {
  tb_index oa = 0, ob = 0;
  for (int d = s.rank - 1; d >= 0; d--) {
    tb_index dim = s.dims[d];
    tb_index c = i % dim;
    i /= dim;
    oa += c * s.a_strides[d];
    ob += c * s.b_strides[d];
  }
  *a = oa;
  *b = ob;
}

struct tb_combine_add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct tb_combine_mul {
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct tb_combine_max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct tb_combine_min {
  __device__ float operator()(float a, float b) const { return fminf(a, b); }
};

// Combine v (a float, or a double: 72_einsum.cu) across the warp; every lane gets the result.
template <typename V, typename Combine>
__device__ inline V tb_warp_reduce(V v, Combine combine) {
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) v = combine(v, TB_SHFL_XOR(v, mask));
  return v;
}

// Combine v across the block; every thread gets the result. Every thread of the block must call it (no
// early return before), and blockDim.x must be a multiple of warpSize, at most 1024.
template <typename V, typename Combine>
__device__ inline V tb_block_reduce(V v, Combine combine, V identity) {
  __shared__ V partial[TB_MAX_WARPS];
  __shared__ V result;
  int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize, warps = blockDim.x / warpSize;
  v = tb_warp_reduce(v, combine);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? partial[lane] : identity;
    v = tb_warp_reduce(v, combine);
    if (lane == 0) result = v;
  }
  __syncthreads();
  v = result;
  __syncthreads(); // partial and result are free again for the next call
  return v;
}

// The activations of the fused nodes' epilogues (products, convolutions), in tb_fused_act_kind's numbering
// (ops/fused/fused_params.h) and as the CPU reference computes them (kernels/fused/fused_epilogue.c):
// alpha is LeakyRelu's slope and HardSigmoid's alpha, beta HardSigmoid's beta, lo and hi Clip's bounds.
#define TB_ACT_NONE 0
#define TB_ACT_RELU 1
#define TB_ACT_LEAKY_RELU 2
#define TB_ACT_CLIP 3
#define TB_ACT_SIGMOID 4
#define TB_ACT_TANH 5
#define TB_ACT_HARD_SIGMOID 6
#define TB_ACT_HARD_SWISH 7
#define TB_ACT_GELU 8
#define TB_ACT_GELU_TANH 9
#define TB_ACT_SILU 10
#define TB_ACT_MISH 11

__device__ inline float tb_clamp01(float v) { return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v; } // NaN stays

__device__ inline float tb_gelu_tanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * (x + 0.044715f * x * x * x)));
}

__device__ inline float tb_fused_act(int act, float x, float alpha, float beta, float lo, float hi) {
  switch (act) {
    case TB_ACT_RELU: return x < 0.0f ? 0.0f : x;
    case TB_ACT_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    case TB_ACT_CLIP: return x < lo ? lo : x > hi ? hi : x;
    case TB_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case TB_ACT_TANH: return tanhf(x);
    case TB_ACT_HARD_SIGMOID: return tb_clamp01(alpha * x + beta);
    case TB_ACT_HARD_SWISH: return x * tb_clamp01(x / 6.0f + 0.5f);
    case TB_ACT_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    case TB_ACT_GELU_TANH: return tb_gelu_tanh(x);
    case TB_ACT_SILU: return x >= 0.0f ? x / (1.0f + expf(-x)) : x * expf(x) / (1.0f + expf(x));
    case TB_ACT_MISH: return x * tanhf(x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)));
    default: return x;
  }
}

// float16 and bfloat16 by their bits (no cuda_fp16.h), rounding to nearest even: Cast (70_data.cu) and the
// reduced-precision products (41_gemm_lowp.cu).
__device__ inline float tb_f16_to_f32(unsigned short h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return __uint_as_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float f = (float)m * 5.9604644775390625e-8f; // m * 2^-24, exact
    return sign ? -f : f;
  }
  return __uint_as_float(sign | ((e + 112u) << 23) | (m << 13));
}

__device__ inline unsigned short tb_f32_to_f16(float f) {
  unsigned x = __float_as_uint(f), sign = x & 0x80000000u;
  x ^= sign;
  unsigned o;
  if (x >= 0x47800000u) { // 65536 and up, inf, NaN
    o = x > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (x < 0x38800000u) { // below 2^-14: a subnormal or zero, rounded by the float addition
    o = __float_as_uint(__uint_as_float(x) + 0.5f) - 0x3f000000u;
  } else {
    unsigned odd = (x >> 13) & 1u;
    x += 0xc8000fffu + odd; // rebias the exponent (-112 << 23) and round half to even
    o = x >> 13;
  }
  return (unsigned short)(o | (sign >> 16));
}

__device__ inline float tb_bf16_to_f32(unsigned short h) { return __uint_as_float((unsigned)h << 16); }

__device__ inline unsigned short tb_f32_to_bf16(float f) {
  unsigned x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u); // NaN stays a quiet NaN
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
