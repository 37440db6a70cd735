/* Which backends have memory support in this build: the kind -> ops table. */
#include "backend/backend_impl.h"

const tb_backend_ops *tb_backend_ops_for(tb_backend_kind kind) {
  switch (kind) {
    case TB_BACKEND_CPU: return &tb_cpu_ops;
    case TB_BACKEND_OPENCL: return &tb_opencl_ops;
    case TB_BACKEND_VULKAN: return &tb_vulkan_ops;
    case TB_BACKEND_CUDA: return &tb_cuda_ops;
    case TB_BACKEND_ROCM: return &tb_hip_ops;
    case TB_BACKEND_XPU: return &tb_level_zero_ops;
    case TB_BACKEND_TPU: /* memory on a TPU needs libtpu's PJRT API: not written yet */
    default: return NULL;
  }
}
