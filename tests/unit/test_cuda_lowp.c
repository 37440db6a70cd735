/* The CUDA backend's reduced-precision matrix products (src/backend/cuda/kernels/cuda_gemm_precision.c,
 * 41_gemm_lowp.cu, cuda_blas.c) on the fake cuda:0 of the recorded 8x H100 node: bf16 at O3 (and fp16 when asked)
 * with the weight converted once at prepare and the activation per run, on the own 16-bit kernel (values on the
 * emulator against the CPU's bf16 O3 reference) and through the computing fake cuBLASLt (16-bit A and B, fp32 C,
 * CUBLAS_COMPUTE_32F); TF32 only under precision tf32; fp8 e4m3 run in bf16 on the device below compute capability
 * 8.9 and without cuBLASLt (said per node), and at sm_90 its types, "TN" form and per-tensor scales; the prepare
 * result's precisions; errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fakes/fake_cuda_launch.h"
#include "test_cuda_fakes.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];

/* Beside test_cuda_values.h's variables. */
static const char *const vars[] = {"TB_CUBLASLT_LIB", "TB_BF16_TRIAL"};
enum { N_VARS = sizeof vars / sizeof vars[0] };

static int setup(void **state) {
  tcv_setup_fakes(state, cache_dir, "tb_culowp", vars, N_VARS); /* the own kernel: each test that wants cuBLASLt says so */
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* the fake cuBLASLt computes even on a capturing stream */
  setenv("TB_BF16_TRIAL", "off", 1);    /* the CPU reference at O3: bf16 wherever it has a kernel */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown_fakes(cache_dir, vars, N_VARS);
}

/* W [K, N] as the models below hold it: [-2, 2) / sqrt(K), a layer's scale (outputs of about x's size). */
static void fill_weight(float *w, int64_t k, int64_t n) {
  fill_range(w, (size_t)(k * n), 7, -2.0f, 2.0f);
  for (int64_t i = 0; i < k * n; i++) w[i] /= sqrtf((float)k);
}

/* x [2, 5, K] @ W [K, N] + bias [N] -> Relu: at O2 and O3 one FusedMatMul (bias and ReLU in cuBLASLt's epilogue). */
static tb_model *matmul_model(int64_t k, int64_t n) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "matmul");
  const int64_t x_dims[3] = {2, 5, k}, w_dims[2] = {k, n};
  float *w = malloc((size_t)(k * n) * sizeof *w), *bias = malloc((size_t)n * sizeof *bias);
  fill_weight(w, k, n);
  fill_range(bias, (size_t)n, 8, -2.0f, 2.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 3, x_dims, NULL);
  tbt_const_f32(g, "W", 2, w_dims, w);
  tbt_const_f32(g, "bias", 1, &n, bias);
  free(w);
  free(bias);
  tbt_node(g, "MatMul", "matmul", "x,W", "mm");
  tbt_node(g, "Add", "add", "mm,bias", "a");
  tbt_node(g, "Relu", "relu", "a", "out");
  tbt_output(g, "out");
  return tbt_model_of(m);
}

/* One product x @ B (B a constant, [-2, 2) / sqrt(k)) of any shapes: the own kernel's tiles and broadcasts. */
static tb_model *one_matmul(size_t xn, const int64_t *x_dims, size_t bn, const int64_t *b_dims) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "one");
  size_t count = 1;
  for (size_t i = 0; i < bn; i++) count *= (size_t)b_dims[i];
  float *b = malloc((count ? count : 1) * sizeof *b);
  fill_range(b, count, 21, -2.0f, 2.0f);
  int64_t k = bn >= 2 ? b_dims[bn - 2] : b_dims[0];
  for (size_t i = 0; i < count; i++) b[i] /= sqrtf((float)(k > 0 ? k : 1));
  tbt_input(g, "x", TB_DTYPE_F32, xn, x_dims, NULL);
  tbt_const_f32(g, "B", bn, b_dims, b);
  free(b);
  tbt_node(g, "MatMul", "product", "x,B", "out");
  tbt_output(g, "out");
  return tbt_model_of(m);
}

