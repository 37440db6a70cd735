/* Internal: the geometry Resize's device tap tables are computed from (kernels/76_resize_taps.cu,
 * tb_cu_resize_taps), as the host passes it by value: shared by cuda_ops_resize.c and its tests. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_RESIZE_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_RESIZE_H
#include <stddef.h>
#include <stdint.h>
#include "backend/cuda/kernels/cuda_cnn.h"
#include "ops/tensor/resize.h"

/* The kernel's tb_resize_axes: 4 axes, those in front of the node's rank (pad of them) of size 1. mode is the
 * resize kernel's kind (1 nearest, 2 linear, 4 cubic); coord and nearest are tb_resize_coord and tb_resize_nearest. */
typedef struct tb_cuda_resize_axes {
  int64_t in[TB_CUDA_CNN_AXES], out[TB_CUDA_CNN_AXES], base[TB_CUDA_CNN_AXES];
  double scale[TB_CUDA_CNN_AXES], r0[TB_CUDA_CNN_AXES], r1[TB_CUDA_CNN_AXES];
  double cubic_a;
  int32_t mode, coord, nearest, exclude_outside;
  int32_t pad, unused[3];
} tb_cuda_resize_axes;
_Static_assert(sizeof(tb_cuda_resize_axes) == 232, "tb_cuda_resize_axes mirrors the kernel's tb_resize_axes (232 bytes)");

/* The geometry of a node with these parameters for X of `rank` (1 to 4) dims `in` resized to `out` with the per-axis
 * scales and roi (starts then ends) of tb_resize_sizes; returns the table entries (the sum of the padded output
 * sizes): tb_cu_resize_taps runs one thread per entry. */
int64_t tb_cuda_resize_axes_of(const tb_resize_params *p, size_t rank, const int64_t *in, const int64_t *out, const double *scales,
                               const double *roi, tb_cuda_resize_axes *axes);

#endif
