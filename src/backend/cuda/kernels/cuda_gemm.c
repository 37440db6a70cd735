/* Matrix products on cuda:0 (cuda_gemm.h): the kernels' descriptor made from shapes, the node state with
 * cuBLASLt's handle, and the choice per product between cuBLASLt (with the epilogue it cannot fuse applied
 * after it by tb_cu_gemm_epilogue_f32) and the own tiled kernel (tb_cu_gemm_f32, or a 16-bit one). The node's
 * precision and its prepare, release and run are cuda_gemm_precision.c's. */
#include "backend/cuda/kernels/cuda_gemm.h"
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_module.h"
#include "backend/tensor/tensor_impl.h"
#include "core/env.h"
#include "core/error.h"

/* The layout the kernels read (40_gemm.cu's tb_gemm_desc, compiled as C++ with 8-byte long long). */
_Static_assert(sizeof(tb_cuda_gemm_desc) == 376, "tb_cuda_gemm_desc must match the kernels' tb_gemm_desc");
_Static_assert(offsetof(tb_cuda_gemm_desc, batch_dims) == 8, "tb_gemm_desc.batch_dims");
_Static_assert(offsetof(tb_cuda_gemm_desc, batch) == 248, "tb_gemm_desc.batch");
_Static_assert(offsetof(tb_cuda_gemm_desc, alpha) == 344, "tb_gemm_desc.alpha");
_Static_assert(offsetof(tb_cuda_gemm_desc, divide) == 372, "tb_gemm_desc.divide");

void tb_cuda_gemm_strides(size_t ndim, const int64_t *shape, size_t batch_rank, int64_t *batch, int64_t *rs, int64_t *cs) {
  int64_t stride = 1, strides[TB_MAX_DIMS];
  for (size_t d = ndim; d-- > 0;) {
    strides[d] = shape[d] == 1 ? 0 : stride;
    stride *= shape[d];
  }
  *cs = ndim >= 1 ? strides[ndim - 1] : 0;
  *rs = ndim >= 2 ? strides[ndim - 2] : 0;
  for (size_t r = 0; r < batch_rank; r++) {
    /* batch dim r of the output is dim r - (batch_rank + 2 - ndim) of the tensor */
    ptrdiff_t t = (ptrdiff_t)r - (ptrdiff_t)batch_rank - 2 + (ptrdiff_t)ndim;
    batch[r] = t >= 0 ? strides[t] : 0;
  }
}

void tb_cuda_gemm_set_batch(tb_cuda_gemm_desc *d, size_t batch_rank, const int64_t *dims) {
  d->batch_rank = (int32_t)batch_rank;
  d->batch = 1;
  for (size_t r = 0; r < batch_rank; r++) {
    d->batch_dims[r] = dims[r];
    d->batch *= dims[r];
  }
}

/* Remove batch dim r (its index is always 0). */
static void drop_dim(tb_cuda_gemm_desc *d, int r) {
  int64_t *const lists[5] = {d->batch_dims, d->a_batch, d->b_batch, d->add0_batch, d->add1_batch};
  for (int l = 0; l < 5; l++) {
    memmove(lists[l] + r, lists[l] + r + 1, (size_t)(d->batch_rank - r - 1) * sizeof(int64_t));
    lists[l][d->batch_rank - 1] = 0;
  }
  d->batch_rank--;
}

void tb_cuda_gemm_merge_batch(tb_cuda_gemm_desc *d) {
  for (int r = d->batch_rank - 1; r >= 0; r--)
    if (d->batch_dims[r] == 1) drop_dim(d, r);
  for (int r = d->batch_rank - 2; r >= 0; r--) {
    int64_t inner = d->batch_dims[r + 1];
    const int64_t *const lists[4] = {d->a_batch, d->b_batch, d->add0_batch, d->add1_batch};
    bool alike = true;
    for (int l = 0; l < 4; l++) alike = alike && lists[l][r] == lists[l][r + 1] * inner;
    if (!alike) continue;
    d->batch_dims[r] *= inner;
    d->a_batch[r] = d->a_batch[r + 1];
    d->b_batch[r] = d->b_batch[r + 1];
    d->add0_batch[r] = d->add0_batch[r + 1];
    d->add1_batch[r] = d->add1_batch[r + 1];
    drop_dim(d, r + 1);
  }
}

/* An operand [rows, cols] with strides rs, cs as cuBLASLt's row-major operand: stored as is with pitch ld
 * (unit column stride), or transposed (unit row stride). A dim of 1 lets its stride be anything. */
