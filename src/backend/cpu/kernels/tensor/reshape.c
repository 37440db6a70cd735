/* Reshape, Flatten, Squeeze, Unsqueeze (and Identity-like copies): the input's bytes under the shape the
 * operator's inference gives for the concrete inputs. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"

static tb_status run_same_bytes(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  if (tb_tensor_nbytes(outs[0]) != tb_tensor_nbytes(x))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output has %zu bytes, input %zu", tb_tensor_nbytes(outs[0]),
                           tb_tensor_nbytes(x));
  unsigned char *dst = tb_tk_data(outs[0]);
  if (tb_tensor_nbytes(x) && dst != src) memmove(dst, src, tb_tensor_nbytes(x));
  return TB_OK;
}

const tb_kernel tb_kernel_reshape = {.domain = "", .name = "Reshape", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_same_bytes};
const tb_kernel tb_kernel_flatten = {.domain = "", .name = "Flatten", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_same_bytes};
const tb_kernel tb_kernel_squeeze = {.domain = "", .name = "Squeeze", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_same_bytes};
const tb_kernel tb_kernel_unsqueeze = {.domain = "", .name = "Unsqueeze", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_same_bytes};
