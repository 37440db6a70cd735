/* CUDA kernels of the layout and index ops beyond cuda_ops_data.c / _index.c (kernels/71_index_more.cu), for
 * data of any dtype of 1, 2, 4 or 8 bytes unless said: DepthToSpace (DCR, CRD) and SpaceToDepth as one strided
 * copy of a 6-d view (as the CPU does it), Trilu (upper or lower, the k input), ReverseSequence, OneHot (any
 * numeric indices, negative ones wrapped), GatherND (batch_dims), Scatter (the deprecated op, ScatterElements
 * without a reduction) and ScatterElements / ScatterND with a reduction (add, mul, min, max: deterministic,
 * one thread per set of outputs, the CPU's order; ScatterND of several rows through kernels/73_scatter_nd.cu, each
 * target's rows in order), and NonZero (its output's size depends on the values: the nonzeros are counted per
 * chunk on the device, whose last block turns the counts into offsets and the total; the host reads the total, one
 * 8-byte word, to size the output, then the chunks fill it). Indices are read back and checked as in cuda_ops_index.c. */
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/tensor/tensor_params.h"

#define SIZED(name) {"tb_cu_dm_" name "_b1", "tb_cu_dm_" name "_b2", "tb_cu_dm_" name "_b4", "tb_cu_dm_" name "_b8"}
static const char *const trilu_kernels[4] = SIZED("trilu"), *const reverse_kernels[4] = SIZED("reverse_sequence"),
                         *const onehot_kernels[4] = SIZED("onehot"), *const gather_nd_kernels[4] = SIZED("gather_nd");

/* The chunks NonZero's passes cut the input into: enough threads to fill a GPU, at least 256 elements each. */
enum { NONZERO_CHUNKS = 8192, NONZERO_MIN_CHUNK = 256 };

/* DepthToSpace / SpaceToDepth on NCHW: the input viewed as 6 dims, permuted into the output. */
static tb_status depth_space_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  const tb_depth_space_params *p = ctx->params;
  if (x->ndim != 4) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the input has rank %zu; give an NCHW tensor (rank 4)", x->ndim);
  int64_t b = p->blocksize, n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  if (b < 1) return tb_kernel_error(ctx, TB_ERR_MODEL, "blocksize is %lld; give 1 or more", (long long)b);
  int64_t view[6];
  int perm[6];
  if (p->to_space && !p->crd) { /* DCR: [n, b, b, c', h, w] -> [n, c', h, b, w, b] */
    memcpy(view, (int64_t[]){n, b, b, c / (b * b), h, w}, sizeof view);
    memcpy(perm, (int[]){0, 3, 4, 1, 5, 2}, sizeof perm);
  } else if (p->to_space) { /* CRD: [n, c', b, b, h, w] -> [n, c', h, b, w, b] */
    memcpy(view, (int64_t[]){n, c / (b * b), b, b, h, w}, sizeof view);
    memcpy(perm, (int[]){0, 1, 4, 2, 5, 3}, sizeof perm);
  } else { /* [n, c, h', b, w', b] -> [n, b, b, c, h', w'] */
    memcpy(view, (int64_t[]){n, c, h / b, b, w / b, b}, sizeof view);
    memcpy(perm, (int[]){0, 3, 5, 1, 2, 4}, sizeof perm);
  }
  int64_t vs[6], src[6], shape[6], dst[6], count = 1;
  tb_shape_strides(6, view, vs);
  for (int d = 0; d < 6; d++) shape[d] = view[perm[d]], src[d] = vs[perm[d]], count *= shape[d];
  if (count != tb_tensor_numel(y))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the %lld-element view does not fill the %lld-element output", (long long)count,
                           (long long)tb_tensor_numel(y));
  tb_shape_strides(6, shape, dst);
  return tb_cuda_dm_strided_copy(ctx, x, 0, src, y, 0, dst, 6, shape);
}

/* One int32 / int64 scalar input read back (Trilu's k). */
static tb_status read_scalar(tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, int64_t *out) {
  if (tb_tensor_numel(t) != 1)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "%s holds %lld values; give one (a scalar)", what, (long long)tb_tensor_numel(t));
  if (t->dtype == TB_DTYPE_I64) return tb_tensor_copy_to_host(t, out, sizeof *out);
  int32_t v = 0;
  tb_status st = tb_tensor_copy_to_host(t, &v, sizeof v);
  *out = v;
  return st;
}

