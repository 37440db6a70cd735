// The embedded CUDA kernels (src/backend/cuda/kernels/*.cu, the same files NVRTC compiles) built as host
// C++ over an emulated launch grid, for tests: each GPU thread of a block is a host thread, __syncthreads a
// barrier of the block, a warp shuffle an exchange through memory between two barriers of the warp,
// __shared__ a static (blocks run one after another, launches one at a time). fake_cuda.c calls
// cuda_emu_launch for each launch when FAKE_CUDA_EMULATE names this module, so the tests on the fake GPU
// see the values the kernels' own source computes (DESIGN.md section 8). Not a simulator of the GPU's
// memory model or speed: only of the launch geometry and the block's synchronisation.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace {
struct emu_dim3 {
  unsigned x, y, z;
};
thread_local emu_dim3 threadIdx, blockIdx;
emu_dim3 blockDim, gridDim;
pthread_barrier_t block_barrier;
pthread_barrier_t warp_barriers[32];
float shuffle_slots[1024];
constexpr int warpSize = 32;

void __syncthreads() { pthread_barrier_wait(&block_barrier); }

// The device's 64-bit atomicMin (a check's first bad position: 00_common.cu), on the host's atomics.
unsigned long long atomicMin(unsigned long long *at, unsigned long long v) {
  unsigned long long old = __atomic_load_n(at, __ATOMIC_RELAXED);
  while (v < old && !__atomic_compare_exchange_n(at, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}

float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  unsigned t = threadIdx.x, w = t / warpSize;
  shuffle_slots[t] = v;
  pthread_barrier_wait(&warp_barriers[w]);
  float other = shuffle_slots[t ^ (unsigned)lane_mask];
  pthread_barrier_wait(&warp_barriers[w]);
  return other;
}

double shuffle_slots_f64[1024];
double __shfl_xor_sync(unsigned, double v, int lane_mask) { // 72_einsum.cu's sums
  unsigned t = threadIdx.x, w = t / warpSize;
  shuffle_slots_f64[t] = v;
  pthread_barrier_wait(&warp_barriers[w]);
  double other = shuffle_slots_f64[t ^ (unsigned)lane_mask];
  pthread_barrier_wait(&warp_barriers[w]);
  return other;
}

float __int_as_float(int bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

float __uint_as_float(unsigned bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// Explicitly rounded double arithmetic (76_resize_taps.cu): plain operations here, where nothing contracts them.
double __dadd_rn(double a, double b) { return a + b; }
double __dsub_rn(double a, double b) { return a - b; }
double __dmul_rn(double a, double b) { return a * b; }

long long __double_as_longlong(double f) {
  long long bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}

// A fence (71_index_more.cu's NonZero count: a block's counts before its ticket): blocks run one after another here.
void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// The atomics (32_topk.cu's histograms in shared memory, 73_scatter_nd.cu's marks): the host's.
unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
unsigned atomicMax(unsigned *p, unsigned v) {
  unsigned old = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}

unsigned __float_as_uint(float f) {
  unsigned bits;
  memcpy(&bits, &f, sizeof bits);
  return bits;
}
}  // namespace

#define __global__
#define __device__
#define __shared__ static

// a device address stored in device memory (a check's run-wide word: 00_common.cu) is the fake driver's, its host
// address with FAKE_DEVICE_TAG in the top 16 bits (tests/fakes/fake_devmem.h)
#define TB_DEVICE_ADDRESS(a) ((a) & 0x0000ffffffffffffull)
#include "00_common.cu"
#include "10_elementwise.cu"
#include "12_math.cu"
#include "20_softmax.cu"
#include "30_reduce.cu"
#include "31_index_reduce.cu"
#include "32_topk.cu"
#include "60_conv.cu"
#include "61_pool_norm.cu"
#include "62_lp_lrn.cu"
#include "40_gemm.cu"
#include "41_gemm_lowp.cu"
#include "63_conv_lowp.cu"
#include "45_quant.cu"
#include "50_rnn.cu"
#include "70_data.cu"
#include "71_index_more.cu"
#include "72_einsum.cu"
#include "73_scatter_nd.cu"
#include "76_resize_taps.cu"

namespace {
template <typename... A, std::size_t... I>
void call(void (*kernel)(A...), void **params, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<A>> *>(params[I])...);
}

template <typename F>
struct arity;
template <typename... A>
struct arity<void (*)(A...)> {
  static constexpr std::size_t value = sizeof...(A);
};

template <auto Kernel>
void invoke(void **params) {
  call(Kernel, params, std::make_index_sequence<arity<decltype(Kernel)>::value>{});
}

struct entry {
  const char *name;
  void (*run)(void **params);
};
#define K(name) {#name, &invoke<&name>}
// Every kernel of the .cu files (test_cuda_exec checks this list against the generated name list).
const entry kernels[] = {
    K(tb_cu_relu_f32),
    K(tb_cu_leaky_relu_f32),
    K(tb_cu_elu_f32),
    K(tb_cu_sigmoid_f32),
    K(tb_cu_hard_sigmoid_f32),
    K(tb_cu_silu_f32),
    K(tb_cu_gelu_f32),
    K(tb_cu_softplus_f32),
    K(tb_cu_clip_f32),
    K(tb_cu_tanh_f32),
    K(tb_cu_exp_f32),
    K(tb_cu_log_f32),
    K(tb_cu_sqrt_f32),
    K(tb_cu_reciprocal_f32),
    K(tb_cu_neg_f32),
    K(tb_cu_abs_f32),
    K(tb_cu_erf_f32),
    K(tb_cu_floor_f32),
    K(tb_cu_ceil_f32),
    K(tb_cu_add_f32_flat),
    K(tb_cu_sub_f32_flat),
    K(tb_cu_mul_f32_flat),
    K(tb_cu_div_f32_flat),
    K(tb_cu_pow_f32_flat),
    K(tb_cu_max_f32_flat),
    K(tb_cu_min_f32_flat),
    K(tb_cu_prelu_f32_flat),
    K(tb_cu_add_f32_broadcast),
    K(tb_cu_sub_f32_broadcast),
    K(tb_cu_mul_f32_broadcast),
    K(tb_cu_div_f32_broadcast),
    K(tb_cu_pow_f32_broadcast),
    K(tb_cu_max_f32_broadcast),
    K(tb_cu_min_f32_broadcast),
    K(tb_cu_prelu_f32_broadcast),
    K(tb_cu_softmax_f32_rows),
    K(tb_cu_log_softmax_f32_rows),
    K(tb_cu_softmax_f32_cols),
    K(tb_cu_log_softmax_f32_cols),
    K(tb_cu_reduce_sum_f32_rows),
    K(tb_cu_reduce_mean_f32_rows),
    K(tb_cu_reduce_max_f32_rows),
    K(tb_cu_reduce_min_f32_rows),
    K(tb_cu_reduce_prod_f32_rows),
    K(tb_cu_reduce_l1_f32_rows),
    K(tb_cu_reduce_l2_f32_rows),
    K(tb_cu_reduce_sum_square_f32_rows),
    K(tb_cu_reduce_log_sum_f32_rows),
    K(tb_cu_reduce_log_sum_exp_f32_rows),
    K(tb_cu_reduce_sum_f32_cols),
    K(tb_cu_reduce_mean_f32_cols),
    K(tb_cu_reduce_max_f32_cols),
    K(tb_cu_reduce_min_f32_cols),
    K(tb_cu_reduce_prod_f32_cols),
    K(tb_cu_reduce_l1_f32_cols),
    K(tb_cu_reduce_l2_f32_cols),
    K(tb_cu_reduce_sum_square_f32_cols),
    K(tb_cu_reduce_log_sum_f32_cols),
    K(tb_cu_reduce_log_sum_exp_f32_cols),
    K(tb_cu_cnn_conv_f32),
    K(tb_cu_cnn_conv_igemm_f32),
    K(tb_cu_cnn_conv_transpose_f32),
    K(tb_cu_cnn_epilogue_f32),
    K(tb_cu_cnn_pool_f32),
    K(tb_cu_cnn_batch_norm_f32),
    K(tb_cu_cnn_instance_norm_f32),
    K(tb_cu_cnn_resize_f32),
    K(tb_cu_resize_taps),
    K(tb_cu_gemm_f32),
    K(tb_cu_gemm_epilogue_f32),
    K(tb_cu_gemm_bf16),
    K(tb_cu_gemm_f16),
    K(tb_cu_gemm_f32_out16),
    K(tb_cu_gemm_bf16_out16),
    K(tb_cu_gemm_f16_out16),
    K(tb_cu_gemm_epilogue_out16),
    K(tb_cu_cnn_conv_bf16),
    K(tb_cu_cnn_conv_f16),
    K(tb_cu_cnn_conv_igemm_bf16),
    K(tb_cu_cnn_conv_igemm_f16),
    K(tb_cu_lowp_amax_f32),
    K(tb_cu_lowp_to_e4m3),
    K(tb_cu_rnn_transpose_f32),
    K(tb_cu_rnn_seq_f32),
    K(tb_cu_q_quantize_f32),
    K(tb_cu_q_dequantize_f32),
    K(tb_cu_q_matmul),
    K(tb_cu_q_conv),
    K(tb_cu_dm_copy_b1),
    K(tb_cu_dm_copy_b2),
    K(tb_cu_dm_copy_b4),
    K(tb_cu_dm_copy_b8),
    K(tb_cu_dm_transpose_b1),
    K(tb_cu_dm_transpose_b2),
    K(tb_cu_dm_transpose_b4),
    K(tb_cu_dm_transpose_b8),
    K(tb_cu_dm_pad_b1),
    K(tb_cu_dm_pad_b2),
    K(tb_cu_dm_pad_b4),
    K(tb_cu_dm_pad_b8),
    K(tb_cu_dm_fill_b1),
    K(tb_cu_dm_fill_b2),
    K(tb_cu_dm_fill_b4),
    K(tb_cu_dm_fill_b8),
    K(tb_cu_dm_gather_b1),
    K(tb_cu_dm_gather_b2),
    K(tb_cu_dm_gather_b4),
    K(tb_cu_dm_gather_b8),
    K(tb_cu_dm_gather_elements_b1),
    K(tb_cu_dm_gather_elements_b2),
    K(tb_cu_dm_gather_elements_b4),
    K(tb_cu_dm_gather_elements_b8),
    K(tb_cu_dm_scatter_elements_b1),
    K(tb_cu_dm_scatter_elements_b2),
    K(tb_cu_dm_scatter_elements_b4),
    K(tb_cu_dm_scatter_elements_b8),
    K(tb_cu_dm_scatter_nd_b1),
    K(tb_cu_dm_scatter_nd_b2),
    K(tb_cu_dm_scatter_nd_b4),
    K(tb_cu_dm_scatter_nd_b8),
    K(tb_cu_dm_where_b1),
    K(tb_cu_dm_where_b2),
    K(tb_cu_dm_where_b4),
    K(tb_cu_dm_where_b8),
    K(tb_cu_dm_cast),
    K(tb_cu_dm_compare),
    K(tb_cu_dm_logic),
    K(tb_cu_dm_layer_norm_f32),
    K(tb_cu_dm_gelu_tanh_f32),
    K(tb_cu_ew_math_f32),
    K(tb_cu_ew_math_f64),
    K(tb_cu_ew_int_math_i8),
    K(tb_cu_ew_int_math_i16),
    K(tb_cu_ew_int_math_i32),
    K(tb_cu_ew_int_math_i64),
    K(tb_cu_ew_int_math_u8),
    K(tb_cu_ew_classify_f32),
    K(tb_cu_ew_classify_f64),
    K(tb_cu_ew_mod_f32),
    K(tb_cu_ew_mod_f64),
    K(tb_cu_ew_mod_i8),
    K(tb_cu_ew_mod_i16),
    K(tb_cu_ew_mod_i32),
    K(tb_cu_ew_mod_i64),
    K(tb_cu_ew_mod_u8),
    K(tb_cu_ew_bitshift_u8),
    K(tb_cu_ew_accumulate_f32),
    K(tb_cu_ew_accumulate_f64),
    K(tb_cu_ew_math_f16),
    K(tb_cu_ew_math_bf16),
    K(tb_cu_ew_classify_f16),
    K(tb_cu_ew_classify_bf16),
    K(tb_cu_ew_mod_f16),
    K(tb_cu_ew_mod_bf16),
    K(tb_cu_ew_accumulate_f16),
    K(tb_cu_ew_accumulate_bf16),
    K(tb_cu_ew_fold_f16),
    K(tb_cu_ew_fold_bf16),
    K(tb_cu_ew_arith_f64),
    K(tb_cu_ew_arith_f16),
    K(tb_cu_ew_arith_bf16),
    K(tb_cu_ew_cumsum_scan_i8),
    K(tb_cu_ew_cumsum_scan_i16),
    K(tb_cu_ew_cumsum_scan_i32),
    K(tb_cu_ew_cumsum_scan_i64),
    K(tb_cu_ew_cumsum_scan_u8),
    K(tb_cu_ew_cumsum_scan_f16),
    K(tb_cu_ew_arg_rows_f16),
    K(tb_cu_ew_arg_rows_bf16),
    K(tb_cu_ew_arg_cols_f16),
    K(tb_cu_ew_arg_cols_bf16),
    K(tb_cu_ew_cumsum_f16),
    K(tb_cu_ew_cumsum_bf16),
    K(tb_cu_ew_topk_sort_f16),
    K(tb_cu_ew_topk_sort_bf16),
    K(tb_cu_ew_topk_radix_f16),
    K(tb_cu_ew_topk_radix_bf16),
    K(tb_cu_ew_arg_rows_f32),
    K(tb_cu_ew_arg_rows_f64),
    K(tb_cu_ew_arg_rows_i32),
    K(tb_cu_ew_arg_rows_i64),
    K(tb_cu_ew_arg_rows_i8),
    K(tb_cu_ew_arg_rows_i16),
    K(tb_cu_ew_arg_rows_u8),
    K(tb_cu_ew_arg_cols_f32),
    K(tb_cu_ew_arg_cols_f64),
    K(tb_cu_ew_arg_cols_i32),
    K(tb_cu_ew_arg_cols_i64),
    K(tb_cu_ew_arg_cols_i8),
    K(tb_cu_ew_arg_cols_i16),
    K(tb_cu_ew_arg_cols_u8),
    K(tb_cu_ew_cumsum_f32),
    K(tb_cu_ew_cumsum_f64),
    K(tb_cu_ew_cumsum_i32),
    K(tb_cu_ew_cumsum_i64),
    K(tb_cu_ew_cumsum_i8),
    K(tb_cu_ew_cumsum_i16),
    K(tb_cu_ew_cumsum_u8),
    K(tb_cu_ew_topk_sort_f32),
    K(tb_cu_ew_topk_sort_f64),
    K(tb_cu_ew_topk_sort_i32),
    K(tb_cu_ew_topk_sort_i64),
    K(tb_cu_ew_topk_sort_i8),
    K(tb_cu_ew_topk_sort_i16),
    K(tb_cu_ew_topk_sort_u8),
    K(tb_cu_ew_topk_radix_f32),
    K(tb_cu_ew_topk_radix_f64),
    K(tb_cu_ew_topk_radix_i32),
    K(tb_cu_ew_topk_radix_i64),
    K(tb_cu_ew_topk_radix_i8),
    K(tb_cu_ew_topk_radix_i16),
    K(tb_cu_ew_topk_radix_u8),
    K(tb_cu_dm_trilu_b1),
    K(tb_cu_dm_trilu_b2),
    K(tb_cu_dm_trilu_b4),
    K(tb_cu_dm_trilu_b8),
    K(tb_cu_dm_reverse_sequence_b1),
    K(tb_cu_dm_reverse_sequence_b2),
    K(tb_cu_dm_reverse_sequence_b4),
    K(tb_cu_dm_reverse_sequence_b8),
    K(tb_cu_dm_onehot_b1),
    K(tb_cu_dm_onehot_b2),
    K(tb_cu_dm_onehot_b4),
    K(tb_cu_dm_onehot_b8),
    K(tb_cu_dm_gather_nd_b1),
    K(tb_cu_dm_gather_nd_b2),
    K(tb_cu_dm_gather_nd_b4),
    K(tb_cu_dm_gather_nd_b8),
    K(tb_cu_dm_scatter_elements_reduce),
    K(tb_cu_dm_scatter_nd_reduce),
    K(tb_cu_dm_scatter_nd_clear),
    K(tb_cu_dm_scatter_nd_mark),
    K(tb_cu_dm_scatter_nd_apply),
    K(tb_cu_dm_nonzero_count),
    K(tb_cu_dm_nonzero_fill),
    K(tb_cu_dm_einsum),
    K(tb_cu_cnn_lp_pool_f32),
    K(tb_cu_cnn_lrn_f32),
};
#undef K

struct thread_arg {
  unsigned tid, block;
  void (*run)(void **params);
  void **params;
};

void *thread_main(void *p) {
  const thread_arg *a = static_cast<const thread_arg *>(p);
  threadIdx = {a->tid, 0, 0};
  blockIdx = {a->block, 0, 0};
  a->run(a->params);
  return nullptr;
}

pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
}  // namespace

// Whether the module has kernel `name`.
extern "C" int cuda_emu_has(const char *name) {
  for (const entry &e : kernels)
    if (strcmp(e.name, name) == 0) return 1;
  return 0;
}

// Run kernel `name` over `grid` blocks of `block` threads (x only), params as cuLaunchKernel's with every
// pointer already a host pointer. 0, or -1 for an unknown kernel, -2 for a bad shape. A host that cannot
// make the block's threads stops the process with a message (a test tool, never the library).
extern "C" int cuda_emu_launch(const char *name, unsigned grid, unsigned block, void **params) {
  const entry *k = nullptr;
  for (const entry &e : kernels)
    if (strcmp(e.name, name) == 0) k = &e;
  if (!k) return -1;
  if (grid == 0 || block == 0 || block > 1024) return -2;
  pthread_mutex_lock(&launch_lock);
  blockDim = {block, 1, 1};
  gridDim = {grid, 1, 1};
  static pthread_t threads[1024];
  static thread_arg args[1024];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  for (unsigned b = 0; b < grid; b++) {
    pthread_barrier_init(&block_barrier, nullptr, block);
    unsigned warps = (block + warpSize - 1) / warpSize;
    for (unsigned w = 0; w < warps; w++) {
      unsigned lanes = block - w * warpSize < (unsigned)warpSize ? block - w * warpSize : warpSize;
      pthread_barrier_init(&warp_barriers[w], nullptr, lanes);
    }
    unsigned made = 0;
    for (; made < block; made++) {
      args[made] = {made, b, k->run, params};
      if (pthread_create(&threads[made], &attr, thread_main, &args[made]) != 0) break;
    }
    if (made < block) { // the threads made wait at a barrier that cannot fill: a test tool may stop here
      fprintf(stderr, "cuda_emu: cannot make thread %u of the %u of a block of %s\n", made, block, name);
      abort();
    }
    for (unsigned t = 0; t < made; t++) pthread_join(threads[t], nullptr);
    for (unsigned w = 0; w < warps; w++) pthread_barrier_destroy(&warp_barriers[w]);
    pthread_barrier_destroy(&block_barrier);
  }
  pthread_attr_destroy(&attr);
  pthread_mutex_unlock(&launch_lock);
  return 0;
}
