/* The bf16 / fp16 conversion of an activation fused into the kernel that produces it (model/exec_cast_fuse.c,
 * backend/cuda/kernels/cuda_handoff.c, 41_gemm_lowp.cu's _out16 kernels; docs/cuda.md "Reduced precision") on the
 * fake cuda:0 with the emulator: a chain MatMul -> Add -> Gelu -> MatMul whose Gelu output also feeds an fp32
 * consumer, at O3 (bf16) and under precision fp16, on the own kernels and through the computing fake cuBLASLt: the
 * consumer's conversion launch gone, the producer's _out16 launch in its place, both outputs bit for bit those of
 * the unfused path (TB_CUDA_FUSE_CASTS=off), the pairing said in the prepare result; fp8 keeps its launches and says
 * why; nothing left allocated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fakes/fake_cuda_launch.h"
#include "test_cuda_fakes.h"
#include "test_cuda_values.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];
static const char *const vars[] = {"TB_CUBLASLT_LIB", "TB_CUDNN_LIB", "TB_BF16_TRIAL", "TB_CUDA_FUSE_CASTS", "FAKE_CUDA_CC"};
enum { N_VARS = sizeof vars / sizeof vars[0] };

static int setup(void **state) {
  tcv_setup_fakes(state, cache_dir, "tb_cufuse", vars, N_VARS);
  setenv("TB_CUDNN_LIB", "/nonexistent/libcudnn.so.9", 1); /* the own convolutions; conv_chain_fused says otherwise */
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* the fake cuBLASLt computes even on a capturing stream */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown_fakes(cache_dir, vars, N_VARS);
}

static void fill_weight(float *w, int64_t k, int64_t n, unsigned seed) {
  fill_range(w, (size_t)(k * n), seed, -2.0f, 2.0f);
  for (int64_t i = 0; i < k * n; i++) w[i] /= sqrtf((float)k);
}

/* x [2, 5, 32] @ W1 [32, 48] + b1 -> Gelu (ONNX's erf form, which O1 recognises and fuses into the product) = h;
 * out = h @ W2 [48, 16]; side = Sigmoid(h), h's second consumer, in fp32. */
static tb_model *chain_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "chain");
  const int64_t x_dims[3] = {-1, 5, 32}, w1_dims[2] = {32, 48}, w2_dims[2] = {48, 16}, n1 = 48, one = 1;
  const char *x_sym[3] = {"batch", NULL, NULL}; /* a symbolic batch: run_model's third run takes batch 3 */
  float w1[32 * 48], w2[48 * 16], b1[48], sqrt2 = 1.41421356f, half = 0.5f, unit = 1.0f;
  fill_weight(w1, 32, 48, 7);
  fill_weight(w2, 48, 16, 9);
  fill_range(b1, 48, 8, -1.0f, 1.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 3, x_dims, x_sym);
  tbt_const_f32(g, "W1", 2, w1_dims, w1);
  tbt_const_f32(g, "W2", 2, w2_dims, w2);
  tbt_const_f32(g, "b1", 1, &n1, b1);
  tbt_const_f32(g, "sqrt2", 1, &one, &sqrt2);
  tbt_const_f32(g, "half", 1, &one, &half);
  tbt_const_f32(g, "one", 1, &one, &unit);
  tbt_node(g, "MatMul", "mm1", "x,W1", "p");
  tbt_node(g, "Add", "bias1", "p,b1", "a");
  tbt_node(g, "Div", "gdiv", "a,sqrt2", "ad");
  tbt_node(g, "Erf", "gerf", "ad", "ae");
  tbt_node(g, "Add", "gadd", "ae,one", "ap");
  tbt_node(g, "Mul", "gmul", "a,ap", "am");
  tbt_node(g, "Mul", "ghalf", "am,half", "h");
  tbt_node(g, "MatMul", "mm2", "h,W2", "out");
  tbt_node(g, "Sigmoid", "side", "h", "side_out");
  tbt_output(g, "out");
  tbt_output(g, "side_out");
  return tbt_model_of(m);
}

/* What one run of the chain on cuda:0 showed. */
typedef struct fuse_run {
  float out[2 * 5 * 16 + 4 * 64], side[2 * 5 * 48 + 8 * 64]; /* the chain's or the convolutions' */
  float out2[2 * 5 * 16 + 4 * 64], side2[2 * 5 * 48 + 8 * 64]; /* a second run with other input values */
  float out3[3 * 5 * 16], side3[3 * 5 * 48];                 /* the chain's third run, batch 3 (a new shape) */
  size_t n_out3, n_side3;
  size_t n_out, n_side;
  int casts, out16, epilogue_out16, amax, conv_out16; /* conv_out16: the 16-bit convolutions' and the epilogue's launches */
  size_t reduced_nodes;
  char choices[1200]; /* the precision choices, joined by " | " */
} fuse_run;

