/* The CUDA kernel of Resize and Upsample on float32 inputs of rank 1 to 4 (kernels/61_pool_norm.cu): every
 * mode (nearest with its rounding rules, linear, cubic) and coordinate transform, because each axis's taps are
 * made with the CPU's own rule and the kernel only sums them. The output size, scales and roi come from
 * ops/tensor/resize.h's tb_resize_sizes, run on the node's inputs (the roi, scales and sizes inputs stay on the
 * host: they are value inputs). Where the tap tables come from:
 * - X's shape static and roi / scales / sizes model constants: built on the host with tb_resize_taps_of and
 *   uploaded once, at prepare, kept in the node's state;
 * - otherwise (a symbolic dim, computed scales): computed on the device per run by tb_cu_resize_taps
 *   (kernels/76_resize_taps.cu, the same rule bit for bit) from the geometry passed as kernel parameters.
 * Either way a run copies nothing from the host, so a Resize model can be captured as one graph. */
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_state.h"
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_launch.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/cuda/kernels/cuda_resize.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/op_params.h"
#include "ops/tensor/resize.h"

enum { RESIZE_INPUTS = 4 };

/* The geometry a set of tap tables answers: X's shape and the output's, with the scales and roi per axis. */
typedef struct resize_geometry {
  size_t rank;
  int64_t in[TB_MAX_DIMS], out[TB_MAX_DIMS];
  double scales[TB_MAX_DIMS], roi[2 * TB_MAX_DIMS];
} resize_geometry;

/* The node's state: the shared one first (tb_cuda_release's block), then the tables built at prepare (NULL
 * when the geometry was not known then) and the geometry they answer. */
typedef struct resize_state {
  tb_cuda_node node;
  resize_geometry geometry;
  tb_cuda_cnn_desc desc;
  tb_tensor *taps, *weights;
} resize_state;

/* The output dims, scales and roi of the node for X of this rank and shape, through the op's own rule. The roi,
 * scales and sizes come from ctx->inputs (at run time every input; at prepare the constants only, the types of
 * the others from ctx->in_types). *known false when a value they need is not known on the host. */
static tb_status resize_sizes(tb_kernel_ctx *ctx, const tb_resize_params *p, resize_geometry *g, bool *known) {
  tb_node stand_in;
  size_t n_in = ctx->n_inputs < RESIZE_INPUTS ? ctx->n_inputs : RESIZE_INPUTS;
  tb_status st = tb_infer_stand_in(&stand_in, ctx->domain, ctx->op_type, ctx->opset, ctx->params, n_in, 1);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  tb_value_type types[RESIZE_INPUTS], out_type;
  const tb_value_type *in[RESIZE_INPUTS] = {NULL};
  tb_ir_tensor values[RESIZE_INPUTS];
  const tb_ir_tensor *value[RESIZE_INPUTS] = {NULL};
  memset(types, 0, sizeof types);
  memset(&out_type, 0, sizeof out_type);
  types[0] = (tb_value_type){.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = TB_DTYPE_F32, .has_shape = true, .ndim = g->rank};
  for (size_t d = 0; d < g->rank; d++) types[0].dims[d] = (tb_dim){g->in[d], -1};
  in[0] = &types[0];
  for (size_t i = 1; i < n_in; i++) {
    const tb_tensor *t = ctx->inputs ? ctx->inputs[i] : NULL;
    if (!t) {
      in[i] = ctx->in_types ? ctx->in_types[i] : NULL; /* at prepare: a computed input, its value unknown */
      continue;
    }
    types[i] = (tb_value_type){.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = t->dtype, .has_shape = true, .ndim = t->ndim};
    for (size_t d = 0; d < t->ndim; d++) types[i].dims[d] = (tb_dim){t->shape[d], -1};
    in[i] = &types[i];
    const void *data = tb_tensor_host_data(t);
    if (!data && tb_tensor_numel(t) > 0)
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %zu (roi, scales or sizes) is not readable on the host", i);
    values[i] = (tb_ir_tensor){.dtype = t->dtype, .ndim = t->ndim, .data = data, .nbytes = tb_tensor_nbytes(t)};
    memcpy(values[i].dims, t->shape, t->ndim * sizeof *t->shape);
    value[i] = &values[i];
  }
  tb_infer_ctx ic = {NULL, &stand_in, n_in, in, value, 1, &out_type};
  *known = false;
  st = tb_resize_sizes(&ic, p, g->rank, g->in, g->out, g->scales, g->roi, known);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  return TB_OK;
}

