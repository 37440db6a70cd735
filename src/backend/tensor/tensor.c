/* Tensors: create on a backend, views of a storage, destroy, and the accessors. Shapes and strides are
 * checked here, with every product checked for overflow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_refs.h"
#include "core/error.h"
#include "backend/tensor/tensor_impl.h"

const char *tb_dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < ndim && len < cap; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

tb_status tb_shape_check(const char *fn, size_t ndim, const int64_t *shape, size_t elem_size, int64_t *out_numel,
                         int64_t *out_strides) {
  if (ndim > TB_MAX_DIMS)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: ndim %zu exceeds the maximum of %d dimensions", fn, ndim,
                    TB_MAX_DIMS);
  if (ndim && !shape) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: shape must not be NULL when ndim is %zu", fn, ndim);
  for (size_t i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dimension %zu has size %lld; sizes must be >= 0", fn, i,
                      (long long)shape[i]);
  /* Row-major strides over the non-zero sizes; the product, in bytes, must fit in int64. */
  int64_t product = 1, numel = 1;
  for (size_t k = ndim; k-- > 0;) {
    if (out_strides) out_strides[k] = product;
    int64_t d = shape[k] ? shape[k] : 1;
    if (product > INT64_MAX / d || product * d > INT64_MAX / (int64_t)elem_size) {
      char dims[256];
      return tb_error(TB_ERR_INVALID_ARGUMENT,
                      "%s: shape %s is too large: dimension %zu (size %lld) takes the size past 2^63-1 bytes of "
                      "%zu-byte elements",
                      fn, tb_dims_str(dims, sizeof dims, ndim, shape), k, (long long)shape[k], elem_size);
    }
    product *= d;
    numel = shape[k] ? numel * shape[k] : 0;
  }
#if SIZE_MAX < INT64_MAX
  if ((uint64_t)product * elem_size > SIZE_MAX)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %lld elements do not fit in this machine's address space", fn,
                    (long long)product);
#endif
  *out_numel = numel;
  return TB_OK;
}

static bool strides_contiguous(size_t ndim, const int64_t *shape, const int64_t *strides, int64_t numel) {
  if (numel == 0) return true;
  int64_t expected = 1;
  for (size_t k = ndim; k-- > 0;) {
    if (shape[k] != 1 && strides[k] != expected) return false;
    expected *= shape[k];
  }
  return true;
}

void tb_storage_retain(tb_storage *s) { atomic_fetch_add(&s->refs, 1); }

void tb_storage_release(tb_storage *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
  if (s->imported && s->imported->deleter) s->imported->deleter(s->imported);
  tb_backend_storage_release(s->backend, s->block == &s->foreign ? NULL : s->block);
  free(s);
}

tb_status tb_tensor_wrap(tb_storage *storage, tb_dtype dtype, size_t ndim, const int64_t *shape, const int64_t *strides,
                         int64_t offset, tb_tensor **out) {
  tb_tensor *t = calloc(1, sizeof *t);
  if (!t) return tb_error(TB_ERR_OUT_OF_MEMORY, "tensor: out of host memory for the tensor header");
  t->dtype = dtype;
  t->ndim = ndim;
  t->numel = 1;
  for (size_t i = 0; i < ndim; i++) {
    t->shape[i] = shape[i];
    t->strides[i] = strides[i];
    t->numel *= shape[i];
  }
  t->offset = offset;
  t->contiguous = strides_contiguous(ndim, t->shape, t->strides, t->numel);
  tb_storage_retain(storage);
  t->storage = storage;
  tb_backend_tensor_added(storage->backend);
  *out = t;
  return TB_OK;
}

tb_status tb_tensor_create(tb_backend *backend, tb_dtype dtype, size_t ndim, const int64_t *shape, tb_tensor **out_tensor) {
  if (!out_tensor) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_create: out_tensor must not be NULL");
  *out_tensor = NULL;
  if (!backend) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_create: backend must not be NULL");
  if ((unsigned)dtype >= TB_DTYPE_COUNT)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_create: dtype %d is not a tb_dtype value", (int)dtype);
  size_t esize = tb_dtype_size(dtype);
  int64_t numel = 0, strides[TB_MAX_DIMS];
  tb_status st = tb_shape_check("tb_tensor_create", ndim, shape, esize, &numel, strides);
  if (st != TB_OK) return st;
  tb_storage *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_tensor_create: out of host memory for the storage header");
  s->nbytes = (size_t)numel * esize;
  st = tb_backend_storage_acquire(backend, s->nbytes, &s->block);
  if (st != TB_OK) {
    free(s);
    return st;
  }
  s->backend = backend;
  if (s->block && backend->ops->host_pointer) {
    char *base = backend->ops->host_pointer(backend->state, s->block->mem);
    s->host = base ? base + s->block->offset : NULL;
  }
  atomic_init(&s->refs, 0);
  st = tb_tensor_wrap(s, dtype, ndim, shape, strides, 0, out_tensor);
  if (st != TB_OK) {
    atomic_init(&s->refs, 1);
    tb_storage_release(s);
  }
  return st;
}

