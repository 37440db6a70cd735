/* OpenCL call failures as TensorBridge errors: the device, the call, the numeric code with its name
 * (from the probe's table, src/discover/opencl_names.c) and what a person can do about it. */
#include <stdio.h>
#include "backend/opencl/cl_device.h"
#include "core/error.h"
#include "discover/opencl_query.h"

static tb_status status_of(tb_cl_int code) {
  switch (code) {
    case TB_CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case TB_CL_OUT_OF_RESOURCES:
    case TB_CL_OUT_OF_HOST_MEMORY:
    case TB_CL_INVALID_BUFFER_SIZE: return TB_ERR_OUT_OF_MEMORY;
    case TB_CL_DEVICE_NOT_AVAILABLE:
    case TB_CL_PLATFORM_NOT_FOUND_KHR: return TB_ERR_UNAVAILABLE;
    default: return TB_ERR_DRIVER;
  }
}

static const char *fix_of(tb_cl_int code) {
  switch (code) {
    case TB_CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case TB_CL_OUT_OF_RESOURCES:
      return "free device memory (tb_backend_empty_cache, or release tensors) or use smaller tensors";
    case TB_CL_OUT_OF_HOST_MEMORY: return "free host memory: the OpenCL driver could not allocate its own bookkeeping";
    case TB_CL_INVALID_BUFFER_SIZE: return "allocate less than the device's maximum single allocation";
    case TB_CL_DEVICE_NOT_AVAILABLE:
      return "another process may hold the device exclusively, or it is in a failed state; check it with `clinfo`";
    case TB_CL_PLATFORM_NOT_FOUND_KHR:
      return "install an OpenCL ICD, e.g. pocl-opencl-icd, or your GPU vendor's OpenCL driver";
    default:
      return "check the OpenCL driver with `clinfo`; update or reinstall it";
  }
}

tb_status tb_cl_fail(const tb_cl_device *dev, const char *call, const char *detail, tb_cl_int code) {
  char text[96];
  tb_cl_code_text(code, text, sizeof text);
  const char *label = dev && dev->label[0] ? dev->label : "OpenCL device";
  if (detail && detail[0])
    return tb_error(status_of(code), "%s: %s (%s) failed with %s; %s", label, call, detail, text, fix_of(code));
  return tb_error(status_of(code), "%s: %s failed with %s; %s", label, call, text, fix_of(code));
}
