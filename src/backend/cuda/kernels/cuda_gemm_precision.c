/* The precision of the matrix products on cuda:0 (cuda_gemm.h): the node's prepare, release and run by the
 * precision its kernel entry computes in. fp32 and tf32 (fp32 data, cuBLASLt's TF32 compute type) go straight to
 * cuda_gemm.c's route. The reduced ones: bf16 and fp16 (O3 with precision auto, or precision
 * bf16 / fp16 at O2 and O3) and fp8 e4m3 (precision fp8, compute capability 8.9 and newer). The constant operands
 * (the weights) are converted once at prepare, on the device; the others per run into temporary device tensors
 * (tb_cu_dm_cast). The products accumulate in fp32 and write fp32, so the node's neighbours stay fp32: through
 * cuBLASLt with 16-bit A and B and an fp32 C (CUBLAS_COMPUTE_32F), or the own tb_cu_gemm_bf16 / tb_cu_gemm_f16
 * (41_gemm_lowp.cu). fp8 runs only through cuBLASLt, each operand with a per-tensor scale (max |x| / 448, by
 * tb_cu_lowp_amax_f32 and tb_cu_lowp_to_e4m3: at prepare for a weight, per run for an activation). A node that
 * cannot compute in fp8 runs in bf16 on the device instead, said in the prepare result (tb_kernel_set_precision):
 * below compute capability 8.9, without cuBLASLt, or a shape cuBLASLt's fp8 rules refuse (k not a multiple of 16,
 * transA, a B not 2-D) when the static shapes show it; one found only at run time (a row pitch, a batched B)
 * runs in bf16 then, said once per node at info level. */
#include <stdio.h>
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "core/env.h"
#include "core/error.h"
#include "ops/nn/nn_params.h"

static bool is_fp8(const tb_cuda_gemm_node *node) { return node->precision == TB_DEVICE_FP8; }

tb_status tb_cuda_lowp_convert(tb_kernel_ctx *ctx, const tb_tensor *x, tb_dtype dtype, tb_tensor **out) {
  *out = NULL;
  tb_tensor *y = NULL;
  tb_status st = tb_tensor_create(ctx->backend, dtype, x->ndim, x->shape, &y);
  if (st != TB_OK) return st;
  tb_cuda_dm d = {.mode = (int32_t)(x->dtype | dtype << 8)};
  if (tb_tensor_numel(x) > 0) st = tb_cuda_dm_go(ctx, "tb_cu_dm_cast", x, NULL, NULL, y, tb_tensor_numel(x), &d, TB_CUDA_DM_ELEMENTS);
  if (st != TB_OK) {
    tb_tensor_destroy(y);
    return st;
  }
  *out = y;
  return TB_OK;
}

/* x, fp32 [rows, cols] (any tensor when !transpose: rows = its elements, cols 1), as fp8 e4m3 divided by its
 * scale (max |x| / 448), stored as is or transposed ([cols, rows]); *scale one fp32 on the device. */