static void run_model(tb_model *model, size_t ndim, const int64_t *dims, tb_opt_level level, tb_precision precision, bool fuse,
                      fuse_run *r) {
  memset(r, 0, sizeof *r);
  if (fuse) unsetenv("TB_CUDA_FUSE_CASTS");
  else setenv("TB_CUDA_FUSE_CASTS", "off", 1);
  tb_backend *cuda = open_cuda0();
  tb_prepared *p = NULL;
  const tb_prepare_result *res = NULL;
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = precision};
  tb_status st = tb_model_prepare(model, cuda, &o, &p, &res);
  if (st != TB_OK) fail_msg("prepare: %s: %s", tb_status_str(st), tb_last_error());
  r->reduced_nodes = res->reduced_precision_nodes;
  for (size_t i = 0; i < res->precision_choice_count; i++) {
    size_t len = strlen(r->choices);
    snprintf(r->choices + len, sizeof r->choices - len, "%s%s", i ? " | " : "", res->precision_choices[i]);
  }
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  size_t count = 1;
  for (size_t d = 0; d < ndim; d++) count *= (size_t)dims[d];
  float *x = malloc(count * sizeof *x);
  fill_range(x, count, 5, -2.0f, 2.0f);
  tb_tensor *in = tbt_f32(cpu, ndim, dims, x), *outs[2] = {NULL, NULL};
  free(x);
  const char *names[1] = {"x"};
  launch_reset();
  st = tb_prepared_run(p, 1, names, &in, 2, NULL, outs);
  if (st != TB_OK) fail_msg("run: %s: %s", tb_status_str(st), tb_last_error());
  r->casts = launches_of("tb_cu_dm_cast");
  r->out16 = launches_of("tb_cu_gemm_f32_out16") + launches_of("tb_cu_gemm_bf16_out16") + launches_of("tb_cu_gemm_f16_out16");
  r->epilogue_out16 = launches_of("tb_cu_gemm_epilogue_out16");
  r->amax = launches_of("tb_cu_lowp_amax_f32");
  r->conv_out16 = launches_of("tb_cu_cnn_conv_igemm_bf16") + launches_of("tb_cu_cnn_conv_igemm_f16") + launches_of("tb_cu_cnn_conv_bf16") +
                  launches_of("tb_cu_cnn_conv_f16") + launches_of("tb_cu_cnn_epilogue_f32");
  r->n_out = (size_t)tb_tensor_numel(outs[0]);
  r->n_side = (size_t)tb_tensor_numel(outs[1]);
  assert_true(r->n_out <= sizeof r->out / sizeof *r->out && r->n_side <= sizeof r->side / sizeof *r->side);
  TB_ASSERT_OK(tb_tensor_copy_to_host(outs[0], r->out, r->n_out * sizeof *r->out));
  TB_ASSERT_OK(tb_tensor_copy_to_host(outs[1], r->side, r->n_side * sizeof *r->side));
  /* a second run with OTHER input values: the consumer must read this run's copy (the caller compares the bits with
   * the unfused path's second run) */
  x = malloc(count * sizeof *x);
  fill_range(x, count, 11, -2.0f, 2.0f);
  tb_tensor *in2 = tbt_f32(cpu, ndim, dims, x), *again[2] = {NULL, NULL};
  free(x);
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in2, 2, NULL, again));
  TB_ASSERT_OK(tb_tensor_copy_to_host(again[0], r->out2, r->n_out * sizeof *r->out2));
  TB_ASSERT_OK(tb_tensor_copy_to_host(again[1], r->side2, r->n_side * sizeof *r->side2));
  assert_true(memcmp(r->out2, r->out, r->n_out * sizeof *r->out) != 0); /* the input did change the result */
  tb_tensor_destroy(in2);
  if (ndim == 3) { /* a third run with a new input shape (batch 3) and other values again */
    int64_t dims3[3] = {3, dims[1], dims[2]};
    size_t count3 = (size_t)(dims3[0] * dims3[1] * dims3[2]);
    x = malloc(count3 * sizeof *x);
    fill_range(x, count3, 13, -2.0f, 2.0f);
    tb_tensor *in3 = tbt_f32(cpu, 3, dims3, x), *third[2] = {NULL, NULL};
    free(x);
    TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in3, 2, NULL, third));
    r->n_out3 = (size_t)tb_tensor_numel(third[0]);
    r->n_side3 = (size_t)tb_tensor_numel(third[1]);
    assert_true(r->n_out3 <= sizeof r->out3 / sizeof *r->out3 && r->n_side3 <= sizeof r->side3 / sizeof *r->side3);
    TB_ASSERT_OK(tb_tensor_copy_to_host(third[0], r->out3, r->n_out3 * sizeof *r->out3));
    TB_ASSERT_OK(tb_tensor_copy_to_host(third[1], r->side3, r->n_side3 * sizeof *r->side3));
    tb_tensor_destroy(in3);
    for (int i = 0; i < 2; i++) tb_tensor_destroy(third[i]);
  }
  for (int i = 0; i < 2; i++) {
    tb_tensor_destroy(outs[i]);
    tb_tensor_destroy(again[i]);
  }
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_backend_destroy(cpu);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
}