/* What a run on cuda:0 showed. */
typedef struct lowp_run {
  size_t device_nodes, reduced_nodes, launches;
  tb_precision precision;
  char node_precision[160]; /* the first of node_precisions */
  char precision_choice[400]; /* the first of precision_choices */
  int casts, gemm_bf16, gemm_f16, gemm_f32, amax, to_e4m3;
  double max_error_vs_fp32; /* the largest |cuda - cpu O0 fp32|: > 0 shows the reduced precision is real */
  float a_scale;            /* the value behind the fake cuBLASLt's last A scale pointer (fp8), read while it lives */
} lowp_run;

/* Prepare model on cuda:0 at level / precision and on the CPU at ref_level (auto precision: bf16 at O3 on a CPU with
 * AVX512-BF16, fp32 elsewhere: the data keep both within the bf16 row) and at O0; run both on the same input; each
 * output element within atol + rtol |ref| of the CPU's (rtol 0: no check). */
static lowp_run compare_out(tb_model *model, size_t ndim, const int64_t *dims, tb_opt_level level, tb_precision precision,
                            tb_opt_level ref_level, float rtol, float atol, float *out, size_t out_cap) {
  tcv_lowp t;
  tcv_lowp_run(&t, model, ndim, dims, level, precision, ref_level);
  const tb_prepare_result *rg = t.rg;
  lowp_run r = {.device_nodes = rg->device_nodes, .reduced_nodes = rg->reduced_precision_nodes, .precision = rg->precision};
  if (rg->reduced_precision_nodes) snprintf(r.node_precision, sizeof r.node_precision, "%s", rg->node_precisions[0]);
  if (rg->precision_choice_count) snprintf(r.precision_choice, sizeof r.precision_choice, "%s", rg->precision_choices[0]);
  r.launches = (size_t)fake_int("fake_cuda_launch_count");
  r.casts = launches_of("tb_cu_dm_cast");
  r.gemm_bf16 = launches_of("tb_cu_gemm_bf16");
  r.gemm_f16 = launches_of("tb_cu_gemm_f16");
  r.gemm_f32 = launches_of("tb_cu_gemm_f32");
  r.amax = launches_of("tb_cu_lowp_amax_f32");
  r.to_e4m3 = launches_of("tb_cu_lowp_to_e4m3");
  if (getenv("TB_CUBLASLT_LIB") && blas_fake()->matmul.a_scale) memcpy(&r.a_scale, host_bytes(blas_fake()->matmul.a_scale), sizeof r.a_scale);
  r.max_error_vs_fp32 = tcv_lowp_check(&t, rtol, atol, out, out_cap);
  tcv_lowp_free(&t);
  return r;
}

static lowp_run compare(tb_model *model, size_t ndim, const int64_t *dims, tb_opt_level level, tb_precision precision,
                        tb_opt_level ref_level, float rtol, float atol) {
  return compare_out(model, ndim, dims, level, precision, ref_level, rtol, atol, NULL, 0);
}

static const int64_t x_dims[3] = {2, 5, 40};

/* O3 without cuBLASLt: the own bf16 kernel, the weight converted at prepare (one cast per run: the input), the
 * CPU's bf16 O3 numbers within bf16's tolerance and visibly not fp32's. */