static tb_status trilu_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *kt = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  tb_tensor *y = ctx->outputs[0];
  if (x->ndim < 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the input has rank %zu; Trilu needs rank 2 or more", x->ndim);
  int64_t k = 0;
  if (kt && (st = read_scalar(ctx, kt, "k", &k)) != TB_OK) return st;
  tb_cuda_dm d = {.mode = ((const tb_trilu_params *)ctx->params)->upper, .p = {x->shape[x->ndim - 2], x->shape[x->ndim - 1], k}};
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(trilu_kernels, x->dtype), x, NULL, NULL, y, tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}

/* ReverseSequence: the lengths read back and checked in [0, time] with the CPU's words. */
static tb_status reverse_sequence_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *lens = ctx->inputs[1];
  tb_tensor *y = ctx->outputs[0];
  const tb_reverse_sequence_params *p = ctx->params;
  if (x->ndim < 2 || p->batch_axis < 0 || p->time_axis < 0 || p->batch_axis > 1 || p->time_axis > 1)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the input has rank %zu with batch_axis %lld and time_axis %lld; give rank 2 or more and axes 0 and 1",
                           x->ndim, (long long)p->batch_axis, (long long)p->time_axis);
  int64_t batch = x->shape[p->batch_axis], time = x->shape[p->time_axis];
  if (tb_tensor_numel(lens) != batch)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "sequence_lens has %lld entries for a batch of %lld", (long long)tb_tensor_numel(lens),
                           (long long)batch);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  int64_t *v = malloc((size_t)batch * sizeof *v);
  int32_t *v32 = malloc((size_t)batch * sizeof *v32);
  if (!v || !v32) st = tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for %lld sequence lengths", (long long)batch);
  if (st == TB_OK) st = lens->dtype == TB_DTYPE_I64 ? tb_tensor_copy_to_host(lens, v, (size_t)batch * sizeof *v)
                                                    : tb_tensor_copy_to_host(lens, v32, (size_t)batch * sizeof *v32);
  for (int64_t b = 0; st == TB_OK && b < batch; b++) {
    int64_t len = lens->dtype == TB_DTYPE_I64 ? v[b] : v32[b];
    if (len < 0 || len > time)
      st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "sequence length %lld (batch %lld) is out of range [0, %lld]", (long long)len,
                           (long long)b, (long long)time);
  }
  free(v);
  free(v32);
  if (st != TB_OK) return st;
  tb_cuda_dm d = {.rank = (int32_t)x->ndim, .mode = (int32_t)lens->dtype, .p = {p->batch_axis, p->time_axis}};
  int64_t xs[TB_MAX_DIMS];
  tb_shape_strides(x->ndim, x->shape, xs);
  memcpy(d.dims, x->shape, x->ndim * sizeof *x->shape);
  d.st[0][0] = xs[p->time_axis];
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(reverse_kernels, x->dtype), x, lens, NULL, y, tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}

/* OneHot(indices, depth, values): the output sized by the op's inference (depth from the host). */
static tb_status onehot_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *ind = ctx->inputs[0], *vals = ctx->inputs[2];
  tb_tensor *y = ctx->outputs[0];
  if (tb_tensor_numel(vals) != 2)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "values holds %lld elements; give 2 (the off value, then the on value)",
                           (long long)tb_tensor_numel(vals));
  size_t axis = 0;
  if ((st = tb_cuda_axis(ctx, ((const tb_axis_params *)ctx->params)->axis, y->ndim, &axis)) != TB_OK) return st;
  int64_t outer = 1, inner = 1, depth = y->shape[axis];
  for (size_t d = 0; d < axis; d++) outer *= y->shape[d];
  for (size_t d = axis + 1; d < y->ndim; d++) inner *= y->shape[d];
  if (outer * inner != tb_tensor_numel(ind))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the output holds %lld rows for %lld indices", (long long)(outer * inner),
                           (long long)tb_tensor_numel(ind));
  tb_cuda_dm d = {.mode = (int32_t)ind->dtype, .p = {outer, depth, inner}};
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(onehot_kernels, y->dtype), ind, NULL, vals, y, tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}

