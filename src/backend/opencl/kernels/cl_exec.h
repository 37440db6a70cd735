/* Internal: what the OpenCL backend's kernels share: the per-node state made by prepare (kernel objects,
 * made on first use, and whether GEMMs go through CLBlast), argument setting and launches on the device's
 * in-order queue, device buffers of tensors, outputs the run-time inference sizes, and strides. */
#ifndef TB_BACKEND_OPENCL_KERNELS_CL_EXEC_H
#define TB_BACKEND_OPENCL_KERNELS_CL_EXEC_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/kernel.h"
#include "backend/kernel_shape.h"
#include "backend/opencl/cl_device.h"
#include "ops/op.h"

enum { CL_NODE_KERNELS = 6 };

typedef struct cl_node {
  tb_cl_kernel kernels[CL_NODE_KERNELS]; /* by slot, made on first use */
  const char *names[CL_NODE_KERNELS];
  bool clblast;                         /* GEMMs through CLBlast (decided at prepare) */
  tb_cl_int (*release)(tb_cl_kernel);   /* the runtime's clReleaseKernel */
} cl_node;

/* prepare / release shared by every OpenCL kernel: builds (or loads) the device's program, so a build
 * failure is reported by tb_model_prepare naming the node, and makes the node's state. */
tb_status tb_cl_prepare(tb_kernel_ctx *ctx, void **state);
void tb_cl_release(void *state);

/* The device of the run. */
tb_cl_device *tb_cl_dev(const tb_kernel_ctx *ctx);
/* The node's kernel object `name` in `slot` (made on first use). */
tb_status tb_cl_kernel_get(tb_kernel_ctx *ctx, int slot, const char *name, tb_cl_kernel *out);

/* A launch being set up: arguments in order, then tb_cl_go. The first failure sticks and is returned by tb_cl_go. */
typedef struct cl_launch {
  tb_kernel_ctx *ctx;
  tb_cl_kernel kernel;
  const char *name;
  unsigned arg;
  tb_status status;
} cl_launch;
tb_status tb_cl_begin(cl_launch *l, tb_kernel_ctx *ctx, int slot, const char *name);
void tb_cl_arg_tensor(cl_launch *l, const tb_tensor *t); /* two arguments: the buffer and the element offset */
void tb_cl_arg_tensor_at(cl_launch *l, const tb_tensor *t, int64_t extra); /* offset + extra elements */
void tb_cl_arg_int(cl_launch *l, int64_t v);              /* int; values outside int are an error */
void tb_cl_arg_float(cl_launch *l, float v);
void tb_cl_arg_int8(cl_launch *l, const int64_t *v, size_t n); /* int8 vector: n <= 8 values, zero-padded */
tb_status tb_cl_go(cl_launch *l, size_t n);               /* n work-items (none when 0) */
tb_status tb_cl_go2(cl_launch *l, size_t gx, size_t gy, size_t lx, size_t ly);

/* The buffer and element offset of a device tensor, checked: on this device, contiguous, and with every
 * element index below 2^31 (the kernels' ints). */
tb_status tb_cl_buffer(tb_kernel_ctx *ctx, const tb_tensor *t, tb_cl_mem *mem, int64_t *offset);

/* A strided copy of t-sized elements (2 or 4 bytes): for each index of shape, dst[dst_off + idx.dst_str]
 * = src[src_off + idx.src_str], offsets and strides in elements relative to the tensors' starts. */
tb_status tb_cl_copy_strided(tb_kernel_ctx *ctx, int slot, const tb_tensor *src, int64_t src_off, const int64_t *src_str,
                          tb_tensor *dst, int64_t dst_off, const int64_t *dst_str, size_t ndim, const int64_t *shape);
/* y = x elementwise unary (op code of 00_common.cl) on f32 or f16 tensors of the same size (y may be x). */
tb_status tb_cl_unary(tb_kernel_ctx *ctx, int slot, const tb_tensor *x, tb_tensor *y, int op, float a, float b);
/* y = x (op) z with broadcasting to y's shape; y may alias x. */
tb_status tb_cl_binary(tb_kernel_ctx *ctx, int slot, const tb_tensor *x, const tb_tensor *z, tb_tensor *y, int op);

/* The dtype is one the kernels compute: float32 or float16. */
bool tb_cl_float_type(tb_dtype dt);

#endif
