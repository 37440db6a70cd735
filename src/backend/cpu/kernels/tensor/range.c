/* Range: start + i * delta for each output element, in the inputs' type. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"

static tb_status run_range(tb_kernel_ctx *ctx) {
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_infer_outputs(ctx, outs);
  if (st != TB_OK) return st;
  const unsigned char *p[3];
  const tb_tensor *t;
  for (size_t i = 0; i < 3; i++)
    if ((st = tb_tk_input(ctx, i, &t, &p[i])) != TB_OK) return st;
  tb_dtype dt = tb_tensor_dtype(outs[0]);
  unsigned char *dst = tb_tk_data(outs[0]);
  int64_t n = tb_tensor_numel(outs[0]);
  if (dt == TB_DTYPE_F32 || dt == TB_DTYPE_F64) {
    double start = tb_tk_double_at(p[0], dt, 0), delta = tb_tk_double_at(p[2], dt, 0);
    for (int64_t i = 0; i < n; i++) {
      if (dt == TB_DTYPE_F32) {
        float v = (float)start + (float)i * (float)delta;
        memcpy(dst + (size_t)i * 4, &v, 4);
      } else {
        double v = start + (double)i * delta;
        memcpy(dst + (size_t)i * 8, &v, 8);
      }
    }
    return TB_OK;
  }
  int64_t start = (int64_t)tb_tk_double_at(p[0], dt, 0), delta = (int64_t)tb_tk_double_at(p[2], dt, 0);
  if (dt == TB_DTYPE_I64 || dt == TB_DTYPE_I32) {
    start = tb_tk_int_at(p[0], dt, 0);
    delta = tb_tk_int_at(p[2], dt, 0);
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t v = (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)delta); /* stays within [start, limit) */
    if (dt == TB_DTYPE_I64) memcpy(dst + (size_t)i * 8, &v, 8);
    if (dt == TB_DTYPE_I32) {
      int32_t w = (int32_t)v;
      memcpy(dst + (size_t)i * 4, &w, 4);
    }
    if (dt == TB_DTYPE_I16) {
      int16_t w = (int16_t)v;
      memcpy(dst + (size_t)i * 2, &w, 2);
    }
  }
  return TB_OK;
}

const tb_kernel tb_kernel_range = {.domain = "", .name = "Range", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_range};
