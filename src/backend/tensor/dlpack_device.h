/* Internal: which DLPack devices a backend's tensors are, for export, and which it can import, with the
 * sentence that says what differs when a DLPack tensor's device is not the backend's. */
#ifndef TB_TENSOR_DLPACK_DEVICE_H
#define TB_TENSOR_DLPACK_DEVICE_H
#include <stdbool.h>
#include <tensorbridge/tensor.h>
#include "backend/tensor/tensor_impl.h"

/* The DLPack device a storage exports as: kDLCPU when the host addresses it; kDLCUDA / kDLROCM (an import
 * keeps its own type, kDLCUDAManaged) with the backend's device index for CUDA and HIP memory. false when
 * the backend's memory has no DLPack form that points at it (OpenCL, Vulkan, Level Zero). */
bool tb_dlpack_export_device(const tb_storage *s, DLDevice *out);

/* Whether `dev` is memory that `backend` can import: host types on the CPU backend; the device's own type
 * and id on CUDA (kDLCUDA, kDLCUDAManaged) and HIP (kDLROCM). *on_device: wrap it as device memory;
 * *managed: the producer says managed memory. Errors name the field, the value and the fix. */
tb_status tb_dlpack_check_device(const char *fn, tb_backend *backend, DLDevice dev, bool *on_device, bool *managed);

/* "kDLCUDA" for the DLPack device types, "another device" for the rest. */
const char *tb_dlpack_device_name(int type);

#endif
