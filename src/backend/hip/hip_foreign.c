/* The HIP backend's check of device memory another library allocated (a DLPack import): the runtime's
 * pointer attributes must say the pointer is device memory (or managed memory, when the producer says so)
 * of this backend's device, and, where the runtime has hipMemGetAddressRange, that the bytes the tensor
 * reaches lie inside that one allocation. hipMemoryType's numbers changed in ROCm 6, so they are read by
 * the runtime's version. */
#include <stdio.h>
#include "backend/hip/hip_state.h"
#include "core/error.h"

enum { KIND_HOST, KIND_DEVICE, KIND_MANAGED, KIND_OTHER };

/* hipMemoryType as host / device / managed / other: ROCm 6 numbers Unregistered 0, Host 1, Device 2,
 * Managed 3; ROCm 5 numbered Host 0, Device 1, Array 2, Unified 3, Managed 4. */
static int memory_kind(const hip_state *s, int type) {
  int version = 0;
  bool rocm6 = s->api.hipRuntimeGetVersion(&version) != TB_HIP_SUCCESS || version >= 60000000;
  if (rocm6) return type == 1 ? KIND_HOST : type == 2 ? KIND_DEVICE : type == 3 ? KIND_MANAGED : KIND_OTHER;
  return type == 0 ? KIND_HOST : type == 1 ? KIND_DEVICE : type == 4 ? KIND_MANAGED : KIND_OTHER;
}

tb_status tb_hip_check_foreign(void *state, uintptr_t address, size_t bytes, bool managed) {
  hip_state *s = state;
  unsigned long long p = (unsigned long long)address;
  if (!s->api.hipPointerGetAttributes)
    return tb_error(TB_ERR_UNAVAILABLE,
                    "%s: the HIP runtime does not export hipPointerGetAttributes, which importing device memory "
                    "needs; install a current ROCm HIP runtime",
                    s->base.label);
  tb_hip_pointer_attributes a = {.type = -1, .device = -1};
  int r = s->api.hipPointerGetAttributes(&a, (const void *)address);
  int kind = r == TB_HIP_SUCCESS ? memory_kind(s, a.type) : KIND_OTHER;
  if (r == 1 || (r == TB_HIP_SUCCESS && kind == KIND_OTHER && !a.is_managed)) /* hipErrorInvalidValue / unregistered */
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: pointer 0x%llx is not memory that HIP allocated (hipPointerGetAttributes knows no "
                    "allocation there); a kDLROCM tensor must point into hipMalloc'd or managed memory",
                    s->base.label, p);
  if (r != TB_HIP_SUCCESS) {
    char what[64];
    snprintf(what, sizeof what, "of pointer 0x%llx", p);
    return tb_devmem_call_failed(&s->base, "hipPointerGetAttributes", what, r, "");
  }
  bool is_managed = a.is_managed || kind == KIND_MANAGED;
  if (managed && !is_managed)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: the tensor says managed memory but pointer 0x%llx is not (hipPointerGetAttributes: isManaged "
                    "0); export it as kDLROCM",
                    s->base.label, p);
  if (!is_managed && kind != KIND_DEVICE)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: pointer 0x%llx is host memory (hipMemoryType %d), not device memory; import page-locked host "
                    "memory as kDLROCMHost on the CPU backend",
                    s->base.label, p, a.type);
  if (!is_managed && a.device != s->device)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: pointer 0x%llx is memory of HIP device %d, not of this backend's device %d; prepare the "
                    "model on rocm:%d or move the tensor (torch: t.to('cuda:%d'), ROCm's torch names HIP devices cuda)",
                    s->base.label, p, a.device, s->device, a.device, s->device);
  if (!s->api.hipMemGetAddressRange) return TB_OK; /* older runtimes: the attributes are all there is */
  void *base = NULL;
  size_t size = 0;
  r = s->api.hipMemGetAddressRange(&base, &size, (void *)address);
  if (r != TB_HIP_SUCCESS) {
    char what[64];
    snprintf(what, sizeof what, "of pointer 0x%llx", p);
    return tb_devmem_call_failed(&s->base, "hipMemGetAddressRange", what, r, "");
  }
  uintptr_t start = (uintptr_t)base;
  if (address < start || address - start > size || bytes > size - (address - start))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: the tensor reaches %zu bytes from 0x%llx, past the end of its allocation (0x%llx, %zu bytes); "
                    "check dl_tensor.shape, strides and byte_offset",
                    s->base.label, bytes, p, (unsigned long long)start, size);
  return TB_OK;
}
