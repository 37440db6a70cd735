/* Constant and ConstantOfShape: tensors made from attributes. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

/* The one value attribute a Constant must have, and its value. */
tb_status tb_constant_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_constant_params *p = params;
  static const char *const names[] = {"value",        "value_float",  "value_floats",   "value_int",
                                      "value_ints",   "value_string", "value_strings",  "sparse_value"};
  const tb_attr *found = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const tb_attr *a = tb_node_attr(n, names[i]);
    if (!a) continue;
    if (found)
      return tb_node_error(g, n, TB_ERR_MODEL, "has both '%s' and '%s'; exactly one value attribute is allowed",
                           found->name, a->name);
    found = a;
  }
  if (!found) return tb_node_error(g, n, TB_ERR_MODEL, "has no value attribute (value, value_float, value_ints...)");
  const char *name = found->name;
  if (strcmp(name, "sparse_value") == 0)
    return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "a sparse_value constant is not supported; store it dense in 'value'");
  if (strcmp(name, "value_string") == 0 || strcmp(name, "value_strings") == 0)
    return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "string constants ('%s') are not supported", name);
  if (strcmp(name, "value") == 0) {
    p->kind = TB_CONSTANT_TENSOR;
    return tb_attr_tensor(g, n, "value", &p->tensor);
  }
  if (strcmp(name, "value_float") == 0) {
    p->kind = TB_CONSTANT_FLOAT;
    return tb_attr_float(g, n, name, 0, &p->f);
  }
  if (strcmp(name, "value_int") == 0) {
    p->kind = TB_CONSTANT_INT;
    return tb_attr_int(g, n, name, 0, &p->i);
  }
  if (strcmp(name, "value_floats") == 0) {
    p->kind = TB_CONSTANT_FLOATS;
    return tb_attr_floats(g, n, name, &p->floats, &p->count);
  }
  p->kind = TB_CONSTANT_INTS;
  return tb_attr_ints(g, n, name, &p->ints, &p->count);
}

static tb_status constant_infer(tb_infer_ctx *ctx) {
  tb_constant_params p = {0};
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  int64_t dim = (int64_t)p.count;
  switch (p.kind) {
    case TB_CONSTANT_TENSOR: tb_tt_out_dims(ctx, 0, p.tensor->dtype, p.tensor->ndim, p.tensor->dims); break;
    case TB_CONSTANT_FLOAT: tb_tt_out_dims(ctx, 0, TB_DTYPE_F32, 0, NULL); break;
    case TB_CONSTANT_INT: tb_tt_out_dims(ctx, 0, TB_DTYPE_I64, 0, NULL); break;
    case TB_CONSTANT_FLOATS: tb_tt_out_dims(ctx, 0, TB_DTYPE_F32, 1, &dim); break;
    case TB_CONSTANT_INTS: tb_tt_out_dims(ctx, 0, TB_DTYPE_I64, 1, &dim); break;
  }
  return TB_OK;
}

const tb_op_def tb_op_constant = {"", "Constant", 1, 0, 0, 1, 1, 0, constant_infer, sizeof(tb_constant_params), tb_constant_parse};

/* ConstantOfShape: input 0 (int64, 1-D) is the shape; the one-element 'value' tensor gives the dtype and
 * the fill (default float 0). */
tb_status tb_constant_of_shape_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_constant_of_shape_params *p = params;
  tb_status st;
  if (tb_node_attr(n, "value") && (st = tb_attr_tensor(g, n, "value", &p->value)) != TB_OK) return st;
  if (p->value && tb_ir_tensor_numel(p->value) != 1)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'value' must hold one element, not %lld",
                         (long long)tb_ir_tensor_numel(p->value));
  return TB_OK;
}

static tb_status constant_of_shape_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TT_I64);
  if (st != TB_OK) return st;
  tb_constant_of_shape_params cp = {0};
  if ((st = tb_infer_params(ctx, &cp, sizeof cp)) != TB_OK) return st;
  const tb_ir_tensor *value = cp.value;
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

const tb_op_def tb_op_constant_of_shape = {"", "ConstantOfShape", 9, 1, 1, 1, 1, 1u << 0, constant_of_shape_infer, sizeof(tb_constant_of_shape_params), tb_constant_of_shape_parse};
