/* Copies between tensors and host memory, and between tensors. A contiguous tensor moves in one
 * ops->write / ops->read; a strided view goes through a host buffer holding the span of storage it
 * covers (read, gather or scatter, write back), on every backend alike; an imported DLPack tensor, which
 * has only a host address, is gathered and scattered in place. Tensors on
 * different backends (or strided ones) are copied through host memory; contiguous tensors on the same
 * backend use the backend's device-to-device copy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "core/error.h"
#include "backend/tensor/tensor_impl.h"

tb_status tb_storage_write(tb_storage *s, size_t offset, const void *src, size_t bytes) {
  if (!bytes) return TB_OK;
  if (s->block) {
    tb_backend *b = s->backend;
    return b->ops->write(b->state, s->block->mem, s->block->offset + offset, src, bytes);
  }
  if (!s->host) return tb_error(TB_ERR_INTERNAL, "tensor: storage of %zu bytes has no memory to write", s->nbytes);
  memmove((char *)s->host + offset, src, bytes);
  return TB_OK;
}

tb_status tb_storage_read(tb_storage *s, size_t offset, void *dst, size_t bytes) {
  if (!bytes) return TB_OK;
  if (s->block) {
    tb_backend *b = s->backend;
    return b->ops->read(b->state, s->block->mem, s->block->offset + offset, dst, bytes);
  }
  if (!s->host) return tb_error(TB_ERR_INTERNAL, "tensor: storage of %zu bytes has no memory to read", s->nbytes);
  memmove(dst, (const char *)s->host + offset, bytes);
  return TB_OK;
}

tb_status tb_tensor_check_writable(const char *fn, const tb_tensor *t) {
  if (t->storage->read_only)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor is read-only (imported from DLPack with the read-only flag)", fn);
  for (size_t i = 0; i < t->ndim; i++)
    if (t->strides[i] == 0 && t->shape[i] > 1)
      return tb_error(TB_ERR_INVALID_ARGUMENT,
                      "%s: the tensor has stride 0 in dimension %zu (size %lld), so its elements overlap and it cannot "
                      "be written; write to the tensor it views instead",
                      fn, i, (long long)t->shape[i]);
  return TB_OK;
}

static void copy_elem(char *dst, const char *src, size_t size) {
  switch (size) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, size); break;
  }
}

/* Move the elements of `t` between `mem` (holding storage elements from index `origin` on) and packed
 * row-major `packed`: gather when to_packed, else scatter. numel > 0. */
static void walk(const tb_tensor *t, char *mem, int64_t origin, char *packed, bool to_packed) {
  size_t es = tb_dtype_size(t->dtype);
  if (t->ndim == 0) {
    char *e = mem + (size_t)(t->offset - origin) * es;
    if (to_packed) copy_elem(packed, e, es);
    else copy_elem(e, packed, es);
    return;
  }
  size_t last = t->ndim - 1;
  int64_t n = t->shape[last], stride = t->strides[last];
  int64_t idx[TB_MAX_DIMS] = {0};
  for (;;) {
    int64_t first = t->offset - origin;
    for (size_t i = 0; i < last; i++) first += idx[i] * t->strides[i];
    char *row = mem + (size_t)first * es;
    if (stride == 1) {
      if (to_packed) memcpy(packed, row, (size_t)n * es);
      else memcpy(row, packed, (size_t)n * es);
    } else {
      for (int64_t j = 0; j < n; j++) {
        char *e = row + (size_t)(j * stride) * es;
        if (to_packed) copy_elem(packed + (size_t)j * es, e, es);
        else copy_elem(e, packed + (size_t)j * es, es);
      }
    }
    packed += (size_t)n * es;
    size_t k = last;
    for (;;) {
      if (k == 0) return;
      k--;
      if (++idx[k] < t->shape[k]) break;
      idx[k] = 0;
    }
  }
}

/* The storage elements [first, last] that a non-empty tensor addresses. */
static void span_of(const tb_tensor *t, int64_t *first, int64_t *last) {
  *first = t->offset;
  *last = t->offset;
  for (size_t i = 0; i < t->ndim; i++) *last += (t->shape[i] - 1) * t->strides[i];
}

static tb_status check_bytes(const char *fn, const tb_tensor *t, const void *ptr, size_t bytes) {
  if (!t) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor must not be NULL", fn);
  size_t nbytes = tb_tensor_nbytes(t);
  if (bytes != nbytes) {
    char dims[256];
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: bytes is %zu but the %s tensor of shape %s holds %zu bytes", fn,
                    bytes, tb_dtype_name(t->dtype), tb_dims_str(dims, sizeof dims, t->ndim, t->shape), nbytes);
  }
  if (!ptr && bytes) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: the host pointer must not be NULL", fn);
  return TB_OK;
}

