/* DLPack (1.1) export and import without copying: host tensors on the CPU backend, and device memory on
 * the CUDA and HIP backends (kDLCUDA, kDLCUDAManaged, kDLROCM).
 *
 * Export hands out a DLManagedTensorVersioned that holds a reference on the tensor's storage; its
 * deleter drops it, so the data stays valid after the tensor is destroyed. Import wraps the producer's
 * memory in a storage that owns the managed tensor and calls its deleter once, when the last tensor
 * using it is destroyed: host memory by its address, device memory as a foreign block that the backend's
 * driver has checked (backend op wrap_foreign) and that no allocator frees. Every field is validated
 * before anything is taken over; on failure the caller keeps ownership. A read-only import is allowed;
 * writes to it fail (see docs/tensors.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/backend_refs.h"
#include "core/error.h"
#include "backend/tensor/dlpack_device.h"
#include "backend/tensor/tensor_impl.h"

typedef struct dl_type {
  uint8_t code, bits;
} dl_type;

static const dl_type dl_types[TB_DTYPE_COUNT] = {
    [TB_DTYPE_F64] = {kDLFloat, 64},          [TB_DTYPE_F32] = {kDLFloat, 32},
    [TB_DTYPE_F16] = {kDLFloat, 16},          [TB_DTYPE_BF16] = {kDLBfloat, 16},
    [TB_DTYPE_FP8_E4M3FN] = {kDLFloat8_e4m3fn, 8}, [TB_DTYPE_FP8_E5M2] = {kDLFloat8_e5m2, 8},
    [TB_DTYPE_I64] = {kDLInt, 64},            [TB_DTYPE_I32] = {kDLInt, 32},
    [TB_DTYPE_I16] = {kDLInt, 16},            [TB_DTYPE_I8] = {kDLInt, 8},
    [TB_DTYPE_U8] = {kDLUInt, 8},             [TB_DTYPE_BOOL] = {kDLBool, 8},
};

typedef struct export_ctx {
  DLManagedTensorVersioned managed;
  tb_storage *storage;
  int64_t shape[TB_MAX_DIMS];
  int64_t strides[TB_MAX_DIMS];
} export_ctx;

static void export_deleter(DLManagedTensorVersioned *self) {
  if (!self) return;
  export_ctx *ctx = self->manager_ctx;
  tb_storage_release(ctx->storage);
  free(ctx);
}

tb_status tb_tensor_to_dlpack(tb_tensor *t, DLManagedTensorVersioned **out_managed) {
  static const char fn[] = "tb_tensor_to_dlpack";
  if (!out_managed) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: out_managed must not be NULL", fn);
  *out_managed = NULL;
  if (!t) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor must not be NULL", fn);
  tb_storage *s = t->storage;
  DLDevice device;
  if (!tb_dlpack_export_device(s, &device))
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: the tensor is on %s, whose memory DLPack cannot point at; DLPack export works for CPU, CUDA "
                    "and ROCm tensors: copy it to a CPU tensor first (tb_tensor_copy)",
                    fn, tb_backend_device(s->backend)->device);
  export_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  for (size_t i = 0; i < t->ndim; i++) {
    ctx->shape[i] = t->shape[i];
    ctx->strides[i] = t->strides[i];
  }
  DLManagedTensorVersioned *m = &ctx->managed;
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->manager_ctx = ctx;
  m->deleter = export_deleter;
  m->flags = s->read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  if (device.device_type == kDLCPU)
    m->dl_tensor.data = s->host;
  else if (s->block) /* a device pointer: the allocator's blocks are 256-byte aligned, as DLPack asks */
    m->dl_tensor.data = (char *)s->block->mem.handle + s->block->offset;
  m->dl_tensor.device = device;
  m->dl_tensor.ndim = (int32_t)t->ndim;
  m->dl_tensor.dtype.code = dl_types[t->dtype].code;
  m->dl_tensor.dtype.bits = dl_types[t->dtype].bits;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = ctx->shape;
  m->dl_tensor.strides = ctx->strides;
  m->dl_tensor.byte_offset = (uint64_t)t->offset * tb_dtype_size(t->dtype);
  tb_storage_retain(s);
  ctx->storage = s;
  *out_managed = m;
  return TB_OK;
}

