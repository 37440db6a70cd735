/* The CUDA backend's matrix products (src/backend/cuda/kernels/cuda_gemm.c, cuda_ops_gemm.c, 40_gemm.cu) on
 * the fake cuda:0 of the recorded 8x H100 node: the descriptor made from shapes (strides, broadcast batch
 * dims, merging, cuBLASLt's form of it); models with MatMul, Gemm, the O2 passes' FusedMatMul / FusedGemm
 * and tb::Attention placed on cuda:0 with no CPU fallback; the own kernel's launches and, on the kernels'
 * host emulator (tests/cuda_emu), its values against the CPU backend; cuBLASLt's arguments (transposes,
 * leading dims, batch strides, epilogue, compute type) on the computing fake cuBLASLt, and its values; the
 * fall through to the own kernel when cuBLASLt is absent or has no algorithm; errors. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/error.h"
#include "ops/nn/nn_params.h"
#include "runtime/cublaslt_api.h"
#include "../fakes/fake_cuda_launch.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_fakes.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];

static tb_cuda_gemm_desc launch_desc(const fake_launch *l) {
  tb_cuda_gemm_desc d;
  int at = l->n_args - 1;
  assert_int_equal(l->arg_size[at], sizeof d);
  memcpy(&d, l->args + l->arg_offset[at], sizeof d);
  return d;
}

/* Beside test_cuda_values.h's variables. */
static const char *const vars[] = {"FAKE_CUBLASLT_FAIL", "FAKE_CUBLASLT_FAIL_CODE", "FAKE_CUBLASLT_HEURISTIC", "TB_CUBLASLT_LIB"};
enum { N_VARS = sizeof vars / sizeof vars[0] };