tb_status tb_cuda_lowp_quantize8(tb_kernel_ctx *ctx, const tb_tensor *x, int64_t rows, int64_t cols, bool transpose, tb_tensor **out,
                                 tb_tensor **scale) {
  *out = *scale = NULL;
  cuda_state *s = tb_cuda_state_of(ctx);
  /* the maximum in two launches of one kernel: each block of the grid over x, then one block over their results */
  const tb_cuda_dims grid = tb_cuda_grid_elements(rows * cols, s ? s->sm_count : 1);
  const int64_t one = 1, blocks = grid.grid, shape[2] = {transpose ? cols : rows, transpose ? rows : cols};
  tb_tensor *amax = NULL, *partial = NULL;
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 1, &one, &amax);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 1, &blocks, &partial);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 1, &one, scale);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_FP8_E4M3FN, 2, shape, out);
  tb_cuda_launch l;
  for (int pass = 0; pass < 2 && st == TB_OK; pass++) {
    tb_cuda_begin(&l, ctx, "tb_cu_lowp_amax_f32");
    tb_cuda_arg_tensor(&l, pass ? partial : x);
    tb_cuda_arg_tensor(&l, pass ? amax : partial);
    tb_cuda_arg_i64(&l, pass ? blocks : rows * cols);
    st = tb_cuda_go(&l, pass ? (tb_cuda_dims){1, grid.block} : grid);
  }
  if (st == TB_OK) {
    tb_cuda_begin(&l, ctx, "tb_cu_lowp_to_e4m3");
    tb_cuda_arg_tensor(&l, x);
    tb_cuda_arg_tensor(&l, amax);
    tb_cuda_arg_tensor(&l, *scale);
    tb_cuda_arg_tensor(&l, *out);
    tb_cuda_arg_i64(&l, rows);
    tb_cuda_arg_i64(&l, cols);
    tb_cuda_arg_i64(&l, transpose);
    st = tb_cuda_go_elements(&l, rows * cols);
  }
  tb_tensor_destroy(amax);
  tb_tensor_destroy(partial);
  if (st != TB_OK) {
    tb_tensor_destroy(*out);
    tb_tensor_destroy(*scale);
    *out = *scale = NULL;
  }
  return st;
}

/* Whether the constant B of this node is stored [k, n] (MatMul's 2-D B, Gemm without transB): fp8 keeps it
 * transposed. false with *ok false: no fp8 copy is made for it (a batched B, attention's inputs). */
static bool b_stored_kn(tb_kernel_ctx *ctx, const tb_tensor *b, bool *ok) {
  *ok = b->ndim == 2;
  if (strcmp(ctx->op_type, "Gemm") == 0 || strcmp(ctx->op_type, "FusedGemm") == 0) {
    tb_status st;
    const tb_gemm_params *p = tb_kernel_params(ctx, &st);
    *ok = *ok && p;
    return p && !p->trans_b;
  }
  *ok = *ok && (strcmp(ctx->op_type, "MatMul") == 0 || strcmp(ctx->op_type, "FusedMatMul") == 0);
  return true;
}

/* Dim `i` of input `input`'s static shape (negative: from the end), or -1 when it is not known at prepare. */
static int64_t static_dim(const tb_kernel_ctx *ctx, size_t input, int i) {
  const tb_value_type *t = ctx->in_types && input < ctx->n_inputs ? ctx->in_types[input] : NULL;
  if (!t || !t->has_shape || (i < 0 ? (size_t)-i > t->ndim : (size_t)i >= t->ndim)) return -1;
  return t->dims[i < 0 ? (int)t->ndim + i : i].value;
}

/* Why cuBLASLt's fp8 rules refuse this product, known from the static shapes (product8 checks them again per run):
 * k not a multiple of 16, A transposed (Gemm's transA), a B that is not 2-D, one column. false: they may take it. */
static bool fp8_refused_statically(tb_kernel_ctx *ctx, char *why, size_t cap) {
  bool gemm = strcmp(ctx->op_type, "Gemm") == 0 || strcmp(ctx->op_type, "FusedGemm") == 0;
  tb_status st;
  const tb_gemm_params *p = gemm ? tb_kernel_params(ctx, &st) : NULL;
  const tb_value_type *b = ctx->in_types && ctx->n_inputs > 1 ? ctx->in_types[1] : NULL;
  int64_t k = gemm && p && p->trans_a ? static_dim(ctx, 0, 0) : static_dim(ctx, 0, -1);
  int64_t n = b && b->has_shape && b->ndim >= 2 ? static_dim(ctx, 1, gemm && p && p->trans_b ? 0 : -1) : -1;
  if (k >= 0 && (k < 16 || k % 16)) snprintf(why, cap, "cuBLASLt's fp8 products need k a multiple of 16 (here %lld)", (long long)k);
  else if (gemm && p && p->trans_a) snprintf(why, cap, "cuBLASLt's fp8 products need A along k (this Gemm has transA)");
  else if (b && b->has_shape && b->ndim != 2) snprintf(why, cap, "cuBLASLt's fp8 products here need a 2-D B (B has rank %zu)", b->ndim);
  else if (n == 1) snprintf(why, cap, "cuBLASLt's fp8 products need more than one column (n is 1)");
  else return false;
  return true;
}

