/* Vulkan kernels of the data-movement ops on 32-bit elements (fp32): every one is the strided copy of
 * copy.comp with the right shapes and strides: Reshape, Flatten, Squeeze, Unsqueeze (a flat copy),
 * Transpose, DepthToSpace, SpaceToDepth, Slice (negative steps too), Expand, Concat (one copy per input),
 * Split (one per output) and Pad (constant, edge, reflect: copy.comp's pad modes); Constant with float32
 * values (an upload); and Gather with int32 or int64 indices on the device (gather.comp). Shape and axes
 * inputs are CPU tensors (the ops' value inputs). */
#include <string.h>
#include "backend/vulkan/kernels/vk_kernel.h"
#include "ops/tensor/tensor_params.h"
#include "backend/tensor/tensor_impl.h"

#define MAX_PARTS 64

typedef struct copy_push {
  uint32_t n, rank, src_off, dst_off;
  uint32_t shape[6], ss[6], ds[6];
  uint32_t mode, fill; /* Pad only (copy.comp) */
  int32_t begin[6];
} copy_push;

static bool f32_data(const tb_kernel_query *q) { return q->n_inputs >= 1 && tb_vk_query_f32(q, 1u); }

/* Drop size-1 dimensions so up to VK_MAX_RANK remain where possible. */
static tb_status copy_record(tb_kernel_ctx *ctx, vk_node *node, uint32_t set, size_t rank, const int64_t *shape, const int64_t *src_strides,
                             vk_arg src, int64_t src_off, const int64_t *dst_strides, vk_arg dst, int64_t dst_off) {
  copy_push p;
  memset(&p, 0, sizeof p);
  int64_t n = 1;
  size_t r = 0;
  for (size_t d = 0; d < rank; d++) {
    n *= shape[d];
    if (shape[d] == 1) continue;
    if (r == VK_MAX_RANK) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "more than %d dimensions of size > 1", VK_MAX_RANK);
    p.shape[r] = (uint32_t)shape[d];
    p.ss[r] = (uint32_t)src_strides[d]; /* negative strides wrap: the index arithmetic is modulo 2^32 */
    p.ds[r] = (uint32_t)dst_strides[d];
    r++;
  }
  if (n == 0) return TB_OK;
  p.n = (uint32_t)n;
  p.rank = (uint32_t)r;
  p.src_off = (uint32_t)(src.offset + src_off);
  p.dst_off = (uint32_t)(dst.offset + dst_off);
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)n, 256, &gx, &gy);
  tb_vk_buffer buffers[2] = {src.buffer, dst.buffer};
  return tb_vk_node_dispatch(node, set, buffers, 2, &p, sizeof p, gx, gy, 1);
}

