/* The strided, broadcasting element walk shared by every elementwise CPU kernel (see broadcast.h). */
#include "backend/cpu/kernels/elementwise/broadcast.h"

bool tb_bcast_shape(size_t n, const size_t *ndims, const int64_t *const *shapes, size_t *out_ndim, int64_t *out_shape) {
  size_t nd = 0;
  for (size_t k = 0; k < n; k++) {
    if (ndims[k] > TB_MAX_DIMS) return false;
    if (ndims[k] > nd) nd = ndims[k];
  }
  for (size_t d = 0; d < nd; d++) out_shape[d] = 1;
  for (size_t k = 0; k < n; k++) {
    size_t lead = nd - ndims[k];
    for (size_t d = 0; d < ndims[k]; d++) {
      int64_t dim = shapes[k][d], *o = &out_shape[lead + d];
      if (dim == *o || dim == 1) continue;
      if (*o != 1) return false;
      *o = dim;
    }
  }
  *out_ndim = nd;
  return true;
}

/* Byte strides of operand k aligned to the output's nd dims (0 where it broadcasts); false when its
 * shape does not broadcast to out_shape. */
static bool aligned_steps(const tb_bcast_operand *op, size_t nd, const int64_t *out_shape, int64_t *steps) {
  if (op->ndim > nd) return false;
  size_t lead = nd - op->ndim;
  int64_t packed = 1;
  for (size_t i = op->ndim; i-- > 0;) {
    int64_t dim = op->shape[i];
    int64_t stride = op->strides ? op->strides[i] : packed;
    packed *= dim;
    int64_t out_dim = out_shape[lead + i];
    if (dim == out_dim)
      steps[lead + i] = dim == 1 ? 0 : stride * (int64_t)op->elem_size;
    else if (dim == 1)
      steps[lead + i] = 0;
    else
      return false;
  }
  for (size_t d = 0; d < lead; d++) steps[d] = 0;
  return true;
}

bool tb_bcast_walk(const tb_bcast_operand *ops, size_t n_ops, tb_bcast_loop loop, const void *params) {
  if (n_ops == 0 || n_ops > TB_BCAST_MAX_OPERANDS || ops[0].ndim > TB_MAX_DIMS) return false;
  size_t nd = ops[0].ndim;
  int64_t shape[TB_MAX_DIMS];
  int64_t steps[TB_BCAST_MAX_OPERANDS][TB_MAX_DIMS];
  for (size_t d = 0; d < nd; d++) shape[d] = ops[0].shape[d];
  for (size_t k = 0; k < n_ops; k++)
    if (!aligned_steps(&ops[k], nd, shape, steps[k])) return false;
  for (size_t d = 0; d < nd; d++)
    if (shape[d] == 0) return true;

  /* Merge: drop dims of size 1, and fold dim d into d-1 when every operand steps over d-1 exactly as
   * a run of d would continue. */
  size_t m = 0;
  for (size_t d = 0; d < nd; d++) {
    if (shape[d] == 1) continue;
    bool merge = m > 0;
    for (size_t k = 0; merge && k < n_ops; k++) merge = steps[k][m - 1] == steps[k][d] * shape[d];
    if (merge) {
      shape[m - 1] *= shape[d];
      for (size_t k = 0; k < n_ops; k++) steps[k][m - 1] = steps[k][d];
    } else {
      shape[m] = shape[d];
      for (size_t k = 0; k < n_ops; k++) steps[k][m] = steps[k][d];
      m++;
    }
  }

  char *p[TB_BCAST_MAX_OPERANDS];
  int64_t row_step[TB_BCAST_MAX_OPERANDS];
  for (size_t k = 0; k < n_ops; k++) {
    p[k] = ops[k].data;
    row_step[k] = m > 0 ? steps[k][m - 1] : 0;
  }
  if (m <= 1) {
    loop(p, row_step, m == 1 ? shape[0] : 1, params);
    return true;
  }
  /* Odometer over the outer m-1 dims. */
  int64_t idx[TB_MAX_DIMS] = {0};
  for (;;) {
    loop(p, row_step, shape[m - 1], params);
    size_t d = m - 1;
    for (;;) {
      if (d == 0) return true;
      d--;
      idx[d]++;
      for (size_t k = 0; k < n_ops; k++) p[k] += steps[k][d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < n_ops; k++) p[k] -= steps[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}