static void bf16_at_o3_on_the_own_kernel(void **state) {
  (void)state;
  if (!emulate()) skip();
  tb_model *m = matmul_model(40, 24);
  lowp_run r = compare(m, 3, x_dims, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(r.device_nodes, 1); /* one FusedMatMul */
  assert_int_equal(r.reduced_nodes, 1);
  assert_int_equal(r.precision, TB_PRECISION_BF16);
  assert_string_equal(r.node_precision, "FusedMatMul (matmul): bf16");
  assert_int_equal(r.casts, 1); /* x; W was converted at prepare */
  assert_int_equal(r.gemm_bf16, 1);
  assert_int_equal(r.gemm_f32, 0);
  assert_true(r.max_error_vs_fp32 > 1e-4); /* bf16's rounding shows */
  /* O2 stays fp32: the fp32 kernel, fp32's numbers */
  r = compare(m, 3, x_dims, TB_LEVEL_O2, TB_PRECISION_AUTO, TB_LEVEL_O0, 1e-5f, 1e-6f);
  assert_int_equal(r.reduced_nodes, 0);
  assert_int_equal(r.precision, TB_PRECISION_FP32);
  assert_int_equal(r.gemm_f32, 1);
  assert_int_equal(r.casts, 0);
  /* O3 with precision fp32: fp32 */
  r = compare(m, 3, x_dims, TB_LEVEL_O3, TB_PRECISION_FP32, TB_LEVEL_O0, 1e-5f, 1e-6f);
  assert_int_equal(r.gemm_f32, 1);
  /* precision fp16 at O3: the own fp16 kernel, within fp16's tolerance of fp32 (the CPU has no fp16) */
  r = compare(m, 3, x_dims, TB_LEVEL_O3, TB_PRECISION_FP16, TB_LEVEL_O0, 5e-3f, 5e-3f);
  assert_int_equal(r.precision, TB_PRECISION_FP16);
  assert_string_equal(r.node_precision, "FusedMatMul (matmul): fp16");
  assert_int_equal(r.gemm_f16, 1);
  assert_int_equal(r.casts, 1);
  assert_true(r.max_error_vs_fp32 > 0);
  tb_model_destroy(m);
  /* bf16 at O2 when asked */
  m = matmul_model(17, 9);
  const int64_t small[3] = {2, 5, 17};
  r = compare(m, 3, small, TB_LEVEL_O2, TB_PRECISION_BF16, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(r.gemm_bf16, 1);
  tb_model_destroy(m);
}

/* The own bf16 kernel on shapes around its tiles: against the CPU's O3 (bf16) within the bf16 row. */
static void own_bf16_kernel_on_odd_shapes(void **state) {
  (void)state;
  if (!emulate()) skip();
  static const struct {
    size_t xn, bn;
    int64_t x[4], b[4];
  } cases[] = {
      {2, 2, {1, 1}, {1, 1}},          /* 1 x 1 x 1 */
      {2, 2, {65, 17}, {17, 66}},      /* past one tile each way, k past one slice */
      {3, 2, {2, 3, 33}, {33, 1}},     /* one column */
      {4, 3, {2, 1, 3, 5}, {4, 5, 2}}, /* batch dims broadcast on both sides: B batched, converted at prepare */
      {3, 2, {0, 3, 5}, {5, 4}},       /* an empty output */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_model *m = one_matmul(cases[i].xn, cases[i].x, cases[i].bn, cases[i].b);
    lowp_run r = compare(m, cases[i].xn, cases[i].x, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
    assert_int_equal(r.reduced_nodes, 1);
    bool empty = cases[i].x[0] == 0;
    assert_int_equal(r.gemm_bf16, empty ? 0 : 1);
    tb_model_destroy(m);
  }
}

/* Through cuBLASLt (the computing fake): bf16 A and B, fp32 C and D, fp32 compute, the bias and ReLU in its
 * epilogue, no kernel of ours but the input's conversion; fp16 likewise. */
static void bf16_and_fp16_through_cublaslt(void **state) {
  (void)state;
  use_fake_cublaslt();
  bool values = emulate(); /* the conversion kernel runs on the emulator */
  const fake_cublaslt_state *f = blas_fake();
  const fake_cublaslt_call *c = &f->matmul;
  tb_model *m = matmul_model(40, 24);
  int before = f->matmuls;
  lowp_run r = compare(m, 3, x_dims, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, values ? 1e-2f : 0, 1e-2f);
  assert_int_equal(f->matmuls, before + 1);
  assert_int_equal(r.launches, 1); /* the input's cast; W converted at prepare; bias and ReLU in cuBLASLt */
  assert_int_equal(r.casts, 1);
  assert_int_equal(c->a.type, 14); /* CUDA_R_16BF: cuBLASLt's A is our W */
  assert_int_equal(c->b.type, 14);
  assert_int_equal(c->c.type, 0); /* CUDA_R_32F: the output stays fp32 */
  assert_int_equal(c->d.type, 0);
  assert_int_equal(c->compute_type, 68); /* CUBLAS_COMPUTE_32F: fp32 accumulation */
  assert_int_equal(c->scale_type, 0);
  assert_int_equal(c->epilogue, 6); /* RELU_BIAS */
  assert_null(c->a_scale);
  assert_string_equal(r.node_precision, "FusedMatMul (matmul): bf16");
  if (values) assert_true(r.max_error_vs_fp32 > 1e-4);
  before = f->matmuls;
  r = compare(m, 3, x_dims, TB_LEVEL_O2, TB_PRECISION_FP16, TB_LEVEL_O0, values ? 5e-3f : 0, 5e-3f);
  assert_int_equal(f->matmuls, before + 1);
  assert_int_equal(c->a.type, 2); /* CUDA_R_16F */
  assert_int_equal(c->b.type, 2);
  assert_int_equal(c->d.type, 0);
  assert_int_equal(c->compute_type, 68);
  tb_model_destroy(m);
  assert_int_equal(f->live_handles, 0);
  assert_int_equal(f->live_descs, 0);
  assert_int_equal(f->live_layouts, 0);
}

/* TF32 (CUBLAS_COMPUTE_32F_FAST_TF32) only under precision tf32; never at O3 with auto or at O2. */
static void tf32_only_when_asked(void **state) {
  (void)state;
  use_fake_cublaslt();
  const fake_cublaslt_state *f = blas_fake();
  const fake_cublaslt_call *c = &f->matmul;
  tb_model *m = matmul_model(40, 24);
  lowp_run r = compare(m, 3, x_dims, TB_LEVEL_O2, TB_PRECISION_TF32, TB_LEVEL_O0, 0, 0);
  assert_int_equal(c->compute_type, 77);
  assert_int_equal(c->a.type, 0);
  assert_int_equal(r.precision, TB_PRECISION_TF32);
  assert_string_equal(r.node_precision, "FusedMatMul (matmul): tf32");
  r = compare(m, 3, x_dims, TB_LEVEL_O2, TB_PRECISION_AUTO, TB_LEVEL_O0, 0, 0);
  assert_int_equal(c->compute_type, 68);
  assert_int_equal(r.reduced_nodes, 0);
  r = compare(m, 3, x_dims, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O0, 0, 0);
  assert_int_equal(c->compute_type, 68);
  assert_int_equal(c->a.type, 14);
  /* at O1 precision tf32 asks for nothing: fp32, and the prepare result warns */
  tb_backend *cuda = open_cuda0();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O1, .precision = TB_PRECISION_TF32};
  tb_prepared *p = NULL;
  const tb_prepare_result *res = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, &res));
  assert_int_equal(res->reduced_precision_nodes, 0);
  assert_int_equal(res->precision, TB_PRECISION_FP32);
  bool warned = false;
  for (size_t i = 0; i < res->warning_count; i++)
    warned = warned || strstr(res->warnings[i], "precision tf32: no kernel for this model's nodes on cuda:0 computes in tf32 at O0 "
                                                "and O1 (reduced precision starts at O2); fp32 is used") != NULL;
  assert_true(warned);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_model_destroy(m);
  /* the name parses, a bad one is refused with the list */
  tb_precision prec = TB_PRECISION_AUTO;
  TB_ASSERT_OK(tb_precision_parse("TF32", &prec));
  assert_int_equal(prec, TB_PRECISION_TF32);
  assert_string_equal(tb_precision_name(TB_PRECISION_TF32), "tf32");
  assert_int_equal(tb_precision_parse("tf16", &prec), TB_ERR_NOT_FOUND);
  assert_string_equal(tb_last_error(), "unknown precision 'tf16'; valid precisions are auto, fp32, bf16, fp16, fp8, tf32");
}

