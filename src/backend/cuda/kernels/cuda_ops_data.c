/* CUDA kernels of the shape and data-movement ops, for every dtype of 1, 2, 4 or 8 bytes (kernels/70_data.cu):
 * Reshape, Flatten, Squeeze, Unsqueeze, Identity and inference Dropout (one device copy), Transpose (32 x 32
 * tiles through shared memory where the last axis moves, else a strided copy), Concat, Split, Slice (steps,
 * negative axes), Expand and Tile (strided copies), Pad (constant, reflect, edge), Shape and Size (written
 * from the host: only the input's shape is read) and ConstantOfShape (a fill). Range is cuda_ops_range.c's. */
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/tensor/tensor_params.h"

#define SIZED(name) {"tb_cu_dm_" name "_b1", "tb_cu_dm_" name "_b2", "tb_cu_dm_" name "_b4", "tb_cu_dm_" name "_b8"}
static const char *const transpose_kernels[4] = SIZED("transpose"),
                         *const pad_kernels[4] = SIZED("pad"), *const fill_kernels[4] = SIZED("fill");

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: the output is the input's bytes. */
static tb_status copy_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  return st == TB_OK ? tb_cuda_copy_bytes(ctx, ctx->outputs[0], ctx->inputs[0]) : st;
}

/* Dropout at inference is Identity; training_mode true with a nonzero ratio is refused with the CPU's words. */
static tb_status dropout_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_dropout_check(ctx);
  return st == TB_OK ? copy_run(ctx) : st;
}

/* Transpose: dims of size 1 dropped and input axes that stay neighbours merged; [R, C] -> [C, R] and
 * [B, R, C] -> [B, C, R] go through the tiled kernel, anything else through the strided copy. */
static tb_status transpose_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  const tb_transpose_params *tp = ctx->params;
  size_t nd = x->ndim;
  if (tp->has_perm && tp->n_perm != nd)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "perm has %zu entries for a rank-%zu input; give one entry per axis", tp->n_perm, nd);
  int64_t perm[TB_MAX_DIMS], xs[TB_MAX_DIMS], src[TB_MAX_DIMS], dst[TB_MAX_DIMS];
  for (size_t d = 0; d < nd; d++) {
    perm[d] = tp->has_perm ? tp->perm[d] : (int64_t)(nd - 1 - d);
    if (perm[d] < 0 || perm[d] >= (int64_t)nd)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "perm[%zu] = %lld is outside the rank %zu; use 0 to %zu", d, (long long)perm[d], nd,
                             nd ? nd - 1 : 0);
  }
  /* The groups of input axes, in output order, that move together. */
  int64_t first[TB_MAX_DIMS], last[TB_MAX_DIMS], size[TB_MAX_DIMS];
  size_t groups = 0;
  for (size_t d = 0; d < nd; d++) {
    int64_t p = perm[d];
    if (x->shape[p] == 1) continue;
    if (groups && p == last[groups - 1] + 1) {
      last[groups - 1] = p;
      size[groups - 1] *= x->shape[p];
    } else {
      first[groups] = last[groups] = p;
      size[groups++] = x->shape[p];
    }
  }
  if (groups <= 1) return tb_cuda_copy_bytes(ctx, y, x); /* the order of the elements does not change */
  tb_cuda_dm d = {.rank = 3};
  bool tiled = false;
  if (groups == 2 && first[0] > first[1]) { /* [R, C] -> [C, R]: output group 0 is the input's C */
    d.dims[0] = 1, d.dims[1] = size[1], d.dims[2] = size[0];
    tiled = true;
  } else if (groups == 3 && first[0] < first[2] && first[2] < first[1]) { /* [B, R, C] -> [B, C, R] */
    d.dims[0] = size[0], d.dims[1] = size[2], d.dims[2] = size[1];
    tiled = true;
  }
  if (tiled) {
    int64_t tiles = d.dims[0] * ((d.dims[1] + 31) / 32) * ((d.dims[2] + 31) / 32);
    return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(transpose_kernels, x->dtype), x, NULL, NULL, y, tiles, &d, TB_CUDA_DM_TILES);
  }
  tb_shape_strides(nd, x->shape, xs);
  tb_shape_strides(nd, y->shape, dst);
  for (size_t k = 0; k < nd; k++) src[k] = xs[perm[k]];
  return tb_cuda_dm_strided_copy(ctx, x, 0, src, y, 0, dst, nd, y->shape);
}

