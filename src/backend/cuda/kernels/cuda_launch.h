/* Internal: launching the embedded CUDA kernels (the .cu files of src/backend/cuda/kernels) for a node. A launch is
 * set up in the kernel's parameter order (tb_cuda_begin, then tb_cuda_arg_*), then enqueued with one of
 * the two grid shapes the kernels are written for (tb_cuda_go_elements, tb_cuda_go_rows) through
 * cuLaunchKernel on the backend's stream. The first failure sticks and is what the go call returns: every
 * error names the device, the kernel, the node and the driver's code and name.
 *
 * Streams: every launch goes on the stream the calling thread has bound to the backend (tb_backend_ops.stream_bind:
 * the prepared model's own, made at prepare; tb_cuda_stream_of), else on the backend's own stream; never on the
 * legacy default stream. Inside a graph capture the launches are recorded into the graph (cuda_graph.c). */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_LAUNCH_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_LAUNCH_H
#include <stddef.h>
#include <stdint.h>
#include "backend/cuda/cuda_state.h"
#include "backend/kernel.h"

enum {
  TB_CUDA_MAX_ARGS = 16, /* the recurrent sequence kernel takes 13 */
  TB_CUDA_ARG_BYTES = 512,
  TB_CUDA_BLOCK_ELEMENTS = 256, /* threads per block of the elementwise (grid-stride) kernels */
  TB_CUDA_BLOCKS_PER_SM = 8,    /* resident 256-thread blocks per multiprocessor the 1-D grid aims at */
  TB_CUDA_MAX_BLOCK = 1024,
  TB_CUDA_WARP = 32,
  TB_CUDA_MAX_GRID_ROWS = 65535, /* blocks of a row-wise kernel; more rows are strided over */
};

/* A launch's shape. */
typedef struct tb_cuda_dims {
  unsigned grid, block;
} tb_cuda_dims;

/* The grid for n elements of a grid-stride kernel on a GPU with sm_count multiprocessors: 256-thread
 * blocks, one per 256 elements up to TB_CUDA_BLOCKS_PER_SM per multiprocessor (the threads stride over
 * the rest). n must be > 0. */
tb_cuda_dims tb_cuda_grid_elements(int64_t n, int sm_count);
/* The grid for a row-wise block kernel (one block per row: softmax, reductions along contiguous rows):
 * min(rows, 65535) blocks of the warp multiple that covers cols, 32 to 1024 threads. rows must be > 0. */
tb_cuda_dims tb_cuda_grid_rows(int64_t rows, int64_t cols);

/* A launch being set up. */
typedef struct tb_cuda_launch {
  tb_kernel_ctx *ctx;
  cuda_state *s;
  const char *kernel;
  tb_cu_function fn;
  unsigned n_args;
  size_t used;
  void *args[TB_CUDA_MAX_ARGS];
  _Alignas(16) unsigned char bytes[TB_CUDA_ARG_BYTES];
  tb_status status;
} tb_cuda_launch;

/* Start a launch of the module's function `kernel` (found once per node, kept in the node's state). */
tb_status tb_cuda_begin(tb_cuda_launch *l, tb_kernel_ctx *ctx, const char *kernel);
/* A tensor's device address (a float *): on this device, contiguous. */
void tb_cuda_arg_tensor(tb_cuda_launch *l, const tb_tensor *t);
/* Whether each non-NULL tensor of ts is what tb_cuda_arg_tensor takes (on ctx's backend, contiguous, with device
 * memory where it has bytes): the check before a library call (cuBLASLt, cuDNN) reads raw addresses, so a tensor
 * that fails it goes to the own kernels, whose launch says what is wrong with it. */
bool tb_cuda_tensors_plain(const tb_kernel_ctx *ctx, const tb_tensor *const *ts, size_t n);
/* tb_cuda_arg_tensor, or a NULL pointer for an absent (NULL) or empty tensor: the kernels read none of those. */
void tb_cuda_arg_optional(tb_cuda_launch *l, const tb_tensor *t);
void tb_cuda_arg_i64(tb_cuda_launch *l, int64_t v); /* the kernels' tb_index (long long) */
void tb_cuda_arg_f32(tb_cuda_launch *l, float v);
/* A struct passed by value (the kernels' tb_broadcast), with its alignment. */
void tb_cuda_arg_bytes(tb_cuda_launch *l, const void *p, size_t size, size_t align);
/* Enqueue over n elements (tb_cuda_grid_elements); nothing when n is 0. */
tb_status tb_cuda_go_elements(tb_cuda_launch *l, int64_t n);
/* Enqueue one block per row (tb_cuda_grid_rows); nothing when rows is 0. */
tb_status tb_cuda_go_rows(tb_cuda_launch *l, int64_t rows, int64_t cols);
/* Enqueue on a grid the caller chose (a kernel with its own tiling: 40_gemm.cu). */
tb_status tb_cuda_go(tb_cuda_launch *l, tb_cuda_dims dims);

/* The CUDA device state behind the node's backend, or NULL when the backend is not an open CUDA device. */
cuda_state *tb_cuda_state_of(const tb_kernel_ctx *ctx);
/* A device tensor's address (its block, the block's offset and its own), or 0 for none. */
tb_cu_deviceptr tb_cuda_address_of(const tb_tensor *t);

/* The per-node state every CUDA kernel's prepare makes: the functions the node has launched, found by
 * name on first use. prepare loads the device's module, so a compile failure names the node at
 * tb_model_prepare. */
enum { TB_CUDA_NODE_FUNCTIONS = 4 };
typedef struct tb_cuda_node {
  const char *names[TB_CUDA_NODE_FUNCTIONS];
  tb_cu_function fns[TB_CUDA_NODE_FUNCTIONS];
} tb_cuda_node;
tb_status tb_cuda_prepare(tb_kernel_ctx *ctx, void **state);
/* tb_cuda_prepare's state grown to `size` zeroed bytes, for a kernel whose state keeps more after the shared one
 * (a struct with tb_cuda_node first: cuda_launch.c's functions read it); freed by tb_cuda_release or by the
 * kernel's own release with free(). */
tb_status tb_cuda_prepare_sized(tb_kernel_ctx *ctx, size_t size, void **state);
void tb_cuda_release(void *state);

/* For the kernels' accepts(): every input present is float32 (at least one), and one output. */
bool tb_cuda_all_f32(const tb_kernel_query *q);

#endif