static tb_status dtype_from_dl(const char *fn, DLDataType dt, tb_dtype *out) {
  if (dt.lanes != 1)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dl_tensor.dtype.lanes is %u; only 1 (no vector types) is supported",
                    fn, (unsigned)dt.lanes);
  for (int d = 0; d < TB_DTYPE_COUNT; d++)
    if (dl_types[d].code == dt.code && dl_types[d].bits == dt.bits) {
      *out = (tb_dtype)d;
      return TB_OK;
    }
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: dl_tensor.dtype (code %u, bits %u) is not supported; supported are float 16/32/64, bfloat 16, "
                  "float8 e4m3fn and e5m2, int 8/16/32/64, uint 8 and bool 8",
                  fn, (unsigned)dt.code, (unsigned)dt.bits);
}

/* Every field of the managed tensor but the version and the device (checked first, by import), checked before
 * anything is taken over. */
static tb_status validate(const char *fn, const DLManagedTensorVersioned *m, tb_dtype *dtype, int64_t *numel,
                          int64_t *strides, int64_t *extent) {
  const DLTensor *dl = &m->dl_tensor;
  if (dl->ndim < 0 || dl->ndim > TB_MAX_DIMS)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dl_tensor.ndim is %d; it must be 0 to %d", fn, (int)dl->ndim,
                    TB_MAX_DIMS);
  size_t ndim = (size_t)dl->ndim;
  if (ndim && !dl->shape)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dl_tensor.shape is NULL with ndim %zu", fn, ndim);
  for (size_t i = 0; i < ndim; i++)
    if (dl->shape[i] < 0)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dl_tensor.shape[%zu] is %lld; sizes must be >= 0", fn, i,
                      (long long)dl->shape[i]);
  if (dl->strides)
    for (size_t i = 0; i < ndim; i++)
      if (dl->strides[i] < 0)
        return tb_error(TB_ERR_UNSUPPORTED, "%s: dl_tensor.strides[%zu] is %lld; negative strides are not supported",
                        fn, i, (long long)dl->strides[i]);
  tb_status st = dtype_from_dl(fn, dl->dtype, dtype);
  if (st != TB_OK) return st;
  size_t es = tb_dtype_size(*dtype);
  st = tb_shape_check(fn, ndim, dl->shape, es, numel, strides);
  if (st != TB_OK) return st;
  if (dl->strides) memcpy(strides, dl->strides, ndim * sizeof *strides);
  *extent = 0;
  if (*numel > 0) {
    int64_t last = 0;
    for (size_t i = 0; i < ndim; i++) {
      int64_t reach = dl->shape[i] - 1;
      if (strides[i] && reach > (INT64_MAX / (int64_t)es - last) / strides[i])
        return tb_error(TB_ERR_INVALID_ARGUMENT,
                        "%s: dl_tensor.strides[%zu] = %lld with shape[%zu] = %lld addresses memory past 2^63-1 bytes",
                        fn, i, (long long)strides[i], i, (long long)dl->shape[i]);
      last += reach * strides[i];
    }
    *extent = last + 1;
    if (!dl->data)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dl_tensor.data is NULL but the tensor has %lld elements", fn,
                      (long long)*numel);
  }
  uintptr_t address = (uintptr_t)dl->data + (uintptr_t)dl->byte_offset;
  if (address % es)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: dl_tensor.byte_offset %llu puts element 0 at %p, not aligned to the %zu-byte %s element", fn,
                    (unsigned long long)dl->byte_offset, (void *)address, es, tb_dtype_name(*dtype));
  return TB_OK;
}