static void contiguous_strides(size_t rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (size_t d = rank; d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
}

static tb_status copy_prepare(tb_kernel_ctx *ctx, void **state) {
  uint32_t sets = 1;
  if (strcmp(ctx->op_type, "Concat") == 0) sets = (uint32_t)ctx->n_inputs;
  if (strcmp(ctx->op_type, "Split") == 0) sets = (uint32_t)ctx->n_outputs;
  if (sets > MAX_PARTS) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%u parts; the Vulkan kernel takes up to %d", sets, MAX_PARTS);
  return tb_vk_prepare_node(ctx, TB_VK_SHADER_COPY, NULL, 0, sets, state);
}

/* The source as a tensor argument with its own strides. */
static tb_status source(tb_kernel_ctx *ctx, const tb_tensor **t, vk_arg *arg) {
  *t = ctx->inputs[0];
  if (!*t) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input 0 is missing");
  if ((*t)->dtype != TB_DTYPE_F32) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the Vulkan kernel takes float32 data");
  return tb_vk_arg_of(ctx, *t, "input 0", 4, arg);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: the output's shape, then a copy in element order ---- */

static tb_status reshaped_shape(tb_kernel_ctx *ctx, const tb_tensor *x, int64_t *shape, size_t *ndim) {
  const char *op = ctx->op_type;
  int64_t vals[TB_MAX_DIMS];
  size_t nv = 0;
  tb_status st = TB_OK;
  if (strcmp(op, "Flatten") == 0) {
    int64_t axis = ((const tb_axis_params *)ctx->params)->axis;
    if (axis < 0) axis += (int64_t)x->ndim;
    if (st == TB_OK && (axis < 0 || axis > (int64_t)x->ndim)) st = tb_kernel_error(ctx, TB_ERR_MODEL, "axis out of range");
    if (st != TB_OK) return st;
    shape[0] = shape[1] = 1;
    for (size_t d = 0; d < x->ndim; d++) shape[(int64_t)d < axis ? 0 : 1] *= x->shape[d];
    *ndim = 2;
    return TB_OK;
  }
  bool reshape = strcmp(op, "Reshape") == 0;
  if (ctx->n_inputs > 1 && ctx->inputs[1]) {
    st = tb_vk_value_ints(ctx, 1, vals, TB_MAX_DIMS, &nv);
  } else if (reshape) { /* Reshape-1's shape attribute */
    const tb_reshape_params *rp = ctx->params;
    nv = rp->n_shape;
    memcpy(vals, rp->shape, nv * sizeof *vals);
  } else { /* Squeeze / Unsqueeze before opset 13: the axes attribute */
    const tb_squeeze_params *sp = ctx->params;
    nv = sp->n_axes;
    memcpy(vals, sp->axes, nv * sizeof *vals);
  }
  if (st != TB_OK) return st;
  if (reshape) {
    int64_t allowzero = ((const tb_reshape_params *)ctx->params)->allowzero, known = 1;
    int infer = -1;
    for (size_t i = 0; i < nv; i++) {
      shape[i] = vals[i] == 0 && !allowzero && i < x->ndim ? x->shape[i] : vals[i];
      if (shape[i] == -1 && infer < 0) infer = (int)i;
      else if (shape[i] < 0) return tb_kernel_error(ctx, TB_ERR_MODEL, "shape value %lld", (long long)shape[i]);
      else known *= shape[i];
    }
    if (infer >= 0) shape[infer] = known ? x->numel / known : 0;
    *ndim = nv;
    return TB_OK;
  }
  if (strcmp(op, "Squeeze") == 0) {
    bool drop[TB_MAX_DIMS] = {false};
    for (size_t i = 0; i < nv; i++) drop[vals[i] < 0 ? vals[i] + (int64_t)x->ndim : vals[i]] = true;
    *ndim = 0;
    for (size_t d = 0; d < x->ndim; d++)
      if (!(nv ? drop[d] : x->shape[d] == 1)) shape[(*ndim)++] = x->shape[d];
    return TB_OK;
  }
  /* Unsqueeze */
  size_t out_rank = x->ndim + nv, k = 0;
  bool ins[TB_MAX_DIMS] = {false};
  if (out_rank > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_MODEL, "rank %zu", out_rank);
  for (size_t i = 0; i < nv; i++) {
    int64_t a = vals[i] < 0 ? vals[i] + (int64_t)out_rank : vals[i];
    if (a < 0 || a >= (int64_t)out_rank) return tb_kernel_error(ctx, TB_ERR_MODEL, "axis %lld out of range", (long long)vals[i]);
    ins[a] = true;
  }
  for (size_t d = 0; d < out_rank; d++) shape[d] = ins[d] ? 1 : x->shape[k++];
  *ndim = out_rank;
  return TB_OK;
}

static tb_status reshape_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  const tb_tensor *x;
  vk_arg src, dst;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = source(ctx, &x, &src);
  if (st != TB_OK) return st;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  tb_tensor *out = ctx->outputs[0];
  if (out) {
    ndim = out->ndim;
    memcpy(shape, out->shape, ndim * sizeof *shape);
  } else {
    st = reshaped_shape(ctx, x, shape, &ndim);
    if (st != TB_OK) return st;
  }
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, ndim, shape, &out, &dst);
  if (st != TB_OK) return st;
  if (out->numel != x->numel)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "%lld values cannot take %lld", (long long)x->numel, (long long)out->numel);
  int64_t ds[TB_MAX_DIMS];
  contiguous_strides(x->ndim, x->shape, ds);
  return copy_record(ctx, node, 0, x->ndim, x->shape, x->strides, src, 0, ds, dst, 0);
}

