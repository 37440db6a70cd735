/* Helpers shared by the level-2 (fast) kernels: f32 checks, constant inputs, B packed once at prepare,
 * a fused node's activation, bias and residual as a GEMM epilogue, and a MatMul's or Gemm's output and
 * sizes. */
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "ops/nn/nn_infer.h"

tb_status tb_fast_check_f32(tb_kernel_ctx *ctx, size_t n) {
  for (size_t i = 0; i < n && i < ctx->n_inputs; i++)
    if (ctx->inputs[i] && tb_tensor_dtype(ctx->inputs[i]) != TB_DTYPE_F32)
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the float32 kernel got input %zu of dtype %s", i,
                             tb_dtype_name(tb_tensor_dtype(ctx->inputs[i])));
  return TB_OK;
}

bool tb_fast_input_constant(const tb_kernel_ctx *ctx, size_t i) { return tb_kernel_input_constant(ctx, i); }

tb_status tb_fast_prepare_b(tb_kernel_ctx *ctx, tb_gemm_path path, bool trans_b, void **state) {
  *state = NULL;
  if (!tb_fast_input_constant(ctx, 1)) return TB_OK;
  const tb_tensor *b = ctx->inputs[1];
  if (tb_tensor_dtype(b) != TB_DTYPE_F32 || tb_tensor_ndim(b) != 2) return TB_OK;
  const int64_t *bs = tb_tensor_shape(b);
  tb_fast_gemm_state *s = calloc(1, sizeof *s);
  if (!s) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the packed weights");
  s->k = bs[trans_b ? 1 : 0];
  s->n = bs[trans_b ? 0 : 1];
  s->trans_b = trans_b;
  tb_gemm_operand op = {.data = tb_tensor_host_data(b), .ld = bs[1], .trans = trans_b};
  s->b = tb_gemm_pack_b(path, &op, s->k, s->n);
  if (!s->b) {
    free(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory packing the %lld x %lld weights",
                           (long long)bs[0], (long long)bs[1]);
  }
  *state = s;
  tb_kernel_constant_consumed(ctx, 1); /* run() reads the packed copy only */
  return TB_OK;
}

void tb_fast_release(void *state) {
  tb_fast_gemm_state *s = state;
  if (!s) return;
  tb_gemm_packed_free(s->b);
  free(s);
}

tb_gemm_operand tb_fast_operand_b(const tb_kernel_ctx *ctx, const float *b, int64_t ldb, bool trans_b, int64_t k,
                                  int64_t n) {
  const tb_fast_gemm_state *s = ctx->state;
  if (s && s->b && s->k == k && s->n == n && s->trans_b == trans_b) return (tb_gemm_operand){.packed = s->b};
  return (tb_gemm_operand){.data = b, .ld = ldb, .trans = trans_b};
}

tb_status tb_fast_read_act(tb_kernel_ctx *ctx, tb_gemm_epilogue *ep) {
  tb_fused_act act;
  tb_status st = tb_fused_act_read(ctx, &act);
  if (st != TB_OK) return st;
  ep->act = act.kind;
  ep->act_alpha = (float)act.alpha;
  ep->act_beta = (float)act.beta;
  ep->act_min = (float)act.min;
  ep->act_max = (float)act.max;
  return TB_OK;
}

const struct vec_ops *tb_fast_vec_ops(tb_gemm_path path) {
  return path == TB_GEMM_AVX512 ? &tb_vec_ops_avx512 : path == TB_GEMM_AVX2 ? &tb_vec_ops_avx2 : &tb_vec_ops_portable;
}

static void format_dims(size_t nd, const int64_t *dims, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < nd && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)dims[d]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

bool tb_fast_matmul_bias_by_rows(const tb_kernel_ctx *ctx) {
  return ctx->n_inputs > 2 && ctx->inputs[2] && ctx->inputs[1] && tb_tensor_ndim(ctx->inputs[1]) < 2;
}

tb_status tb_fast_matmul_epilogue(tb_kernel_ctx *ctx, const tb_fast_matmul *mm, bool late, tb_gemm_epilogue *ep) {
  const tb_tensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, *res = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  size_t nd = tb_tensor_ndim(mm->y);
  if (bias) {
    size_t bd = tb_tensor_ndim(bias);
    bool ok = tb_tensor_numel(bias) == mm->n && bd >= 1 && bd <= nd && tb_tensor_shape(bias)[bd - 1] == mm->n;
    if (!ok)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                             "the bias (input 2) has %lld values (rank %zu); expected %lld, the output's last dimension",
                             (long long)tb_tensor_numel(bias), bd, (long long)mm->n);
    if (late) {
      ep->late_bias = tb_tensor_host_data(bias);
    } else {
      ep->bias = tb_tensor_host_data(bias);
      ep->bias_axis = 1;
    }
  }
  if (res) {
    if (tb_tensor_ndim(res) != nd || memcmp(tb_tensor_shape(res), mm->shape, nd * sizeof(int64_t)) != 0) {
      char rs[128], ys[128];
      format_dims(tb_tensor_ndim(res), tb_tensor_shape(res), rs, sizeof rs);
      format_dims(nd, mm->shape, ys, sizeof ys);
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the residual (input 3) has shape %s; expected the output's %s", rs, ys);
    }
    if (late) {
      ep->late_residual = tb_tensor_host_data(res);
      ep->ld_late_residual = mm->n;
    } else {
      ep->residual = tb_tensor_host_data(res);
      ep->ld_residual = mm->n;
    }
  }
  return TB_OK;
}