static bool blas_operand(int64_t rs, int64_t cs, int64_t rows, int64_t cols, bool *trans, int64_t *ld) {
  bool cs_unit = cs == 1 || cols == 1, rs_unit = rs == 1 || rows == 1;
  if (cs_unit && (rows == 1 || rs >= cols)) {
    *trans = false;
    *ld = rows == 1 ? cols : rs;
    return true;
  }
  if (rs_unit && (cols == 1 || cs >= rows)) {
    *trans = true;
    *ld = cols == 1 ? rows : cs;
    return true;
  }
  return false;
}

static bool no_batch_steps(const int64_t *strides, int rank) {
  for (int r = 0; r < rank; r++)
    if (strides[r]) return false;
  return true;
}

bool tb_cuda_gemm_blas_form(const tb_cuda_gemm_desc *d, bool has_add0, bool has_add1, tb_cuda_gemm *g, bool *rest) {
  memset(g, 0, sizeof *g);
  *rest = false;
  if (d->divide || d->m < 1 || d->n < 1 || d->k < 1 || d->batch_rank > TB_CUDA_GEMM_MAX_BATCH) return false;
  if (!blas_operand(d->a_rs, d->a_cs, d->m, d->k, &g->trans_a, &g->lda)) return false;
  if (!blas_operand(d->b_rs, d->b_cs, d->k, d->n, &g->trans_b, &g->ldb)) return false;
  if (g->lda < 1 || g->ldb < 1) return false;
  g->dtype = TB_CUDA_BLAS_F32;
  g->m = d->m;
  g->n = d->n;
  g->k = d->k;
  g->ldc = d->n;
  g->alpha = d->alpha;
  g->beta = 0.0f;
  if (d->batch_rank >= 1) { /* the last batch dim is cuBLASLt's batch; the caller loops over the others */
    int r = d->batch_rank - 1;
    g->batch = d->batch_dims[r];
    g->stride_a = d->a_batch[r];
    g->stride_b = d->b_batch[r];
    g->stride_c = d->m * d->n;
    if (g->stride_a < 0 || g->stride_b < 0 || d->batch / d->batch_dims[r] > TB_CUDA_GEMM_MAX_CALLS) return false;
  }
  /* cuBLASLt's epilogues: a bias along the columns (the same for every row and product), then ReLU */
  bool bias = has_add0 && !has_add1 && d->add0_scale == 1.0f && (d->add0_rs == 0 || d->m == 1) &&
              (d->add0_cs == 1 || d->n == 1) && no_batch_steps(d->add0_batch, d->batch_rank);
  bool act_fused = d->act == 0 || d->act == 1; /* none, relu */
  if (bias && act_fused) {
    g->bias = 1; /* set to the pointer by the caller */
    g->relu = d->act == 1;
    return true;
  }
  if (!has_add0 && !has_add1 && act_fused) {
    g->relu = d->act == 1;
    return true;
  }
  *rest = true;
  return true;
}

/* ---- The node state ------------------------------------------------------------------------------ */

/* Whether products may use cuBLASLt: TB_CUDA_GEMM unset or auto, not own. */
static bool blas_wanted(void) {
  const char *v = tb_env("TB_CUDA_GEMM");
  if (!v || strcmp(v, "auto") == 0) return true;
  if (strcmp(v, "own") == 0) return false;
  tb_env_warn("TB_CUDA_GEMM", v, "is not auto or own; matrix products use cuBLASLt where it is installed (auto)");
  return true;
}

tb_status tb_cuda_gemm_node_open(tb_kernel_ctx *ctx, tb_cuda_gemm_node **state) {
  *state = NULL;
  cuda_state *s = tb_cuda_state_of(ctx);
  if (!s) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "a CUDA product was prepared for a backend that is not an open CUDA device");
  tb_cu_module module = NULL;
  tb_status st = tb_cuda_module_get(s, &module);
  if (st != TB_OK) return st;
  tb_cuda_gemm_node *node = calloc(1, sizeof *node);
  if (!node) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the CUDA product's state");
  if (blas_wanted() && tb_cuda_blas_create(s->base.label, &node->blas) != TB_OK) {
    node->blas = NULL;
    char key[128];
    snprintf(key, sizeof key, "cuda-gemm-no-cublaslt:%s", s->base.label);
    tb_warn_once(key, "%s; MatMul, Gemm and the fused products run on the backend's own GEMM kernel", tb_last_error());
  }
  tb_kernel_set_method(ctx, node->blas ? "cuBLASLt" : "own tiled GEMM"); /* shown by --profile */
  *state = node;
  return TB_OK;
}

void tb_cuda_gemm_node_close(tb_cuda_gemm_node *node) {
  if (!node) return;
  tb_cuda_blas_destroy(node->blas);
  free(node);
}