static int setup(void **state) {
  tcv_setup_fakes(state, cache_dir, "tb_cugemm", vars, N_VARS); /* the own kernel: each test that wants cuBLASLt says so */
  /* These tests count each run's launches and fail single calls; a captured graph would replay them instead
   * (test_cuda_graph covers capture). The fake cuBLASLt also computes when called, even on a capturing stream,
   * where the real one is recorded into the graph: graph replay of cuBLASLt products waits for a GPU. */
  setenv("TB_GRAPH_CAPTURE", "off", 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown_fakes(cache_dir, vars, N_VARS);
}

/* ---- The descriptor, as plain functions ----------------------------------------------------------- */

static void strides_merging_and_the_cublaslt_form(void **state) {
  (void)state;
  int64_t batch[6], rs, cs;
  /* [2, 1, 5, 4] against an output with batch dims [2, 3]: the 1 broadcasts */
  const int64_t a[4] = {2, 1, 5, 4};
  tb_cuda_gemm_strides(4, a, 2, batch, &rs, &cs);
  assert_int_equal(batch[0], 20);
  assert_int_equal(batch[1], 0);
  assert_int_equal(rs, 4);
  assert_int_equal(cs, 1);
  /* a [N] bias against batch dims [2, 3]: rows and batches broadcast */
  const int64_t bias[1] = {6};
  tb_cuda_gemm_strides(1, bias, 2, batch, &rs, &cs);
  assert_int_equal(batch[0], 0);
  assert_int_equal(batch[1], 0);
  assert_int_equal(rs, 0);
  assert_int_equal(cs, 1);
  /* Merging: A [2, 3, 5, 4] and B [4, 6] (broadcast): the batch is one dim of 6 */
  tb_cuda_gemm_desc d;
  memset(&d, 0, sizeof d);
  const int64_t dims[2] = {2, 3}, full_a[4] = {2, 3, 5, 4}, b[2] = {4, 6};
  tb_cuda_gemm_set_batch(&d, 2, dims);
  assert_int_equal(d.batch, 6);
  d.m = 5, d.n = 6, d.k = 4, d.alpha = 1;
  tb_cuda_gemm_strides(4, full_a, 2, d.a_batch, &d.a_rs, &d.a_cs);
  tb_cuda_gemm_strides(2, b, 2, d.b_batch, &d.b_rs, &d.b_cs);
  tb_cuda_gemm_merge_batch(&d);
  assert_int_equal(d.batch_rank, 1);
  assert_int_equal(d.batch_dims[0], 6);
  assert_int_equal(d.a_batch[0], 20);
  assert_int_equal(d.b_batch[0], 0);
  tb_cuda_gemm g;
  bool rest = true;
  assert_true(tb_cuda_gemm_blas_form(&d, false, false, &g, &rest));
  assert_false(rest);
  assert_false(g.trans_a);
  assert_false(g.trans_b);
  assert_int_equal(g.lda, 4);
  assert_int_equal(g.ldb, 6);
  assert_int_equal(g.ldc, 6);
  assert_int_equal(g.batch, 6);
  assert_int_equal(g.stride_a, 20);
  assert_int_equal(g.stride_b, 0);
  assert_int_equal(g.stride_c, 30);
  /* a bias along the columns and ReLU: cuBLASLt's epilogue; with a residual too: the epilogue kernel */
  tb_cuda_gemm_strides(1, bias, (size_t)d.batch_rank, d.add0_batch, &d.add0_rs, &d.add0_cs);
  d.add0_scale = 1;
  d.act = 1;
  assert_true(tb_cuda_gemm_blas_form(&d, true, false, &g, &rest));
  assert_false(rest);
  assert_true(g.bias != 0);
  assert_true(g.relu);
  assert_true(tb_cuda_gemm_blas_form(&d, true, true, &g, &rest));
  assert_true(rest);
  assert_true(g.bias == 0);
  assert_false(g.relu);
  d.act = 8; /* Gelu: not one of cuBLASLt's epilogues here */
  assert_true(tb_cuda_gemm_blas_form(&d, true, false, &g, &rest));
  assert_true(rest);
  /* batches that do not merge ([2, 3] with B broadcast only along the first): cuBLASLt's batch is the
   * last dim, one call per index of the first */
  memset(&d, 0, sizeof d);
  tb_cuda_gemm_set_batch(&d, 2, dims);
  d.m = 5, d.n = 6, d.k = 4, d.alpha = 1;
  const int64_t b3[4] = {1, 3, 4, 6};
  tb_cuda_gemm_strides(4, full_a, 2, d.a_batch, &d.a_rs, &d.a_cs);
  tb_cuda_gemm_strides(4, b3, 2, d.b_batch, &d.b_rs, &d.b_cs);
  tb_cuda_gemm_merge_batch(&d);
  assert_int_equal(d.batch_rank, 2);
  assert_true(tb_cuda_gemm_blas_form(&d, false, false, &g, &rest));
  assert_int_equal(g.batch, 3);
  assert_int_equal(g.stride_a, 20);
  assert_int_equal(g.stride_b, 24);
  /* Gemm's transposes: A stored [k, m] (unit row stride), B stored [n, k] */
  memset(&d, 0, sizeof d);
  tb_cuda_gemm_set_batch(&d, 0, NULL);
  d.m = 3, d.n = 7, d.k = 5, d.alpha = 2;
  d.a_rs = 1, d.a_cs = 3, d.b_rs = 1, d.b_cs = 5;
  assert_true(tb_cuda_gemm_blas_form(&d, false, false, &g, &rest));
  assert_true(g.trans_a);
  assert_true(g.trans_b);
  assert_int_equal(g.lda, 3);
  assert_int_equal(g.ldb, 5);
  assert_true(g.alpha == 2.0f);
  /* a division by the scale (attention's scale_divide) is the own kernel's */
  d.divide = 1;
  assert_false(tb_cuda_gemm_blas_form(&d, false, false, &g, &rest));
  /* strides that are no matrix layout (neither unit) */
  d.divide = 0;
  d.a_rs = 2, d.a_cs = 6;
  assert_false(tb_cuda_gemm_blas_form(&d, false, false, &g, &rest));
}

/* ---- Models ------------------------------------------------------------------------------------- */

/* x [2, 3, 5, 4] @ W [1, 4, 6] (batch broadcast) + bias [6] -> Relu: at O2 one FusedMatMul. */
static tb_model *matmul_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "matmul");
  const int64_t x_dims[4] = {2, 3, 5, 4}, w_dims[3] = {1, 4, 6}, six = 6;
  float w[24], bias[6];
  fill_range(w, 24, 7, -2.0f, 2.0f);
  fill_range(bias, 6, 8, -2.0f, 2.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 4, x_dims, NULL);
  tbt_const_f32(g, "W", 3, w_dims, w);
  tbt_const_f32(g, "bias", 1, &six, bias);
  tbt_node(g, "MatMul", "matmul", "x,W", "mm");
  tbt_node(g, "Add", "add", "mm,bias", "a");
  tbt_node(g, "Relu", "relu", "a", "out");
  tbt_output(g, "out");
  return tbt_model_of(m);
}