#define RESHAPE(sym, opname) const tb_kernel sym = {"", opname, TB_KERNEL_REFERENCE, 0, f32_data, reshape_run, copy_prepare, tb_vk_release_node, NULL};
RESHAPE(tb_vk_kernel_reshape, "Reshape")
RESHAPE(tb_vk_kernel_flatten, "Flatten")
RESHAPE(tb_vk_kernel_squeeze, "Squeeze")
RESHAPE(tb_vk_kernel_unsqueeze, "Unsqueeze")

/* ---- Transpose ---- */

static tb_status transpose_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  const tb_tensor *x;
  vk_arg src, dst;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = source(ctx, &x, &src);
  const tb_transpose_params *tp = ctx->params;
  const int64_t *perm = tp->has_perm ? tp->perm : NULL;
  size_t np = tp->n_perm;
  if (st != TB_OK) return st;
  if (perm && np != x->ndim) return tb_kernel_error(ctx, TB_ERR_MODEL, "perm has %zu values for rank %zu", np, x->ndim);
  int64_t shape[TB_MAX_DIMS], ss[TB_MAX_DIMS], ds[TB_MAX_DIMS];
  bool seen[TB_MAX_DIMS] = {false};
  for (size_t d = 0; d < x->ndim; d++) {
    int64_t from = perm ? perm[d] : (int64_t)(x->ndim - 1 - d);
    if (from < 0 || from >= (int64_t)x->ndim || seen[from]) return tb_kernel_error(ctx, TB_ERR_MODEL, "perm is not a permutation");
    seen[from] = true;
    shape[d] = x->shape[from];
    ss[d] = x->strides[from];
  }
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, x->ndim, shape, &out, &dst);
  if (st != TB_OK) return st;
  contiguous_strides(x->ndim, shape, ds);
  return copy_record(ctx, node, 0, x->ndim, shape, ss, src, 0, ds, dst, 0);
}

const tb_kernel tb_vk_kernel_transpose = {"", "Transpose", TB_KERNEL_REFERENCE, 0, f32_data, transpose_run, copy_prepare, tb_vk_release_node, NULL};

/* ---- DepthToSpace (DCR and CRD) and SpaceToDepth: a rank-6 strided copy in the output's order ---- */

static tb_status space_depth_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  const tb_tensor *x;
  vk_arg src, dst;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = source(ctx, &x, &src);
  const tb_depth_space_params *dp = ctx->params;
  int64_t b = dp->blocksize;
  if (st != TB_OK) return st;
  bool to_space = dp->to_space;
  if (x->ndim != 4 || b < 1) return tb_kernel_error(ctx, TB_ERR_MODEL, "takes a rank-4 input and blocksize >= 1 (rank %zu, blocksize %lld)", x->ndim, (long long)b);
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  int64_t sn = x->strides[0], sc = x->strides[1], sh = x->strides[2], sw = x->strides[3];
  int64_t out_shape[4], shape[6], ss[6], ds[6];
  if (to_space) {
    if (c % (b * b)) return tb_kernel_error(ctx, TB_ERR_MODEL, "%lld channels are not a multiple of blocksize^2 = %lld", (long long)c, (long long)(b * b));
    bool crd = dp->crd;
    int64_t co = c / (b * b);
    /* output order (n, c', h, b1, w, b2); the input channel is (b1, b2, c') in DCR and (c', b1, b2) in CRD */
    int64_t sh6[6] = {n, co, h, b, w, b};
    int64_t ss6[6] = {sn, crd ? b * b * sc : sc, sh, crd ? b * sc : b * co * sc, sw, crd ? sc : co * sc};
    memcpy(shape, sh6, sizeof sh6);
    memcpy(ss, ss6, sizeof ss6);
    int64_t o[4] = {n, co, h * b, w * b};
    memcpy(out_shape, o, sizeof o);
  } else {
    if (h % b || w % b) return tb_kernel_error(ctx, TB_ERR_MODEL, "%lld x %lld is not a multiple of blocksize %lld", (long long)h, (long long)w, (long long)b);
    /* output order (n, b1, b2, c, h', w'): the output channel is (b1, b2, c), the input row h' * b + b1 */
    int64_t sh6[6] = {n, b, b, c, h / b, w / b};
    int64_t ss6[6] = {sn, sh, sw, sc, b * sh, b * sw};
    memcpy(shape, sh6, sizeof sh6);
    memcpy(ss, ss6, sizeof ss6);
    int64_t o[4] = {n, c * b * b, h / b, w / b};
    memcpy(out_shape, o, sizeof o);
  }
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, 4, out_shape, &out, &dst);
  if (st != TB_OK || out->numel == 0) return st;
  contiguous_strides(6, shape, ds);
  return copy_record(ctx, node, 0, 6, shape, ss, src, 0, ds, dst, 0);
}

