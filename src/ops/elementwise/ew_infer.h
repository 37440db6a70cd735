/* Internal: helpers shared by the elementwise operators' infer functions — the dtype sets the ONNX spec
 * allows (restricted to TensorBridge's dtypes), the check that separates "the model is wrong" from "we
 * do not implement this", and the unary / binary / variadic shape rules with numpy broadcasting and the
 * legacy (opset < 7) axis broadcast. */
#ifndef TB_OPS_ELEMENTWISE_EW_INFER_H
#define TB_OPS_ELEMENTWISE_EW_INFER_H
#include "ops/op.h"

#define EW_BIT(d) TB_DTYPE_BIT(TB_DTYPE_##d)
#define EW_FLOATS (EW_BIT(F32) | EW_BIT(F64) | EW_BIT(F16) | EW_BIT(BF16))
#define EW_SINTS (EW_BIT(I64) | EW_BIT(I32) | EW_BIT(I16) | EW_BIT(I8))
#define EW_INTS (EW_SINTS | EW_BIT(U8))
#define EW_NUMERIC (EW_FLOATS | EW_INTS)
#define EW_FP8 (EW_BIT(FP8_E4M3FN) | EW_BIT(FP8_E5M2))
#define EW_ALL (EW_NUMERIC | EW_BIT(BOOL) | EW_FP8)
#define EW_BOOL EW_BIT(BOOL)

/* Input i must be a present tensor of known dtype: in `allowed` (else TB_ERR_MODEL: the spec forbids
 * it) and in `implemented` (else TB_ERR_UNSUPPORTED naming the op and dtype). */
tb_status tb_ew_check(const tb_infer_ctx *ctx, size_t i, tb_dtype_set allowed, tb_dtype_set implemented);
/* Every present input in [first, last] has the dtype of input `first` (TB_ERR_MODEL otherwise). */
tb_status tb_ew_same_dtype(const tb_infer_ctx *ctx, size_t first, size_t last);
/* Output 0 = the numpy broadcast of the present inputs [first, first + n), with dtype `dtype`. */
tb_status tb_ew_broadcast(const tb_infer_ctx *ctx, size_t first, size_t n, tb_dtype dtype);

/* One input, output 0 of the same type. */
tb_status tb_ew_infer_unary(tb_infer_ctx *ctx, tb_dtype_set allowed, tb_dtype_set implemented);
/* Two inputs of one dtype, output 0 the broadcast shape, dtype of the inputs or bool. For opset < 7
 * the legacy attributes broadcast/axis decide instead (B aligned at axis of A; output A's shape). */
tb_status tb_ew_infer_binary(tb_infer_ctx *ctx, tb_dtype_set allowed, tb_dtype_set implemented, bool bool_out);
/* One or more inputs of one dtype, broadcast together (Sum, Mean, Min, Max). */
tb_status tb_ew_infer_variadic(tb_infer_ctx *ctx, tb_dtype_set allowed, tb_dtype_set implemented);

#endif