/* x [5, 70] (transA: A is x^T [70, 5]... read as [m 70, k 5]) Gemm W [33, 5] (transB), C [33], alpha 0.5,
 * beta 2 -> Tanh: at O2 one FusedGemm with activation Tanh. Two 64-wide tiles along m. */
static tb_model *gemm_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "gemm");
  const int64_t x_dims[2] = {5, 70}, w_dims[2] = {33, 5}, c_dim = 33;
  float w[165], c[33];
  fill_range(w, 165, 3, -2.0f, 2.0f);
  fill_range(c, 33, 4, -2.0f, 2.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, NULL);
  tbt_const_f32(g, "W", 2, w_dims, w);
  tbt_const_f32(g, "C", 1, &c_dim, c);
  int gemm = tbt_node(g, "Gemm", "gemm", "x,W,C", "y");
  pt_attr_int(g, gemm, "transA", 1);
  pt_attr_int(g, gemm, "transB", 1);
  pt_attr_float(g, gemm, "alpha", 0.5f);
  pt_attr_float(g, gemm, "beta", 2.0f);
  tbt_node(g, "Tanh", "tanh", "y", "out");
  tbt_output(g, "out");
  return tbt_model_of(m);
}

/* Scaled dot-product attention on x [2, 3, 5, 8] as Q: K_T [1, 3, 8, 7], V [2, 1, 7, 9], / 4, + mask [5, 7]:
 * at O1 and up one tb::Attention. */
static tb_model *attention_model(float scale) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "attention");
  const int64_t x_dims[4] = {2, 3, 5, 8}, k_dims[4] = {1, 3, 8, 7}, v_dims[4] = {2, 1, 7, 9}, mask_dims[2] = {5, 7};
  float k[168], v[126], mask[35];
  fill_range(k, 168, 11, -2.0f, 2.0f);
  fill_range(v, 126, 12, -2.0f, 2.0f);
  fill_range(mask, 35, 13, -2.0f, 2.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 4, x_dims, NULL);
  tbt_const_f32(g, "K_T", 4, k_dims, k);
  tbt_const_f32(g, "V", 4, v_dims, v);
  tbt_const_f32(g, "mask", 2, mask_dims, mask);
  pt_const_scalar(g, "scale", scale);
  tbt_node(g, "MatMul", "qk", "x,K_T", "s");
  tbt_node(g, "Div", "scaled", "s,scale", "sd");
  tbt_node(g, "Add", "masked", "sd,mask", "sm");
  int soft = tbt_node(g, "Softmax", "softmax", "sm", "p");
  pt_attr_int(g, soft, "axis", -1);
  tbt_node(g, "MatMul", "pv", "p,V", "out");
  tbt_output(g, "out");
  return tbt_model_of(m);
}

/* The result of running model on cuda:0 at a level. */
typedef struct device_run {
  size_t device_nodes, fallback_nodes, launches;
  char first_kernel[128];
} device_run;

/* Run `model` (input x) on the CPU at O0 and on cuda:0 at `level`; every output element within
 * 1e-6 + 1e-5 |cpu| when `check` (the products computed by the emulator or the fake cuBLASLt). */