const tb_kernel tb_vk_kernel_depth_to_space = {"", "DepthToSpace", TB_KERNEL_REFERENCE, 0, f32_data, space_depth_run, copy_prepare, tb_vk_release_node, NULL};
const tb_kernel tb_vk_kernel_space_to_depth = {"", "SpaceToDepth", TB_KERNEL_REFERENCE, 0, f32_data, space_depth_run, copy_prepare, tb_vk_release_node, NULL};

/* ---- Pad: constant, edge, reflect (copy.comp's pad modes) ---- */

static bool pad_accepts(const tb_kernel_query *q) {
  if (q->n_inputs > 3 && q->in[3]) return false; /* axes (opset 18): the CPU */
  return f32_data(q) && tb_vk_query_f32(q, 1u | 4u);
}

static tb_status pad_prepare(tb_kernel_ctx *ctx, void **state) { return tb_vk_prepare_node(ctx, TB_VK_SHADER_COPY, NULL, 0, 2, state); }

static tb_status pad_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  const tb_tensor *x;
  vk_arg src, dst;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = source(ctx, &x, &src);
  if (st != TB_OK) return st;
  const tb_pad_params *pp = ctx->params;
  static const uint32_t copy_modes[3] = {[TB_PAD_CONSTANT] = 1, [TB_PAD_REFLECT] = 3, [TB_PAD_EDGE] = 2}; /* copy.comp's */
  uint32_t mode = copy_modes[pp->mode];
  const char *mode_s = tb_pad_mode_name(pp->mode);
  int64_t pads[2 * TB_MAX_DIMS];
  size_t np = 0;
  float fill = 0.0f;
  if (pp->pads_attr) {
    np = pp->n_pads;
    memcpy(pads, pp->pads, np * sizeof *pads);
    fill = pp->value;
  } else {
    st = tb_vk_value_ints(ctx, 1, pads, 2 * TB_MAX_DIMS, &np);
  }
  if (st != TB_OK) return st;
  if (np != 2 * x->ndim) return tb_kernel_error(ctx, TB_ERR_MODEL, "pads has %zu entries for rank %zu", np, x->ndim);
  if (x->ndim > VK_MAX_RANK) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "rank %zu is over the Vulkan kernels' %d", x->ndim, VK_MAX_RANK);
  int64_t shape[TB_MAX_DIMS];
  for (size_t d = 0; d < x->ndim; d++) {
    shape[d] = x->shape[d] + pads[d] + pads[d + x->ndim];
    if (shape[d] < 0) return tb_kernel_error(ctx, TB_ERR_MODEL, "pads crop dimension %zu below 0", d);
    if (mode != 1 && shape[d] > 0 && x->shape[d] == 0) return tb_kernel_error(ctx, TB_ERR_MODEL, "%s padding of an empty dimension", mode_s);
    if (pads[d] < INT32_MIN || pads[d] > INT32_MAX) return tb_vk_check_u32(ctx, pads[d], "a pad");
  }
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, x->ndim, shape, &out, &dst);
  if (st != TB_OK || out->numel == 0) return st;
  const tb_tensor *cv = !pp->pads_attr && ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  uint32_t set = 0;
  if (mode == 1 && cv && cv->numel == 1) {
    /* the constant lives on the device: broadcast it over the output first, then write the inside only */
    vk_arg c;
    st = tb_vk_arg_of(ctx, cv, "constant_value", 4, &c);
    int64_t all = out->numel, zero = 0, one = 1;
    if (st == TB_OK) st = copy_record(ctx, node, set++, 1, &all, &zero, c, 0, &one, dst, 0);
    if (st != TB_OK) return st;
    mode = 4;
  }
  copy_push p;
  memset(&p, 0, sizeof p);
  p.n = (uint32_t)out->numel;
  p.rank = (uint32_t)x->ndim;
  p.src_off = src.offset;
  p.dst_off = dst.offset;
  p.mode = mode;
  memcpy(&p.fill, &fill, sizeof fill);
  for (size_t d = 0; d < x->ndim; d++) {
    p.shape[d] = (uint32_t)shape[d];
    p.ss[d] = (uint32_t)x->strides[d];
    p.ds[d] = (uint32_t)x->shape[d];
    p.begin[d] = (int32_t)pads[d];
  }
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[2] = {src.buffer, dst.buffer};
  return tb_vk_node_dispatch(node, set, buffers, 2, &p, sizeof p, gx, gy, 1);
}