/* precision fp8 on a node that cannot compute in it (compute capability below 8.9, no cuBLASLt, a shape cuBLASLt's
 * fp8 rules refuse): bf16 instead, on the device, said in the prepare result. */
static void fp8_to_bf16(tb_kernel_ctx *ctx, tb_cuda_gemm_node *node, const char *why) {
  char text[512];
  snprintf(text, sizeof text, "bf16: %s; this product runs in bf16 on the device (fp32 accumulation and outputs)", why);
  node->precision = TB_DEVICE_BF16;
  tb_kernel_set_precision(ctx, "bf16", text);
}

static tb_status lowp_prepare(tb_kernel_ctx *ctx, tb_cuda_gemm_node *node) {
  cuda_state *s = tb_cuda_state_of(ctx);
  if (!s) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "a CUDA product was prepared for a backend that is not an open CUDA device");
  if (is_fp8(node)) {
    int major = 0, minor = 0;
    if (s->api.cuDeviceGetAttribute) {
      s->api.cuDeviceGetAttribute(&major, 75, s->device);
      s->api.cuDeviceGetAttribute(&minor, 76, s->device);
    }
    char why[300];
    if (major * 10 + minor < 89) {
      snprintf(why, sizeof why,
               "precision fp8 needs a GPU of compute capability 8.9 or newer (fp8 tensor cores: Ada, Hopper, Blackwell); %s is %d.%d",
               s->base.label, major, minor);
      fp8_to_bf16(ctx, node, why);
    } else if (!node->blas) {
      snprintf(why, sizeof why,
               "precision fp8 runs the products only through cuBLASLt, which is not in use on %s (TB_CUDA_GEMM=own, or "
               "cuBLASLt not found: the warning before says which)",
               s->base.label);
      fp8_to_bf16(ctx, node, why);
    } else if (fp8_refused_statically(ctx, why, sizeof why)) {
      fp8_to_bf16(ctx, node, why);
    }
  }
  for (size_t i = 0; i < 2; i++) {
    if (!tb_kernel_input_constant(ctx, i)) continue;
    const tb_tensor *x = ctx->inputs[i];
    const tb_tensor *one[1] = {x};
    if (x->dtype != TB_DTYPE_F32 || tb_tensor_numel(x) == 0 || !tb_cuda_tensors_plain(ctx, one, 1)) continue;
    tb_cuda_gemm_packed *p = &node->packed[i];
    tb_status st = TB_OK;
    if (!is_fp8(node)) {
      st = tb_cuda_lowp_convert(ctx, x, node->precision == TB_DEVICE_FP16 ? TB_DTYPE_F16 : TB_DTYPE_BF16, &p->t);
    } else if (i == 1) { /* fp8: the weight B, stored along k */
      bool ok = false, kn = b_stored_kn(ctx, x, &ok);
      if (!ok) continue;
      p->transposed = kn;
      st = tb_cuda_lowp_quantize8(ctx, x, x->shape[0], x->shape[1], kn, &p->t, &p->scale);
    } else {
      continue;
    }
    if (st != TB_OK) return st;
    p->from = tb_cuda_address_of(x);
  }
  return TB_OK;
}

static bool reduced(tb_device_precision p) { return p == TB_DEVICE_BF16 || p == TB_DEVICE_FP16 || p == TB_DEVICE_FP8; }

/* MatMul, Gemm and their fused forms: one product writing the node's output (not tb::Attention's two). */
static bool plain_product(const tb_kernel_ctx *ctx) {
  return strcmp(ctx->op_type, "MatMul") == 0 || strcmp(ctx->op_type, "Gemm") == 0 || strcmp(ctx->op_type, "FusedMatMul") == 0 ||
         strcmp(ctx->op_type, "FusedGemm") == 0;
}