static device_run compare_with_cpu(tb_model *model, size_t ndim, const int64_t *dims, tb_opt_level level, bool check) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &pc, NULL));
  o.level = level;
  tb_status st = tb_model_prepare(model, cuda, &o, &pg, &rg);
  if (st != TB_OK) fail_msg("prepare on cuda:0: %s: %s", tb_status_str(st), tb_last_error());
  device_run r = {rg->device_nodes, rg->cpu_fallback_nodes, 0, ""};
  for (size_t i = 0; i < rg->cpu_fallback_nodes; i++) print_message("on the CPU: %s\n", rg->fallback_ops[i]);
  size_t n = 1;
  for (size_t d = 0; d < ndim; d++) n *= (size_t)dims[d];
  float *x = malloc(n * sizeof *x + 1);
  fill_range(x, n, 5, -2.0f, 2.0f);
  tb_tensor *in = tbt_f32(cpu, ndim, dims, x), *want = NULL, *got = NULL;
  free(x);
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(pc, 1, names, &in, 1, NULL, &want));
  launch_reset();
  st = tb_prepared_run(pg, 1, names, &in, 1, NULL, &got);
  if (st != TB_OK) fail_msg("run on cuda:0: %s: %s", tb_status_str(st), tb_last_error());
  r.launches = (size_t)fake_int("fake_cuda_launch_count");
  if (r.launches) snprintf(r.first_kernel, sizeof r.first_kernel, "%s", launch_at(0)->name);
  size_t count = (size_t)tb_tensor_numel(want);
  assert_int_equal(tb_tensor_numel(got), count);
  assert_int_equal(tb_tensor_ndim(got), tb_tensor_ndim(want));
  for (size_t d = 0; d < tb_tensor_ndim(want); d++) assert_int_equal(tb_tensor_shape(got)[d], tb_tensor_shape(want)[d]);
  if (check) {
    float *a = malloc(count * sizeof *a + 1), *b = malloc(count * sizeof *b + 1);
    TB_ASSERT_OK(tb_tensor_copy_to_host(want, a, count * sizeof *a));
    TB_ASSERT_OK(tb_tensor_copy_to_host(got, b, count * sizeof *b));
    for (size_t i = 0; i < count; i++)
      if (!(fabsf(a[i] - b[i]) <= 1e-6f + 1e-5f * fabsf(a[i])))
        fail_msg("element %zu: cuda:0 %.9g, cpu %.9g", i, (double)b[i], (double)a[i]);
    free(a);
    free(b);
  }
  tb_tensor_destroy(want);
  tb_tensor_destroy(got);
  tb_tensor_destroy(in);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
  return r;
}

static const int64_t mm_dims[4] = {2, 3, 5, 4}, gemm_dims[2] = {5, 70}, attn_dims[4] = {2, 3, 5, 8};

