/* DLPack devices and TensorBridge backends: the device a tensor exports as, and the check that an import's
 * device (type and id) is the backend's, with a sentence that says what differs and what to do. */
#include "backend/tensor/dlpack_device.h"
#include "backend/backend_impl.h"
#include "core/error.h"

const char *tb_dlpack_device_name(int type) {
  switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    case kDLOneAPI: return "kDLOneAPI";
    default: return "another device";
  }
}

/* The DLPack device type of a backend kind's memory; 0 when there is none. */
static int device_type_of(tb_backend_kind kind) {
  switch (kind) {
    case TB_BACKEND_CUDA: return kDLCUDA;
    case TB_BACKEND_ROCM: return kDLROCM;
    case TB_BACKEND_XPU: return kDLOneAPI;
    case TB_BACKEND_OPENCL: return kDLOpenCL;
    case TB_BACKEND_VULKAN: return kDLVulkan;
    default: return 0;
  }
}

static bool is_host_type(int type) { return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost; }

bool tb_dlpack_export_device(const tb_storage *s, DLDevice *out) {
  const tb_backend *b = s->backend;
  if (s->host || (s->nbytes == 0 && b->ops->host_pointer)) {
    *out = (DLDevice){kDLCPU, 0};
    return true;
  }
  tb_backend_kind kind = tb_backend_kind_of(b);
  if (kind != TB_BACKEND_CUDA && kind != TB_BACKEND_ROCM) return false;
  out->device_type = s->dl_device_type ? (DLDeviceType)s->dl_device_type : (DLDeviceType)device_type_of(kind);
  out->device_id = b->device->index;
  return true;
}

tb_status tb_dlpack_check_device(const char *fn, tb_backend *backend, DLDevice dev, bool *on_device, bool *managed) {
  int type = (int)dev.device_type;
  tb_backend_kind kind = tb_backend_kind_of(backend);
  const char *label = backend->device->device;
  *on_device = false;
  *managed = false;
  if (kind == TB_BACKEND_CPU) {
    if (is_host_type(type)) return TB_OK;
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: dl_tensor.device.device_type is %d (%s), memory the CPU backend cannot address; import it on "
                    "a backend of its device (tb_tensor_from_dlpack_on with a cuda:N or rocm:N backend) or copy the "
                    "tensor to the CPU first",
                    fn, type, tb_dlpack_device_name(type));
  }
  int own = device_type_of(kind);
  bool matches = type == own || (kind == TB_BACKEND_CUDA && type == kDLCUDAManaged);
  if (is_host_type(type))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: dl_tensor.device.device_type is %d (%s), host memory, but the backend is %s; import host "
                    "memory on the CPU backend",
                    fn, type, tb_dlpack_device_name(type), label);
  if (!matches)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: dl_tensor.device.device_type is %d (%s) but the backend is %s, whose memory is %s; import it "
                    "on a backend of the tensor's device",
                    fn, type, tb_dlpack_device_name(type), label, own ? tb_dlpack_device_name(own) : "not DLPack's");
  if (dev.device_id != backend->device->index)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: dl_tensor.device is %s:%d but the backend is %s (device %d); use the backend of device %d or "
                    "move the tensor to device %d first",
                    fn, tb_dlpack_device_name(type), (int)dev.device_id, label, backend->device->index,
                    (int)dev.device_id, backend->device->index);
  if (!backend->ops->wrap_foreign)
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: the %s backend (%s) cannot wrap a %s buffer it did not allocate (a buffer object of the "
                    "producer's own context); copy the tensor to the CPU and import that",
                    fn, tb_backend_name(kind), label, tb_dlpack_device_name(type));
  *on_device = true;
  *managed = type == kDLCUDAManaged;
  return TB_OK;
}