/* GatherND with batch_dims b: rows of k indices per batch, each picking a slice of the data. */
static tb_status gather_nd_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *ind = ctx->inputs[1];
  tb_tensor *y = ctx->outputs[0];
  int64_t b = ((const tb_gather_nd_params *)ctx->params)->batch_dims;
  size_t r = x->ndim, q = ind->ndim;
  if (q < 1 || b < 0 || (size_t)b >= q || (size_t)b > r || ind->shape[q - 1] < 0 || (size_t)(b + ind->shape[q - 1]) > r)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "indices of rank %zu (last dim %lld) with batch_dims %lld do not fit data of rank %zu",
                           q, (long long)(q ? ind->shape[q - 1] : 0), (long long)b, r);
  int64_t k = ind->shape[q - 1], per_batch = 1, slice = 1, tuples = 1, xs[TB_MAX_DIMS];
  for (size_t d = (size_t)b; d < r; d++) per_batch *= x->shape[d];
  for (size_t d = (size_t)(b + k); d < r; d++) slice *= x->shape[d];
  for (size_t d = (size_t)b; d + 1 < q; d++) tuples *= ind->shape[d];
  if (tb_tensor_numel(y) == 0) return TB_OK;
  tb_tensor *flag = NULL;
  if ((st = tb_cuda_index_flag_nd(ctx, ctx->inputs[1], (size_t)k, x->shape + b, (size_t)b, &flag)) != TB_OK) return st;
  tb_cuda_dm d = {.mode = (int32_t)ind->dtype, .p = {k, slice, tuples ? tuples : 1, per_batch}};
  tb_shape_strides(r, x->shape, xs);
  memcpy(d.dims, x->shape + b, (size_t)k * sizeof *xs);
  memcpy(d.st[0], xs + b, (size_t)k * sizeof *xs);
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(gather_nd_kernels, x->dtype), x, ind, flag, y, tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}

/* ScatterElements with a reduction and Scatter (reduction 0: replace, the last duplicate wins as on the CPU):
 * y = data, then one thread per line of the indices along the axis. */
static tb_status scatter_elements_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *idx = ctx->inputs[1], *upd = ctx->inputs[2];
  tb_tensor *y = ctx->outputs[0];
  const tb_scatter_params *p = ctx->params;
  size_t axis = 0, nd = x->ndim;
  if ((st = tb_cuda_axis(ctx, p->axis, nd, &axis)) != TB_OK) return st;
  if (idx->ndim != nd || upd->ndim != nd)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "indices (rank %zu) and updates (rank %zu) must have the data's rank %zu", idx->ndim,
                           upd->ndim, nd);
  for (size_t r = 0; r < nd; r++) {
    if (upd->shape[r] != idx->shape[r])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "updates has size %lld on dim %zu where indices has %lld", (long long)upd->shape[r],
                             r, (long long)idx->shape[r]);
    if (r != axis && idx->shape[r] > x->shape[r])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "indices has size %lld on dim %zu where data has %lld", (long long)idx->shape[r], r,
                             (long long)x->shape[r]);
  }
  if ((st = tb_cuda_copy_bytes(ctx, y, x)) != TB_OK || tb_tensor_numel(idx) == 0) return st;
  tb_tensor *flag = NULL;
  if ((st = tb_cuda_index_flag(ctx, ctx->inputs[1], x->shape[axis], axis, &flag)) != TB_OK) return st;
  int64_t is[TB_MAX_DIMS];
  tb_shape_strides(nd, idx->shape, is);
  tb_cuda_dm d = {.rank = (int32_t)nd, .mode = (int32_t)(x->dtype | (int)p->reduction << 8 | idx->dtype << 16),
                  .p = {(int64_t)axis, x->shape[axis], idx->shape[axis], is[axis]}};
  memcpy(d.dims, idx->shape, nd * sizeof *idx->shape);
  d.dims[axis] = 1;
  tb_shape_strides(nd, x->shape, d.st[3]);
  return tb_cuda_dm_go(ctx, "tb_cu_dm_scatter_elements_reduce", upd, idx, flag, y, tb_tensor_numel(idx) / idx->shape[axis], &d,
                       TB_CUDA_DM_ELEMENTS);
}

/* ScatterND with a reduction over rows addressing targets of a slice each (d.p: k, slice, rows, targets): parallel over
 * the rows (kernels/73_scatter_nd.cu: marks counting each target's rows in a temporary, then each target updated in
 * the rows' order by one thread); a single row, or counts past uint32, by the ordered kernel (one thread per position
 * of the slice walking every row). */
static tb_status scatter_nd_rows(tb_kernel_ctx *ctx, const tb_tensor *upd, const tb_tensor *idx, tb_tensor *flag, tb_tensor *y, tb_cuda_dm *d) {
  int64_t rows = d->p[2], slice = d->p[1], targets = tb_tensor_numel(y) / slice, count = 2 * targets;
  if (rows < 2 || rows > INT32_MAX || targets > INT32_MAX)
    return tb_cuda_dm_go(ctx, "tb_cu_dm_scatter_nd_reduce", upd, idx, flag, y, slice, d, TB_CUDA_DM_ELEMENTS);
  d->p[3] = targets;
  tb_tensor *marks = NULL;
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_I32, 1, &count, &marks);
  if (st != TB_OK) return st;
  if ((st = tb_cuda_dm_go(ctx, "tb_cu_dm_scatter_nd_clear", NULL, NULL, NULL, marks, count, d, TB_CUDA_DM_ELEMENTS)) == TB_OK &&
      (st = tb_cuda_dm_go(ctx, "tb_cu_dm_scatter_nd_mark", NULL, idx, flag, marks, rows, d, TB_CUDA_DM_ELEMENTS)) == TB_OK)
    st = tb_cuda_dm_go(ctx, "tb_cu_dm_scatter_nd_apply", upd, idx, marks, y, rows * slice, d, TB_CUDA_DM_ELEMENTS);
  tb_tensor_destroy(marks);
  return st;
}