const tb_kernel tb_vk_kernel_pad = {"", "Pad", TB_KERNEL_REFERENCE, 0, pad_accepts, pad_run, pad_prepare, tb_vk_release_node, NULL};

/* ---- Constant (float32 values): uploaded into the device output at each run ---- */

/* A Constant's float32 value (integer or string values stay on the CPU: they feed shape arithmetic). */
static bool constant_value(const tb_constant_params *p, const void **data, size_t *bytes, size_t *ndim, int64_t *dims) {
  if (!p) return false;
  switch (p->kind) {
    case TB_CONSTANT_TENSOR:
      if (p->tensor->dtype != TB_DTYPE_F32 || p->tensor->ndim > TB_MAX_DIMS) return false;
      *data = p->tensor->data;
      *bytes = p->tensor->nbytes;
      *ndim = p->tensor->ndim;
      memcpy(dims, p->tensor->dims, p->tensor->ndim * sizeof *dims);
      return true;
    case TB_CONSTANT_FLOAT:
      *data = &p->f;
      *bytes = sizeof(float);
      *ndim = 0;
      return true;
    case TB_CONSTANT_FLOATS:
      *data = p->floats;
      *bytes = p->count * sizeof(float);
      *ndim = 1;
      dims[0] = (int64_t)p->count;
      return true;
    default: return false;
  }
}

static bool constant_accepts(const tb_kernel_query *q) {
  const void *data;
  size_t bytes, ndim;
  int64_t dims[TB_MAX_DIMS];
  return q->n_outputs == 1 && constant_value(q->params, &data, &bytes, &ndim, dims);
}

static tb_status constant_run(tb_kernel_ctx *ctx) {
  const void *data = NULL;
  size_t bytes = 0, ndim = 0;
  int64_t dims[TB_MAX_DIMS];
  if (!constant_value(ctx->params, &data, &bytes, &ndim, dims))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the Vulkan Constant kernel takes float32 values only");
  tb_tensor *out;
  tb_status st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, ndim, dims, &out);
  if (st != TB_OK) return st;
  size_t need = tb_tensor_nbytes(out);
  if (bytes != need || (need && !data))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the value holds %zu bytes where its shape needs %zu", bytes, need);
  return need ? tb_tensor_copy_from_host(out, data, need) : TB_OK;
}

const tb_kernel tb_vk_kernel_constant = {"", "Constant", TB_KERNEL_REFERENCE, 0, constant_accepts, constant_run, NULL, NULL, NULL};

/* ---- Slice ---- */