/* Device memory: the backend's driver checks the pointer and the bytes the tensor reaches. */
static tb_status wrap_device(const char *fn, tb_backend *b, const DLManagedTensorVersioned *m, size_t nbytes,
                             bool managed, tb_storage *s) {
  const DLTensor *dl = &m->dl_tensor;
  uintptr_t address = (uintptr_t)dl->data + (uintptr_t)dl->byte_offset;
  tb_status st = b->ops->wrap_foreign(b->state, address, nbytes, managed, &s->foreign.mem);
  if (st != TB_OK) { /* the driver's sentence, prefixed with the call */
    char said[1024];
    snprintf(said, sizeof said, "%s", tb_last_error());
    return tb_error(st, "%s: %s", fn, said);
  }
  s->foreign.offset = 0;
  s->foreign.size = nbytes;
  s->foreign.requested = nbytes;
  s->block = &s->foreign;
  s->dl_device_type = (int)dl->device.device_type;
  return TB_OK;
}

static tb_status import(const char *fn, tb_backend *backend, DLManagedTensorVersioned *managed, tb_tensor **out_tensor) {
  if (managed->version.major != DLPACK_MAJOR_VERSION) /* first: another major version may lay out the rest otherwise */
    return tb_error(TB_ERR_UNSUPPORTED, "%s: managed->version is %u.%u; this build reads DLPack major version %d", fn,
                    (unsigned)managed->version.major, (unsigned)managed->version.minor, DLPACK_MAJOR_VERSION);
  bool on_device = false, is_managed = false;
  tb_status st = tb_dlpack_check_device(fn, backend, managed->dl_tensor.device, &on_device, &is_managed);
  if (st != TB_OK) return st;
  tb_dtype dtype = TB_DTYPE_COUNT;
  int64_t numel = 0, extent = 0, strides[TB_MAX_DIMS];
  st = validate(fn, managed, &dtype, &numel, strides, &extent);
  if (st != TB_OK) return st;
  tb_storage *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the storage header", fn);
  const DLTensor *dl = &managed->dl_tensor;
  s->nbytes = (size_t)extent * tb_dtype_size(dtype);
  if (on_device && s->nbytes) st = wrap_device(fn, backend, managed, s->nbytes, is_managed, s);
  tb_block *none = NULL;
  if (st == TB_OK) st = tb_backend_storage_acquire(backend, 0, &none);
  if (st != TB_OK) {
    free(s);
    return st;
  }
  s->backend = backend;
  if (!on_device) s->host = dl->data ? (char *)dl->data + dl->byte_offset : NULL;
  s->read_only = (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  atomic_init(&s->refs, 0);
  st = tb_tensor_wrap(s, dtype, (size_t)dl->ndim, dl->shape, strides, 0, out_tensor);
  if (st != TB_OK) {
    atomic_init(&s->refs, 1);
    tb_storage_release(s); /* imported is still NULL: the caller keeps `managed` */
    return st;
  }
  s->imported = managed;
  return TB_OK;
}

tb_status tb_tensor_from_dlpack(tb_backend *cpu_backend, DLManagedTensorVersioned *managed, tb_tensor **out_tensor) {
  static const char fn[] = "tb_tensor_from_dlpack";
  if (!out_tensor) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: out_tensor must not be NULL", fn);
  *out_tensor = NULL;
  if (!cpu_backend || !managed)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: cpu_backend and managed must not be NULL", fn);
  if (tb_backend_kind_of(cpu_backend) != TB_BACKEND_CPU)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: cpu_backend is a %s backend (%s); DLPack import needs a CPU backend here (device memory: "
                    "tb_tensor_from_dlpack_on)",
                    fn, tb_backend_name(tb_backend_kind_of(cpu_backend)), tb_backend_device(cpu_backend)->device);
  return import(fn, cpu_backend, managed, out_tensor);
}

tb_status tb_tensor_from_dlpack_on(tb_backend *backend, DLManagedTensorVersioned *managed, tb_tensor **out_tensor) {
  static const char fn[] = "tb_tensor_from_dlpack_on";
  if (!out_tensor) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: out_tensor must not be NULL", fn);
  *out_tensor = NULL;
  if (!backend || !managed) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: backend and managed must not be NULL", fn);
  return import(fn, backend, managed, out_tensor);
}