/* fp8 where it cannot run (below compute capability 8.9, without cuBLASLt): the product runs in bf16 on the device,
 * the weight converted at prepare, and the prepare result says so per node with the reason; nothing left. */
static void fp8_falls_to_bf16_where_it_cannot_run(void **state) {
  (void)state;
  use_fake_cublaslt();
  setenv("FAKE_CUDA_CC", "8.0", 1);
  tb_model *m = matmul_model(32, 24);
  tb_backend *cuda = open_cuda0();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2, .precision = TB_PRECISION_FP8};
  tb_prepared *p = NULL;
  const tb_prepare_result *res = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, &res));
  assert_int_equal(res->cpu_fallback_nodes, 0);
  assert_int_equal(res->reduced_precision_nodes, 1);
  assert_string_equal(res->node_precisions[0], "FusedMatMul (matmul): bf16");
  assert_int_equal(res->precision_choice_count, 1);
  assert_string_equal(res->precision_choices[0],
                      "FusedMatMul (matmul): bf16: precision fp8 needs a GPU of compute capability 8.9 or newer (fp8 tensor "
                      "cores: Ada, Hopper, Blackwell); cuda:0 is 8.0; this product runs in bf16 on the device (fp32 "
                      "accumulation and outputs)");
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
  const int64_t dims32[3] = {2, 5, 32};
  bool values = emulate();
  lowp_run r = compare(m, 3, dims32, TB_LEVEL_O2, TB_PRECISION_FP8, TB_LEVEL_O3, values ? 1e-2f : 0, 1e-2f);
  assert_string_equal(r.node_precision, "FusedMatMul (matmul): bf16");
  assert_int_equal(blas_fake()->matmul.a.type, 14); /* CUDA_R_16BF */
  assert_int_equal(r.to_e4m3, 0);
  assert_int_equal(r.casts, 1); /* x; W converted to bf16 at prepare */
  /* sm_90 without cuBLASLt: the own bf16 kernel */
  setenv("FAKE_CUDA_CC", "9.0", 1);
  setenv("TB_CUDA_GEMM", "own", 1);
  cuda = open_cuda0();
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, &res));
  assert_int_equal(res->cpu_fallback_nodes, 0);
  assert_non_null(strstr(res->precision_choices[0], "FusedMatMul (matmul): bf16: precision fp8 runs the products only through "
                                                    "cuBLASLt, which is not in use on cuda:0"));
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  r = compare(m, 3, dims32, TB_LEVEL_O2, TB_PRECISION_FP8, TB_LEVEL_O3, values ? 1e-2f : 0, 1e-2f);
  assert_int_equal(r.gemm_bf16, 1);
  assert_int_equal(r.casts, 1);
  tb_model_destroy(m);
  assert_int_equal(live_allocations(), 0);
}

