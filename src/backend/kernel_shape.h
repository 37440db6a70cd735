/* What device kernels share to size and address a node's tensors on the host: the op's own shape inference
 * run on the concrete inputs (for the outputs the executor left unmade, and for the ops' parameter
 * functions: Slice's plan, Pad's amounts, Split's sizes), row-major and broadcast strides, and Dropout's
 * inference-mode check. The CUDA and OpenCL backends call these; the CPU's tensor kernels have their own
 * inference context, which reads values through tb_tk_input. */
#ifndef TB_BACKEND_KERNEL_SHAPE_H
#define TB_BACKEND_KERNEL_SHAPE_H
#include <stddef.h>
#include <stdint.h>
#include "backend/kernel.h"
#include "ops/op.h"

/* The op's inference context on the concrete inputs; value inputs are given when the host can read them. */
enum { TB_KERNEL_INFER_MAX = 32 };
typedef struct tb_kernel_infer {
  tb_value_type types[TB_KERNEL_INFER_MAX], out[TB_KERNEL_INFER_MAX];
  const tb_value_type *in[TB_KERNEL_INFER_MAX];
  tb_ir_tensor vals[TB_KERNEL_INFER_MAX];
  const tb_ir_tensor *values[TB_KERNEL_INFER_MAX];
  tb_node op; /* the stand-in for the node (ops/op_params.h): its op and parsed parameters */
  tb_infer_ctx ic;
} tb_kernel_infer;
tb_status tb_kernel_infer_begin(tb_kernel_ctx *ctx, tb_kernel_infer *ki);

/* Make the outputs the executor left NULL with the shapes the op's inference gives for these inputs. */
tb_status tb_kernel_outputs(tb_kernel_ctx *ctx);

/* Row-major element strides of a shape. */
void tb_shape_strides(size_t ndim, const int64_t *shape, int64_t *strides);
/* Strides of input shape `in` broadcast to the output's ndim dims (0 along broadcast and missing dims). */
void tb_shape_bcast_strides(size_t ndim, const int64_t *out, size_t in_ndim, const int64_t *in, int64_t *strides);

/* Dropout at inference is Identity: TB_OK, or (training_mode true with a nonzero ratio, both host values)
 * TB_ERR_UNSUPPORTED in the CPU kernel's words. */
tb_status tb_kernel_dropout_check(tb_kernel_ctx *ctx);

#endif
