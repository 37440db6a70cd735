/* Internal: the tensor and its storage, shared by the tensor files (create/view, copies, fill, DLPack).
 *
 * A storage is one allocation that tensors refer to: a block of the backend's caching allocator, or the
 * memory of an imported DLPack tensor (host memory by address, device memory as a foreign block). It is reference-counted (each tensor and each DLPack export holds
 * one reference) and holds a reference on its backend, so it can outlive the tensor and the caller's
 * backend handle. */
#ifndef TB_TENSOR_IMPL_H
#define TB_TENSOR_IMPL_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensor.h>
#include "backend/allocator.h"

typedef struct tb_storage {
  atomic_size_t refs;
  tb_backend *backend;
  tb_block *block;                    /* NULL for imports and for empty storage */
  void *host;                         /* host address of byte 0 when the host can use it; else NULL */
  size_t nbytes;
  DLManagedTensorVersioned *imported; /* its deleter runs when the last reference goes */
  bool read_only;                     /* imported with DLPACK_FLAG_BITMASK_READ_ONLY */
  tb_block foreign;                   /* a DLPack import in device memory: `block` points here, and no
                                         allocator owns it (the producer's deleter frees it) */
  int dl_device_type;                 /* such an import's DLPack device type (kDLCUDAManaged...), else 0 */
} tb_storage;

struct tb_tensor {
  tb_storage *storage;
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  int64_t strides[TB_MAX_DIMS]; /* elements, >= 0 */
  int64_t offset;               /* elements from the start of the storage */
  int64_t numel;
  bool contiguous;
};

void tb_storage_retain(tb_storage *s);
void tb_storage_release(tb_storage *s);

/* Check ndim and shape for `fn`'s message; on success the element count and the row-major strides. A
 * product of the non-zero sizes times the element size must fit in int64. */
tb_status tb_shape_check(const char *fn, size_t ndim, const int64_t *shape, size_t elem_size, int64_t *out_numel,
                         int64_t *out_strides);
/* A new tensor on `storage` (takes a reference); strides must already be checked against it. */
tb_status tb_tensor_wrap(tb_storage *storage, tb_dtype dtype, size_t ndim, const int64_t *shape, const int64_t *strides,
                         int64_t offset, tb_tensor **out);
/* "[2, 3, 4]" into buf. */
const char *tb_dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims);

/* Bytes [offset, offset + bytes) of the storage from / to host memory, through the backend's ops or the
 * host address. */
tb_status tb_storage_write(tb_storage *s, size_t offset, const void *src, size_t bytes);
tb_status tb_storage_read(tb_storage *s, size_t offset, void *dst, size_t bytes);
/* TB_ERR_INVALID_ARGUMENT naming `fn` when the tensor cannot be written (read-only import, elements that
 * overlap through a stride of 0). */
tb_status tb_tensor_check_writable(const char *fn, const tb_tensor *t);

#endif