/* Every node on cuda:0 at O0 and O2 (none on the CPU), the products on the own kernel. */
static void products_run_on_cuda_without_fallback(void **state) {
  (void)state;
  bool values = emulate();
  tb_model *m = matmul_model();
  device_run r = compare_with_cpu(m, 4, mm_dims, TB_LEVEL_O0, values);
  assert_int_equal(r.fallback_nodes, 0);
  assert_int_equal(r.device_nodes, 3);
  assert_string_equal(r.first_kernel, "tb_cu_gemm_f32");
  r = compare_with_cpu(m, 4, mm_dims, TB_LEVEL_O2, values); /* FusedMatMul: bias and ReLU in the epilogue */
  assert_int_equal(r.fallback_nodes, 0);
  assert_int_equal(r.device_nodes, 1);
  assert_int_equal(r.launches, 1);
  tb_cuda_gemm_desc d = launch_desc(launch_at(0));
  assert_int_equal(d.batch_rank, 1);
  assert_int_equal(d.batch, 6);
  assert_int_equal(d.m, 5);
  assert_int_equal(d.n, 6);
  assert_int_equal(d.k, 4);
  assert_int_equal(d.b_batch[0], 0); /* W broadcast over the batch */
  assert_int_equal(d.add0_rs, 0);
  assert_int_equal(d.add0_cs, 1);
  assert_int_equal(d.act, 1);
  assert_int_equal(launch_at(0)->grid[0], 6); /* one 64 x 64 tile per product */
  assert_int_equal(launch_at(0)->block[0], 256);
  tb_model_destroy(m);

  m = gemm_model();
  r = compare_with_cpu(m, 2, gemm_dims, TB_LEVEL_O0, values);
  assert_int_equal(r.fallback_nodes, 0);
  assert_int_equal(r.device_nodes, 2);
  r = compare_with_cpu(m, 2, gemm_dims, TB_LEVEL_O2, values);
  assert_int_equal(r.fallback_nodes, 0);
  assert_int_equal(r.device_nodes, 1);
  d = launch_desc(launch_at(0));
  assert_int_equal(d.m, 70);
  assert_int_equal(d.n, 33);
  assert_int_equal(d.k, 5);
  assert_int_equal(d.a_rs, 1); /* transA: x [5, 70] read down its columns */
  assert_int_equal(d.a_cs, 70);
  assert_int_equal(d.b_rs, 1); /* transB */
  assert_int_equal(d.b_cs, 5);
  assert_true(d.alpha == 0.5f && d.add0_scale == 2.0f);
  assert_int_equal(d.act, 5); /* Tanh */
  assert_int_equal(launch_at(0)->grid[0], 2);
  tb_model_destroy(m);

  m = attention_model(4.0f);
  r = compare_with_cpu(m, 4, attn_dims, TB_LEVEL_O0, values);
  assert_int_equal(r.fallback_nodes, 0);
  assert_int_equal(r.device_nodes, 5);
  r = compare_with_cpu(m, 4, attn_dims, TB_LEVEL_O2, values); /* tb::Attention: product, softmax, product */
  assert_int_equal(r.fallback_nodes, 0);
  assert_int_equal(r.device_nodes, 1);
  assert_int_equal(r.launches, 3);
  assert_string_equal(launch_at(1)->name, "tb_cu_softmax_f32_rows");
  d = launch_desc(launch_at(0));
  assert_true(d.alpha == 0.25f && d.divide == 0); /* / 4 as * 0.25: exact */
  assert_int_equal(d.batch, 6);
  tb_model_destroy(m);
  m = attention_model(3.0f); /* / 3 stays a division */
  r = compare_with_cpu(m, 4, attn_dims, TB_LEVEL_O2, values);
  assert_int_equal(r.device_nodes, 1);
  d = launch_desc(launch_at(0));
  assert_true(d.alpha == 3.0f && d.divide == 1);
  tb_model_destroy(m);
}

/* A graph with one node of op (inputs x and the constant B of b_dims), x of x_dims. */
static tb_model *one_product(const char *op, size_t xn, const int64_t *x_dims, size_t bn, const int64_t *b_dims, int trans_a,
                             int trans_b) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "one");
  size_t count = 1;
  for (size_t i = 0; i < bn; i++) count *= (size_t)b_dims[i];
  float *b = malloc((count ? count : 1) * sizeof *b);
  fill_range(b, count, 21, -2.0f, 2.0f);
  tbt_input(g, "x", TB_DTYPE_F32, xn, x_dims, NULL);
  tbt_const_f32(g, "B", bn, b_dims, b);
  free(b);
  int n = tbt_node(g, op, "product", "x,B", "out");
  if (trans_a) pt_attr_int(g, n, "transA", 1);
  if (trans_b) pt_attr_int(g, n, "transB", 1);
  tbt_output(g, "out");
  return tbt_model_of(m);
}

/* The own kernel's values on shapes around its tiles: odd sizes, 1-D operands, a broadcast on both
 * sides, k 0, an empty output. */
