/* libcuda's result codes: the name of each CUresult and what a person can do about it. */
#include <stddef.h>
#include "runtime/nvidia_cuda_api.h"

static const struct {
  int code;
  const char *name;
  const char *fix;
} cuda_errors[] = {
    {0, "CUDA_SUCCESS", ""},
    {1, "CUDA_ERROR_INVALID_VALUE", NULL},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "free host memory and try again"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "reinstall the NVIDIA driver: libcuda did not initialise"},
    {4, "CUDA_ERROR_DEINITIALIZED", "reinstall the NVIDIA driver: libcuda did not initialise"},
    {34, "CUDA_ERROR_STUB_LIBRARY",
     "install the NVIDIA driver; the CUDA toolkit's stub libcuda (lib64/stubs) is only for linking: remove it "
     "from LD_LIBRARY_PATH and TB_CUDA_LIB"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "upgrade the NVIDIA driver"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "the GPUs are busy in exclusive-process or prohibited compute mode: check `nvidia-smi -q -d COMPUTE`"},
    {100, "CUDA_ERROR_NO_DEVICE",
     "no GPU is visible to the driver: check CUDA_VISIBLE_DEVICES, `nvidia-smi` and `dmesg | grep -i nvrm`"},
    {101, "CUDA_ERROR_INVALID_DEVICE", NULL},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED", "this GPU needs a license (vGPU): check the NVIDIA license client"},
    {200, "CUDA_ERROR_INVALID_IMAGE", NULL},
    {201, "CUDA_ERROR_INVALID_CONTEXT", NULL},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", NULL},
    {218, "CUDA_ERROR_INVALID_PTX", NULL},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "reinstall the NVIDIA driver: its PTX JIT compiler (libnvidia-ptxjitcompiler) is missing"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "update the NVIDIA driver: it is older than the NVRTC that compiled the kernels (or point TB_NVRTC_LIB at an NVRTC "
     "no newer than the driver)"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "unset CUDA_DISABLE_PTX_JIT: the kernels are PTX for this GPU"},
    {500, "CUDA_ERROR_NOT_FOUND", NULL},
    {400, "CUDA_ERROR_INVALID_HANDLE", NULL},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "reinstall the NVIDIA driver"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "check the permissions of /dev/nvidia* and `dmesg | grep -i nvrm`"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "check the permissions of /dev/nvidia* and the container's device rules"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", NULL},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY",
     "start the NVIDIA Fabric Manager (systemctl start nvidia-fabricmanager); NVSwitch systems need it"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "the kernel module and libcuda come from different driver versions: reboot after the driver upgrade, or "
     "reinstall the NVIDIA driver"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "the forward-compatibility libcuda (cuda-compat) does not support this GPU: remove it from the loader path"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", NULL},
    {999, "CUDA_ERROR_UNKNOWN", NULL},
};

static const char *const default_fix =
    "check `nvidia-smi` and `dmesg | grep -i nvrm`; reload the nvidia kernel module or reboot";

const char *tb_cuda_error_name(int code) {
  for (size_t i = 0; i < sizeof cuda_errors / sizeof cuda_errors[0]; i++)
    if (cuda_errors[i].code == code) return cuda_errors[i].name;
  return NULL;
}

const char *tb_cuda_error_fix(int code) {
  for (size_t i = 0; i < sizeof cuda_errors / sizeof cuda_errors[0]; i++)
    if (cuda_errors[i].code == code && cuda_errors[i].fix) return cuda_errors[i].fix;
  return default_fix;
}