/* ScatterND with a reduction: y = data, then the rows' updates in their order per target (scatter_nd_rows). */
static tb_status scatter_nd_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *idx = ctx->inputs[1], *upd = ctx->inputs[2];
  tb_tensor *y = ctx->outputs[0];
  size_t r = x->ndim, q = idx->ndim;
  if (q < 1 || idx->shape[q - 1] < 1 || idx->shape[q - 1] > (int64_t)r)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the indices' last dim must be 1 to the data's rank %zu", r);
  size_t k = (size_t)idx->shape[q - 1];
  int64_t rows = tb_tensor_numel(idx) / (int64_t)k, slice = 1;
  for (size_t d = k; d < r; d++) slice *= x->shape[d];
  if (tb_tensor_numel(upd) != rows * slice)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "updates hold %lld values where the indices address %lld", (long long)tb_tensor_numel(upd),
                           (long long)(rows * slice));
  if ((st = tb_cuda_copy_bytes(ctx, y, x)) != TB_OK || rows * slice == 0) return st;
  tb_tensor *flag = NULL;
  if ((st = tb_cuda_index_flag_nd(ctx, ctx->inputs[1], k, x->shape, 0, &flag)) != TB_OK) return st;
  const tb_scatter_params *p = ctx->params;
  tb_cuda_dm d = {.mode = (int32_t)(x->dtype | (int)p->reduction << 8 | idx->dtype << 16), .p = {(int64_t)k, slice, rows}};
  int64_t xs[TB_MAX_DIMS];
  tb_shape_strides(r, x->shape, xs);
  memcpy(d.dims, x->shape, k * sizeof *xs);
  memcpy(d.st[3], xs, k * sizeof *xs);
  return scatter_nd_rows(ctx, upd, idx, flag, y, &d);
}

/* Int64 slot k of NonZero's scratch (int32 elements: a fill of zeros is then a 4-byte memset, not an upload) as a
 * tensor of its own. */
static tb_status slot_view(tb_tensor *v, int64_t k, tb_tensor **out) {
  const int64_t two = 2, one = 1;
  return tb_tensor_view(v, 1, &two, &one, tb_tensor_offset(v) + 2 * k, out);
}

/* NonZero: the chunks counted on the device into a scratch of chunks + 2 int64 slots (the counts, made each chunk's
 * first column by the count kernel's last block; the total; the blocks' ticket, zeroed first by a memset), the total
 * read back (one 8-byte copy through the pinned staging buffer: the output's size must be known on the host,
 * docs/cuda.md "No host round-trips"), then the fill into [rank, count]. */
static tb_status nonzero_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x = ctx->inputs[0];
  int64_t n = tb_tensor_numel(x), chunk = n / NONZERO_CHUNKS + 1, chunks = 0, count = 0;
  if (chunk < NONZERO_MIN_CHUNK) chunk = NONZERO_MIN_CHUNK;
  chunks = (n + chunk - 1) / chunk;
  tb_tensor *scratch = NULL, *total = NULL, *ticket = NULL, *y = NULL;
  tb_status st = TB_OK;
  tb_cuda_dm d = {.rank = (int32_t)x->ndim, .mode = (int32_t)x->dtype, .p = {n, chunk}};
  memcpy(d.dims, x->shape, x->ndim * sizeof *x->shape);
  if (chunks > 0) {
    const int64_t words = 2 * (chunks + 2);
    const int32_t zero = 0;
    st = tb_tensor_create(ctx->backend, TB_DTYPE_I32, 1, &words, &scratch);
    if (st == TB_OK) st = slot_view(scratch, chunks, &total);
    if (st == TB_OK) st = slot_view(scratch, chunks + 1, &ticket);
    if (st == TB_OK) st = tb_tensor_fill(ticket, &zero);
    if (st == TB_OK) st = tb_cuda_dm_go(ctx, "tb_cu_dm_nonzero_count", x, NULL, NULL, scratch, chunks, &d, TB_CUDA_DM_ELEMENTS);
    if (st == TB_OK) st = tb_tensor_copy_to_host(total, &count, sizeof count);
    if (st == TB_OK && (count < 0 || count > n))
      st = tb_kernel_error(ctx, TB_ERR_DRIVER, "the device counted %lld nonzero values among %lld; the device's memory is not what was written",
                           (long long)count, (long long)n);
  }
  int64_t shape[2] = {(int64_t)x->ndim, count};
  if (st == TB_OK) st = tb_kernel_output(ctx, 0, TB_DTYPE_I64, 2, shape, &y);
  if (st == TB_OK && count > 0 && x->ndim > 0) {
    d.p[2] = count;
    st = tb_cuda_dm_go(ctx, "tb_cu_dm_nonzero_fill", x, scratch, NULL, y, chunks, &d, TB_CUDA_DM_ELEMENTS);
  }
  tb_tensor_destroy(total);
  tb_tensor_destroy(ticket);
  tb_tensor_destroy(scratch);
  return st;
}

