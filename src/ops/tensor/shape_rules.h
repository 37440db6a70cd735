/* Internal: the shape arithmetic of the tensor family's operators, shared by their infer functions (where
 * a dim may be unknown: -1) and their CPU kernels (every dim known), so both agree by construction.
 * Each rule returns false with the reason in `why` when the operands are invalid. */
#ifndef TB_OPS_TENSOR_SHAPE_RULES_H
#define TB_OPS_TENSOR_SHAPE_RULES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tensorbridge/status.h"

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

/* An axis attribute or entry (`what` names it in the message) against rank: *out in [0, rank). */
bool tb_rule_axis(const char *what, int64_t axis, size_t rank, size_t *out, char *why, size_t cap);

/* Squeeze/Unsqueeze's axes (n entries) against rank into mask (rank entries, true for a listed axis): each
 * in [-rank, rank), none repeated. */
bool tb_rule_axes_mask(const int64_t *axes, size_t n, size_t rank, bool *mask, char *why, size_t cap);

/* Squeeze of dims (rank entries, -1 where unknown) by axes (n entries; n 0: no axes, every dim of size 1):
 * mask[d] true for a dim removed (a listed dim must be 1 or unknown). *known false when there are no axes
 * and a dim is unknown (which dims go is not known yet). */
bool tb_rule_squeeze(size_t rank, const int64_t *dims, const int64_t *axes, size_t n, bool *mask, bool *known,
                     char *why, size_t cap);

/* Unsqueeze's checks before the axes' values: they must be given, and the output rank in_rank + n (each -1
 * when not known yet) at most TB_MAX_DIMS. TB_ERR_MODEL or TB_ERR_UNSUPPORTED with the reason in why. */
tb_status tb_rule_unsqueeze_rank(bool given, int64_t in_rank, int64_t n, char *why, size_t cap);

/* Unsqueeze of dims (in_rank entries) by axes (n entries, against the output rank in_rank + n, checked by
 * tb_rule_unsqueeze_rank): mask and out (in_rank + n entries each) true and 1 at the listed axes, false
 * and the input's dims in order elsewhere. */
bool tb_rule_unsqueeze(size_t in_rank, const int64_t *dims, const int64_t *axes, size_t n, bool *mask, int64_t *out,
                       char *why, size_t cap);

/* Input i of a Concat for tb_rule_concat: false when its rank is not known; else its rank and dims (-1
 * where unknown; dims has TB_MAX_DIMS entries). */
typedef bool (*tb_rule_input_dims)(void *arg, size_t i, size_t *rank, int64_t *dims);

/* Concat of n inputs (read through get) along axis: every ranked input has one rank (not 0) and equal dims
 * off the axis. *rank is that rank (SIZE_MAX when no input is ranked: nothing else is set), *a the axis
 * in [0, rank), out the output dims: the known value off the axis, the sum on it, -1 where unknown. */
bool tb_rule_concat(size_t n, tb_rule_input_dims get, void *arg, int64_t axis, size_t *rank, size_t *a, int64_t *out,
                    char *why, size_t cap);

/* "[2, 3, -1]" into buf. */
const char *tb_rule_dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims);

#endif
