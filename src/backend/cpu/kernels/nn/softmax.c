/* Reference kernels for Softmax, LogSoftmax and Hardmax over [outer, n, inner] views of the input: before
 * opset 13 the axis and everything after it form one row (inner 1); from 13 only the axis does. Softmax
 * subtracts the row maximum before exp (in double); Hardmax marks the first maximum. */
#include <math.h>
#include <stdlib.h>
#include "backend/cpu/kernels/nn/nn_kernel.h"

typedef enum { SM_SOFT, SM_LOG, SM_HARD } sm_kind;

static tb_status softmax_common(tb_kernel_ctx *ctx, sm_kind kind) {
  nn_buf x;
  double *y = NULL;
  tb_status st = tb_nn_load(ctx, 0, false, &x);
  if (st != TB_OK) return st;
  const tb_softmax_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) goto done;
  bool v13 = !pb->flatten;
  int64_t axis = pb->axis;
  int64_t r = (int64_t)x.ndim;
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r || (v13 && axis == r)) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "attribute axis is out of range for rank %lld", (long long)r);
    goto done;
  }
  int64_t outer = tb_nn_numel((size_t)axis, x.shape);
  int64_t n = v13 ? x.shape[axis] : tb_nn_numel((size_t)(r - axis), x.shape + axis);
  int64_t inner = v13 ? tb_nn_numel((size_t)(r - axis - 1), x.shape + axis + 1) : 1;
  st = tb_nn_alloc(ctx, x.numel, &y);
  if (st != TB_OK) goto done;
  for (int64_t o = 0; x.numel > 0 && o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const double *px = x.data + o * n * inner + i;
      double *py = y + o * n * inner + i;
      double mx = -INFINITY;
      int64_t arg = 0;
      for (int64_t j = 0; j < n; j++)
        if (px[j * inner] > mx) mx = px[j * inner], arg = j;
      if (kind == SM_HARD) {
        for (int64_t j = 0; j < n; j++) py[j * inner] = j == arg ? 1.0 : 0.0;
        continue;
      }
      double sum = 0;
      for (int64_t j = 0; j < n; j++) sum += exp(px[j * inner] - mx);
      for (int64_t j = 0; j < n; j++)
        py[j * inner] = kind == SM_LOG ? px[j * inner] - mx - log(sum) : exp(px[j * inner] - mx) / sum;
    }
  st = tb_nn_store(ctx, 0, x.dtype, x.ndim, x.shape, y);
done:
  free(y);
  tb_nn_buf_free(&x);
  return st;
}

static tb_status softmax_run(tb_kernel_ctx *ctx) { return softmax_common(ctx, SM_SOFT); }
static tb_status logsoftmax_run(tb_kernel_ctx *ctx) { return softmax_common(ctx, SM_LOG); }
static tb_status hardmax_run(tb_kernel_ctx *ctx) { return softmax_common(ctx, SM_HARD); }

const tb_kernel tb_kernel_softmax = {.domain = "", .name = "Softmax", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = softmax_run};
const tb_kernel tb_kernel_logsoftmax = {.domain = "", .name = "LogSoftmax", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = logsoftmax_run};
const tb_kernel tb_kernel_hardmax = {.domain = "", .name = "Hardmax", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = hardmax_run};
