/* OpenCL call failures as TensorBridge errors: the device, the call, the numeric code with its name
 * (from the probe's table, src/discover/opencl_names.c) and what a person can do about it. */
#include <stdio.h>
#include "backend/opencl/cl_device.h"
#include "core/error.h"
#include "runtime/opencl_query.h"

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

/* The codes of program builds and kernel launches, which the probe's table (it makes no such calls) lacks. */
static const char *exec_code_name(tb_cl_int code) {
  switch (code) {
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    default: return NULL;
  }
}

void tb_cl_exec_code_text(tb_cl_int code, char *out, size_t cap) {
  const char *name = exec_code_name(code);
  if (name) snprintf(out, cap, "%d %s", (int)code, name);
  else tb_cl_code_text(code, out, cap);
}

tb_status tb_cl_fail(const tb_cl_device *dev, const char *call, const char *detail, tb_cl_int code) {
  char text[96];
  tb_cl_exec_code_text(code, text, sizeof text);
  const char *label = dev && dev->label[0] ? dev->label : "OpenCL device";
  if (detail && detail[0])
    return tb_error(status_of(code), "%s: %s (%s) failed with %s; %s", label, call, detail, text, fix_of(code));
  return tb_error(status_of(code), "%s: %s failed with %s; %s", label, call, text, fix_of(code));
}