/* The conversions this node's runs would launch, offered to their producers (exec_cast_fuse.c), and its output offered
 * in 16 bits to its consumers. fp8's activation keeps its launches: its scale needs the whole tensor's maximum before
 * any element converts, which no producer's epilogue knows; said in the node's precision sentence. */
static void offer_fusion(tb_kernel_ctx *ctx, const tb_cuda_gemm_node *node) {
  if (!plain_product(ctx) || !tb_cuda_fuse_casts_wanted()) return;
  tb_kernel_writes_reduced(ctx, 0);
  if (node->precision == TB_DEVICE_FP8) {
    tb_kernel_set_precision(ctx, "fp8 e4m3",
                            "fp8 e4m3: the precision asked for, accumulated in fp32 with fp32 outputs; its activation's conversion "
                            "stays its own launches (the per-tensor scale needs the whole tensor's maximum first, which no "
                            "producer's epilogue has)");
    return;
  }
  if (node->precision != TB_DEVICE_BF16 && node->precision != TB_DEVICE_FP16) return;
  for (size_t i = 0; i < 2 && i < ctx->n_inputs; i++) {
    const tb_value_type *t = ctx->in_types ? ctx->in_types[i] : NULL;
    if (!tb_kernel_input_constant(ctx, i) && t && t->has_dtype && t->dtype == TB_DTYPE_F32)
      tb_kernel_reads_reduced(ctx, i, node->precision == TB_DEVICE_FP16 ? TB_DTYPE_F16 : TB_DTYPE_BF16);
  }
}

static tb_status prepare_in(tb_kernel_ctx *ctx, void **state, tb_device_precision precision) {
  *state = NULL;
  tb_cuda_gemm_node *node = NULL;
  tb_status st = tb_cuda_gemm_node_open(ctx, &node);
  if (st != TB_OK) return st;
  node->precision = precision;
  if (reduced(node->precision)) {
    void *saved = ctx->state;
    ctx->state = node; /* the conversions' launches keep their functions in the node */
    st = lowp_prepare(ctx, node);
    ctx->state = saved;
    if (st != TB_OK) {
      tb_cuda_gemm_release(node);
      return st;
    }
  }
  offer_fusion(ctx, node);
  *state = node;
  return TB_OK;
}

tb_status tb_cuda_gemm_prepare(tb_kernel_ctx *ctx, void **state) { return prepare_in(ctx, state, TB_DEVICE_FP32); }
tb_status tb_cuda_gemm_prepare_tf32(tb_kernel_ctx *ctx, void **state) { return prepare_in(ctx, state, TB_DEVICE_TF32); }
tb_status tb_cuda_gemm_prepare_bf16(tb_kernel_ctx *ctx, void **state) { return prepare_in(ctx, state, TB_DEVICE_BF16); }
tb_status tb_cuda_gemm_prepare_fp16(tb_kernel_ctx *ctx, void **state) { return prepare_in(ctx, state, TB_DEVICE_FP16); }
tb_status tb_cuda_gemm_prepare_fp8(tb_kernel_ctx *ctx, void **state) { return prepare_in(ctx, state, TB_DEVICE_FP8); }
tb_status tb_cuda_gemm_prepare_fp8_as_bf16(tb_kernel_ctx *ctx, void **state) {
  tb_status st = prepare_in(ctx, state, TB_DEVICE_BF16);
  if (st == TB_OK)
    tb_kernel_set_precision(ctx, "bf16", "bf16: tb::Attention has no fp8 form; precision fp8 runs it in bf16 (fp32 accumulation and outputs)");
  return st;
}

void tb_cuda_gemm_release(void *state) {
  tb_cuda_gemm_node *node = state;
  if (!node) return;
  for (size_t i = 0; i < 2; i++) {
    tb_tensor_destroy(node->packed[i].t);
    tb_tensor_destroy(node->packed[i].scale);
  }
  tb_cuda_handoff_release(&node->handoff);
  tb_cuda_gemm_node_close(node);
}