/* fused against unfused at one level and precision: the launches each shows, the same bits. */
static void check_pair(tb_opt_level level, tb_precision precision, bool blas, const char *dtype_name) {
  tb_model *m = chain_model();
  fuse_run *fused = malloc(sizeof *fused), *plain = malloc(sizeof *plain);
  const int64_t dims[3] = {2, 5, 32};
  run_model(m, 3, dims, level, precision, true, fused);
  run_model(m, 3, dims, level, precision, false, plain);
  assert_int_equal(fused->reduced_nodes, 2); /* mm1 (with its bias and Gelu) and mm2 */
  assert_int_equal(plain->casts, 2);         /* x for mm1, h for mm2 */
  assert_int_equal(fused->casts, 1);         /* x only: a graph input has no producer on the device */
  assert_int_equal(plain->out16 + plain->epilogue_out16, 0);
  if (blas) assert_int_equal(fused->epilogue_out16, 1); /* cuBLASLt's product, our epilogue (bias, Gelu) writing h twice */
  else assert_int_equal(fused->out16, 1);               /* the own 16-bit product writing h twice */
  assert_memory_equal(fused->out, plain->out, sizeof fused->out);   /* bit for bit */
  assert_memory_equal(fused->side, plain->side, sizeof fused->side); /* the fp32 consumer reads the fp32 h */
  assert_memory_equal(fused->out2, plain->out2, fused->n_out * sizeof *fused->out2); /* other values: this run's copy */
  assert_memory_equal(fused->side2, plain->side2, fused->n_side * sizeof *fused->side2);
  assert_int_equal(fused->n_out3, 3 * 5 * 16); /* a new shape: the same bits as the unfused path's */
  assert_memory_equal(fused->out3, plain->out3, fused->n_out3 * sizeof *fused->out3);
  assert_memory_equal(fused->side3, plain->side3, fused->n_side3 * sizeof *fused->side3);
  char want[200];
  snprintf(want, sizeof want, "input 'h' arrives in %s from node 'mm1' (FusedMatMul), which writes it in its own launch", dtype_name);
  TB_ASSERT_CONTAINS(fused->choices, want);
  assert_null(strstr(plain->choices, "arrives in"));
  free(fused);
  free(plain);
  tb_model_destroy(m);
}

static void bf16_at_o3_on_the_own_kernels(void **state) {
  (void)state;
  if (!emulate()) skip();
  check_pair(TB_LEVEL_O3, TB_PRECISION_AUTO, false, tb_dtype_name(TB_DTYPE_BF16));
}

static void fp16_on_the_own_kernels(void **state) {
  (void)state;
  if (!emulate()) skip();
  check_pair(TB_LEVEL_O3, TB_PRECISION_FP16, false, tb_dtype_name(TB_DTYPE_F16));
}

static void bf16_through_cublaslt(void **state) {
  (void)state;
  if (!emulate()) skip();
  use_fake_cublaslt();
  check_pair(TB_LEVEL_O3, TB_PRECISION_AUTO, true, tb_dtype_name(TB_DTYPE_BF16));
  check_pair(TB_LEVEL_O2, TB_PRECISION_FP16, true, tb_dtype_name(TB_DTYPE_F16));
}

/* fp32 (O2): nothing converts, nothing fused; fp8 at sm_90 through cuBLASLt: the amax and scaled conversion stay,
 * and the sentence says why. */
static void fp32_and_fp8_keep_their_path(void **state) {
  (void)state;
  if (!emulate()) skip();
  tb_model *m = chain_model();
  fuse_run *r = malloc(sizeof *r);
  const int64_t dims[3] = {2, 5, 32};
  run_model(m, 3, dims, TB_LEVEL_O2, TB_PRECISION_AUTO, true, r);
  assert_int_equal(r->casts + r->out16 + r->epilogue_out16, 0);
  use_fake_cublaslt();
  setenv("FAKE_CUDA_CC", "9.0", 1);
  run_model(m, 3, dims, TB_LEVEL_O3, TB_PRECISION_FP8, true, r);
  assert_int_equal(r->amax, 2 * 2); /* two launches per activation, x and h: no producer computes the scale */
  assert_int_equal(r->out16 + r->epilogue_out16, 0);
  TB_ASSERT_CONTAINS(r->choices, "its activation's conversion stays its own launches (the per-tensor scale needs the whole "
                                 "tensor's maximum first");
  unsetenv("FAKE_CUDA_CC");
  free(r);
  tb_model_destroy(m);
}