static tb_status concat_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  tb_tensor *y = ctx->outputs[0];
  size_t axis = 0, nd = y->ndim;
  if ((st = tb_cuda_axis(ctx, ((const tb_axis_params *)ctx->params)->axis, nd, &axis)) != TB_OK) return st;
  int64_t ys[TB_MAX_DIMS], xs[TB_MAX_DIMS], at = 0;
  tb_shape_strides(nd, y->shape, ys);
  for (size_t i = 0; i < ctx->n_inputs && st == TB_OK; i++) {
    const tb_tensor *x = ctx->inputs[i];
    if (!x) continue;
    if (x->ndim != nd)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu has rank %zu and the output rank %zu; concatenate tensors of one rank",
                             i, x->ndim, nd);
    tb_shape_strides(nd, x->shape, xs);
    st = tb_cuda_dm_strided_copy(ctx, x, 0, xs, y, at * ys[axis], ys, nd, x->shape);
    at += x->shape[axis];
  }
  return st;
}

static tb_status split_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  size_t axis = 0, nd = x->ndim;
  if ((st = tb_cuda_axis(ctx, ((const tb_split_params *)ctx->params)->axis, nd, &axis)) != TB_OK) return st;
  int64_t *sizes = calloc(ctx->n_outputs ? ctx->n_outputs : 1, sizeof *sizes);
  tb_kernel_infer *ci = malloc(sizeof *ci);
  bool known = false;
  if (!sizes || !ci) st = tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the split's sizes");
  if (st == TB_OK) st = tb_kernel_infer_begin(ctx, ci);
  if (st == TB_OK) st = tb_split_sizes(&ci->ic, ctx->params, x->shape[axis], sizes, &known);
  if (st == TB_OK && !known) st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the split sizes are not known at run time");
  free(ci);
  int64_t xs[TB_MAX_DIMS], ys[TB_MAX_DIMS], at = 0;
  tb_shape_strides(nd, x->shape, xs);
  for (size_t o = 0; o < ctx->n_outputs && st == TB_OK; o++) {
    tb_tensor *y = ctx->outputs[o];
    if (y) { /* an omitted output's piece is skipped */
      tb_shape_strides(nd, y->shape, ys);
      st = tb_cuda_dm_strided_copy(ctx, x, at * xs[axis], xs, y, 0, ys, nd, y->shape);
    }
    at += sizes[o];
  }
  free(sizes);
  return st;
}

static tb_status slice_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  tb_kernel_infer *ci = malloc(sizeof *ci);
  if (!ci) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the slice's plan");
  tb_slice_plan plan;
  st = tb_kernel_infer_begin(ctx, ci);
  if (st == TB_OK) st = tb_slice_infer_plan(&ci->ic, ctx->params, &plan);
  free(ci);
  if (st != TB_OK) return st;
  size_t nd = x->ndim;
  int64_t xs[TB_MAX_DIMS], src[TB_MAX_DIMS], ys[TB_MAX_DIMS], base = 0;
  tb_shape_strides(nd, x->shape, xs);
  tb_shape_strides(nd, y->shape, ys);
  for (size_t d = 0; d < nd; d++) {
    if (plan.count[d] != y->shape[d])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the slice plan gives %lld elements on axis %zu, the output has %lld",
                             (long long)plan.count[d], d, (long long)y->shape[d]);
    base += plan.first[d] * xs[d];
    src[d] = plan.step[d] * xs[d];
  }
  return tb_cuda_dm_strided_copy(ctx, x, base, src, y, 0, ys, nd, y->shape);
}

static tb_status expand_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->ndim > y->ndim)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the input's rank %zu is over the output's %zu", x->ndim, y->ndim);
  int64_t src[TB_MAX_DIMS], ys[TB_MAX_DIMS];
  tb_shape_bcast_strides(y->ndim, y->shape, x->ndim, x->shape, src);
  tb_shape_strides(y->ndim, y->shape, ys);
  return tb_cuda_dm_strided_copy(ctx, x, 0, src, y, 0, ys, y->ndim, y->shape);
}

/* Tile: the output viewed as [r0, d0, r1, d1, ...] (repeat, position per axis) is the input with stride 0
 * along the repeats: one strided copy of twice the rank (inputs up to rank 4, tile_accepts). */
static tb_status tile_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  size_t nd = x->ndim;
  if (nd > TB_MAX_DIMS / 2 || y->ndim != nd)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the CUDA Tile takes inputs up to rank %d, not %zu", TB_MAX_DIMS / 2, nd);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  int64_t xs[TB_MAX_DIMS], shape[TB_MAX_DIMS], src[TB_MAX_DIMS], dst[TB_MAX_DIMS];
  tb_shape_strides(nd, x->shape, xs);
  for (size_t d = 0; d < nd; d++) {
    if (x->shape[d] == 0 || y->shape[d] % x->shape[d])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output dim %lld is not a multiple of the input's %lld", (long long)y->shape[d],
                             (long long)x->shape[d]);
    shape[2 * d] = y->shape[d] / x->shape[d], src[2 * d] = 0;
    shape[2 * d + 1] = x->shape[d], src[2 * d + 1] = xs[d];
  }
  tb_shape_strides(2 * nd, shape, dst);
  return tb_cuda_dm_strided_copy(ctx, x, 0, src, y, 0, dst, 2 * nd, shape);
}