tb_status tb_tensor_view(tb_tensor *base, size_t ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                         tb_tensor **out_view) {
  if (!out_view) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_view: out_view must not be NULL");
  *out_view = NULL;
  if (!base) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_view: base must not be NULL");
  size_t esize = tb_dtype_size(base->dtype);
  int64_t numel = 0, packed[TB_MAX_DIMS];
  tb_status st = tb_shape_check("tb_tensor_view", ndim, shape, esize, &numel, packed);
  if (st != TB_OK) return st;
  if (!strides) strides = packed;
  for (size_t i = 0; i < ndim; i++)
    if (strides[i] < 0)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_view: stride %zu is %lld; strides must be >= 0", i,
                      (long long)strides[i]);
  int64_t capacity = (int64_t)(base->storage->nbytes / esize);
  if (offset < 0 || offset > capacity)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_view: offset %lld is outside the storage of %lld elements",
                    (long long)offset, (long long)capacity);
  if (numel > 0) {
    /* The last element the view addresses: offset + sum((shape - 1) * stride), checked for overflow. */
    int64_t last = offset;
    bool overflow = false;
    for (size_t i = 0; i < ndim && !overflow; i++) {
      int64_t reach = shape[i] - 1;
      if (strides[i] && reach > (INT64_MAX - last) / strides[i]) overflow = true;
      else last += reach * strides[i];
    }
    if (overflow || last >= capacity) {
      char dims[256], strs[256];
      char reach[32];
      if (overflow) snprintf(reach, sizeof reach, "past 2^63-1");
      else snprintf(reach, sizeof reach, "%lld", (long long)last);
      return tb_error(TB_ERR_INVALID_ARGUMENT,
                      "tb_tensor_view: shape %s, strides %s and offset %lld reach element %s, but the storage holds "
                      "%lld elements (0 to %lld)",
                      tb_dims_str(dims, sizeof dims, ndim, shape), tb_dims_str(strs, sizeof strs, ndim, strides),
                      (long long)offset, reach, (long long)capacity, (long long)capacity - 1);
    }
  }
  return tb_tensor_wrap(base->storage, base->dtype, ndim, shape, strides, offset, out_view);
}

void tb_tensor_destroy(tb_tensor *tensor) {
  if (!tensor) return;
  tb_backend_tensor_removed(tensor->storage->backend);
  tb_storage_release(tensor->storage);
  free(tensor);
}

tb_dtype tb_tensor_dtype(const tb_tensor *t) { return t ? t->dtype : TB_DTYPE_COUNT; }
size_t tb_tensor_ndim(const tb_tensor *t) { return t ? t->ndim : 0; }
const int64_t *tb_tensor_shape(const tb_tensor *t) { return t ? t->shape : NULL; }
const int64_t *tb_tensor_strides(const tb_tensor *t) { return t ? t->strides : NULL; }
int64_t tb_tensor_offset(const tb_tensor *t) { return t ? t->offset : 0; }
int64_t tb_tensor_numel(const tb_tensor *t) { return t ? t->numel : 0; }
size_t tb_tensor_nbytes(const tb_tensor *t) { return t ? (size_t)t->numel * tb_dtype_size(t->dtype) : 0; }
bool tb_tensor_is_contiguous(const tb_tensor *t) { return t && t->contiguous; }
tb_backend *tb_tensor_backend(const tb_tensor *t) { return t ? t->storage->backend : NULL; }

void *tb_tensor_host_data(const tb_tensor *t) {
  if (!t || !t->storage->host) return NULL;
  return (char *)t->storage->host + (size_t)t->offset * tb_dtype_size(t->dtype);
}