static bool has_dtype(const tb_value_type *t) { return t && t->has_dtype; }
/* The dtypes the value kernels (tb_dm_load / tb_dm_store) compute on: not fp8. */
static bool is_computable(const tb_value_type *t) {
  return has_dtype(t) && t->dtype != TB_DTYPE_FP8_E4M3FN && t->dtype != TB_DTYPE_FP8_E5M2 && tb_cuda_dm_movable(t->dtype);
}

static bool data_accepts(const tb_kernel_query *q) { return q->n_inputs >= 1 && tb_cuda_dm_data_type(q->in[0]) && q->n_outputs == 1; }

static bool trilu_accepts(const tb_kernel_query *q) { return data_accepts(q) && (q->n_inputs < 2 || !q->in[1] || tb_cuda_dm_index_type(q->in[1])); }

static bool reverse_sequence_accepts(const tb_kernel_query *q) { return q->n_inputs == 2 && data_accepts(q) && tb_cuda_dm_index_type(q->in[1]); }

/* Indices of a computable dtype, depth anything the op takes, values of a movable one. */
static bool onehot_accepts(const tb_kernel_query *q) {
  return q->n_inputs == 3 && is_computable(q->in[0]) && tb_cuda_dm_data_type(q->in[2]) && q->n_outputs == 1;
}

static bool gather_nd_accepts(const tb_kernel_query *q) { return q->n_inputs == 2 && data_accepts(q) && tb_cuda_dm_index_type(q->in[1]); }

static bool scatter_inputs(const tb_kernel_query *q) {
  return q->n_inputs == 3 && is_computable(q->in[0]) && tb_cuda_dm_index_type(q->in[1]) && has_dtype(q->in[2]) && q->in[2]->dtype == q->in[0]->dtype &&
         q->n_outputs == 1;
}

/* The reductions only (cuda_ops_index.c has the plain scatters); Scatter has none. */
static bool scatter_reduce_accepts(const tb_kernel_query *q) {
  const tb_scatter_params *p = q->params;
  return p && p->reduction != TB_SCATTER_NONE && scatter_inputs(q);
}
static bool scatter_accepts(const tb_kernel_query *q) {
  const tb_scatter_params *p = q->params;
  return p && p->reduction == TB_SCATTER_NONE && scatter_inputs(q);
}

static bool nonzero_accepts(const tb_kernel_query *q) { return q->n_inputs == 1 && is_computable(q->in[0]) && q->n_outputs == 1; }

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "DepthToSpace", data_accepts, depth_space_run),
    TB_CUDA_KERNEL("", "SpaceToDepth", data_accepts, depth_space_run),
    TB_CUDA_KERNEL("", "Trilu", trilu_accepts, trilu_run),
    TB_CUDA_KERNEL("", "ReverseSequence", reverse_sequence_accepts, reverse_sequence_run),
    TB_CUDA_KERNEL("", "OneHot", onehot_accepts, onehot_run),
    TB_CUDA_INDEX_KERNEL("GatherND", gather_nd_accepts, gather_nd_run),
    TB_CUDA_INDEX_KERNEL("Scatter", scatter_accepts, scatter_elements_run),
    TB_CUDA_INDEX_KERNEL("ScatterElements", scatter_reduce_accepts, scatter_elements_run),
    TB_CUDA_INDEX_KERNEL("ScatterND", scatter_reduce_accepts, scatter_nd_run),
    TB_CUDA_KERNEL("", "NonZero", nonzero_accepts, nonzero_run),
};
const tb_cuda_family tb_cuda_family_layout = {kernels, sizeof kernels / sizeof kernels[0]};
