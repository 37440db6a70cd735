/* Internal: the shape arithmetic of the tensor family's operators, shared by their infer functions (where
 * a dim may be unknown: -1) and their CPU kernels (every dim known), so both agree by construction.
 * Each rule returns false with the reason in `why` when the operands are invalid. */
#ifndef TB_OPS_TENSOR_SHAPE_RULES_H
#define TB_OPS_TENSOR_SHAPE_RULES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The product of dims: -1 when one is unknown (and none is 0), -2 on int64 overflow. */
int64_t tb_rule_numel(size_t ndim, const int64_t *dims);

/* Reshape: `shape` (n entries) against the input dims: 0 copies the input's dim unless allowzero, one -1
 * is inferred. out[i] -1 where it cannot be known yet. */
bool tb_rule_reshape(size_t in_ndim, const int64_t *in, size_t n, const int64_t *shape, bool allowzero, int64_t *out,
                     char *why, size_t cap);

/* Slice along one axis of size dim (known): start/end/step as given (step != 0), clamped as the ONNX
 * spec says. *first is the first index read, *count the number of elements. */
bool tb_rule_slice(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count, char *why,
                   size_t cap);

/* Numpy broadcast of two shapes, right-aligned (Expand): out has max(na, nb) dims; -1 where unknown. */
bool tb_rule_broadcast(size_t na, const int64_t *a, size_t nb, const int64_t *b, int64_t *out, char *why, size_t cap);

/* Slice of a tensor of rank `rank` (dims -1 where unknown): n starts/ends, axes (NULL: 0..n-1), steps
 * (NULL: 1). For every dim: the first index read, the step and the count (-1 when the dim is unknown);
 * dims not sliced keep first 0, step 1, count dim. */
typedef struct tb_slice_plan {
  int64_t first[8], step[8], count[8];
} tb_slice_plan;
bool tb_rule_slice_plan(size_t rank, const int64_t *dims, size_t n, const int64_t *starts, const int64_t *ends,
                        const int64_t *axes, const int64_t *steps, tb_slice_plan *plan, char *why, size_t cap);

/* "[2, 3, -1]" into buf. */
const char *tb_rule_dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims);

#endif