/* The resize kernel's descriptor for geometry g, axes padded to 4 with size-1 ones in front; returns the table
 * entries (the sum of the padded output sizes). */
static int64_t fill_desc(const tb_resize_params *p, const resize_geometry *g, tb_cuda_cnn_desc *d) {
  tb_cuda_cnn_desc_init(d);
  size_t pad = TB_CUDA_CNN_AXES - g->rank;
  int64_t entries = 0;
  for (size_t a = 0; a < TB_CUDA_CNN_AXES; a++) {
    d->in[a] = a < pad ? 1 : g->in[a - pad];
    d->out[a] = a < pad ? 1 : g->out[a - pad];
    d->base[a] = entries;
    entries += d->out[a];
  }
  d->kind = p->mode == TB_RESIZE_NEAREST ? 1 : p->mode == TB_RESIZE_LINEAR ? 2 : 4;
  d->eps = (float)p->extrapolation;
  return entries;
}

/* Two new device tensors for the tables: 4 int64 indices and 4 float weights per entry. */
static tb_status make_tables(tb_kernel_ctx *ctx, int64_t entries, tb_tensor **taps, tb_tensor **weights) {
  const int64_t table = entries * 4;
  *taps = *weights = NULL;
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_I64, 1, &table, taps);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 1, &table, weights);
  return st;
}

static void drop_tables(tb_tensor **taps, tb_tensor **weights) {
  tb_tensor_destroy(*taps); /* freed into the caching allocator, in stream order */
  tb_tensor_destroy(*weights);
  *taps = *weights = NULL;
}

/* The descriptor and the tables of geometry g built on the host with the CPU's rule (one entry per padded axis:
 * index 0, weight 1) and uploaded to two new device tensors: at prepare. */
static tb_status build_tables(tb_kernel_ctx *ctx, const tb_resize_params *p, const resize_geometry *g, tb_cuda_cnn_desc *d,
                              tb_tensor **taps, tb_tensor **weights) {
  *taps = *weights = NULL;
  size_t rank = g->rank, pad = TB_CUDA_CNN_AXES - rank;
  int64_t entries = fill_desc(p, g, d);
  long long *idx = calloc((size_t)entries * 4, sizeof *idx);
  float *w = calloc((size_t)entries * 4, sizeof *w);
  if (!idx || !w) {
    free(idx);
    free(w);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no host memory for %lld interpolation entries", (long long)entries);
  }
  for (size_t a = 0; a < TB_CUDA_CNN_AXES; a++)
    for (int64_t k = 0; k < d->out[a]; k++) {
      int64_t e = d->base[a] + k;
      if (a < pad) {
        w[4 * e] = 1.0f;
        continue;
      }
      size_t ax = a - pad;
      tb_resize_taps t;
      tb_resize_taps_of(p, k, g->scales[ax], g->in[ax], g->out[ax], g->roi[ax], g->roi[rank + ax], &t);
      for (int j = 0; j < t.n && j < 4; j++) {
        idx[4 * e + j] = (long long)t.idx[j];
        w[4 * e + j] = (float)t.w[j];
      }
    }
  tb_status st = make_tables(ctx, entries, taps, weights);
  if (st == TB_OK) st = tb_tensor_copy_from_host(*taps, idx, (size_t)entries * 4 * sizeof *idx);
  if (st == TB_OK) st = tb_tensor_copy_from_host(*weights, w, (size_t)entries * 4 * sizeof *w);
  free(idx);
  free(w);
  if (st != TB_OK) drop_tables(taps, weights);
  return st;
}