/* ---- Running a product --------------------------------------------------------------------------- */

/* The node's 16-bit copy of C this run (cuda_gemm_precision.c sets it for the node's own output), or NULL. */
static tb_tensor *out16_of(const tb_kernel_ctx *ctx, int *f16) {
  tb_dtype dtype;
  const tb_cuda_gemm_node *node = tb_kernel_reduced_outputs(ctx, &dtype) ? ctx->state : NULL;
  *f16 = node ? node->out16_f16 : 0;
  return node ? node->out16 : NULL;
}

static tb_status own_kernel(tb_kernel_ctx *ctx, const char *kernel, const tb_cuda_gemm_desc *d, const tb_tensor *a,
                            const tb_tensor *b, tb_tensor *c, const tb_tensor *add0, const tb_tensor *add1) {
  int f16 = 0;
  const tb_tensor *c16 = out16_of(ctx, &f16);
  char name[64];
  snprintf(name, sizeof name, "%s%s", kernel, c16 ? "_out16" : "");
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, c16 ? name : kernel);
  tb_cuda_arg_optional(&l, a);
  tb_cuda_arg_optional(&l, b);
  tb_cuda_arg_tensor(&l, c);
  tb_cuda_arg_optional(&l, add0);
  tb_cuda_arg_optional(&l, add1);
  if (c16) tb_cuda_arg_tensor(&l, c16);
  tb_cuda_arg_bytes(&l, d, sizeof *d, 8);
  if (c16) tb_cuda_arg_bytes(&l, &f16, sizeof f16, 4);
  int64_t tiles = d->batch * ((d->m + TB_CUDA_GEMM_TILE - 1) / TB_CUDA_GEMM_TILE) * ((d->n + TB_CUDA_GEMM_TILE - 1) / TB_CUDA_GEMM_TILE);
  int64_t cap = (int64_t)(l.s && l.s->sm_count > 0 ? l.s->sm_count : 1) * TB_CUDA_GEMM_BLOCKS_PER_SM;
  return tb_cuda_go(&l, (tb_cuda_dims){(unsigned)(tiles < cap ? tiles : cap), TB_CUDA_GEMM_THREADS});
}

/* The epilogue cuBLASLt left: in place over C (alpha already applied); with the node's 16-bit copy of C, that too
 * (rest false: cuBLASLt fused the whole epilogue, so only the copy: no addend, no activation). */
static tb_status epilogue(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, tb_tensor *c, const tb_tensor *add0, const tb_tensor *add1,
                          bool rest) {
  int f16 = 0;
  const tb_tensor *c16 = out16_of(ctx, &f16);
  tb_cuda_gemm_desc e = *d;
  e.alpha = 1.0f;
  e.divide = 0;
  if (!rest) {
    e.act = 0; /* TB_ACT_NONE */
    add0 = add1 = NULL;
  }
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, c16 ? "tb_cu_gemm_epilogue_out16" : "tb_cu_gemm_epilogue_f32");
  tb_cuda_arg_tensor(&l, c);
  tb_cuda_arg_optional(&l, add0);
  tb_cuda_arg_optional(&l, add1);
  if (c16) tb_cuda_arg_tensor(&l, c16);
  tb_cuda_arg_bytes(&l, &e, sizeof e, 8);
  if (c16) tb_cuda_arg_bytes(&l, &f16, sizeof f16, 4);
  return tb_cuda_go_elements(&l, d->batch * d->m * d->n);
}

/* The product through cuBLASLt, one call per index of the batch dims before the last (the last is
 * cuBLASLt's batch): TB_OK, or cuBLASLt's status (TB_ERR_UNAVAILABLE / UNSUPPORTED: the caller runs the own
 * kernel, which writes all of C, so a refusal after some calls were enqueued loses nothing). */