static void own_kernel_values_on_odd_shapes(void **state) {
  (void)state;
  if (!emulate()) skip();
  static const struct {
    size_t xn, bn;
    int64_t x[4], b[4];
  } cases[] = {
      {2, 2, {1, 1}, {1, 1}},             /* 1 x 1 x 1 */
      {2, 2, {65, 17}, {17, 66}},         /* past one tile each way, k past one slice */
      {2, 2, {3, 33}, {33, 1}},           /* one column */
      {1, 2, {7}, {7, 9}},                /* 1-D A: [7] @ [7, 9] -> [9] */
      {3, 1, {2, 4, 7}, {7}},             /* 1-D B: [2, 4, 7] @ [7] -> [2, 4] */
      {4, 3, {2, 1, 3, 5}, {4, 5, 2}},    /* batch dims broadcast on both sides: [2, 4] */
      {3, 2, {2, 3, 0}, {0, 4}},          /* k 0: zeros */
      {3, 2, {0, 3, 5}, {5, 4}},          /* an empty output */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_model *m = one_product("MatMul", cases[i].xn, cases[i].x, cases[i].bn, cases[i].b, 0, 0);
    device_run r = compare_with_cpu(m, cases[i].xn, cases[i].x, TB_LEVEL_O0, true);
    assert_int_equal(r.fallback_nodes, 0);
    tb_model_destroy(m);
  }
  /* Gemm with each transpose */
  for (int t = 0; t < 4; t++) {
    int ta = t & 1, tb = t >> 1;
    const int64_t x[2] = {ta ? 19 : 70, ta ? 70 : 19}, b[2] = {tb ? 13 : 19, tb ? 19 : 13};
    tb_model *m = one_product("Gemm", 2, x, 2, b, ta, tb);
    device_run r = compare_with_cpu(m, 2, x, TB_LEVEL_O0, true);
    assert_int_equal(r.device_nodes, 1);
    tb_model_destroy(m);
  }
}

/* cuBLASLt (the computing fake) runs the products: its arguments, and the values. */
static void cublaslt_gets_the_products(void **state) {
  (void)state;
  use_fake_cublaslt();
  bool values = emulate(); /* the epilogue kernel and the softmax run on the emulator */
  const fake_cublaslt_state *f = blas_fake();
  int before = f->matmuls;
  tb_model *m = matmul_model();
  device_run r = compare_with_cpu(m, 4, mm_dims, TB_LEVEL_O2, true);
  assert_int_equal(r.launches, 0); /* bias and ReLU fused into cuBLASLt's epilogue: no kernel of ours */
  assert_int_equal(f->matmuls, before + 1);
  /* row-major C = A B as column-major C^T = B^T A^T: cuBLASLt's A is W [4, 6], its B is x */
  const fake_cublaslt_call *c = &f->matmul;
  assert_int_equal(c->compute_type, 68); /* CUBLAS_COMPUTE_32F: no TF32 */
  assert_int_equal(c->scale_type, 0);    /* CUDA_R_32F */
  assert_int_equal(c->trans_a, 0);
  assert_int_equal(c->trans_b, 0);
  assert_int_equal(c->epilogue, TB_CUBLASLT_EPILOGUE_RELU_BIAS);
  assert_int_equal(c->a.rows, 6);
  assert_int_equal(c->a.cols, 4);
  assert_int_equal(c->a.ld, 6);
  assert_int_equal(c->a.batch, 6);
  assert_int_equal(c->a.stride, 0); /* W broadcast */
  assert_int_equal(c->b.rows, 4);
  assert_int_equal(c->b.cols, 5);
  assert_int_equal(c->b.ld, 4);
  assert_int_equal(c->b.stride, 20);
  assert_int_equal(c->d.rows, 6);
  assert_int_equal(c->d.cols, 5);
  assert_int_equal(c->d.stride, 30);
  assert_true(c->alpha == 1.0f && c->beta == 0.0f);
  tb_model_destroy(m);

  /* Gemm with transposes and beta C: cuBLASLt's product, then our epilogue (C, the activation) */
  m = gemm_model();
  before = f->matmuls;
  r = compare_with_cpu(m, 2, gemm_dims, TB_LEVEL_O2, values);
  assert_int_equal(f->matmuls, before + 1);
  assert_int_equal(c->trans_a, 1); /* cuBLASLt's A is our B (stored [33, 5], transB) */
  assert_int_equal(c->trans_b, 1);
  assert_int_equal(c->a.ld, 5);
  assert_int_equal(c->b.ld, 70);
  assert_int_equal(c->epilogue, TB_CUBLASLT_EPILOGUE_DEFAULT);
  assert_true(c->alpha == 0.5f);
  assert_int_equal(r.launches, 1);
  assert_string_equal(r.first_kernel, "tb_cu_gemm_epilogue_f32");
  tb_model_destroy(m);

  /* attention: both products through cuBLASLt (the mask in our epilogue), the softmax ours */
  m = attention_model(4.0f);
  before = f->matmuls;
  r = compare_with_cpu(m, 4, attn_dims, TB_LEVEL_O2, values);
  assert_int_equal(f->matmuls, before + 4); /* batch [2, 3] with K_T [1, 3]: two calls of 3 products each */
  assert_int_equal(r.launches, 2);
  assert_string_equal(r.first_kernel, "tb_cu_gemm_epilogue_f32");
  tb_model_destroy(m);
  assert_int_equal(f->live_handles, 0);
  assert_int_equal(f->live_descs, 0);
  assert_int_equal(f->live_layouts, 0);
}

