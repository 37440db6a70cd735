/* Internal: the OpenCL backend's kernels by family (cl_ops_*.c) and the lookup the backend's find_kernel
 * uses (cl_registry.c). Each is a tb_kernel (level 0, no CPU features) with the shared prepare /
 * release of cl_exec.c. */
#ifndef TB_BACKEND_OPENCL_KERNELS_CL_OPS_H
#define TB_BACKEND_OPENCL_KERNELS_CL_OPS_H
#include "backend/opencl/kernels/cl_exec.h"
#include "backend/tensor/tensor_impl.h"

#define CL_KERNEL(domain, name, accepts, run) {domain, name, TB_KERNEL_REFERENCE, 0, accepts, run, tb_cl_prepare, tb_cl_release, NULL}

/* Each family's kernels (cl_ops_elementwise.c, cl_ops_tensor.c, cl_ops_gemm.c, cl_ops_nn.c,
 * cl_ops_lstm.c). */
typedef struct cl_family {
  const tb_kernel *kernels;
  size_t count;
} cl_family;
extern const cl_family tb_cl_family_elementwise, tb_cl_family_tensor, tb_cl_family_gemm, tb_cl_family_nn, tb_cl_family_lstm;

/* A row-major matrix operand of tb_cl_gemm: tensor, element offset, leading dimension, transposed. */
typedef struct cl_mat {
  const tb_tensor *t;
  int64_t off, ld;
  bool trans;
} cl_mat;
/* C = alpha op(A) op(B) + beta C (m x n x k) on the node's kernel slot 0: through CLBlast when the node was
 * prepared with it, else the tb_gemm kernel (cl_ops_gemm.c). */
tb_status tb_cl_gemm(tb_kernel_ctx *ctx, int64_t m, int64_t n, int64_t k, float alpha, cl_mat a, cl_mat b, float beta, cl_mat c);

/* The kernel for (domain, op) with these input types, or NULL (then *why says why). */
const tb_kernel *tb_cl_find(const tb_kernel_query *q, const char **why);

#endif