/* e4m3 of v (rounded to nearest even, saturated at 448) as a float: the test's own reference of the quantization. */
static float e4m3_value(float v) {
  float a = fabsf(v), q;
  if (a >= 448.0f) q = 448.0f;
  else if (a < 0.015625f) q = rintf(a * 512.0f) / 512.0f;
  else {
    int e;
    frexpf(a, &e); /* a = f 2^e, f in [0.5, 1): 3 mantissa bits below the leading one */
    float ulp = ldexpf(1.0f, e - 4);
    q = rintf(a / ulp) * ulp;
  }
  return v < 0 ? -q : q;
}


/* fp8 at sm_90: e4m3 A and B in cuBLASLt's TN form with both scale pointers, the weight's scale max |W| / 448 made at
 * prepare (transposed to [n, k]), the input's per run (amax, then the conversion); values within the fp8 row. A
 * product cuBLASLt's fp8 rules refuse (k 20) runs in bf16 instead. */
static void fp8_scales_and_types_at_sm90(void **state) {
  (void)state;
  use_fake_cublaslt();
  setenv("FAKE_CUDA_CC", "9.0", 1);
  bool values = emulate();
  const fake_cublaslt_state *f = blas_fake();
  const fake_cublaslt_call *c = &f->matmul;
  tb_model *m = matmul_model(32, 24);
  const int64_t dims[3] = {2, 5, 32};
  int before = f->matmuls;
  float got[2 * 5 * 24];
  lowp_run r = compare_out(m, 3, dims, TB_LEVEL_O2, TB_PRECISION_FP8, TB_LEVEL_O0, values ? 1.5e-1f : 0, 2e-1f, got, 240);
  assert_int_equal(f->matmuls, before + 1);
  assert_int_equal(r.precision, TB_PRECISION_FP8);
  assert_string_equal(r.node_precision, "FusedMatMul (matmul): fp8 e4m3");
  assert_int_equal(r.amax, 2); /* the input's scale, per run (the blocks, then their maximum); W's was made at prepare */
  assert_int_equal(r.to_e4m3, 1);
  assert_int_equal(r.casts, 0);
  assert_int_equal(c->a.type, 28); /* CUDA_R_8F_E4M3 */
  assert_int_equal(c->b.type, 28);
  assert_int_equal(c->d.type, 0);
  assert_int_equal(c->compute_type, 68);
  assert_int_equal(c->epilogue & 6, 0); /* bias and ReLU in our epilogue kernel: cuBLASLt's fp8 forms take no fp32 bias */
  assert_int_equal(c->trans_a, 1); /* cuBLASLt's A is W stored [24, 32]: transposed */
  assert_int_equal(c->trans_b, 0);
  assert_int_equal(c->a.ld, 32);
  assert_int_equal(c->b.ld, 32);
  assert_non_null(c->a_scale);
  assert_non_null(c->b_scale);
  if (values) {
    /* cuBLASLt's A scale is W's: max |W| / 448, W filled as the model's */
    float w[32 * 24], x[2 * 5 * 32], bias[24], amax = 0, xmax = 0;
    fill_weight(w, 32, 24);
    fill_range(x, 320, 5, -2.0f, 2.0f);
    fill_range(bias, 24, 8, -2.0f, 2.0f);
    for (size_t i = 0; i < 32 * 24; i++) amax = fmaxf(amax, fabsf(w[i]));
    for (size_t i = 0; i < 320; i++) xmax = fmaxf(xmax, fabsf(x[i]));
    float sx = xmax / 448.0f, sw = amax / 448.0f;
    assert_true(r.a_scale == sw);
    assert_true(r.max_error_vs_fp32 > 1e-3); /* e4m3's 4 bits show */
    /* the values are the product of the quantized operands, scaled back: within float rounding */
    for (int i = 0; i < 10; i++)
      for (int j = 0; j < 24; j++) {
        double s = 0;
        for (int l = 0; l < 32; l++) s += (double)e4m3_value(x[i * 32 + l] / sx) * e4m3_value(w[l * 24 + j] / sw);
        double want = fmax(0.0, s * sw * sx + bias[j]);
        if (fabs(got[i * 24 + j] - want) > 1e-5 + 1e-5 * fabs(want))
          fail_msg("fp8 element (%d, %d): cuda:0 %.9g, quantized reference %.9g", i, j, (double)got[i * 24 + j], want);
      }
  }
  tb_model_destroy(m);
  /* k 20: not a multiple of 16, seen at prepare: bf16, W converted then, the reason per node */
  m = matmul_model(20, 24);
  const int64_t dims20[3] = {2, 5, 20};
  r = compare(m, 3, dims20, TB_LEVEL_O2, TB_PRECISION_FP8, TB_LEVEL_O3, values ? 1e-2f : 0, 1e-2f);
  assert_int_equal(c->a.type, 14);
  assert_int_equal(r.to_e4m3, 0);
  assert_int_equal(r.casts, 1); /* x only */
  assert_string_equal(r.node_precision, "FusedMatMul (matmul): bf16");
  assert_string_equal(r.precision_choice, "FusedMatMul (matmul): bf16: cuBLASLt's fp8 products need k a multiple of 16 (here "
                                          "20); this product runs in bf16 on the device (fp32 accumulation and outputs)");
  tb_model_destroy(m);
  assert_int_equal(f->live_handles, 0);
  assert_int_equal(f->live_descs, 0);
  assert_int_equal(f->live_layouts, 0);
}

