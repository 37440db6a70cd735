/* The shape arithmetic of Reshape, Slice, Expand, Squeeze, Unsqueeze and Concat, shared by their infer
 * functions and CPU kernels. */
#include "ops/tensor/shape_rules.h"
#include <inttypes.h>
#include <stdio.h>
#include "tensorbridge/tensor.h"

int64_t tb_rule_numel(size_t ndim, const int64_t *dims) {
  int64_t n = 1;
  bool unknown = false, overflow = false;
  for (size_t d = 0; d < ndim; d++) {
    if (dims[d] == 0) return 0;
    if (dims[d] < 0) {
      unknown = true;
      continue;
    }
    if (__builtin_mul_overflow(n, dims[d], &n)) overflow = true;
  }
  if (overflow) return -2;
  return unknown ? -1 : n;
}

const char *tb_rule_dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims) {
  size_t len = 0;
  if (cap == 0) return buf;
  buf[0] = '\0';
  int w = snprintf(buf, cap, "[");
  len = w > 0 ? (size_t)w : 0;
  for (size_t d = 0; d < ndim && len < cap; d++) {
    w = snprintf(buf + len, cap - len, d ? ", %" PRId64 : "%" PRId64, dims[d]);
    if (w < 0) break;
    len += (size_t)w;
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

bool tb_rule_reshape(size_t in_ndim, const int64_t *in, size_t n, const int64_t *shape, bool allowzero, int64_t *out,
                     char *why, size_t cap) {
  char a[160], b[160];
  int infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < n; i++) {
    int64_t s = shape[i];
    if (s == -1) {
      if (infer_at >= 0) {
        snprintf(why, cap, "shape %s has more than one -1", tb_rule_dims_str(a, sizeof a, n, shape));
        return false;
      }
      infer_at = (int)i;
      out[i] = -1;
    } else if (s < -1) {
      snprintf(why, cap, "shape %s has the negative size %" PRId64 " at %zu", tb_rule_dims_str(a, sizeof a, n, shape), s,
               i);
      return false;
    } else if (s == 0 && !allowzero) {
      if (i >= in_ndim) {
        snprintf(why, cap, "shape %s copies dim %zu (0) but the input %s has rank %zu",
                 tb_rule_dims_str(a, sizeof a, n, shape), i, tb_rule_dims_str(b, sizeof b, in_ndim, in), in_ndim);
        return false;
      }
      out[i] = in[i];
    } else {
      if (s == 0) has_zero = true;
      out[i] = s;
    }
  }
  if (has_zero && infer_at >= 0) {
    snprintf(why, cap, "shape %s has both 0 and -1 with allowzero=1", tb_rule_dims_str(a, sizeof a, n, shape));
    return false;
  }
  int64_t in_numel = tb_rule_numel(in_ndim, in);
  if (in_numel == -2) {
    snprintf(why, cap, "input shape %s has too many elements", tb_rule_dims_str(a, sizeof a, in_ndim, in));
    return false;
  }
  if (infer_at >= 0) {
    out[infer_at] = 1;
    int64_t rest = tb_rule_numel(n, out);
    out[infer_at] = -1;
    if (rest == -2) {
      snprintf(why, cap, "shape %s has too many elements", tb_rule_dims_str(a, sizeof a, n, shape));
      return false;
    }
    if (in_numel < 0 || rest < 0) return true; /* not known yet */
    if (rest == 0 || in_numel % rest != 0) {
      snprintf(why, cap, "cannot reshape %s (%" PRId64 " elements) to %s: the -1 cannot be inferred",
               tb_rule_dims_str(a, sizeof a, in_ndim, in), in_numel, tb_rule_dims_str(b, sizeof b, n, shape));
      return false;
    }
    out[infer_at] = in_numel / rest;
    return true;
  }
  int64_t out_numel = tb_rule_numel(n, out);
  if (out_numel == -2) {
    snprintf(why, cap, "shape %s has too many elements", tb_rule_dims_str(a, sizeof a, n, shape));
    return false;
  }
  if (in_numel >= 0 && out_numel >= 0 && in_numel != out_numel) {
    snprintf(why, cap, "cannot reshape %s (%" PRId64 " elements) to %s (%" PRId64 " elements)",
             tb_rule_dims_str(a, sizeof a, in_ndim, in), in_numel, tb_rule_dims_str(b, sizeof b, n, out), out_numel);
    return false;
  }
  return true;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

bool tb_rule_slice(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count, char *why,
                   size_t cap) {
  if (step == 0) {
    snprintf(why, cap, "a step of 0");
    return false;
  }
  if (start < 0) start = start < -dim ? -1 - dim : start + dim; /* no overflow near INT64_MIN */
  if (end < 0) end = end < -dim ? -1 - dim : end + dim;
  int64_t n;
  if (step > 0) {
    start = clamp64(start, 0, dim);
    end = clamp64(end, 0, dim);
    n = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = clamp64(start, 0, dim - 1);
    end = clamp64(end, -1, dim - 1);
    n = start > end ? (start - end - 1) / (step == INT64_MIN ? INT64_MAX : -step) + 1 : 0;
  }
  *first = start;
  *count = n;
  return true;
}

bool tb_rule_broadcast(size_t na, const int64_t *a, size_t nb, const int64_t *b, int64_t *out, char *why, size_t cap) {
  size_t n = na > nb ? na : nb;
  for (size_t k = 0; k < n; k++) {
    int64_t x = k < n - na ? 1 : a[k - (n - na)];
    int64_t y = k < n - nb ? 1 : b[k - (n - nb)];
    if (x == 1)
      out[k] = y;
    else if (y == 1)
      out[k] = x;
    else if (x < 0 || y < 0)
      out[k] = x < 0 && y < 0 ? -1 : (x < 0 ? y : x);
    else if (x == y)
      out[k] = x;
    else {
      char sa[160], sb[160];
      snprintf(why, cap, "shapes %s and %s cannot broadcast (dim %zu: %" PRId64 " vs %" PRId64 ")",
               tb_rule_dims_str(sa, sizeof sa, na, a), tb_rule_dims_str(sb, sizeof sb, nb, b), k, x, y);
      return false;
    }
  }
  return true;
}

bool tb_rule_slice_plan(size_t rank, const int64_t *dims, size_t n, const int64_t *starts, const int64_t *ends,
                        const int64_t *axes, const int64_t *steps, tb_slice_plan *plan, char *why, size_t cap) {
  bool seen[8] = {false};
  if (rank > 8) {
    snprintf(why, cap, "rank %zu is more than 8", rank);
    return false;
  }
  for (size_t d = 0; d < rank; d++) {
    plan->first[d] = 0;
    plan->step[d] = 1;
    plan->count[d] = dims[d];
  }
  for (size_t i = 0; i < n; i++) {
    int64_t axis = axes ? axes[i] : (int64_t)i;
    if (axis < -(int64_t)rank || axis >= (int64_t)rank) {
      snprintf(why, cap, "axis %" PRId64 " is out of range for rank %zu", axis, rank);
      return false;
    }
    if (axis < 0) axis += (int64_t)rank;
    if (seen[axis]) {
      snprintf(why, cap, "axis %" PRId64 " is sliced twice", axis);
      return false;
    }
    seen[axis] = true;
    int64_t step = steps ? steps[i] : 1;
    if (step == 0) {
      snprintf(why, cap, "the step for axis %" PRId64 " is 0", axis);
      return false;
    }
    plan->step[axis] = step;
    if (dims[axis] < 0) {
      plan->count[axis] = -1;
      continue;
    }
    if (!tb_rule_slice(dims[axis], starts[i], ends[i], step, &plan->first[axis], &plan->count[axis], why, cap))
      return false;
  }
  return true;
}

bool tb_rule_axis(const char *what, int64_t axis, size_t rank, size_t *out, char *why, size_t cap) {
  int64_t r = (int64_t)rank;
  if (axis < -r || axis >= r) {
    snprintf(why, cap, "%s %" PRId64 " is out of range for rank %zu (valid: %" PRId64 " to %" PRId64 ")", what, axis,
             rank, -r, r - 1);
    return false;
  }
  *out = (size_t)(axis < 0 ? axis + r : axis);
  return true;
}

bool tb_rule_axes_mask(const int64_t *axes, size_t n, size_t rank, bool *mask, char *why, size_t cap) {
  for (size_t d = 0; d < rank; d++) mask[d] = false;
  for (size_t i = 0; i < n; i++) {
    size_t a;
    if (!tb_rule_axis("axes", axes[i], rank, &a, why, cap)) return false;
    if (mask[a]) {
      snprintf(why, cap, "axes repeats axis %" PRId64, axes[i]);
      return false;
    }
    mask[a] = true;
  }
  return true;
}

bool tb_rule_squeeze(size_t rank, const int64_t *dims, const int64_t *axes, size_t n, bool *mask, bool *known,
                     char *why, size_t cap) {
  *known = true;
  if (n == 0) { /* no axes: every dim of size 1 */
    for (size_t d = 0; d < rank; d++) {
      if (dims[d] < 0) *known = false;
      mask[d] = dims[d] == 1;
    }
    return true;
  }
  if (!tb_rule_axes_mask(axes, n, rank, mask, why, cap)) return false;
  for (size_t d = 0; d < rank; d++)
    if (mask[d] && dims[d] >= 0 && dims[d] != 1) {
      snprintf(why, cap, "cannot squeeze axis %zu of size %" PRId64 " (it must be 1)", d, dims[d]);
      return false;
    }
  return true;
}

tb_status tb_rule_unsqueeze_rank(bool given, int64_t in_rank, int64_t n, char *why, size_t cap) {
  if (!given) {
    snprintf(why, cap, "axes are required; give the attribute (opset < 13) or input 1");
    return TB_ERR_MODEL;
  }
  if (in_rank >= 0 && n >= 0 && in_rank + n > TB_MAX_DIMS) {
    snprintf(why, cap, "the output would have %" PRId64 " dims; at most %d are supported", in_rank + n,
             TB_MAX_DIMS);
    return TB_ERR_UNSUPPORTED;
  }
  return TB_OK;
}

bool tb_rule_unsqueeze(size_t in_rank, const int64_t *dims, const int64_t *axes, size_t n, bool *mask, int64_t *out,
                       char *why, size_t cap) {
  size_t rank = in_rank + n, k = 0;
  if (!tb_rule_axes_mask(axes, n, rank, mask, why, cap)) return false;
  for (size_t d = 0; d < rank; d++) out[d] = mask[d] ? 1 : dims[k++];
  return true;
}

bool tb_rule_concat(size_t n, tb_rule_input_dims get, void *arg, int64_t axis, size_t *rank, size_t *a, int64_t *out,
                    char *why, size_t cap) {
  size_t first = SIZE_MAX, r = 0;
  int64_t sum = 0, dims[TB_MAX_DIMS];
  *rank = SIZE_MAX;
  for (size_t i = 0; i < n; i++) {
    size_t ri;
    if (!get(arg, i, &ri, dims)) {
      sum = -1;
      continue;
    }
    if (first == SIZE_MAX) {
      first = i;
      r = ri;
      if (r == 0) {
        snprintf(why, cap, "cannot concatenate scalars (rank 0)");
        return false;
      }
      if (!tb_rule_axis("axis", axis, r, a, why, cap)) return false;
      for (size_t d = 0; d < r; d++) out[d] = -1;
    } else if (ri != r) {
      snprintf(why, cap, "input %zu has rank %zu but input %zu has rank %zu; give every input one rank", i, ri, first,
               r);
      return false;
    }
    for (size_t d = 0; d < r; d++) {
      int64_t v = dims[d];
      if (d == *a) {
        sum = sum < 0 || v < 0 ? -1 : sum + v;
        continue;
      }
      if (v >= 0 && out[d] >= 0 && v != out[d]) {
        snprintf(why, cap, "input %zu has size %" PRId64 " on dim %zu where another input has %" PRId64
                           "; only axis %zu may differ", i, v, d, out[d], *a);
        return false;
      }
      if (out[d] < 0) out[d] = v;
    }
  }
  if (first == SIZE_MAX) return true;
  out[*a] = sum;
  *rank = r;
  return true;
}
