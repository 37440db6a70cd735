/* Internal: the CUDA backend's node kernels (tb_kernel entries over the embedded .cu kernels) by family
 * (cuda_ops_elementwise.c, cuda_ops_nn.c) and the backend's find_kernel over them (cuda_registry.c). Each
 * kernel is float32, registered at TB_KERNEL_REFERENCE (so it runs at every level), with the shared
 * prepare / release of cuda_launch.c. A node with other dtypes or attributes the kernels lack gets no
 * kernel here and runs on the CPU, as before. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_OPS_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_OPS_H
#include <stddef.h>
#include "backend/cuda/kernels/cuda_launch.h"

#define TB_CUDA_KERNEL(domain, name, accepts, run) \
  {domain, name, TB_KERNEL_REFERENCE, 0, accepts, run, tb_cuda_prepare, tb_cuda_release, NULL}

typedef struct tb_cuda_family {
  const tb_kernel *kernels;
  size_t count;
} tb_cuda_family;
extern const tb_cuda_family tb_cuda_family_elementwise, tb_cuda_family_nn;
/* Conv, FusedConv, ConvTranspose (cuda_ops_conv.c); pools and normalizations (cuda_ops_pool.c); Resize (cuda_ops_resize.c) */
extern const tb_cuda_family tb_cuda_family_conv, tb_cuda_family_pool, tb_cuda_family_resize;
extern const tb_cuda_family tb_cuda_family_gemm; /* cuda_ops_gemm.c */
extern const tb_cuda_family tb_cuda_family_rnn;  /* LSTM, GRU, RNN: cuda_ops_rnn.c */
extern const tb_cuda_family tb_cuda_family_quant; /* QuantizeLinear, DequantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv: cuda_ops_quant.c */
/* Data movement, index, logic and LayerNorm kernels (cuda_ops_data.c, _index.c, _logic.c, _norm.c; cuda_dm.h). */
extern const tb_cuda_family tb_cuda_family_data, tb_cuda_family_index, tb_cuda_family_logic, tb_cuda_family_norm;
/* The math beyond float32's basic set, Mod, BitShift, Sum, Mean (cuda_ops_math.c); ArgMax, ArgMin, Hardmax, CumSum,
 * TopK (cuda_ops_argtopk.c); both over cuda_ew.h. */
extern const tb_cuda_family tb_cuda_family_math, tb_cuda_family_argtopk;
/* DepthToSpace, Trilu, OneHot, GatherND, the scatters' reductions, NonZero... (cuda_ops_layout.c); LRN
 * (cuda_ops_window.c); Einsum (cuda_ops_einsum.c). */
extern const tb_cuda_family tb_cuda_family_layout, tb_cuda_family_window, tb_cuda_family_einsum;
/* If, Loop, Scan: the shared control-flow kernels (cuda_ops_control.c, backend/control/control_kernels.h). */
extern const tb_cuda_family tb_cuda_family_control;
/* Range (cuda_ops_range.c): its values made at prepare when start, limit and delta are constants. */
extern const tb_cuda_family tb_cuda_family_range;
tb_status tb_cuda_range_prepare(tb_kernel_ctx *ctx, void **state);

/* The recurrent kernels' prepare and release (cuda_ops_rnn.c): the GEMM path's state and the sequence_lens flag. */
tb_status tb_cuda_rnn_prepare(tb_kernel_ctx *ctx, void **state);
void tb_cuda_rnn_release(void *state);
/* Resize's and Upsample's prepare (cuda_ops_resize.c): the shared state and, for a static shape, the tap tables. */
tb_status tb_cuda_resize_prepare(tb_kernel_ctx *ctx, void **state);

/* The kernel for q, or NULL with *why saying why not. */
const tb_kernel *tb_cuda_find(const tb_kernel_query *q, const char **why);
/* The backend's find_kernel (tb_cuda_ops). */
const tb_kernel *tb_cuda_find_kernel(void *state, const tb_kernel_query *q);
/* The registered kernels (the count and the i-th) are declared in backend/kernel_tables.h. */

/* y = f(x) elementwise with the unary kernel `kernel` (tb_cu_<op>_f32) and its two scalars. */
tb_status tb_cuda_unary(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *x, tb_tensor *y, float alpha, float beta);
/* y = a op b with ONNX broadcasting, through tb_cu_<op>_f32_flat or _broadcast (op: the ONNX name, "Add",
 * "Max"...); y NULL: output 0 of the node, made with the broadcast shape. */
tb_status tb_cuda_binary(tb_kernel_ctx *ctx, const char *op, const tb_tensor *a, const tb_tensor *b, tb_tensor *y);

#endif
