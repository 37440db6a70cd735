/* The control-flow kernels on cuda:0: If, Loop and Scan are the kernels every backend shares
 * (backend/control/control_kernels.h), registered here so the node and its body stay on the GPU: the body's
 * nodes are placed on cuda:0 by the executor, its values stay in device memory, and only the condition or the
 * trip count is read back (a synchronisation, which keeps such a model off graph replay). */
#include "backend/control/control_kernels.h"
#include "backend/cuda/kernels/cuda_ops.h"

const tb_cuda_family tb_cuda_family_control = {tb_control_kernels, TB_CONTROL_KERNEL_COUNT};
