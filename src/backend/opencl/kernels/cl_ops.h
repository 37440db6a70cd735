/* Internal: the OpenCL backend's kernels by family (cl_ops_*.c) and the lookup the backend's find_kernel
 * uses (cl_registry.c). Each is a tb_cpu_kernel (level 0, no CPU features) with the shared prepare /
 * release of cl_exec.c. */
#ifndef TB_BACKEND_OPENCL_KERNELS_CL_OPS_H
#define TB_BACKEND_OPENCL_KERNELS_CL_OPS_H
#include "backend/opencl/kernels/cl_exec.h"
#include "tensor/tensor_impl.h"

#define CL_KERNEL(domain, name, accepts, run) {domain, name, 0, 0, accepts, run, cl_prepare, cl_release, NULL}

/* Each family's kernels (cl_ops_elementwise.c, cl_ops_tensor.c, cl_ops_gemm.c, cl_ops_nn.c). */
typedef struct cl_family {
  const tb_cpu_kernel *kernels;
  size_t count;
} cl_family;
extern const cl_family cl_family_elementwise, cl_family_tensor, cl_family_gemm, cl_family_nn;

/* The kernel for (domain, op) with these input types, or NULL (then *why says why). */
const tb_cpu_kernel *cl_find(const tb_graph *g, const tb_node *n, const tb_value_type *const *in, const char **why);

#endif