/* The prepared copy of operand `which` (0: A, 1: B) when x is that constant input and the copy is of dtype. */
static const tb_tensor *packed_of(const tb_kernel_ctx *ctx, const tb_cuda_gemm_node *node, size_t which, const tb_tensor *x,
                                  tb_dtype dtype) {
  const tb_cuda_gemm_packed *p = &node->packed[which];
  if (!p->t || p->t->dtype != dtype || which >= ctx->n_inputs || ctx->inputs[which] != x) return NULL;
  return tb_cuda_address_of(x) == p->from ? p->t : NULL;
}

/* bf16 or fp16 A and B, fp32 accumulation and C. */
static tb_status product16(tb_kernel_ctx *ctx, tb_cuda_gemm_node *node, bool f16, const tb_cuda_gemm_desc *d, const tb_tensor *a,
                           const tb_tensor *b, tb_tensor *c, const tb_tensor *add0, const tb_tensor *add1) {
  const tb_dtype dtype = f16 ? TB_DTYPE_F16 : TB_DTYPE_BF16;
  const tb_tensor *in[2] = {a, b}, *use[2];
  tb_tensor *tmp[2] = {NULL, NULL};
  tb_status st = TB_OK;
  for (size_t i = 0; i < 2 && st == TB_OK; i++) {
    use[i] = packed_of(ctx, node, i, in[i], dtype);
    if (!use[i] && i < ctx->n_inputs && ctx->inputs[i] == in[i]) use[i] = tb_cuda_handoff_find(ctx, i, in[i], dtype);
    if (!use[i]) {
      st = tb_cuda_lowp_convert(ctx, in[i], dtype, &tmp[i]);
      use[i] = tmp[i];
    }
  }
  if (st == TB_OK)
    st = tb_cuda_gemm_route(ctx, d, f16 ? TB_CUDA_BLAS_F16 : TB_CUDA_BLAS_BF16, false, 0, 0, use[0], use[1], c, add0, add1,
                            f16 ? "tb_cu_gemm_f16" : "tb_cu_gemm_bf16");
  tb_tensor_destroy(tmp[0]); /* freed after the launches are queued: the run holds device blocks until its stream is done */
  tb_tensor_destroy(tmp[1]);
  return st;
}

static bool no_batch_step(const int64_t *steps, int rank) {
  for (int r = 0; r < rank; r++)
    if (steps[r]) return false;
  return true;
}

/* fp8 e4m3 A [.., m, k] along k and B [n, k] (a 2-D B only), each with its scale; TB_ERR_UNSUPPORTED (nothing
 * launched) for a product cuBLASLt's fp8 rules do not take, so the caller runs it in bf16. */
