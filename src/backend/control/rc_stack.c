/* Stacking a body's per-iteration outputs into one node output along a new axis: Loop's scan outputs
 * (axis 0) and Scan's (any axis, either direction). */
#include "backend/control/rc_util.h"

static tb_status empty_output(tb_kernel_ctx *ctx, size_t i, const char *what, int64_t axis, const tb_value_type *declared) {
  if (!declared || !declared->has_dtype || !declared->has_shape)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s ran no iterations and the body does not declare its shape", what);
  int64_t shape[TB_MAX_DIMS];
  size_t rank = declared->ndim + 1;
  if (rank > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s would have rank %zu", what, rank);
  if (axis < 0) axis += (int64_t)rank;
  if (axis < 0 || axis >= (int64_t)rank) return tb_kernel_error(ctx, TB_ERR_MODEL, "%s: axis out of range for rank %zu", what, rank);
  for (size_t d = 0, s = 0; d < rank; d++) {
    if ((int64_t)d == axis) {
      shape[d] = 0;
      continue;
    }
    shape[d] = declared->dims[s++].value;
    if (shape[d] < 0)
      return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s ran no iterations and the body does not declare its shape", what);
  }
  return tb_rc_output(ctx, i, declared->dtype, rank, shape, NULL);
}

tb_status tb_rc_stack(tb_kernel_ctx *ctx, size_t i, const char *what, tb_tensor *const *parts, size_t count, int64_t axis,
                   bool reverse, const tb_value_type *declared) {
  if (!tb_rc_has_output(ctx, i)) return TB_OK;
  if (count == 0) return empty_output(ctx, i, what, axis, declared);
  const tb_tensor *first = parts[0];
  size_t rank = tb_tensor_ndim(first) + 1;
  if (rank > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s would have rank %zu", what, rank);
  if (axis < 0) axis += (int64_t)rank;
  if (axis < 0 || axis >= (int64_t)rank)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s: axis %lld is out of range for rank %zu", what, (long long)axis, rank);
  char a[96], b[96];
  for (size_t t = 1; t < count; t++) {
    if (tb_tensor_dtype(parts[t]) != tb_tensor_dtype(first) ||
        !tb_rc_shape_is(parts[t], tb_tensor_ndim(first), tb_tensor_shape(first)))
      return tb_kernel_error(ctx, TB_ERR_MODEL, "%s is %s %s at iteration %zu but %s %s at iteration 0", what,
                             tb_dtype_name(tb_tensor_dtype(parts[t])), tb_rc_shape_str(parts[t], a, sizeof a), t,
                             tb_dtype_name(tb_tensor_dtype(first)), tb_rc_shape_str(first, b, sizeof b));
  }
  int64_t shape[TB_MAX_DIMS];
  const int64_t *part_shape = tb_tensor_shape(first);
  for (size_t d = 0, s = 0; d < rank; d++) shape[d] = (int64_t)d == axis ? (int64_t)count : part_shape[s++];
  tb_tensor *out = NULL;
  tb_status st = tb_rc_output(ctx, i, tb_tensor_dtype(first), rank, shape, &out);
  for (size_t t = 0; st == TB_OK && t < count; t++) {
    tb_tensor *slot = NULL;
    st = tb_rc_slice_view(out, (size_t)axis, reverse ? (int64_t)(count - 1 - t) : (int64_t)t, &slot);
    if (st == TB_OK) st = tb_rc_copy(slot, parts[t]);
    tb_tensor_destroy(slot);
  }
  return st;
}
