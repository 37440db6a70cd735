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

// Combine v across the warp; every lane gets the result.
template <typename Combine>
__device__ inline float tb_warp_reduce(float v, Combine combine) {
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) v = combine(v, TB_SHFL_XOR(v, mask));
  return v;
}

// Combine v across the block; every thread gets the result. Every thread of the block must call it (no
// early return before), and blockDim.x must be a multiple of warpSize, at most 1024.
template <typename Combine>
__device__ inline float tb_block_reduce(float v, Combine combine, float identity) {
  __shared__ float partial[TB_MAX_WARPS];
  __shared__ float result;
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