int64_t tb_cuda_resize_axes_of(const tb_resize_params *p, size_t rank, const int64_t *in, const int64_t *out, const double *scales,
                               const double *roi, tb_cuda_resize_axes *axes) {
  memset(axes, 0, sizeof *axes);
  size_t pad = TB_CUDA_CNN_AXES - rank;
  int64_t entries = 0;
  for (size_t a = 0; a < TB_CUDA_CNN_AXES; a++) {
    axes->in[a] = a < pad ? 1 : in[a - pad];
    axes->out[a] = a < pad ? 1 : out[a - pad];
    axes->base[a] = entries;
    entries += axes->out[a];
    axes->scale[a] = a < pad ? 1.0 : scales[a - pad];
    axes->r0[a] = a < pad ? 0.0 : roi[a - pad];
    axes->r1[a] = a < pad ? 1.0 : roi[rank + a - pad];
  }
  axes->cubic_a = p->cubic_a;
  axes->mode = p->mode == TB_RESIZE_NEAREST ? 1 : p->mode == TB_RESIZE_LINEAR ? 2 : 4;
  axes->coord = (int32_t)p->coord;
  axes->nearest = (int32_t)p->nearest;
  axes->exclude_outside = p->exclude_outside;
  axes->pad = (int32_t)pad;
  return entries;
}

/* The descriptor and the tables of geometry g computed on the device (tb_cu_resize_taps) into two new device
 * tensors, on the model's stream: at run time, nothing copied from the host. */
static tb_status device_tables(tb_kernel_ctx *ctx, const tb_resize_params *p, const resize_geometry *g, tb_cuda_cnn_desc *d,
                               tb_tensor **taps, tb_tensor **weights) {
  int64_t entries = fill_desc(p, g, d);
  tb_cuda_resize_axes axes;
  tb_cuda_resize_axes_of(p, g->rank, g->in, g->out, g->scales, g->roi, &axes);
  tb_status st = make_tables(ctx, entries, taps, weights);
  if (st == TB_OK) {
    tb_cuda_launch l;
    tb_cuda_begin(&l, ctx, "tb_cu_resize_taps");
    tb_cuda_arg_tensor(&l, *taps);
    tb_cuda_arg_tensor(&l, *weights);
    tb_cuda_arg_i64(&l, entries);
    tb_cuda_arg_bytes(&l, &axes, sizeof axes, 8);
    st = tb_cuda_go_elements(&l, entries);
  }
  if (st != TB_OK) drop_tables(taps, weights);
  return st;
}

static bool same_geometry(const resize_geometry *a, const resize_geometry *b) {
  size_t r = a->rank;
  return r == b->rank && memcmp(a->in, b->in, r * sizeof *a->in) == 0 && memcmp(a->out, b->out, r * sizeof *a->out) == 0 &&
         memcmp(a->scales, b->scales, r * sizeof *a->scales) == 0 && memcmp(a->roi, b->roi, 2 * r * sizeof *a->roi) == 0;
}

static void resize_release(void *state) {
  resize_state *rs = state;
  if (rs) {
    tb_tensor_destroy(rs->taps);
    tb_tensor_destroy(rs->weights);
  }
  free(rs);
}

/* The shared state, then the tables when X's shape is static (every dim known from the types at prepare) and
 * the sizes follow from constants; nothing is built while a graph is being captured (a node prepared at its
 * first run inside a capture): that run builds its own. */
