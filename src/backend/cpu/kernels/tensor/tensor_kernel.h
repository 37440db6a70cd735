/* Internal: helpers the tensor family's CPU kernels share — contiguous host views of inputs, integer
 * inputs read as int64, the op's own shape inference run on concrete inputs, and one strided copy that
 * moves elements of any dtype by their bytes. */
#ifndef TB_CPU_KERNELS_TENSOR_KERNEL_H
#define TB_CPU_KERNELS_TENSOR_KERNEL_H
#include "backend/cpu/kernels/kernel.h"
#include "backend/kernel_shape.h"
#include "ir/ir.h"
#include "ops/op.h"

/* Input i: present, on the host and contiguous. *data is its first byte (may be NULL when empty). */
tb_status tb_tk_input(const tb_kernel_ctx *ctx, size_t i, const tb_tensor **t, const unsigned char **data);
/* True when optional input i is given. */
bool tb_tk_has(const tb_kernel_ctx *ctx, size_t i);
/* Integer input i (int32 or int64, scalar or 1-D) as int64 values; more than cap is TB_ERR_UNSUPPORTED. */
tb_status tb_tk_input_ints(const tb_kernel_ctx *ctx, size_t i, int64_t *out, size_t cap, size_t *n);
/* An index from data checked against its dim: idx in [-dim, dim) normalised to [0, dim), else
 * TB_ERR_INVALID_ARGUMENT naming the index, its position in the indices tensor, the axis and the dim. */
tb_status tb_tk_check_index(const tb_kernel_ctx *ctx, int64_t idx, int64_t dim, size_t axis, int64_t at, int64_t *out);
/* An axis parameter made non-negative for rank (inference checked its range). */
int64_t tb_tk_axis(int64_t axis, size_t rank);
/* GatherElements' and ScatterElements' walk over the indices: each indices element's data offset (in
 * elements) is its own coordinates with the one on axis replaced by its checked value. */
typedef struct tk_elements {
  const unsigned char *ip;
  tb_dtype it;
  size_t rank, axis;
  const int64_t *shape, *ishape;
  int64_t strides[TB_MAX_DIMS], idx[TB_MAX_DIMS];
} tk_elements;
/* Checks, per dim, that updates (NULL: none) has the indices' size and the indices fit the data off axis. */
tb_status tb_tk_elements_begin(const tb_kernel_ctx *ctx, tk_elements *w, const tb_tensor *data, const tb_tensor *ind,
                            const unsigned char *ip, const tb_tensor *upd, size_t axis);
/* The data offset of indices element j; called for j = 0, 1, ... in order. */
tb_status tb_tk_elements_next(const tb_kernel_ctx *ctx, tk_elements *w, int64_t j, int64_t *off);
/* Element k of an int32/int64 buffer. */
int64_t tb_tk_int_at(const void *data, tb_dtype dtype, int64_t k);
/* Element k of any numeric buffer as double (bool 0/1). */
double tb_tk_double_at(const void *data, tb_dtype dtype, int64_t k);

/* Run the op's infer function (with the node's parsed parameters) on the concrete inputs (shapes, and values of
 * its value inputs) and allocate every output the node has (tb_kernel_has_output) with the shape it gives; outs receives them
 * (n_outputs entries, NULL for an omitted one). */
tb_status tb_tk_infer_outputs(tb_kernel_ctx *ctx, tb_tensor **outs);
/* Inputs 0..n-1 as tb_tk_input gives them (in[i], data[i]), then tb_tk_infer_outputs into outs: the prologue of
 * a kernel whose outputs all come from inference. */
tb_status tb_tk_begin(tb_kernel_ctx *ctx, size_t n, const tb_tensor **in, const unsigned char **data, tb_tensor **outs);
/* The inference context of the concrete inputs, for an op's own parameter functions. */
typedef struct tk_infer tk_infer;
tb_status tb_tk_infer_begin(tb_kernel_ctx *ctx, tk_infer **out);
tb_infer_ctx *tb_tk_infer_ctx(tk_infer *s);
void tb_tk_infer_end(tk_infer *s);
/* Output i allocated (or checked) with this dtype and shape; *data its first byte. */
tb_status tb_tk_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, tb_tensor **t,
                    unsigned char **data);
unsigned char *tb_tk_data(const tb_tensor *t);

/* dst (packed, row-major over shape) = src elements at byte offset src_offset + sum(idx[d] * strides[d])
 * where strides are in bytes and may be 0 or negative. */
void tb_tk_strided_copy(unsigned char *dst, const unsigned char *src, size_t elem, size_t ndim, const int64_t *shape,
                     const int64_t *strides, int64_t src_offset);
/* tb_tk_strided_copy split over the pool (strided_copy_pool.c): the same bytes for any thread count; copies
 * under 256 KiB, or with a NULL or 1-thread pool, run on the caller. */
void tb_tk_strided_copy_pool(struct tb_pool *pool, unsigned char *dst, const unsigned char *src, size_t elem, size_t ndim,
                             const int64_t *shape, const int64_t *strides, int64_t src_offset);

/* Slice's output 0 (made with plan->count) filled from x (its bytes at src) by the plan (ops/tensor/shape_rules.h):
 * the reference kernel's copy, shared with the level-2 Slice. */
struct tb_slice_plan;
tb_status tb_tk_slice_copy(tb_kernel_ctx *ctx, const tb_tensor *x, const unsigned char *src, const struct tb_slice_plan *plan);
/* Concat of ctx's inputs along axis (non-negative) into out, whose shape the caller made and checked. */
tb_status tb_tk_concat_copy(tb_kernel_ctx *ctx, tb_tensor *out, int64_t axis);
#endif
