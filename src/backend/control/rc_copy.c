/* Copies between the tensors of a control-flow node and its body on any backend (tb_rc_copy, rc_util.h). Two
 * tensors of one device backend whose elements form the same runs of contiguous elements (a Scan's slice along
 * an inner axis, a slot of a stacked output) are copied as those runs with the device's own copy, so the values
 * never leave the device; everything else goes through tb_tensor_copy (contiguous tensors of one backend: the
 * device's copy too; strided ones: through the host). */
#include <stdint.h>
#include "backend/backend_impl.h"
#include "backend/control/rc_util.h"
#include "backend/tensor/tensor_impl.h"

/* Above this many runs the copy through the host (one read, one write) is cheaper than the device's calls. */
enum { MAX_DEVICE_RUNS = 4096 };

/* How many trailing dims of t are laid out row-major (each stride the product of the sizes after it). */
static size_t contiguous_tail(const tb_tensor *t) {
  int64_t expect = 1;
  size_t tail = 0;
  for (size_t d = t->ndim; d-- > 0; tail++) {
    if (t->shape[d] != 1 && t->strides[d] != expect) break;
    expect *= t->shape[d];
  }
  return tail;
}

static bool same_shape(const tb_tensor *a, const tb_tensor *b) {
  if (a->ndim != b->ndim || a->dtype != b->dtype) return false;
  for (size_t d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

tb_status tb_rc_copy(tb_tensor *dst, const tb_tensor *src) {
  tb_storage *ds = dst->storage, *ss = src->storage;
  tb_backend *b = ds->backend;
  bool device_pair = b == ss->backend && tb_backend_kind_of(b) != TB_BACKEND_CPU && ds != ss && ds->block && ss->block &&
                     b->ops->copy && same_shape(dst, src) && dst->numel > 0 && !(dst->contiguous && src->contiguous);
  if (!device_pair) return tb_tensor_copy(dst, src);
  size_t td = contiguous_tail(dst), ts = contiguous_tail(src), tail = td < ts ? td : ts, outer_dims = dst->ndim - tail;
  int64_t run = 1, runs = 1;
  for (size_t d = outer_dims; d < dst->ndim; d++) run *= dst->shape[d];
  for (size_t d = 0; d < outer_dims; d++) runs *= dst->shape[d];
  if (runs > MAX_DEVICE_RUNS || tb_tensor_check_writable("tb_rc_copy", dst) != TB_OK) return tb_tensor_copy(dst, src);
  size_t es = tb_dtype_size(dst->dtype);
  int64_t idx[TB_MAX_DIMS] = {0};
  for (int64_t r = 0; r < runs; r++) {
    int64_t d_off = dst->offset, s_off = src->offset;
    for (size_t d = 0; d < outer_dims; d++) {
      d_off += idx[d] * dst->strides[d];
      s_off += idx[d] * src->strides[d];
    }
    tb_status st = b->ops->copy(b->state, ds->block->mem, ds->block->offset + (size_t)d_off * es, ss->block->mem,
                                ss->block->offset + (size_t)s_off * es, (size_t)run * es);
    if (st != TB_OK) return st;
    for (size_t d = outer_dims; d-- > 0;) {
      if (++idx[d] < dst->shape[d]) break;
      idx[d] = 0;
    }
  }
  return TB_OK;
}
