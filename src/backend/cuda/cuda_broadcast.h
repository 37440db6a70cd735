/* Internal: the host's copy of the CUDA kernels' broadcast descriptor (struct tb_broadcast in
 * kernels/00_common.cu), which the binary _broadcast kernels take by value, and how it is made from two
 * input shapes with ONNX (numpy) multidirectional broadcasting. The layout must stay byte for byte the
 * kernels': rank and a pad (two 32-bit ints), then the output dims and each input's element stride per
 * output dim (0 where the input broadcasts), 8 slots of 64-bit ints each: 200 bytes, 8-byte aligned. */
#ifndef TB_BACKEND_CUDA_CUDA_BROADCAST_H
#define TB_BACKEND_CUDA_CUDA_BROADCAST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/status.h>

enum { TB_CUDA_MAX_RANK = 8 };

typedef struct tb_cuda_broadcast {
  int32_t rank; /* 1 to TB_CUDA_MAX_RANK */
  int32_t unused;
  int64_t dims[TB_CUDA_MAX_RANK];
  int64_t a_strides[TB_CUDA_MAX_RANK];
  int64_t b_strides[TB_CUDA_MAX_RANK];
} tb_cuda_broadcast;

_Static_assert(sizeof(tb_cuda_broadcast) == 200, "tb_cuda_broadcast must match the kernels' tb_broadcast (200 bytes)");
_Static_assert(offsetof(tb_cuda_broadcast, dims) == 8 && offsetof(tb_cuda_broadcast, b_strides) == 136,
               "tb_cuda_broadcast's fields must sit where the kernels' tb_broadcast has them");

/* The broadcast of a (a_ndim dims) with b: the output's shape in out_shape (rank *out_ndim, at most
 * TB_MAX_DIMS) and the descriptor, with adjacent dims merged where both inputs step through them alike
 * (so [2,3,4] + [4] is rank 2: [6, 4]). *same is true when a and b have the same shape (the _flat kernels
 * apply). Shapes that do not broadcast are TB_ERR_INVALID_ARGUMENT; more than 8 dims after merging,
 * TB_ERR_UNSUPPORTED; both with a sentence naming the shapes. */
tb_status tb_cuda_broadcast_make(size_t a_ndim, const int64_t *a, size_t b_ndim, const int64_t *b, tb_cuda_broadcast *out,
                                 int64_t *out_shape, size_t *out_ndim, bool *same);

#endif
