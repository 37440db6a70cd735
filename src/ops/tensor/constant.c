/* Constant and ConstantOfShape: tensors made from attributes. */
#include <string.h>
#include "ops/tensor/tensor_infer.h"

/* The one value attribute a Constant must have; its dtype and dims. */
static tb_status constant_infer(tb_infer_ctx *ctx) {
  static const char *const names[] = {"value",        "value_float",  "value_floats",   "value_int",
                                      "value_ints",   "value_string", "value_strings",  "sparse_value"};
  const tb_attr *found = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const tb_attr *a = tb_node_attr(ctx->node, names[i]);
    if (!a) continue;
    if (found)
      return tb_infer_error(ctx, TB_ERR_MODEL, "has both '%s' and '%s'; exactly one value attribute is allowed",
                            found->name, a->name);
    found = a;
  }
  if (!found) return tb_infer_error(ctx, TB_ERR_MODEL, "has no value attribute (value, value_float, value_ints...)");
  const char *name = found->name;
  if (strcmp(name, "sparse_value") == 0)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "a sparse_value constant is not supported; store it dense in 'value'");
  if (strcmp(name, "value_string") == 0 || strcmp(name, "value_strings") == 0)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "string constants ('%s') are not supported", name);
  tb_status st;
  if (strcmp(name, "value") == 0) {
    const tb_ir_tensor *t;
    if ((st = tb_attr_tensor(ctx->graph, ctx->node, "value", &t)) != TB_OK) return st;
    tb_tt_out_dims(ctx, 0, t->dtype, t->ndim, t->dims);
  } else if (strcmp(name, "value_float") == 0) {
    float f;
    if ((st = tb_attr_float(ctx->graph, ctx->node, name, 0, &f)) != TB_OK) return st;
    tb_tt_out_dims(ctx, 0, TB_DTYPE_F32, 0, NULL);
  } else if (strcmp(name, "value_int") == 0) {
    int64_t v;
    if ((st = tb_attr_int(ctx->graph, ctx->node, name, 0, &v)) != TB_OK) return st;
    tb_tt_out_dims(ctx, 0, TB_DTYPE_I64, 0, NULL);
  } else if (strcmp(name, "value_floats") == 0) {
    const float *f;
    size_t count;
    if ((st = tb_attr_floats(ctx->graph, ctx->node, name, &f, &count)) != TB_OK) return st;
    int64_t dim = (int64_t)count;
    tb_tt_out_dims(ctx, 0, TB_DTYPE_F32, 1, &dim);
  } else {
    const int64_t *v;
    size_t count;
    if ((st = tb_attr_ints(ctx->graph, ctx->node, name, &v, &count)) != TB_OK) return st;
    int64_t dim = (int64_t)count;
    tb_tt_out_dims(ctx, 0, TB_DTYPE_I64, 1, &dim);
  }
  return TB_OK;
}

const tb_op_def tb_op_constant = {"", "Constant", 1, 0, 0, 1, 1, 0, constant_infer, 0, NULL};

/* ConstantOfShape: input 0 (int64, 1-D) is the shape; the one-element 'value' tensor gives the dtype and
 * the fill (default float 0). */
static tb_status constant_of_shape_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TT_I64);
  if (st != TB_OK) return st;
  const tb_ir_tensor *value = NULL;
  if (tb_node_attr(ctx->node, "value") && (st = tb_attr_tensor(ctx->graph, ctx->node, "value", &value)) != TB_OK)
    return st;
  if (value && tb_ir_tensor_numel(value) != 1)
    return tb_infer_error(ctx, TB_ERR_MODEL, "attribute 'value' must hold one element, not %lld",
                          (long long)tb_ir_tensor_numel(value));
  tb_dtype dt = value ? value->dtype : TB_DTYPE_F32;
  int64_t shape[TB_MAX_DIMS], n;
  bool known;
  if ((st = tb_tt_input_ints(ctx, 0, shape, TB_MAX_DIMS, &n, &known)) != TB_OK) return st;
  if (!known) {
    if (n >= 0)
      tb_tt_out_rank(ctx, 0, dt, (size_t)n);
    else
      tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  for (int64_t i = 0; i < n; i++)
    if (shape[i] < 0)
      return tb_infer_error(ctx, TB_ERR_MODEL, "shape has the negative size %lld at %lld", (long long)shape[i],
                            (long long)i);
  tb_tt_out_dims(ctx, 0, dt, (size_t)n, shape);
  return TB_OK;
}

const tb_op_def tb_op_constant_of_shape = {"", "ConstantOfShape", 9, 1, 1, 1, 1, 1u << 0, constant_of_shape_infer, 0, NULL};
