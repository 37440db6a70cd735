/* Filling a tensor with one value: the backend's fill for contiguous tensors with 1, 2, 4 or 8-byte
 * elements, else a packed host buffer of the value copied in (which also covers strided views). */
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "core/error.h"
#include "backend/tensor/tensor_impl.h"

tb_status tb_tensor_fill(tb_tensor *t, const void *value) {
  static const char fn[] = "tb_tensor_fill";
  if (!t || !value) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor and value must not be NULL", fn);
  tb_status st = tb_tensor_check_writable(fn, t);
  if (st != TB_OK || t->numel == 0) return st;
  size_t es = tb_dtype_size(t->dtype), bytes = tb_tensor_nbytes(t);
  tb_storage *s = t->storage;
  tb_backend *b = s->backend;
  if (t->contiguous && s->block && b->ops->fill && (es == 1 || es == 2 || es == 4 || es == 8))
    return b->ops->fill(b->state, s->block->mem, s->block->offset + (size_t)t->offset * es, value, es, bytes);
  char *buf = malloc(bytes);
  if (!buf) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for a %zu-byte buffer", fn, bytes);
  for (size_t i = 0; i < bytes; i += es) memcpy(buf + i, value, es);
  st = tb_tensor_copy_from_host(t, buf, bytes);
  free(buf);
  return st;
}