/* cuBLASLt absent, or without an algorithm for the shape: the own kernel runs the product. */
static void fall_through_to_the_own_kernel(void **state) {
  (void)state;
  bool values = emulate();
  unsetenv("TB_CUDA_GEMM");
  setenv("TB_CUBLASLT_LIB", "/nonexistent/libcublasLt.so.13", 1);
  tb_model *m = matmul_model();
  device_run r = compare_with_cpu(m, 4, mm_dims, TB_LEVEL_O2, values);
  assert_int_equal(r.launches, 1);
  assert_string_equal(r.first_kernel, "tb_cu_gemm_f32");
  use_fake_cublaslt();
  setenv("FAKE_CUBLASLT_HEURISTIC", "none", 1);
  const fake_cublaslt_state *f = blas_fake();
  int before = f->matmuls;
  r = compare_with_cpu(m, 4, mm_dims, TB_LEVEL_O2, values);
  assert_int_equal(f->matmuls, before);
  assert_int_equal(r.launches, 1);
  assert_string_equal(r.first_kernel, "tb_cu_gemm_f32");
  /* TB_CUDA_GEMM=own: never cuBLASLt */
  unsetenv("FAKE_CUBLASLT_HEURISTIC");
  setenv("TB_CUDA_GEMM", "own", 1);
  r = compare_with_cpu(m, 4, mm_dims, TB_LEVEL_O2, values);
  assert_int_equal(f->matmuls, before);
  assert_string_equal(r.first_kernel, "tb_cu_gemm_f32");
  tb_model_destroy(m);
}

/* The profile names the route a product's node prepared: "device, own tiled GEMM" or "device, cuBLASLt". */
static const char *profiled_kernel(char *buf, size_t cap) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_model *m = matmul_model();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  TB_ASSERT_OK(tb_prepared_set_profiling(p, true));
  float x[120];
  fill_range(x, 120, 1, -2.0f, 2.0f);
  tb_tensor *in = tbt_f32(cpu, 4, mm_dims, x), *out = NULL;
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  size_t count = 0;
  const tb_node_profile *entries = NULL;
  TB_ASSERT_OK(tb_prepared_profile(p, &count, &entries));
  assert_int_equal(count, 1);
  assert_string_equal(entries[0].op_type, "tb.FusedMatMul");
  snprintf(buf, cap, "%s", entries[0].kernel);
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  return buf;
}

static void profile_names_the_route(void **state) {
  (void)state;
  char buf[64];
  assert_string_equal(profiled_kernel(buf, sizeof buf), "device, own tiled GEMM");
  use_fake_cublaslt();
  assert_string_equal(profiled_kernel(buf, sizeof buf), "device, cuBLASLt");
}

/* Run the matmul model once on cuda:0 at O2; the status, and no output on failure. */
static tb_status run_once(tb_opt_level level) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_model *m = matmul_model();
  tb_prepare_options o = {.size = sizeof o, .level = level};
  tb_prepared *p = NULL;
  tb_status st = tb_model_prepare(m, cuda, &o, &p, NULL);
  if (st == TB_OK) {
    float x[120];
    fill_range(x, 120, 1, -2.0f, 2.0f);
    tb_tensor *in = tbt_f32(cpu, 4, mm_dims, x), *out = NULL;
    const char *names[1] = {"x"};
    st = tb_prepared_run(p, 1, names, &in, 1, NULL, &out);
    if (st != TB_OK) assert_null(out);
    tb_tensor_destroy(out);
    tb_tensor_destroy(in);
  }
  tb_prepared_destroy(p);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
  assert_int_equal(fake_int("fake_cuda_live_modules"), 0);
  return st;
}

