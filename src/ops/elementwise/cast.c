/* Cast (attribute `to`: an ONNX TensorProto data type; a type name string in opsets 1-5) and CastLike
 * (the type of input 1). Conversions follow tb_convert, which implements ONNX's Cast rules; `saturate`
 * (opset 19, default 1) matters for fp8 destinations only. Types TensorBridge lacks (strings, uint16-64,
 * complex, the fnuz fp8 kinds, 4-bit) are TB_ERR_UNSUPPORTED. */
#include <stdio.h>
#include <strings.h>
#include "ops/op_params.h"
#include "core/error.h"
#include "ops/elementwise/ew_infer.h"
#include "ops/elementwise/ew_params.h"

/* TensorProto.DataType codes and their names. */
static const struct {
  int64_t code;
  const char *name;
  int dtype; /* tb_dtype, or -1 when TensorBridge has no such dtype */
} onnx_types[] = {
    {1, "FLOAT", TB_DTYPE_F32},   {2, "UINT8", TB_DTYPE_U8},       {3, "INT8", TB_DTYPE_I8},
    {4, "UINT16", -1},            {5, "INT16", TB_DTYPE_I16},      {6, "INT32", TB_DTYPE_I32},
    {7, "INT64", TB_DTYPE_I64},   {8, "STRING", -1},               {9, "BOOL", TB_DTYPE_BOOL},
    {10, "FLOAT16", TB_DTYPE_F16}, {11, "DOUBLE", TB_DTYPE_F64},   {12, "UINT32", -1},
    {13, "UINT64", -1},           {14, "COMPLEX64", -1},           {15, "COMPLEX128", -1},
    {16, "BFLOAT16", TB_DTYPE_BF16}, {17, "FLOAT8E4M3FN", TB_DTYPE_FP8_E4M3FN}, {18, "FLOAT8E4M3FNUZ", -1},
    {19, "FLOAT8E5M2", TB_DTYPE_FP8_E5M2}, {20, "FLOAT8E5M2FNUZ", -1}, {21, "UINT4", -1}, {22, "INT4", -1},
};
enum { N_ONNX_TYPES = sizeof onnx_types / sizeof onnx_types[0] };

/* The dtype the attribute `to` names (an ONNX TensorProto data type code, or its name in opsets 1-5).
 * TB_ERR_MODEL naming the node for a missing or unknown value; TB_ERR_UNSUPPORTED for a type TensorBridge
 * has no tensors of (strings, uint16-64, complex, fnuz fp8, 4-bit). */
static tb_status cast_target(const tb_graph *g, const tb_node *n, tb_dtype *out) {
  char label[200];
  const tb_attr *to = tb_node_attr(n, "to");
  if (!to) return tb_error(TB_ERR_MODEL, "%s: attribute 'to' is required", tb_node_label(g, n, label, sizeof label));
  for (size_t i = 0; i < N_ONNX_TYPES; i++) {
    bool match = to->type == TB_ATTR_INT ? to->i == onnx_types[i].code
                                         : to->type == TB_ATTR_STRING && to->s && strcasecmp(to->s, onnx_types[i].name) == 0;
    if (!match) continue;
    if (onnx_types[i].dtype < 0)
      return tb_error(TB_ERR_UNSUPPORTED, "%s: casting to %s is valid ONNX but TensorBridge has no %s tensors",
                      tb_node_label(g, n, label, sizeof label), onnx_types[i].name, onnx_types[i].name);
    *out = (tb_dtype)onnx_types[i].dtype;
    return TB_OK;
  }
  tb_node_label(g, n, label, sizeof label);
  if (to->type == TB_ATTR_INT)
    return tb_error(TB_ERR_MODEL, "%s: attribute 'to' is %lld, not an ONNX data type", label, (long long)to->i);
  if (to->type == TB_ATTR_STRING)
    return tb_error(TB_ERR_MODEL, "%s: attribute 'to' is \"%s\", not an ONNX data type name", label, to->s ? to->s : "");
  return tb_error(TB_ERR_MODEL, "%s: attribute 'to' must be an int (a TensorProto data type)", label);
}

tb_status tb_castlike_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_cast_params *p = params;
  int64_t saturate;
  tb_status st = tb_attr_int(g, n, "saturate", 1, &saturate);
  p->saturate = saturate != 0;
  return st;
}

tb_status tb_cast_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_cast_params *p = params;
  tb_status st = cast_target(g, n, &p->to);
  return st == TB_OK ? tb_castlike_parse(g, n, p) : st;
}

static tb_status infer_cast(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_unary(ctx, EW_ALL, EW_ALL);
  tb_cast_params p = {0};
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  ctx->out[0].dtype = p.to;
  return TB_OK;
}

static tb_status infer_castlike(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_unary(ctx, EW_ALL, EW_ALL);
  if (st == TB_OK) st = tb_ew_check(ctx, 1, EW_ALL, EW_ALL);
  tb_cast_params p = {0};
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  ctx->out[0].dtype = ctx->in[1]->dtype;
  return TB_OK;
}

const tb_op_def tb_op_cast = {"", "Cast", 1, 1, 1, 1, 1, 0, infer_cast, sizeof(tb_cast_params), tb_cast_parse};
const tb_op_def tb_op_castlike = {"", "CastLike", 15, 2, 2, 1, 1, 0, infer_castlike, sizeof(tb_cast_params), tb_castlike_parse};