static tb_status slice_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  const tb_tensor *x;
  vk_arg src, dst;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = source(ctx, &x, &src);
  if (st != TB_OK) return st;
  int64_t starts[TB_MAX_DIMS], ends[TB_MAX_DIMS], axes[TB_MAX_DIMS], steps[TB_MAX_DIMS];
  size_t ns = 0, ne = 0, na = 0, nst = 0;
  const tb_slice_params *p = ctx->params;
  if (p->from_inputs) {
    st = tb_vk_value_ints(ctx, 1, starts, TB_MAX_DIMS, &ns);
    if (st == TB_OK) st = tb_vk_value_ints(ctx, 2, ends, TB_MAX_DIMS, &ne);
    if (st == TB_OK) st = tb_vk_value_ints(ctx, 3, axes, TB_MAX_DIMS, &na);
    if (st == TB_OK) st = tb_vk_value_ints(ctx, 4, steps, TB_MAX_DIMS, &nst);
  } else {
    ns = ne = p->n;
    na = p->has_axes ? p->n : 0;
    memcpy(starts, p->starts, ns * sizeof *starts);
    memcpy(ends, p->ends, ne * sizeof *ends);
    memcpy(axes, p->axes, na * sizeof *axes);
  }
  if (st != TB_OK) return st;
  if (ns != ne || (na && na != ns) || (nst && nst != ns)) return tb_kernel_error(ctx, TB_ERR_MODEL, "starts, ends, axes and steps differ in length");
  int64_t begin[TB_MAX_DIMS], step[TB_MAX_DIMS], shape[TB_MAX_DIMS];
  for (size_t d = 0; d < x->ndim; d++) {
    begin[d] = 0;
    step[d] = 1;
    shape[d] = x->shape[d];
  }
  for (size_t i = 0; i < ns; i++) {
    int64_t a = na ? axes[i] : (int64_t)i, dim;
    if (a < 0) a += (int64_t)x->ndim;
    if (a < 0 || a >= (int64_t)x->ndim) return tb_kernel_error(ctx, TB_ERR_MODEL, "axis out of range");
    dim = x->shape[a];
    int64_t s = nst ? steps[i] : 1, b = starts[i], e = ends[i];
    if (s == 0) return tb_kernel_error(ctx, TB_ERR_MODEL, "a step of 0");
    if (b < 0) b += dim;
    if (e < 0) e += dim;
    if (s > 0) {
      b = b < 0 ? 0 : b > dim ? dim : b;
      e = e < 0 ? 0 : e > dim ? dim : e;
    } else {
      b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
    }
    int64_t count = s > 0 ? (e - b + s - 1) / s : (b - e + (-s) - 1) / (-s);
    begin[a] = b;
    step[a] = s;
    shape[a] = count > 0 ? count : 0;
  }
  int64_t ss[TB_MAX_DIMS], ds[TB_MAX_DIMS], off = 0;
  for (size_t d = 0; d < x->ndim; d++) {
    ss[d] = x->strides[d] * step[d];
    off += begin[d] * x->strides[d];
  }
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, x->ndim, shape, &out, &dst);
  if (st != TB_OK) return st;
  contiguous_strides(x->ndim, shape, ds);
  return copy_record(ctx, node, 0, x->ndim, shape, ss, src, off, ds, dst, 0);
}

const tb_kernel tb_vk_kernel_slice = {"", "Slice", TB_KERNEL_REFERENCE, 0, f32_data, slice_run, copy_prepare, tb_vk_release_node, NULL};

/* ---- Expand ---- */

static tb_status expand_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  const tb_tensor *x;
  vk_arg src, dst;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = source(ctx, &x, &src);
  int64_t want[TB_MAX_DIMS];
  size_t nw = 0;
  if (st == TB_OK) st = tb_vk_value_ints(ctx, 1, want, TB_MAX_DIMS, &nw);
  if (st != TB_OK) return st;
  size_t rank = nw > x->ndim ? nw : x->ndim;
  int64_t shape[TB_MAX_DIMS], ss[TB_MAX_DIMS], ds[TB_MAX_DIMS];
  for (size_t d = 0; d < rank; d++) {
    int64_t dx = d + x->ndim >= rank ? x->shape[d + x->ndim - rank] : 1, dw = d + nw >= rank ? want[d + nw - rank] : 1;
    if (dx != dw && dx != 1 && dw != 1) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "shapes do not broadcast");
    shape[d] = dx == 1 ? dw : dx;
    ss[d] = dx == 1 ? 0 : x->strides[d + x->ndim - rank];
  }
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, rank, shape, &out, &dst);
  if (st != TB_OK) return st;
  contiguous_strides(rank, shape, ds);
  return copy_record(ctx, node, 0, rank, shape, ss, src, 0, ds, dst, 0);
}