static void errors_are_statuses_with_sentences(void **state) {
  (void)state;
  /* the own kernel's launch fails */
  setenv("FAKE_CUDA_FAIL", "launch", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(run_once(TB_LEVEL_O2), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuLaunchKernel of tb_cu_gemm_f32 for node 'matmul' (FusedMatMul) (grid 6 x 1 x 1 of "
                                      "256 threads) failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  assert_int_equal(run_once(TB_LEVEL_O2), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY; free device memory");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  /* cuBLASLt's matmul fails: not a shape it refuses, so the run stops naming the node and the call */
  use_fake_cublaslt();
  setenv("FAKE_CUBLASLT_FAIL", "matmul", 1);
  setenv("FAKE_CUBLASLT_FAIL_CODE", "13", 1);
  assert_int_equal(run_once(TB_LEVEL_O2), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'matmul' (FusedMatMul): cuda:0: cublasLtMatmul");
  TB_ASSERT_CONTAINS(tb_last_error(), "13");
  setenv("FAKE_CUBLASLT_FAIL_CODE", "3", 1); /* CUBLAS_STATUS_ALLOC_FAILED */
  assert_int_equal(run_once(TB_LEVEL_O2), TB_ERR_OUT_OF_MEMORY);
  unsetenv("FAKE_CUBLASLT_FAIL");
  unsetenv("FAKE_CUBLASLT_FAIL_CODE");
  /* device memory too small for the activations */
  setenv("TB_CUDA_GEMM", "own", 1);
  setenv("FAKE_CUDA_MEM_CAPACITY", "300", 1);
  tb_status st = run_once(TB_LEVEL_O2);
  assert_int_equal(st, TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0");
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  /* and afterwards it runs */
  assert_int_equal(run_once(TB_LEVEL_O2), TB_OK);
}

/* find_kernel: float32 products on cuda:0; other dtypes stay on the CPU. */
static void find_kernel_answers(void **state) {
  (void)state;
  static tb_value_type types[3];
  const int64_t dims[2] = {4, 4};
  const tb_value_type *in[3];
  tb_gemm_params gemm = {.alpha = 1, .beta = 1};
  const struct {
    const char *domain, *op;
    const void *params;
    size_t n;
    tb_dtype dtype;
    bool found;
  } cases[] = {
      {"", "MatMul", NULL, 2, TB_DTYPE_F32, true},      {"", "Gemm", &gemm, 3, TB_DTYPE_F32, true},
      {"", "MatMul", NULL, 2, TB_DTYPE_F16, false},     {"", "MatMul", NULL, 2, TB_DTYPE_I64, false},
      {"", "Gemm", NULL, 2, TB_DTYPE_F32, false}, /* no parsed parameters */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (size_t k = 0; k < cases[i].n; k++) {
      types[k] = toh_type(cases[i].dtype, 2, dims);
      in[k] = &types[k];
    }
    tb_kernel_query q = {.domain = cases[i].domain, .op_type = cases[i].op, .opset = 13, .params = cases[i].params,
                         .n_inputs = cases[i].n, .in = in, .n_outputs = 1, .level = TB_KERNEL_REFERENCE, .name = "n"};
    const char *why = NULL;
    const tb_kernel *k = tb_cuda_find(&q, &why);
    if ((k != NULL) != cases[i].found) fail_msg("case %zu (%s): found %d", i, cases[i].op, k != NULL);
    if (k) assert_ptr_equal(k->prepare, tb_cuda_gemm_prepare);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(strides_merging_and_the_cublaslt_form),
      cmocka_unit_test(find_kernel_answers),
      cmocka_unit_test_setup_teardown(products_run_on_cuda_without_fallback, setup, teardown),
      cmocka_unit_test_setup_teardown(own_kernel_values_on_odd_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(cublaslt_gets_the_products, setup, teardown),
      cmocka_unit_test_setup_teardown(fall_through_to_the_own_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(errors_are_statuses_with_sentences, setup, teardown),
      cmocka_unit_test_setup_teardown(profile_names_the_route, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
