/* The CUDA kernels' broadcast descriptor made on the host (cuda_broadcast.h). */
#include "backend/cuda/cuda_broadcast.h"
#include <stdio.h>
#include <string.h>
#include <tensorbridge/tensor.h>
#include "core/error.h"

/* "[2,3,4]" */
static void dims_text(char *buf, size_t cap, size_t n, const int64_t *d) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < n && len < cap; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? "," : "", (long long)d[i]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

static tb_status refuse(tb_status st, const char *why, size_t a_ndim, const int64_t *a, size_t b_ndim, const int64_t *b) {
  char ta[160], tb[160];
  dims_text(ta, sizeof ta, a_ndim, a);
  dims_text(tb, sizeof tb, b_ndim, b);
  return tb_error(st, "shapes %s and %s %s", ta, tb, why);
}

tb_status tb_cuda_broadcast_make(size_t a_ndim, const int64_t *a, size_t b_ndim, const int64_t *b, tb_cuda_broadcast *out,
                                 int64_t *out_shape, size_t *out_ndim, bool *same) {
  memset(out, 0, sizeof *out);
  size_t n = a_ndim > b_ndim ? a_ndim : b_ndim;
  if (n > TB_MAX_DIMS) return refuse(TB_ERR_UNSUPPORTED, "have more dims than tensors hold", a_ndim, a, b_ndim, b);
  *same = a_ndim == b_ndim && (a_ndim == 0 || memcmp(a, b, a_ndim * sizeof *a) == 0);
  /* Per output dim (right-aligned): the size, and each input's size there (1 where it has no such dim). */
  int64_t dims[TB_MAX_DIMS], da[TB_MAX_DIMS], db[TB_MAX_DIMS];
  for (size_t d = 0; d < n; d++) {
    da[d] = d + a_ndim >= n ? a[d + a_ndim - n] : 1;
    db[d] = d + b_ndim >= n ? b[d + b_ndim - n] : 1;
    if (da[d] != db[d] && da[d] != 1 && db[d] != 1)
      return refuse(TB_ERR_INVALID_ARGUMENT, "do not broadcast together (ONNX broadcasting: each dim equal, or 1)", a_ndim, a,
                    b_ndim, b);
    dims[d] = da[d] == 1 ? db[d] : da[d];
    out_shape[d] = dims[d];
  }
  *out_ndim = n;
  /* Row-major strides of each input, 0 where it broadcasts; then merge neighbours that step alike. */
  int64_t sa[TB_MAX_DIMS], sb[TB_MAX_DIMS], ra = 1, rb = 1;
  for (size_t d = n; d-- > 0;) {
    sa[d] = da[d] == 1 ? 0 : ra;
    sb[d] = db[d] == 1 ? 0 : rb;
    ra *= da[d];
    rb *= db[d];
  }
  int rank = 0;
  for (size_t d = 0; d < n; d++) {
    if (dims[d] == 1) continue; /* a dim of 1 steps nowhere */
    if (rank > 0) {
      int k = rank - 1;
      bool merge_a = out->a_strides[k] == sa[d] * dims[d], merge_b = out->b_strides[k] == sb[d] * dims[d];
      if (merge_a && merge_b) {
        out->dims[k] *= dims[d];
        out->a_strides[k] = sa[d];
        out->b_strides[k] = sb[d];
        continue;
      }
    }
    if (rank == TB_CUDA_MAX_RANK)
      return refuse(TB_ERR_UNSUPPORTED, "broadcast over more than 8 dims that cannot be merged, past what the CUDA kernels take",
                    a_ndim, a, b_ndim, b);
    out->dims[rank] = dims[d];
    out->a_strides[rank] = sa[d];
    out->b_strides[rank] = sb[d];
    rank++;
  }
  if (rank == 0) { /* one element */
    out->dims[0] = 1;
    rank = 1;
  }
  out->rank = rank;
  return TB_OK;
}