const tb_kernel tb_vk_kernel_expand = {"", "Expand", TB_KERNEL_REFERENCE, 0, f32_data, expand_run, copy_prepare, tb_vk_release_node, NULL};

/* ---- Concat ---- */

static bool concat_accepts(const tb_kernel_query *q) {
  return q->n_inputs >= 1 && q->n_inputs <= MAX_PARTS && tb_vk_query_f32(q, 0xffffffffu);
}

static tb_status concat_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st != TB_OK) return st;
  const tb_tensor *first = ctx->inputs[0];
  if (!first) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input 0 is missing");
  int64_t axis = ((const tb_axis_params *)ctx->params)->axis;
  if (axis < 0) axis += (int64_t)first->ndim;
  if (axis < 0 || axis >= (int64_t)first->ndim) return tb_kernel_error(ctx, TB_ERR_MODEL, "axis out of range");
  int64_t shape[TB_MAX_DIMS];
  memcpy(shape, first->shape, first->ndim * sizeof *shape);
  shape[axis] = 0;
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (!t || t->ndim != first->ndim || t->dtype != TB_DTYPE_F32) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu does not match input 0", i);
    for (size_t d = 0; d < t->ndim; d++)
      if ((int64_t)d != axis && t->shape[d] != first->shape[d]) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu's shape differs off the axis", i);
    shape[axis] += t->shape[axis];
  }
  tb_tensor *out;
  vk_arg dst;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, first->ndim, shape, &out, &dst);
  if (st != TB_OK) return st;
  int64_t ds[TB_MAX_DIMS], at = 0;
  contiguous_strides(first->ndim, shape, ds);
  for (size_t i = 0; i < ctx->n_inputs && st == TB_OK; i++) {
    const tb_tensor *t = ctx->inputs[i];
    vk_arg src;
    st = tb_vk_arg_of(ctx, t, "an input", 4, &src);
    if (st == TB_OK) st = copy_record(ctx, node, (uint32_t)i, t->ndim, t->shape, t->strides, src, 0, ds, dst, at * ds[axis]);
    at += t->shape[axis];
  }
  return st;
}

const tb_kernel tb_vk_kernel_concat = {"", "Concat", TB_KERNEL_REFERENCE, 0, concat_accepts, concat_run, copy_prepare, tb_vk_release_node, NULL};

/* ---- Split ---- */

static bool split_accepts(const tb_kernel_query *q) { return q->n_outputs <= MAX_PARTS && f32_data(q); }

static tb_status split_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  const tb_tensor *x;
  vk_arg src;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = source(ctx, &x, &src);
  if (st != TB_OK) return st;
  const tb_split_params *p = ctx->params;
  int64_t axis = p->axis, parts[MAX_PARTS];
  size_t np = 0, n_out = ctx->n_outputs;
  if (axis < 0) axis += (int64_t)x->ndim;
  if (axis < 0 || axis >= (int64_t)x->ndim) return tb_kernel_error(ctx, TB_ERR_MODEL, "axis out of range");
  if (ctx->n_inputs > 1 && ctx->inputs[1]) {
    st = tb_vk_value_ints(ctx, 1, parts, MAX_PARTS, &np);
  } else if (p->split) { /* the split attribute before opset 13 */
    np = p->n_split;
    if (np > MAX_PARTS) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%zu parts; the Vulkan kernel takes up to %d", np, MAX_PARTS);
    memcpy(parts, p->split, np * sizeof *parts);
  }
  if (st != TB_OK) return st;
  int64_t dim = x->shape[axis];
  if (np == 0) {
    int64_t chunk = (dim + (int64_t)n_out - 1) / (int64_t)n_out;
    for (size_t i = 0; i < n_out; i++) {
      int64_t left = dim - chunk * (int64_t)i;
      parts[i] = left < 0 ? 0 : left < chunk ? left : chunk;
    }
    np = n_out;
  }
  int64_t total = 0;
  for (size_t i = 0; i < np; i++) total += parts[i];
  if (np != n_out || total != dim) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "split sizes do not add up to %lld over %zu outputs", (long long)dim, n_out);
  int64_t at = 0;
  for (size_t i = 0; i < n_out && st == TB_OK; i++) {
    int64_t shape[TB_MAX_DIMS], ds[TB_MAX_DIMS];
    memcpy(shape, x->shape, x->ndim * sizeof *shape);
    shape[axis] = parts[i];
    if (tb_kernel_has_output(ctx, i)) {
      tb_tensor *out;
      vk_arg dst;
      st = tb_vk_output(ctx, i, TB_DTYPE_F32, x->ndim, shape, &out, &dst);
      contiguous_strides(x->ndim, shape, ds);
      if (st == TB_OK) st = copy_record(ctx, node, (uint32_t)i, x->ndim, shape, x->strides, src, at * x->strides[axis], ds, dst, 0);
    }
    at += parts[i];
  }
  return st;
}