/* Pad: the amounts from the op's own function (attribute, or the pads / axes inputs on the host); the
 * constant from the attribute (before opset 11) or the constant_value input, which the kernel reads on the device
 * (a model constant or a computed scalar alike: nothing is read back, so a run does not wait for it and a graph can
 * hold it). */
static tb_status pad_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  const tb_pad_params *p = ctx->params;
  size_t nd = x->ndim;
  int64_t begin[TB_MAX_DIMS] = {0}, end[TB_MAX_DIMS] = {0};
  bool known = false;
  tb_kernel_infer *ci = malloc(sizeof *ci);
  if (!ci) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the pads");
  st = tb_kernel_infer_begin(ctx, ci);
  if (st == TB_OK) st = tb_pad_amounts(&ci->ic, p, nd, begin, end, &known);
  free(ci);
  if (st == TB_OK && !known) st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the pads are not known at run time");
  if (st != TB_OK) return st;
  tb_cuda_dm d = {.rank = (int32_t)nd, .mode = (int32_t)p->mode};
  const tb_tensor *cv = ctx->n_inputs > 2 && !p->pads_attr ? ctx->inputs[2] : NULL;
  if (p->pads_attr) {
    float v = p->value;
    if ((st = tb_convert(TB_DTYPE_F32, &v, x->dtype, &d.value, 1, true)) != TB_OK) return st;
  } else if (cv && (tb_tensor_numel(cv) != 1 || cv->dtype != x->dtype)) {
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "constant_value must be one %s value; it has %lld of %s; give a one-element tensor of the data's type",
                           tb_dtype_name(x->dtype), (long long)tb_tensor_numel(cv), tb_dtype_name(cv->dtype));
  }
  if (p->mode != TB_PAD_CONSTANT) cv = NULL; /* reflect and edge never read it */
  int64_t xs[TB_MAX_DIMS];
  tb_shape_strides(nd, x->shape, xs);
  for (size_t k = 0; k < nd; k++) {
    if (y->shape[k] != x->shape[k] + begin[k] + end[k])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the pads give %lld on axis %zu, the output has %lld",
                             (long long)(x->shape[k] + begin[k] + end[k]), k, (long long)y->shape[k]);
    d.dims[k] = y->shape[k];
    d.st[0][k] = xs[k];
    d.st[1][k] = x->shape[k];
    d.st[2][k] = begin[k];
  }
  if (tb_tensor_numel(x) == 0 && p->mode != TB_PAD_CONSTANT && tb_tensor_numel(y) > 0)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "%s padding of an empty input has nothing to repeat; use mode constant",
                           tb_pad_mode_name(p->mode));
  /* an empty x has no device memory and is never read (every element is the constant) */
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(pad_kernels, x->dtype), tb_tensor_numel(x) > 0 ? x : NULL, cv, NULL, y, tb_tensor_numel(y), &d,
                       TB_CUDA_DM_ELEMENTS);
}

/* Shape (with start / end from opset 15) and Size: int64 values from the input's shape, written on the device by the
 * fill kernel, one launch per value (at most 8). */
static tb_status shape_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  int64_t values[TB_MAX_DIMS], first = 0, count = (int64_t)x->ndim;
  if (strcmp(ctx->op_type, "Size") == 0) {
    values[0] = tb_tensor_numel(x), first = 0, count = 1;
  } else {
    const tb_shape_params *p = ctx->params;
    if (p) tb_shape_range((int64_t)x->ndim, p->start, p->end, &first, &count);
    for (int64_t k = 0; k < count; k++) values[k] = x->shape[first + k];
  }
  if (tb_tensor_numel(y) != count || y->dtype != TB_DTYPE_I64)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the output holds %lld values of %s for %lld int64 values", (long long)tb_tensor_numel(y),
                           tb_dtype_name(y->dtype), (long long)count);
  /* each value by the fill kernel over its element: launches, so a captured graph holds them (a copy from the host
     cannot be captured), and no wait; the shapes are the run's, which a replay repeats */
  for (int64_t k = 0; k < count && st == TB_OK; k++) {
    tb_tensor *slot = NULL;
    const int64_t one = 1;
    tb_cuda_dm d = {0};
    memcpy(&d.value, &values[k], sizeof values[k]);
    st = tb_tensor_view(y, 1, &one, &one, tb_tensor_offset(y) + k, &slot);
    if (st == TB_OK) st = tb_cuda_dm_go(ctx, tb_cuda_dm_sized(fill_kernels, TB_DTYPE_I64), NULL, NULL, NULL, slot, 1, &d, TB_CUDA_DM_ELEMENTS);
    tb_tensor_destroy(slot);
  }
  return st;
}

