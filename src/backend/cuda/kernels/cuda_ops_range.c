/* Range on cuda:0 for float32, float64, int64 and int32: start + i * delta as the CPU reference computes it
 * (float32 in float, integers wrapping), on the host, since the output's size, ceil((limit - start) / delta),
 * needs the three values there. When all three are model constants (initializers or folded values) the values
 * are computed and uploaded once, at prepare, and each run copies them on the device into its output (nothing
 * from the host: the run can be captured as a graph). Otherwise the three are computed values the executor reads
 * back to the host (which rules the model out of graph capture at prepare) and the values are uploaded per run. */
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_launch.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_shape.h"
#include "backend/tensor/tensor_impl.h"

/* The node's state: the shared one first (tb_cuda_release's block), then the values made at prepare (NULL when
 * start, limit or delta is not a constant). */
typedef struct range_state {
  tb_cuda_node node;
  tb_tensor *values;
} range_state;

/* n values of dtype dt from start sp and delta dp (host scalars of dt), as the CPU reference computes them. */
static void range_values(tb_dtype dt, const void *sp, const void *dp, int64_t n, unsigned char *buf) {
  size_t elem = tb_dtype_size(dt);
  for (int64_t i = 0; i < n; i++) {
    unsigned char *at = buf + (size_t)i * elem;
    if (dt == TB_DTYPE_F32) {
      float v = *(const float *)sp + (float)i * *(const float *)dp;
      memcpy(at, &v, 4);
    } else if (dt == TB_DTYPE_F64) {
      double v = *(const double *)sp + (double)i * *(const double *)dp;
      memcpy(at, &v, 8);
    } else if (dt == TB_DTYPE_I64) {
      int64_t v = (int64_t)((uint64_t) * (const int64_t *)sp + (uint64_t)i * (uint64_t) * (const int64_t *)dp);
      memcpy(at, &v, 8);
    } else {
      int32_t v = (int32_t)((uint32_t) * (const int32_t *)sp + (uint32_t)i * (uint32_t) * (const int32_t *)dp);
      memcpy(at, &v, 4);
    }
  }
}

/* A new device tensor `out` of dtype dt and shape [n] holding the values. */
static tb_status upload_values(tb_kernel_ctx *ctx, tb_dtype dt, const void *sp, const void *dp, int64_t n, tb_tensor *y,
                               tb_tensor **out) {
  size_t elem = tb_dtype_size(dt);
  unsigned char *buf = malloc((size_t)n * elem + 1);
  if (!buf) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for Range's %lld values", (long long)n);
  range_values(dt, sp, dp, n, buf);
  tb_status st = TB_OK;
  if (!y) st = tb_tensor_create(ctx->backend, dt, 1, &n, &y);
  if (st == TB_OK) st = tb_tensor_copy_from_host(y, buf, (size_t)n * elem);
  free(buf);
  if (out) {
    if (st != TB_OK) tb_tensor_destroy(y);
    *out = st == TB_OK ? y : NULL;
  }
  return st;
}

static void range_release(void *state) {
  range_state *rs = state;
  if (rs) tb_tensor_destroy(rs->values);
  free(rs);
}

/* The shared state, then, when start, limit and delta are constants readable on the host, the output's values on the
 * device; nothing while a graph is being captured (a node prepared at its first run inside one): the run uploads. */
tb_status tb_cuda_range_prepare(tb_kernel_ctx *ctx, void **state) {
  void *made = NULL;
  tb_status st = tb_cuda_prepare_sized(ctx, sizeof(range_state), &made); /* the shared state at its start */
  if (st != TB_OK) return st;
  range_state *rs = made;
  *state = rs;
  cuda_state *s = tb_cuda_state_of(ctx);
  for (size_t i = 0; i < 3; i++)
    if (!tb_kernel_input_constant(ctx, i) || !tb_tensor_host_data(ctx->inputs[i])) return TB_OK;
  if (!s || tb_cuda_capturing(s)) return TB_OK;
  tb_kernel_infer *ki = malloc(sizeof *ki);
  if (!ki) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory to size Range's output");
  st = tb_kernel_infer_begin(ctx, ki);
  if (st == TB_OK) st = ki->op.def->infer(&ki->ic);
  const tb_value_type o = ki->out[0];
  free(ki);
  if (st != TB_OK || !o.has_dtype || !o.has_shape || o.ndim != 1 || o.dims[0].value < 0) {
    tb_clear_error(); /* the run says what is wrong, with the CPU's words */
    return TB_OK;
  }
  int64_t n = o.dims[0].value;
  if (n == 0) return TB_OK;
  const tb_tensor *start = ctx->inputs[0], *delta = ctx->inputs[2];
  if (start->dtype != o.dtype || delta->dtype != o.dtype) return TB_OK;
  if ((st = upload_values(ctx, o.dtype, tb_tensor_host_data(start), tb_tensor_host_data(delta), n, NULL, &rs->values)) != TB_OK) {
    *state = NULL;
    range_release(rs);
  }
  return st;
}

static tb_status range_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  tb_tensor *y = ctx->outputs[0];
  int64_t n = tb_tensor_numel(y);
  const range_state *rs = ctx->state;
  if (rs && rs->values && tb_tensor_numel(rs->values) == n && rs->values->dtype == y->dtype)
    return tb_cuda_copy_bytes(ctx, y, rs->values); /* made at prepare: a device copy */
  const void *sp = tb_tensor_host_data(ctx->inputs[0]), *dp = tb_tensor_host_data(ctx->inputs[2]);
  if (!sp || !dp) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "Range's start and delta must be host values");
  if (n == 0) return TB_OK;
  return upload_values(ctx, y->dtype, sp, dp, n, y, NULL);
}

static bool range_accepts(const tb_kernel_query *q) {
  if (q->n_inputs != 3 || q->n_outputs != 1 || !q->in[0] || !q->in[0]->has_dtype) return false;
  tb_dtype dt = q->in[0]->dtype;
  return dt == TB_DTYPE_F32 || dt == TB_DTYPE_F64 || dt == TB_DTYPE_I64 || dt == TB_DTYPE_I32;
}

static const tb_kernel kernels[] = {
    {"", "Range", TB_KERNEL_REFERENCE, 0, range_accepts, range_run, tb_cuda_range_prepare, range_release, NULL},
};
const tb_cuda_family tb_cuda_family_range = {kernels, sizeof kernels / sizeof kernels[0]};