static tb_value_type type_of(const tb_tensor *t) {
  tb_value_type v = {.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = tb_tensor_dtype(t), .has_shape = true,
                     .ndim = tb_tensor_ndim(t)};
  for (size_t i = 0; i < v.ndim; i++) v.dims[i] = (tb_dim){tb_tensor_shape(t)[i], -1};
  return v;
}

tb_status tb_fast_matmul_begin(tb_kernel_ctx *ctx, tb_fast_matmul *mm) {
  *mm = (tb_fast_matmul){.a = ctx->inputs[0], .b = ctx->inputs[1]};
  tb_value_type ta = type_of(mm->a), tbv = type_of(mm->b), to = {0};
  const tb_value_type *in[2] = {&ta, &tbv};
  /* the shape rule of the op's definition; its errors name "node (MatMul)", the executor adds the name */
  const tb_node shown = {.name = "", .op_type = ctx->op_type};
  tb_infer_ctx ictx = {.graph = NULL, .node = &shown, .n_inputs = 2, .in = in, .n_outputs = 1, .out = &to};
  tb_status st = tb_nn_matmul_shape(&ictx, &ta, &tbv, &to);
  if (st != TB_OK) return st;
  for (size_t i = 0; i < to.ndim; i++) mm->shape[i] = to.dims[i].value;
  st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, to.ndim, mm->shape, &mm->y);
  if (st != TB_OK) return st;
  size_t and = ta.ndim, bnd = tbv.ndim;
  const int64_t *as = tb_tensor_shape(mm->a), *bs = tb_tensor_shape(mm->b);
  mm->m = and >= 2 ? as[and - 2] : 1;
  mm->k = as[and - 1];
  mm->n = bnd >= 2 ? bs[bnd - 1] : 1;
  mm->ba = and > 2 ? and - 2 : 0;
  mm->bb = bnd > 2 ? bnd - 2 : 0;
  mm->nb = mm->ba > mm->bb ? mm->ba : mm->bb;
  return TB_OK;
}

tb_status tb_fast_gemm_begin(tb_kernel_ctx *ctx, tb_fast_gemm *gm) {
  *gm = (tb_fast_gemm){.a = ctx->inputs[0], .b = ctx->inputs[1], .c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL};
  tb_status st;
  const tb_gemm_params *pb = tb_kernel_params(ctx, &st); /* a FusedGemm's parameters start with Gemm's */
  if (st != TB_OK) return st;
  gm->trans_a = pb->trans_a;
  gm->trans_b = pb->trans_b;
  gm->alpha = pb->alpha;
  gm->beta = pb->beta;
  if (tb_tensor_ndim(gm->a) != 2 || tb_tensor_ndim(gm->b) != 2)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "A and B must be 2-D (got ranks %zu and %zu)", tb_tensor_ndim(gm->a),
                           tb_tensor_ndim(gm->b));
  const int64_t *as = tb_tensor_shape(gm->a), *bs = tb_tensor_shape(gm->b);
  gm->m = as[gm->trans_a ? 1 : 0];
  gm->k = as[gm->trans_a ? 0 : 1];
  gm->n = bs[gm->trans_b ? 0 : 1];
  int64_t kb = bs[gm->trans_b ? 1 : 0];
  if (gm->k != kb)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "inner dimensions of A and B differ: %lld vs %lld", (long long)gm->k,
                           (long long)kb);
  int64_t out_shape[2] = {gm->m, gm->n};
  gm->cnd = gm->c ? tb_tensor_ndim(gm->c) : 0;
  gm->cs = gm->c ? tb_tensor_shape(gm->c) : NULL;
  bool ok = gm->cnd <= 2;
  for (size_t i = 0; gm->c && ok && i < gm->cnd; i++) ok = gm->cs[i] == 1 || gm->cs[i] == out_shape[2 - gm->cnd + i];
  if (!ok)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input C (rank %zu) does not broadcast to [%lld, %lld]", gm->cnd,
                           (long long)gm->m, (long long)gm->n);
  return tb_kernel_output(ctx, 0, TB_DTYPE_F32, 2, out_shape, &gm->y);
}
