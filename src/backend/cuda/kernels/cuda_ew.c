/* The host side of the tb_cu_ew_* kernels (cuda_ew.h): the descriptor's layout, the launch and the kernel for
 * a dtype. */
#include "backend/cuda/kernels/cuda_ew.h"
#include "backend/tensor/tensor_impl.h"

_Static_assert(sizeof(tb_cuda_ew) == 296, "tb_cuda_ew must match the kernels' tb_ew");
_Static_assert(offsetof(tb_cuda_ew, op) == 64 && offsetof(tb_cuda_ew, alpha) == 72 && offsetof(tb_cuda_ew, bc) == 96,
               "tb_cuda_ew's fields must sit where the kernels' tb_ew has them");
_Static_assert(TB_CUDA_EW_SIGN == 12 && TB_CUDA_EW_MISH == 20 && TB_CUDA_EW_ISINF == 24 && TB_CUDA_EW_RELU == 25 &&
                   TB_CUDA_EW_ERF == 36 && TB_CUDA_EW_GELU_TANH == 41 && TB_CUDA_EW_MAX == 5 && TB_CUDA_EW_PRELU == 7,
               "12_math.cu's TB_EW_* numbering");

const char *const tb_cuda_ew_math_kernels[TB_CUDA_EW_TYPES] = {"tb_cu_ew_math_f32", "tb_cu_ew_math_f64", [7] = "tb_cu_ew_math_f16",
                                                              "tb_cu_ew_math_bf16"};
const char *const tb_cuda_ew_arith_kernels[TB_CUDA_EW_TYPES] = {NULL, "tb_cu_ew_arith_f64", [7] = "tb_cu_ew_arith_f16", "tb_cu_ew_arith_bf16"};

bool tb_cuda_ew_is_half(tb_dtype dt) { return dt == TB_DTYPE_F16 || dt == TB_DTYPE_BF16; }

tb_status tb_cuda_ew_go(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *a, const tb_tensor *b, tb_tensor *y, tb_tensor *z,
                        int64_t n, tb_cuda_ew *d, tb_cuda_ew_grid grid) {
  if (!kernel) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no CUDA kernel of %s for this dtype; it runs on the CPU", ctx->op_type);
  if (n <= 0) return TB_OK;
  const tb_tensor *ops[4] = {a, b, y, z};
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, kernel);
  for (int i = 0; i < 4; i++) {
    d->bytes[i] = ops[i] ? (int64_t)tb_tensor_nbytes(ops[i]) : 0;
    if (ops[i]) tb_cuda_arg_tensor(&l, ops[i]);
    else tb_cuda_arg_i64(&l, 0);
  }
  tb_cuda_arg_i64(&l, n);
  tb_cuda_arg_bytes(&l, d, sizeof *d, 8);
  return grid == TB_CUDA_EW_ROWS ? tb_cuda_go_rows(&l, n, d->len) : tb_cuda_go_elements(&l, n);
}

const char *tb_cuda_ew_typed(const char *const names[TB_CUDA_EW_TYPES], tb_dtype dtype) {
  switch (dtype) {
    case TB_DTYPE_F32: return names[0];
    case TB_DTYPE_F64: return names[1];
    case TB_DTYPE_I8: return names[2];
    case TB_DTYPE_I16: return names[3];
    case TB_DTYPE_I32: return names[4];
    case TB_DTYPE_I64: return names[5];
    case TB_DTYPE_U8: return names[6];
    case TB_DTYPE_F16: return names[7];
    case TB_DTYPE_BF16: return names[8];
    default: return NULL;
  }
}