/* x [1, 3, 8, 8] -> Conv W1 [8, 3, 3, 3] (pads 1) + B1 -> Relu = h (one FusedConv from O1) -> Conv W2 [4, 8, 3, 3]
 * (pads 1) = out; side = Sigmoid(h), h's fp32 consumer. */
static tb_model *conv_chain(void) {
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "convs");
  const int64_t x_dims[4] = {1, 3, 8, 8}, w1_dims[4] = {8, 3, 3, 3}, w2_dims[4] = {4, 8, 3, 3}, k1 = 8, pads[4] = {1, 1, 1, 1};
  float w1[8 * 27], w2[4 * 72], b1[8];
  fill_weight(w1, 27, 8, 11);
  fill_weight(w2, 72, 4, 12);
  fill_range(b1, 8, 13, -1.0f, 1.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 4, x_dims, NULL);
  tbt_const_f32(g, "W1", 4, w1_dims, w1);
  tbt_const_f32(g, "W2", 4, w2_dims, w2);
  tbt_const_f32(g, "B1", 1, &k1, b1);
  int c1 = tbt_node(g, "Conv", "c1", "x,W1,B1", "a");
  pt_attr_ints(g, c1, "pads", 4, pads);
  tbt_node(g, "Relu", "r1", "a", "h");
  int c2 = tbt_node(g, "Conv", "c2", "h,W2", "out");
  pt_attr_ints(g, c2, "pads", 4, pads);
  tbt_node(g, "Sigmoid", "side", "h", "side_out");
  tbt_output(g, "out");
  tbt_output(g, "side_out");
  return tbt_model_of(ir);
}

/* Conv -> Relu -> Conv at O3 (bf16) and fp16 on the own kernels, then through the computing fake cuDNN (its epilogue
 * writes the copy): X of c2 handed over, the same bits as unfused. */
static void conv_chain_fused(void **state) {
  (void)state;
  if (!emulate()) skip();
  tb_model *m = conv_chain();
  fuse_run *fused = malloc(sizeof *fused), *plain = malloc(sizeof *plain);
  const int64_t dims[4] = {1, 3, 8, 8};
  for (int pass = 0; pass < 3; pass++) {
    if (pass == 2) use_fake_cudnn();
    tb_precision precision = pass == 1 ? TB_PRECISION_FP16 : TB_PRECISION_AUTO;
    run_model(m, 4, dims, TB_LEVEL_O3, precision, true, fused);
    run_model(m, 4, dims, TB_LEVEL_O3, precision, false, plain);
    assert_int_equal(fused->reduced_nodes, 2);
    assert_int_equal(plain->casts, 2); /* x for c1, h for c2 (the weights at prepare) */
    assert_int_equal(fused->casts, 1);
    assert_memory_equal(fused->out, plain->out, fused->n_out * sizeof *fused->out);
    assert_memory_equal(fused->side, plain->side, fused->n_side * sizeof *fused->side);
    assert_memory_equal(fused->out2, plain->out2, fused->n_out * sizeof *fused->out2);
    assert_memory_equal(fused->side2, plain->side2, fused->n_side * sizeof *fused->side2);
    if (pass == 2) { /* cuDNN fused bias and ReLU: an epilogue launch writes the copy alone, where the cast was */
      assert_int_equal(fused->conv_out16, 1);
      assert_int_equal(plain->conv_out16, 0);
      assert_int_equal(cudnn()->executes > 0, 1);
    } else { /* the own 16-bit kernels (c1's implicit GEMM writes the copy), with no launch more */
      assert_int_equal(fused->conv_out16, 2);
      assert_int_equal(plain->conv_out16, 2);
    }
    char want[200];
    snprintf(want, sizeof want, "input 'h' arrives in %s from node 'c1' (FusedConv), which writes it in its own launch",
             tb_dtype_name(pass == 1 ? TB_DTYPE_F16 : TB_DTYPE_BF16));
    TB_ASSERT_CONTAINS(fused->choices, want);
  }
  free(fused);
  free(plain);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(bf16_at_o3_on_the_own_kernels, setup, teardown),
      cmocka_unit_test_setup_teardown(fp16_on_the_own_kernels, setup, teardown),
      cmocka_unit_test_setup_teardown(bf16_through_cublaslt, setup, teardown),
      cmocka_unit_test_setup_teardown(fp32_and_fp8_keep_their_path, setup, teardown),
      cmocka_unit_test_setup_teardown(conv_chain_fused, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
