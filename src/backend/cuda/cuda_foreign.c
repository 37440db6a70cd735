/* The CUDA backend's check of device memory another library allocated (a DLPack import): the driver's
 * pointer attributes must say the pointer is device memory (or managed memory, when the producer says so)
 * of this backend's device, and that the bytes the tensor reaches lie inside that one allocation. The
 * memory is then used through the primary context, which the CUDA runtime (PyTorch, CuPy) shares. */
#include <stdio.h>
#include "backend/cuda/cuda_state.h"
#include "core/error.h"

static tb_status attribute(const cuda_state *s, void *data, int attribute, const char *name, uintptr_t address) {
  tb_cu_result r = s->api.cuPointerGetAttribute(data, attribute, (tb_cu_deviceptr)address);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char what[96];
  snprintf(what, sizeof what, "(%s) of pointer 0x%llx", name, (unsigned long long)address);
  if (r == 1) /* CUDA_ERROR_INVALID_VALUE: the driver does not know the pointer */
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: pointer 0x%llx is not memory that CUDA allocated (cuPointerGetAttribute %s answers "
                    "CUDA_ERROR_INVALID_VALUE); a kDLCUDA tensor must point into cudaMalloc'd or managed memory",
                    s->base.label, (unsigned long long)address, name);
  return tb_devmem_call_failed(&s->base, "cuPointerGetAttribute", what, r, "");
}

tb_status tb_cuda_check_foreign(void *state, uintptr_t address, size_t bytes, bool managed) {
  cuda_state *s = state;
  if (!s->api.cuPointerGetAttribute)
    return tb_error(TB_ERR_UNAVAILABLE,
                    "%s: libcuda does not export cuPointerGetAttribute, which importing device memory needs; update "
                    "the NVIDIA driver",
                    s->base.label);
  unsigned int type = 0, is_managed = 0;
  int ordinal = -1;
  tb_cu_deviceptr start = 0;
  size_t size = 0;
  tb_status st = attribute(s, &type, TB_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, "CU_POINTER_ATTRIBUTE_MEMORY_TYPE", address);
  if (st == TB_OK)
    st = attribute(s, &is_managed, TB_CU_POINTER_ATTRIBUTE_IS_MANAGED, "CU_POINTER_ATTRIBUTE_IS_MANAGED", address);
  if (st != TB_OK) return st;
  unsigned long long p = (unsigned long long)address;
  if (managed && !is_managed)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: the tensor says kDLCUDAManaged but pointer 0x%llx is not managed memory (the driver says "
                    "CU_POINTER_ATTRIBUTE_IS_MANAGED is 0); export it as kDLCUDA",
                    s->base.label, p);
  if (!is_managed && type != TB_CU_MEMORYTYPE_DEVICE)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: pointer 0x%llx is %s memory (CUmemorytype %u), not device memory; import page-locked host "
                    "memory as kDLCUDAHost on the CPU backend",
                    s->base.label, p, type == TB_CU_MEMORYTYPE_HOST ? "host" : "non-device", type);
  /* Managed memory migrates to whichever device touches it; ordinary device memory must be this device's. */
  if (!is_managed) {
    st = attribute(s, &ordinal, TB_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL", address);
    if (st != TB_OK) return st;
    if (ordinal != s->device)
      return tb_error(TB_ERR_INVALID_ARGUMENT,
                      "%s: pointer 0x%llx is memory of CUDA device %d, not of this backend's device %d; prepare the "
                      "model on cuda:%d or move the tensor (torch: t.to('cuda:%d'))",
                      s->base.label, p, ordinal, (int)s->device, ordinal, (int)s->device);
  }
  st = attribute(s, &start, TB_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, "CU_POINTER_ATTRIBUTE_RANGE_START_ADDR", address);
  if (st == TB_OK) st = attribute(s, &size, TB_CU_POINTER_ATTRIBUTE_RANGE_SIZE, "CU_POINTER_ATTRIBUTE_RANGE_SIZE", address);
  if (st != TB_OK) return st;
  if (address < start || address - start > size || bytes > size - (address - start))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: the tensor reaches %zu bytes from 0x%llx, past the end of its allocation (0x%llx, %zu bytes); "
                    "check dl_tensor.shape, strides and byte_offset",
                    s->base.label, bytes, p, (unsigned long long)start, size);
  return TB_OK;
}