static tb_status blas_product(tb_kernel_ctx *ctx, tb_cuda_blas *blas, const tb_cuda_gemm_desc *d, tb_cuda_gemm *g,
                              const tb_tensor *a, const tb_tensor *b, tb_tensor *c, const tb_tensor *bias) {
  cuda_state *s = tb_cuda_state_of(ctx);
  const tb_tensor *operands[4] = {a, b, c, g->bias ? bias : NULL};
  if (!tb_cuda_tensors_plain(ctx, operands, 4)) /* the own kernel's launch says what is wrong with them */
    return tb_error(TB_ERR_UNSUPPORTED, "cuBLASLt takes plain device tensors on this device; an operand is not one");
  const tb_cu_deviceptr base_a = tb_cuda_address_of(a), base_b = tb_cuda_address_of(b), base_c = tb_cuda_address_of(c);
  const int64_t size = g->dtype == TB_CUDA_BLAS_F32 ? 4 : g->dtype == TB_CUDA_BLAS_E4M3 ? 1 : 2; /* of A and B */
  g->bias = g->bias ? tb_cuda_address_of(bias) : 0;
  int outer_rank = d->batch_rank > 0 ? d->batch_rank - 1 : 0;
  int64_t outer = d->batch_rank > 0 ? d->batch / d->batch_dims[outer_rank] : 1;
  /* The stream's workspace (cuda_blas_workspace.c); without one, cuBLASLt chooses among algorithms that need none. */
  tb_cu_stream stream = tb_cuda_stream_of(s);
  tb_cu_deviceptr workspace = 0;
  size_t workspace_bytes = 0;
  if (tb_cuda_workspace_get(s, ctx->backend->allocator, stream, 0, &workspace, &workspace_bytes) != TB_OK) {
    char key[128];
    snprintf(key, sizeof key, "cuda-gemm-no-workspace:%s", s->base.label);
    tb_warn_once(key, "%s; cuBLASLt runs without a workspace (slower algorithms)", tb_last_error());
    tb_clear_error();
  }
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return tb_devmem_call_failed(&s->base, "cuCtxPushCurrent_v2", "before a cuBLASLt product", r, "");
  tb_status st = TB_OK;
  for (int64_t o = 0; o < outer && st == TB_OK; o++) {
    int64_t oa = 0, ob = 0, rest = o;
    for (int dim = outer_rank - 1; dim >= 0; dim--) {
      int64_t i = rest % d->batch_dims[dim];
      rest /= d->batch_dims[dim];
      oa += i * d->a_batch[dim];
      ob += i * d->b_batch[dim];
    }
    int64_t per_call = d->batch_rank > 0 ? d->batch_dims[outer_rank] : 1;
    g->a = base_a + (tb_cu_deviceptr)(oa * size);
    g->b = base_b + (tb_cu_deviceptr)(ob * size);
    g->c = base_c + (tb_cu_deviceptr)(o * per_call * d->m * d->n * 4);
    st = tb_cuda_blas_gemm(blas, g, stream, workspace, workspace_bytes);
  }
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  return st;
}

tb_status tb_cuda_gemm_route(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, tb_cuda_blas_dtype dtype, bool tf32,
                             tb_cu_deviceptr a_scale, tb_cu_deviceptr b_scale, const tb_tensor *a, const tb_tensor *b,
                             tb_tensor *c, const tb_tensor *add0, const tb_tensor *add1, const char *own) {
  tb_cuda_gemm_node *node = ctx->state;
  tb_cuda_gemm g;
  bool rest = false;
  tb_status refused = TB_ERR_UNAVAILABLE;
  if (node && node->blas && tb_cuda_state_of(ctx) && tb_cuda_gemm_blas_form(d, add0 != NULL, add1 != NULL, &g, &rest)) {
    g.dtype = dtype;
    if (dtype == TB_CUDA_BLAS_E4M3 && (g.bias || g.relu)) { /* cuBLASLt's fp8 forms take no fp32 bias: our epilogue adds it */
      g.bias = 0;
      g.relu = false;
      rest = true;
    }
    g.out_f32 = dtype == TB_CUDA_BLAS_BF16 || dtype == TB_CUDA_BLAS_F16;
    g.tf32 = tf32 && dtype == TB_CUDA_BLAS_F32;
    g.a_scale = a_scale;
    g.b_scale = b_scale;
    tb_status st = blas_product(ctx, node->blas, d, &g, a, b, c, add0);
    int f16 = 0;
    if (st == TB_OK) return rest || out16_of(ctx, &f16) ? epilogue(ctx, d, c, add0, add1, rest) : TB_OK;
    char label[128], why[TB_ERROR_CAP];
    snprintf(why, sizeof why, "%s", tb_last_error());
    tb_kernel_label(ctx->name, ctx->op_type, label, sizeof label);
    if (st != TB_ERR_UNAVAILABLE && st != TB_ERR_UNSUPPORTED) return tb_error(st, "%s: %s", label, why);
    if (!own) return tb_error(st, "%s: %s", label, why);
    if (!node->refused_logged) {
      node->refused_logged = 1;
      tb_log(TB_LOG_INFO, "%s: %s; the own GEMM kernel runs it", label, why);
    }
    refused = st;
  }
  if (!own) return tb_error(refused, "cuBLASLt is not available for this product, and it has no own kernel in this precision");
  return own_kernel(ctx, own, d, a, b, c, add0, add1);
}

