/* Output sizing by the op's own inference, strides and Dropout's check, shared by the device backends'
 * kernels (kernel_shape.h). */
#include <stdlib.h>
#include <string.h>
#include "backend/kernel_shape.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/op_params.h"

tb_status tb_kernel_infer_begin(tb_kernel_ctx *ctx, tb_kernel_infer *ki) {
  memset(ki, 0, sizeof *ki);
  if (ctx->n_inputs > TB_KERNEL_INFER_MAX || ctx->n_outputs > TB_KERNEL_INFER_MAX)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "a device kernel sizes the outputs of nodes with up to %d inputs and outputs",
                           TB_KERNEL_INFER_MAX);
  tb_status st = tb_infer_stand_in(&ki->op, ctx->domain, ctx->op_type, ctx->opset, ctx->params, ctx->n_inputs, ctx->n_outputs);
  if (st != TB_OK) return st;
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (!t) continue;
    tb_value_type *ty = &ki->types[i];
    ty->kind = TB_VALUE_TENSOR;
    ty->has_dtype = ty->has_shape = true;
    ty->dtype = t->dtype;
    ty->ndim = t->ndim;
    for (size_t d = 0; d < t->ndim; d++) ty->dims[d] = (tb_dim){t->shape[d], -1};
    ki->in[i] = ty;
    if ((ki->op.def->value_inputs >> i) & 1u) {
      tb_ir_tensor *v = &ki->vals[i];
      v->dtype = t->dtype;
      v->ndim = t->ndim;
      memcpy(v->dims, t->shape, t->ndim * sizeof(int64_t));
      v->data = tb_tensor_host_data(t);
      v->nbytes = tb_tensor_nbytes(t);
      if (v->data || v->nbytes == 0) ki->values[i] = v;
    }
  }
  ki->ic = (tb_infer_ctx){NULL, &ki->op, ctx->n_inputs, ki->in, ki->values, ctx->n_outputs, ki->out};
  return TB_OK;
}

tb_status tb_kernel_outputs(tb_kernel_ctx *ctx) {
  bool missing = false;
  for (size_t i = 0; i < ctx->n_outputs; i++) missing |= !ctx->outputs[i] && tb_kernel_has_output(ctx, i);
  if (!missing) return TB_OK;
  tb_kernel_infer *ki = malloc(sizeof *ki);
  if (!ki) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory to size the node's outputs");
  tb_status st = tb_kernel_infer_begin(ctx, ki);
  if (st == TB_OK) st = ki->op.def->infer(&ki->ic);
  for (size_t i = 0; st == TB_OK && i < ctx->n_outputs; i++) {
    if (ctx->outputs[i] || !tb_kernel_has_output(ctx, i)) continue;
    const tb_value_type *o = &ki->out[i];
    int64_t dims[TB_MAX_DIMS];
    bool known = o->has_dtype && o->has_shape && o->ndim <= TB_MAX_DIMS;
    for (size_t d = 0; known && d < o->ndim; d++) known = (dims[d] = o->dims[d].value) >= 0;
    if (!known) {
      st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED,
                           "output %zu's shape does not follow from the inputs' shapes, which the device kernel needs", i);
      break;
    }
    st = tb_kernel_output(ctx, i, o->dtype, o->ndim, dims, NULL);
  }
  free(ki);
  return st;
}

void tb_shape_strides(size_t ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (size_t d = ndim; d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
}

void tb_shape_bcast_strides(size_t ndim, const int64_t *out, size_t in_ndim, const int64_t *in, int64_t *strides) {
  int64_t own[TB_MAX_DIMS];
  tb_shape_strides(in_ndim, in, own);
  size_t lead = ndim - in_ndim;
  for (size_t d = 0; d < ndim; d++) strides[d] = d < lead || (in[d - lead] == 1 && out[d] != 1) ? 0 : own[d - lead];
}

tb_status tb_kernel_dropout_check(tb_kernel_ctx *ctx) {
  const tb_tensor *ratio = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL, *training = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if (!training || tb_tensor_numel(training) != 1) return TB_OK;
  const unsigned char *t = tb_tensor_host_data(training);
  if (!t) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "training_mode must be a value the host can read");
  if (!t[0]) return TB_OK;
  float r = 0.5f;
  if (ratio && tb_tensor_numel(ratio) == 1) {
    const void *rv = tb_tensor_host_data(ratio);
    if (!rv || tb_convert(ratio->dtype, rv, TB_DTYPE_F32, &r, 1, true) != TB_OK)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "ratio must be a float value the host can read");
  }
  if (r == 0.0f) return TB_OK;
  return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "training_mode is true: TensorBridge runs Dropout for inference only "
                         "(random dropping is not implemented); export the model in eval mode");
}