static tb_status host_buffer(const char *fn, size_t bytes, char **out) {
  *out = malloc(bytes ? bytes : 1);
  if (!*out) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for a %zu-byte staging buffer", fn, bytes);
  return TB_OK;
}

tb_status tb_tensor_copy_to_host(const tb_tensor *t, void *dst, size_t bytes) {
  static const char fn[] = "tb_tensor_copy_to_host";
  tb_status st = check_bytes(fn, t, dst, bytes);
  if (st != TB_OK || t->numel == 0) return st;
  size_t es = tb_dtype_size(t->dtype);
  tb_storage *s = t->storage;
  if (t->contiguous) return tb_storage_read(s, (size_t)t->offset * es, dst, bytes);
  if (!s->block) { /* an import: the host addresses it directly */
    walk(t, s->host, 0, dst, true);
    return TB_OK;
  }
  int64_t first, last;
  span_of(t, &first, &last);
  size_t span = (size_t)(last - first + 1) * es;
  char *buf = NULL;
  if ((st = host_buffer(fn, span, &buf)) != TB_OK) return st;
  st = tb_storage_read(s, (size_t)first * es, buf, span);
  if (st == TB_OK) walk(t, buf, first, dst, true);
  free(buf);
  return st;
}

tb_status tb_tensor_copy_from_host(tb_tensor *t, const void *src, size_t bytes) {
  static const char fn[] = "tb_tensor_copy_from_host";
  tb_status st = check_bytes(fn, t, src, bytes);
  if (st == TB_OK) st = tb_tensor_check_writable(fn, t);
  if (st != TB_OK || t->numel == 0) return st;
  size_t es = tb_dtype_size(t->dtype);
  tb_storage *s = t->storage;
  if (t->contiguous) return tb_storage_write(s, (size_t)t->offset * es, src, bytes);
  if (!s->block) {
    walk(t, s->host, 0, (char *)(uintptr_t)src, false);
    return TB_OK;
  }
  /* Read the span, scatter into it, write it back: bytes between the view's elements keep their values. */
  int64_t first, last;
  span_of(t, &first, &last);
  size_t span = (size_t)(last - first + 1) * es;
  char *buf = NULL;
  if ((st = host_buffer(fn, span, &buf)) != TB_OK) return st;
  st = tb_storage_read(s, (size_t)first * es, buf, span);
  if (st == TB_OK) {
    walk(t, buf, first, (char *)(uintptr_t)src, false);
    st = tb_storage_write(s, (size_t)first * es, buf, span);
  }
  free(buf);
  return st;
}

static bool same_shape(const tb_tensor *a, const tb_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (size_t i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return true;
}

tb_status tb_tensor_copy(tb_tensor *dst, const tb_tensor *src) {
  static const char fn[] = "tb_tensor_copy";
  if (!dst || !src) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dst and src must not be NULL", fn);
  if (dst->dtype != src->dtype)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dst is %s but src is %s; convert with tb_convert first", fn,
                    tb_dtype_name(dst->dtype), tb_dtype_name(src->dtype));
  if (!same_shape(dst, src)) {
    char a[256], b[256];
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dst has shape %s but src has shape %s", fn,
                    tb_dims_str(a, sizeof a, dst->ndim, dst->shape), tb_dims_str(b, sizeof b, src->ndim, src->shape));
  }
  tb_status st = tb_tensor_check_writable(fn, dst);
  if (st != TB_OK || dst->numel == 0) return st;
  size_t es = tb_dtype_size(dst->dtype), bytes = tb_tensor_nbytes(dst);
  tb_storage *ds = dst->storage, *ss = src->storage;
  /* The device's own copy for contiguous tensors on one backend; distinct storages, so no overlap. */
  if (ds->backend == ss->backend && dst->contiguous && src->contiguous && ds != ss && ds->block && ss->block &&
      ds->backend->ops->copy) {
    tb_backend *b = ds->backend;
    return b->ops->copy(b->state, ds->block->mem, ds->block->offset + (size_t)dst->offset * es, ss->block->mem,
                        ss->block->offset + (size_t)src->offset * es, bytes);
  }
  char *buf = NULL;
  if ((st = host_buffer(fn, bytes, &buf)) != TB_OK) return st;
  st = tb_tensor_copy_to_host(src, buf, bytes);
  if (st == TB_OK) st = tb_tensor_copy_from_host(dst, buf, bytes);
  free(buf);
  return st;
}