/* The e4m3 conversion kernel itself, on the emulator: rounding to nearest even, saturation, subnormals, NaN. */
static void e4m3_conversion_on_the_emulator(void **state) {
  (void)state;
  if (!emulate()) skip();
  int (*run)(const char *, unsigned, unsigned, void **) =
      (int (*)(const char *, unsigned, unsigned, void **))tcu_symbol("cuda_emu", "cuda_emu_launch");
  static const float x[] = {448.0f, 1.0f, 1.0625f, 1.1875f, 0.015625f, 0.001953125f, 0.0029296875f, -3.0f, 1000.0f, -0.0f};
  enum { n = sizeof x / sizeof x[0] };
  static const unsigned char want[n] = {0x7e, 0x38, 0x38, 0x3a, 0x08, 0x01, 0x02, 0xc4, 0x7e, 0x80};
  float xs[n + 1], amax = 448.0f, scale = 0; /* scale 1: the values as they are */
  memcpy(xs, x, sizeof x);
  xs[n] = NAN;
  unsigned char y[n + 1];
  const float *px = xs, *pa = &amax;
  float *ps = &scale;
  unsigned char *py = y;
  long long rows = n + 1, cols = 1, transpose = 0;
  void *params[7] = {&px, &pa, &ps, &py, &rows, &cols, &transpose};
  assert_int_equal(run("tb_cu_lowp_to_e4m3", 1, 32, params), 0);
  assert_true(scale == 1.0f);
  for (int i = 0; i < n; i++)
    if (y[i] != want[i]) fail_msg("e4m3 of %g: 0x%02x, want 0x%02x", (double)x[i], y[i], want[i]);
  assert_int_equal(y[n], 0x7f);
  /* the maximum of 1000 values over 3 blocks (one per block), then over the 3 */
  float big[1000], partial[3] = {0, 0, 0}, out_amax = 0;
  for (int i = 0; i < 1000; i++) big[i] = (float)(i % 17) - 8.0f;
  big[100] = -896.0f; /* block 1 visits 64..127, 256..319, ..., 832..895 */
  big[5] = NAN; /* ignored */
  const float *pb = big, *pp = partial;
  float *po = partial, *pa2 = &out_amax;
  long long thousand = 1000, three = 3;
  void *amax_params[3] = {&pb, &po, &thousand};
  assert_int_equal(run("tb_cu_lowp_amax_f32", 3, 64, amax_params), 0);
  assert_true(partial[0] == 8.0f && partial[1] == 896.0f && partial[2] == 8.0f);
  void *final_params[3] = {&pp, &pa2, &three};
  assert_int_equal(run("tb_cu_lowp_amax_f32", 1, 32, final_params), 0);
  assert_true(out_amax == 896.0f);
}