const tb_kernel tb_vk_kernel_split = {"", "Split", TB_KERNEL_REFERENCE, 0, split_accepts, split_run, copy_prepare, tb_vk_release_node, NULL};

/* ---- Gather ---- */

static bool gather_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs == 2 && tb_vk_query_f32(q, 1u) && in[1] && in[1]->has_dtype &&
         (in[1]->dtype == TB_DTYPE_I64 || in[1]->dtype == TB_DTYPE_I32);
}

static tb_status gather_prepare(tb_kernel_ctx *ctx, void **state) {
  const tb_value_type *t = ctx->in_types && ctx->n_inputs > 1 ? ctx->in_types[1] : NULL;
  uint32_t idx64 = !t || !t->has_dtype || t->dtype == TB_DTYPE_I64;
  return tb_vk_prepare_node(ctx, TB_VK_SHADER_GATHER, &idx64, 1, 1, state);
}

static tb_status gather_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg d, i, y;
  tb_status st = tb_vk_node_of(ctx, &node);
  const tb_tensor *idx = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  if (st == TB_OK && !idx) st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the indices are missing");
  if (st == TB_OK && (idx->dtype == TB_DTYPE_I64) != (node->pipe->spec[0] != 0))
    st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the indices are %s, not the type the node was prepared for", tb_dtype_name(idx->dtype));
  if (st == TB_OK) st = tb_vk_input(ctx, 0, TB_DTYPE_F32, &d);
  if (st == TB_OK) st = tb_vk_input(ctx, 1, idx->dtype, &i);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  int64_t axis = ((const tb_axis_params *)ctx->params)->axis;
  if (axis < 0) axis += (int64_t)x->ndim;
  if (axis < 0 || axis >= (int64_t)x->ndim) return tb_kernel_error(ctx, TB_ERR_MODEL, "axis out of range");
  size_t ndim = x->ndim - 1 + idx->ndim;
  if (ndim > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "output rank %zu", ndim);
  int64_t shape[TB_MAX_DIMS];
  size_t k = 0;
  for (int64_t dd = 0; dd < axis; dd++) shape[k++] = x->shape[dd];
  for (size_t dd = 0; dd < idx->ndim; dd++) shape[k++] = idx->shape[dd];
  for (size_t dd = (size_t)axis + 1; dd < x->ndim; dd++) shape[k++] = x->shape[dd];
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, ndim, shape, &out, &y);
  if (st != TB_OK || out->numel == 0) return st;
  int64_t inner = 1;
  for (size_t dd = (size_t)axis + 1; dd < x->ndim; dd++) inner *= x->shape[dd];
  struct {
    uint32_t axis, inner, nidx, total, d_off, i_off, y_off;
  } p = {(uint32_t)x->shape[axis], (uint32_t)inner, (uint32_t)idx->numel, (uint32_t)out->numel, d.offset, i.offset, y.offset};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[3] = {d.buffer, i.buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 3, &p, sizeof p, gx, gy, 1);
}

const tb_kernel tb_vk_kernel_gather = {"", "Gather", TB_KERNEL_REFERENCE, 0, gather_accepts, gather_run, gather_prepare, tb_vk_release_node, NULL};
