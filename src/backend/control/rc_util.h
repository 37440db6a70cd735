/* Internal: helpers for the recurrent reference kernels (the CPU's rnn_control family) and the control-flow
 * kernels every backend shares (If, Loop, Scan in this folder). The recurrent kernels read their inputs as
 * packed doubles, compute in double, and round once to the output dtype (tb_convert); the control-flow kernels
 * move tensors between the node and its body on the node's own backend (ctx->backend: the CPU or a device). */
#ifndef TB_BACKEND_CONTROL_RC_UTIL_H
#define TB_BACKEND_CONTROL_RC_UTIL_H
#include "backend/kernel.h"

/* Input i of the node, or NULL when it is omitted (absent or empty name). */
tb_tensor *tb_rc_input(const tb_kernel_ctx *ctx, size_t i);
/* Whether the node has output i (tb_kernel_has_output). */
bool tb_rc_has_output(const tb_kernel_ctx *ctx, size_t i);
/* A tensor's elements as packed doubles (malloc'd; the caller frees). */
tb_status tb_rc_load(const tb_kernel_ctx *ctx, const tb_tensor *t, double **out);
/* A tensor's elements as packed int64 (any integer dtype). */
tb_status tb_rc_load_i64(const tb_kernel_ctx *ctx, const tb_tensor *t, int64_t **out);
/* Zeroed doubles; TB_ERR_OUT_OF_MEMORY naming the node and the size. */
tb_status tb_rc_alloc(const tb_kernel_ctx *ctx, size_t count, double **out);
/* Output i (skipped when the node omits it) with this dtype and shape, filled from data. */
tb_status tb_rc_store(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, const double *data);
/* Whether t's shape is exactly `shape`. */
bool tb_rc_shape_is(const tb_tensor *t, size_t ndim, const int64_t *shape);
/* "[2, 3, 4]" into buf. */
const char *tb_rc_shape_str(const tb_tensor *t, char *buf, size_t cap);

/* The value of a one-element tensor as a truth value / an int64 (any numeric or bool dtype); an empty or
 * larger tensor is TB_ERR_MODEL naming `what`. */
tb_status tb_rc_scalar_bool(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, bool *out);
tb_status tb_rc_scalar_i64(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, int64_t *out);
/* dst = src (same dtype and shape): on one device backend as runs of the device's own copy (rc_copy.c), else
 * tb_tensor_copy. */
tb_status tb_rc_copy(tb_tensor *dst, const tb_tensor *src);
/* A new tensor on ctx->backend holding a copy of src's elements (contiguous). */
tb_status tb_rc_clone(const tb_kernel_ctx *ctx, const tb_tensor *src, tb_tensor **out);
/* A view of t with dimension `axis` fixed at `index` (one dimension fewer). */
tb_status tb_rc_slice_view(tb_tensor *t, size_t axis, int64_t index, tb_tensor **out);
/* Output i of a control-flow node (tb_kernel_output), whose preallocated shape, if any, came from the
 * body's declared types: a body that disagrees with them is TB_ERR_MODEL naming both. */
tb_status tb_rc_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, tb_tensor **out);
/* Output i as a copy of src (tb_rc_output with src's dtype and shape). */
tb_status tb_rc_output_copy(tb_kernel_ctx *ctx, size_t i, const tb_tensor *src);

/* Run a body graph through the executor (ctx->run_subgraph): outs (n_outputs entries) receive new
 * tensors the caller destroys (tb_rc_destroy_all); on failure none are left. No runner is TB_ERR_INTERNAL. */
tb_status tb_rc_run_body(tb_kernel_ctx *ctx, const tb_graph *body, size_t n_inputs, tb_tensor *const *inputs,
                      size_t n_outputs, tb_tensor **outs);
/* Destroy the non-NULL tensors of an array and set them to NULL. */
void tb_rc_destroy_all(tb_tensor **ts, size_t count);

/* Output i as the `count` per-iteration tensors parts[] (all of one dtype and shape) stacked along a new
 * axis `axis` (in [-(rank+1), rank+1)), iteration t at index t, or count-1-t when `reverse`. With no
 * iterations the shape comes from `declared` (the body output's type), which must then be fully known.
 * Parts of different shapes are TB_ERR_MODEL naming `what` and the iteration (tb_rc_stack.c). */
tb_status tb_rc_stack(tb_kernel_ctx *ctx, size_t i, const char *what, tb_tensor *const *parts, size_t count, int64_t axis,
                   bool reverse, const tb_value_type *declared);

#endif