tb_status tb_cuda_resize_prepare(tb_kernel_ctx *ctx, void **state) {
  void *made = NULL;
  tb_status st = tb_cuda_prepare_sized(ctx, sizeof(resize_state), &made); /* the shared state at its start */
  if (st != TB_OK) return st;
  resize_state *rs = made;
  *state = rs;
  const tb_resize_params *p = ctx->params;
  const tb_value_type *xt = ctx->in_types && ctx->n_inputs ? ctx->in_types[0] : NULL;
  cuda_state *s = tb_cuda_state_of(ctx);
  if (!p || !xt || !xt->has_shape || xt->ndim < 1 || xt->ndim > TB_CUDA_CNN_AXES || !s || tb_cuda_capturing(s)) return TB_OK;
  resize_geometry g = {.rank = xt->ndim};
  for (size_t d = 0; d < g.rank; d++)
    if ((g.in[d] = xt->dims[d].value) < 0) return TB_OK; /* a symbolic dim: built per run */
  bool known = false;
  if (resize_sizes(ctx, p, &g, &known) != TB_OK || !known) {
    tb_clear_error(); /* the run reports it with every input at hand */
    return TB_OK;
  }
  int64_t count = 1, in_count = 1;
  for (size_t d = 0; d < g.rank; d++) count *= g.out[d], in_count *= g.in[d];
  if (count == 0 || in_count == 0) return TB_OK;
  if ((st = build_tables(ctx, p, &g, &rs->desc, &rs->taps, &rs->weights)) != TB_OK) {
    *state = NULL;
    resize_release(rs);
    return st;
  }
  rs->geometry = g;
  return TB_OK;
}

static tb_status resize_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_resize_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0];
  size_t rank = x->ndim;
  if (rank < 1 || rank > TB_CUDA_CNN_AXES)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "X has rank %zu; the CUDA kernel takes rank 1 to 4", rank);
  resize_geometry g = {.rank = rank};
  memcpy(g.in, x->shape, rank * sizeof *x->shape);
  bool known = false;
  if ((st = resize_sizes(ctx, p, &g, &known)) != TB_OK) return st;
  if (!known) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the output size is not known from the inputs");
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, rank, g.out, &y)) != TB_OK) return st;
  int64_t count = tb_tensor_numel(y);
  if (count == 0) return TB_OK;
  if (tb_tensor_numel(x) == 0)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "cannot resize an empty input to a non-empty output");
  const resize_state *rs = ctx->state;
  tb_cuda_cnn_desc d;
  tb_tensor *taps = NULL, *weights = NULL;
  bool own = !(rs && rs->taps && same_geometry(&rs->geometry, &g));
  if (!own) {
    d = rs->desc;
    taps = rs->taps;
    weights = rs->weights;
  } else if ((st = device_tables(ctx, p, &g, &d, &taps, &weights)) != TB_OK) {
    return st;
  }
  const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, taps, weights, NULL, y, NULL};
  st = tb_cuda_cnn_launch(ctx, "tb_cu_cnn_resize_f32", tensors, &d, count, 0, 0);
  if (own) drop_tables(&taps, &weights);
  return st;
}

/* float32 X (the roi, scales and sizes inputs are read on the host), rank 1 to 4 where known. */
static bool resize_accepts(const tb_kernel_query *q) {
  const tb_value_type *x = q->n_inputs ? q->in[0] : NULL;
  return q->params && x && x->has_dtype && x->dtype == TB_DTYPE_F32 && q->n_outputs == 1 &&
         (!x->has_shape || (x->ndim >= 1 && x->ndim <= TB_CUDA_CNN_AXES));
}

static const tb_kernel kernels[] = {
    {"", "Resize", TB_KERNEL_REFERENCE, 0, resize_accepts, resize_run, tb_cuda_resize_prepare, resize_release, NULL},
    {"", "Upsample", TB_KERNEL_REFERENCE, 0, resize_accepts, resize_run, tb_cuda_resize_prepare, resize_release, NULL},
};
const tb_cuda_family tb_cuda_family_resize = {kernels, sizeof kernels / sizeof kernels[0]};