/* ConstantOfShape: the value's bytes (float 0 without one) filled over the output. */
static tb_status constant_of_shape_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  tb_tensor *y = ctx->outputs[0];
  const tb_constant_of_shape_params *p = ctx->params;
  tb_cuda_dm d = {0};
  size_t elem = tb_dtype_size(y->dtype);
  if (p && p->value) {
    if (p->value->nbytes != elem || !p->value->data)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "the value attribute holds %zu bytes for one %s; give a one-element tensor",
                             p->value->nbytes, tb_dtype_name(y->dtype));
    memcpy(&d.value, p->value->data, elem);
  }
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(fill_kernels, y->dtype), NULL, NULL, NULL, y, tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}

/* Input 0 of 1, 2, 4 or 8-byte elements (any dtype) and one output. */
static bool data_accepts(const tb_kernel_query *q) {
  return q->n_inputs >= 1 && q->in[0] && q->in[0]->has_dtype && tb_cuda_dm_movable(q->in[0]->dtype) && q->n_outputs == 1;
}

static bool concat_accepts(const tb_kernel_query *q) {
  bool any = false;
  for (size_t i = 0; i < q->n_inputs; i++) {
    if (!q->in[i]) continue;
    if (!q->in[i]->has_dtype || !tb_cuda_dm_movable(q->in[i]->dtype) || (any && q->in[i]->dtype != q->in[0]->dtype)) return false;
    any = true;
  }
  return any && q->in[0] && q->n_outputs == 1;
}

static bool split_accepts(const tb_kernel_query *q) {
  return q->n_inputs >= 1 && q->in[0] && q->in[0]->has_dtype && tb_cuda_dm_movable(q->in[0]->dtype) && q->n_outputs >= 1;
}

static bool tile_accepts(const tb_kernel_query *q) {
  return data_accepts(q) && (!q->in[0]->has_shape || q->in[0]->ndim <= TB_MAX_DIMS / 2);
}

/* Dropout from opset 7 (older ones have is_test) without the mask output. */
static bool dropout_accepts(const tb_kernel_query *q) { return q->opset >= 7 && data_accepts(q); }

/* Pad with a constant_value of the data's type. */
static bool pad_accepts(const tb_kernel_query *q) {
  return data_accepts(q) && (q->n_inputs < 3 || !q->in[2] || (q->in[2]->has_dtype && q->in[2]->dtype == q->in[0]->dtype));
}

static bool shape_accepts(const tb_kernel_query *q) { return q->n_inputs == 1 && q->in[0] && q->n_outputs == 1; }

static bool constant_of_shape_accepts(const tb_kernel_query *q) {
  const tb_constant_of_shape_params *p = q->params;
  return q->n_outputs == 1 && (!p || !p->value || tb_cuda_dm_movable(p->value->dtype));
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "Reshape", data_accepts, copy_run),
    TB_CUDA_KERNEL("", "Flatten", data_accepts, copy_run),
    TB_CUDA_KERNEL("", "Squeeze", data_accepts, copy_run),
    TB_CUDA_KERNEL("", "Unsqueeze", data_accepts, copy_run),
    TB_CUDA_KERNEL("", "Identity", data_accepts, copy_run),
    TB_CUDA_KERNEL("", "Dropout", dropout_accepts, dropout_run),
    TB_CUDA_KERNEL("", "Transpose", data_accepts, transpose_run),
    TB_CUDA_KERNEL("", "Concat", concat_accepts, concat_run),
    TB_CUDA_KERNEL("", "Split", split_accepts, split_run),
    TB_CUDA_KERNEL("", "Slice", data_accepts, slice_run),
    TB_CUDA_KERNEL("", "Expand", data_accepts, expand_run),
    TB_CUDA_KERNEL("", "Tile", tile_accepts, tile_run),
    TB_CUDA_KERNEL("", "Pad", pad_accepts, pad_run),
    TB_CUDA_KERNEL("", "Shape", shape_accepts, shape_run),
    TB_CUDA_KERNEL("", "Size", shape_accepts, shape_run),
    TB_CUDA_KERNEL("", "ConstantOfShape", constant_of_shape_accepts, constant_of_shape_run),
};
const tb_cuda_family tb_cuda_family_data = {kernels, sizeof kernels / sizeof kernels[0]};
