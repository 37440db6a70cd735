/* Tensors: n-dimensional arrays (up to TB_MAX_DIMS) of one dtype on one backend, with strides and views,
 * copies to and from host memory and between backends, fill, and exchange with other frameworks through
 * DLPack (zero-copy on the CPU, and in CUDA and ROCm device memory).
 *
 * A tensor refers to storage; views share their base's storage, which lives until the last tensor that
 * refers to it is destroyed. Shapes and strides are in elements; strides may not be negative. */
#ifndef TENSORBRIDGE_TENSOR_H
#define TENSORBRIDGE_TENSOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend.h"
#include "dlpack.h"
#include "dtype.h"
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_MAX_DIMS 8

typedef struct tb_tensor tb_tensor;

/* A contiguous (row-major) tensor on `backend`, contents undefined. ndim may be 0 (a scalar). A
 * dimension of 0 gives an empty tensor. Sizes that overflow, or ndim > TB_MAX_DIMS, are
 * TB_ERR_INVALID_ARGUMENT naming the dimension. */
TB_API tb_status tb_tensor_create(tb_backend *backend, tb_dtype dtype, size_t ndim, const int64_t *shape,
                                  tb_tensor **out_tensor);
/* A view of `base`'s storage: shape, strides (NULL for contiguous) and an element offset from the start
 * of base's storage. Every element the view can address must lie inside the storage. */
TB_API tb_status tb_tensor_view(tb_tensor *base, size_t ndim, const int64_t *shape, const int64_t *strides,
                                int64_t offset, tb_tensor **out_view);
TB_API void tb_tensor_destroy(tb_tensor *tensor);

TB_API tb_dtype tb_tensor_dtype(const tb_tensor *tensor);
TB_API size_t tb_tensor_ndim(const tb_tensor *tensor);
/* Arrays of ndim values, owned by the tensor. */
TB_API const int64_t *tb_tensor_shape(const tb_tensor *tensor);
TB_API const int64_t *tb_tensor_strides(const tb_tensor *tensor);
TB_API int64_t tb_tensor_offset(const tb_tensor *tensor);
TB_API int64_t tb_tensor_numel(const tb_tensor *tensor);
/* numel * element size: the bytes of a packed copy. */
TB_API size_t tb_tensor_nbytes(const tb_tensor *tensor);
TB_API bool tb_tensor_is_contiguous(const tb_tensor *tensor);
TB_API tb_backend *tb_tensor_backend(const tb_tensor *tensor);
/* The address of element 0 when the host can read it directly (CPU backend, host DLPack imports); else NULL
 * (device memory, a device DLPack import included). */
TB_API void *tb_tensor_host_data(const tb_tensor *tensor);

/* Copy `bytes` (must equal tb_tensor_nbytes) of packed row-major data from host memory into the tensor,
 * which may be a strided view. */
TB_API tb_status tb_tensor_copy_from_host(tb_tensor *tensor, const void *src, size_t bytes);
/* Copy the tensor out as packed row-major data. */
TB_API tb_status tb_tensor_copy_to_host(const tb_tensor *tensor, void *dst, size_t bytes);
/* Copy between tensors of the same dtype and shape, on the same or different backends (through host
 * memory when no direct path exists). */
TB_API tb_status tb_tensor_copy(tb_tensor *dst, const tb_tensor *src);
/* Set every element to *value, one element of the tensor's dtype. */
TB_API tb_status tb_tensor_fill(tb_tensor *tensor, const void *value);

/* DLPack. Export: a managed tensor sharing the storage, without a copy: kDLCPU for CPU tensors, kDLCUDA /
 * kDLROCM with the backend's device index for CUDA and ROCm tensors (the data pointer is a device pointer;
 * an import keeps its own type, e.g. kDLCUDAManaged). Other backends return TB_ERR_UNSUPPORTED: copy to a
 * CPU tensor first. The consumer calls its deleter when done; the storage stays alive until then even if the
 * tensor is destroyed. The library's device work is finished when its calls return (docs/tensors.md). */
TB_API tb_status tb_tensor_to_dlpack(tb_tensor *tensor, DLManagedTensorVersioned **out_managed);
/* Import: wrap a CPU DLPack tensor without copying; takes ownership of `managed` on success (its deleter
 * is called when the last TensorBridge tensor using it is destroyed); on failure ownership stays with the
 * caller. `cpu_backend` must be a CPU backend. Unsupported dtypes, devices, negative strides or a read-only
 * flag are errors naming the field and value. */
TB_API tb_status tb_tensor_from_dlpack(tb_backend *cpu_backend, DLManagedTensorVersioned *managed, tb_tensor **out_tensor);
/* Import on any backend, without copying, with the ownership rules of tb_tensor_from_dlpack. On the CPU
 * backend: host memory (kDLCPU, kDLCUDAHost, kDLROCMHost). On a CUDA backend: kDLCUDA or kDLCUDAManaged
 * memory of that device; on a ROCm backend: kDLROCM memory of that device. The device type and id must be
 * the backend's (else TB_ERR_INVALID_ARGUMENT saying what differs), and the driver must confirm that the
 * pointer is device (or managed) memory of that device and that the bytes the tensor reaches lie in one
 * allocation (cuPointerGetAttribute / hipPointerGetAttributes). The memory stays the producer's: the
 * backend's allocator never frees it and it is not in the backend's memory stats. OpenCL, Vulkan and Level
 * Zero cannot wrap another context's buffer: TB_ERR_UNSUPPORTED. The producer's work on the memory must be
 * finished (or ordered before the library's blocking calls: the DLPack stream rule, docs/tensors.md). */
TB_API tb_status tb_tensor_from_dlpack_on(tb_backend *backend, DLManagedTensorVersioned *managed, tb_tensor **out_tensor);

#ifdef __cplusplus
}
#endif
#endif