/* Errors: the per-run conversion's launch failing (the kernel, the node and the code), the weight's conversion at
 * prepare failing, out of device memory for the converted weight; nothing left; the model runs afterwards. */
static void errors_are_statuses_with_sentences(void **state) {
  (void)state;
  tb_model *m = matmul_model(40, 24);
  tb_backend *cuda = open_cuda0(), *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O3};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  float x[400];
  fill_range(x, 400, 1, -2.0f, 2.0f);
  tb_tensor *in = tbt_f32(cpu, 3, x_dims, x), *out = NULL;
  const char *names[1] = {"x"};
  setenv("FAKE_CUDA_FAIL", "launch", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 1, NULL, &out), TB_ERR_DRIVER);
  assert_non_null(strstr(tb_last_error(), "tb_cu_dm_cast"));
  assert_non_null(strstr(tb_last_error(), "'matmul'"));
  assert_non_null(strstr(tb_last_error(), "700"));
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  /* the weight's conversion at prepare */
  launch_reset();
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  p = NULL;
  assert_int_equal(tb_model_prepare(m, cuda, &o, &p, NULL), TB_ERR_DRIVER);
  assert_null(p);
  assert_non_null(strstr(tb_last_error(), "tb_cu_dm_cast"));
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  tb_tensor_destroy(in);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
  /* a device too small for the converted weight next to the fp32 one */
  setenv("FAKE_CUDA_MEM_CAPACITY", "5000", 1);
  cuda = open_cuda0();
  assert_int_equal(tb_model_prepare(m, cuda, &o, &p, NULL), TB_ERR_OUT_OF_MEMORY);
  assert_null(p);
  tb_backend_destroy(cuda);
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  assert_int_equal(live_allocations(), 0);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(bf16_at_o3_on_the_own_kernel, setup, teardown),
      cmocka_unit_test_setup_teardown(own_bf16_kernel_on_odd_shapes, setup, teardown),
      cmocka_unit_test_setup_teardown(bf16_and_fp16_through_cublaslt, setup, teardown),
      cmocka_unit_test_setup_teardown(tf32_only_when_asked, setup, teardown),
      cmocka_unit_test_setup_teardown(fp8_falls_to_bf16_where_it_cannot_run, setup, teardown),
      cmocka_unit_test_setup_teardown(fp8_scales_and_types_at_sm90, setup, teardown),
      cmocka_unit_test_setup_teardown(e4m3_conversion_on_the_emulator, setup, teardown),
      cmocka_unit_test_setup_teardown(errors_are_statuses_with_sentences, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