static tb_status product8(tb_kernel_ctx *ctx, tb_cuda_gemm_node *node, const tb_cuda_gemm_desc *d, const tb_tensor *a,
                          const tb_tensor *b, tb_tensor *c, const tb_tensor *add0, const tb_tensor *add1) {
  bool a_along_k = d->a_cs == 1 && (d->m == 1 || d->a_rs % 16 == 0);
  bool b_plain = no_batch_step(d->b_batch, d->batch_rank) && d->n > 1 && (d->b_cs == 1 || d->b_rs == 1);
  if (d->k < 16 || d->k % 16 || d->divide || !a_along_k || !b_plain)
    return tb_error(TB_ERR_UNSUPPORTED,
                    "cuBLASLt's fp8 products need k a multiple of 16 (here %lld), A along k with rows a multiple of 16 apart "
                    "and a 2-D B",
                    (long long)d->k);
  const tb_tensor *b8 = packed_of(ctx, node, 1, b, TB_DTYPE_FP8_E4M3FN), *b_scale = b8 ? node->packed[1].scale : NULL;
  tb_tensor *a8 = NULL, *a_scale = NULL, *tmp_b = NULL, *tmp_scale = NULL;
  tb_status st = tb_cuda_lowp_quantize8(ctx, a, tb_tensor_numel(a), 1, false, &a8, &a_scale);
  if (st == TB_OK && !b8) { /* B [k, n] (unit column stride): transposed to [n, k]; else already [n, k] */
    bool kn = d->b_cs == 1;
    st = kn ? tb_cuda_lowp_quantize8(ctx, b, d->k, d->n, true, &tmp_b, &tmp_scale) : tb_cuda_lowp_quantize8(ctx, b, tb_tensor_numel(b), 1, false, &tmp_b, &tmp_scale);
    b8 = tmp_b;
    b_scale = tmp_scale;
  }
  if (st == TB_OK) {
    tb_cuda_gemm_desc e = *d; /* B read as stored [n, k] */
    e.b_rs = 1;
    e.b_cs = d->k;
    st = tb_cuda_gemm_route(ctx, &e, TB_CUDA_BLAS_E4M3, false, tb_cuda_address_of(a_scale), tb_cuda_address_of(b_scale), a8, b8, c,
                            add0, add1, NULL);
  }
  tb_tensor_destroy(a8);
  tb_tensor_destroy(a_scale);
  tb_tensor_destroy(tmp_b);
  tb_tensor_destroy(tmp_scale);
  return st;
}

static tb_status run_in(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, const tb_tensor *a, const tb_tensor *b, tb_tensor *c,
                        const tb_tensor *add0, const tb_tensor *add1);

/* With a consumer reading this product's output in 16 bits (tb_kernel_reduced_outputs): the copy made beside C in the
 * same launch, published once queued. */
tb_status tb_cuda_gemm_run(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, const tb_tensor *a, const tb_tensor *b, tb_tensor *c,
                           const tb_tensor *add0, const tb_tensor *add1) {
  tb_dtype dtype;
  tb_cuda_gemm_node *node = tb_kernel_reduced_outputs(ctx, &dtype) ? ctx->state : NULL;
  if (!node || !ctx->outputs || ctx->n_outputs < 1 || ctx->outputs[0] != c) return run_in(ctx, d, a, b, c, add0, add1);
  tb_tensor *c16 = NULL;
  tb_status st = tb_cuda_handoff_out(ctx, &node->handoff, 0, c, &c16, &node->out16_f16);
  if (st != TB_OK) return st;
  node->out16 = d->batch * d->m * d->n > 0 ? c16 : NULL;
  st = run_in(ctx, d, a, b, c, add0, add1);
  if (st == TB_OK && node->out16) tb_cuda_handoff_publish(&node->handoff, c);
  node->out16 = NULL;
  return st;
}

static tb_status run_in(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, const tb_tensor *a, const tb_tensor *b, tb_tensor *c,
                        const tb_tensor *add0, const tb_tensor *add1) {
  if (d->batch * d->m * d->n == 0) return TB_OK;
  tb_cuda_gemm_node *node = ctx->state;
  tb_device_precision p = node ? node->precision : TB_DEVICE_FP32;
  if (!reduced(p)) return tb_cuda_gemm_route(ctx, d, TB_CUDA_BLAS_F32, p == TB_DEVICE_TF32, 0, 0, a, b, c, add0, add1, "tb_cu_gemm_f32");
  if (is_fp8(node)) {
    tb_status st = product8(ctx, node, d, a, b, c, add0, add1);
    if (st != TB_ERR_UNSUPPORTED && st != TB_ERR_UNAVAILABLE) return st;
    if (node->refused_logged < 2) {
      char label[128];
      node->refused_logged = 2;
      tb_log(TB_LOG_INFO, "%s: %s; this product runs in bf16", tb_kernel_label(ctx->name, ctx->op_type, label, sizeof label),
             tb_last_error());
    }
  }
  return product16(ctx, node, node->precision == TB_DEVICE_FP16, d, a, b, c, add0, add1);
}
