/* The CUDA backend running model nodes, host side, on fakes (tests/fakes/fake_cuda.c, fake_nvrtc.c) and
 * the recorded 8x H100 node. The fake records each cuLaunchKernel (function, grid, block, argument bytes)
 * and checks every tensor argument against its live allocations, but computes nothing: these tests assert
 * which kernel each node launches, its grid, its scalars and broadcast strides, that each node reads the
 * buffer the one before it wrote, and the errors; never the values (they wait for a GPU:
 * scripts/gpu_check.sh). Also: the broadcast descriptor and the grid choice as plain functions, and
 * find_kernel's answers by op, dtype and attribute. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_broadcast.h"
#include "backend/cuda/kernels/cuda_launch.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_conv_precision.h"
#include "backend/cuda/cuda_module.h"
#include "backend/control/control_kernels.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_tables.h"
#include "core/error.h"
#include "../fakes/fake_cuda_launch.h"
#include "ops/elementwise/ew_params.h"
#include "ops/fused/fused_params.h"
#include "ops/nn/nn_params.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_util.h"
#include "test_util.h"

static char cache_dir[64];

static int64_t arg_i64(const fake_launch *l, int i) {
  int64_t v;
  assert_int_equal(l->arg_size[i], 8);
  memcpy(&v, l->args + l->arg_offset[i], sizeof v);
  return v;
}
static float arg_f32(const fake_launch *l, int i) {
  float v;
  assert_int_equal(l->arg_size[i], 4);
  memcpy(&v, l->args + l->arg_offset[i], sizeof v);
  return v;
}
static tb_cuda_broadcast arg_broadcast(const fake_launch *l, int i) {
  tb_cuda_broadcast b;
  assert_int_equal(l->arg_size[i], sizeof b);
  memcpy(&b, l->args + l->arg_offset[i], sizeof b);
  return b;
}

static void expect_launch(const fake_launch *l, const char *name, unsigned grid, unsigned block) {
  if (strcmp(l->name, name) != 0) fail_msg("launched %s, expected %s", l->name, name);
  if (l->grid[0] != grid || l->grid[1] != 1 || l->grid[2] != 1 || l->block[0] != block || l->block[1] != 1 || l->block[2] != 1)
    fail_msg("%s: grid %u x %u x %u, block %u x %u x %u; expected grid %u, block %u", name, l->grid[0], l->grid[1], l->grid[2],
             l->block[0], l->block[1], l->block[2], grid, block);
  assert_true(l->n_args > 0);
}

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  static const char *const vars[] = {"FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_CODE", "FAKE_CUDA_CC", "FAKE_CUDA_LAUNCH_FAIL_AT", "FAKE_CUDA_EMULATE",
                                     "FAKE_CUDA_MEM_CAPACITY", "FAKE_NVRTC_FAIL", "TB_NVRTC_LIB"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  tcu_cache_make(cache_dir, "tb_cuexec");
  tb_cuda_module_test_source(NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_cuda_module_test_source(NULL);
  tcu_cache_remove(cache_dir);
  return 0;
}

/* ---- The broadcast descriptor and the grids, as plain functions ----------------------------------- */

static tb_cuda_broadcast broadcast(size_t an, const int64_t *a, size_t bn, const int64_t *b, size_t want_ndim, bool want_same) {
  tb_cuda_broadcast bc;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 99;
  bool same = !want_same;
  TB_ASSERT_OK(tb_cuda_broadcast_make(an, a, bn, b, &bc, shape, &ndim, &same));
  assert_int_equal(ndim, want_ndim);
  assert_int_equal(same, want_same);
  return bc;
}

static void broadcast_descriptor(void **state) {
  (void)state;
  /* [2,3,4] + [4]: merged to [6, 4], the bias repeating along the rows */
  const int64_t x[3] = {2, 3, 4}, bias[1] = {4};
  tb_cuda_broadcast bc = broadcast(3, x, 1, bias, 3, false);
  assert_int_equal(bc.rank, 2);
  assert_int_equal(bc.dims[0], 6);
  assert_int_equal(bc.dims[1], 4);
  assert_int_equal(bc.a_strides[0], 4);
  assert_int_equal(bc.a_strides[1], 1);
  assert_int_equal(bc.b_strides[0], 0);
  assert_int_equal(bc.b_strides[1], 1);
  /* [2,1,4] + [3,1]: both broadcast, nothing merges */
  const int64_t p[3] = {2, 1, 4}, q[2] = {3, 1};
  bc = broadcast(3, p, 2, q, 3, false);
  assert_int_equal(bc.rank, 3);
  const int64_t dims[3] = {2, 3, 4}, sa[3] = {4, 0, 1}, sb[3] = {0, 1, 0};
  for (int d = 0; d < 3; d++) {
    assert_int_equal(bc.dims[d], dims[d]);
    assert_int_equal(bc.a_strides[d], sa[d]);
    assert_int_equal(bc.b_strides[d], sb[d]);
  }
  /* equal shapes: the flat kernels apply; the descriptor is one run */
  bc = broadcast(3, x, 3, x, 3, true);
  assert_int_equal(bc.rank, 1);
  assert_int_equal(bc.dims[0], 24);
  /* scalars */
  bc = broadcast(0, NULL, 0, NULL, 0, true);
  assert_int_equal(bc.rank, 1);
  assert_int_equal(bc.dims[0], 1);
  /* [N, C, H, W] * [C, 1, 1]: the per-channel scale */
  const int64_t img[4] = {2, 8, 5, 5}, scale[3] = {8, 1, 1};
  bc = broadcast(4, img, 3, scale, 4, false);
  assert_int_equal(bc.rank, 3);
  assert_int_equal(bc.dims[0], 2);
  assert_int_equal(bc.dims[1], 8);
  assert_int_equal(bc.dims[2], 25);
  assert_int_equal(bc.b_strides[0], 0);
  assert_int_equal(bc.b_strides[1], 1);
  assert_int_equal(bc.b_strides[2], 0);
  /* shapes that do not broadcast */
  const int64_t r[2] = {2, 3}, s[1] = {4};
  int64_t shape[TB_MAX_DIMS];
  size_t ndim;
  bool same;
  assert_int_equal(tb_cuda_broadcast_make(2, r, 1, s, &bc, shape, &ndim, &same), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "shapes [2,3] and [4] do not broadcast together");
}

static void grid_choice(void **state) {
  (void)state;
  tb_cuda_dims d = tb_cuda_grid_elements(1, 132);
  assert_int_equal(d.grid, 1);
  assert_int_equal(d.block, 256);
  d = tb_cuda_grid_elements(1000, 132);
  assert_int_equal(d.grid, 4);
  d = tb_cuda_grid_elements(1ll << 30, 132); /* capped: 8 blocks per multiprocessor, the threads stride */
  assert_int_equal(d.grid, 132 * 8);
  d = tb_cuda_grid_elements(1ll << 40, 0);
  assert_int_equal(d.grid, 8);
  d = tb_cuda_grid_rows(10, 5); /* a warp at least */
  assert_int_equal(d.grid, 10);
  assert_int_equal(d.block, 32);
  d = tb_cuda_grid_rows(3, 100);
  assert_int_equal(d.block, 128);
  d = tb_cuda_grid_rows(1000000, 5000);
  assert_int_equal(d.grid, 65535);
  assert_int_equal(d.block, 1024);
}

/* ---- find_kernel ---------------------------------------------------------------------------------- */

static const tb_kernel *find(const char *domain, const char *op, int opset, const void *params, size_t n_in, tb_dtype dtype,
                             tb_dtype dtype2, const char **why) {
  static tb_value_type types[3];
  const tb_value_type *in[3] = {NULL, NULL, NULL};
  const int64_t dims[2] = {2, 3};
  for (size_t i = 0; i < n_in; i++) {
    types[i] = toh_type(i == 0 ? dtype : dtype2, 2, dims);
    in[i] = &types[i];
  }
  tb_kernel_query q = {.domain = domain, .op_type = op, .opset = opset, .params = params, .n_inputs = n_in, .in = in,
                       .n_outputs = 1, .level = TB_KERNEL_REFERENCE, .name = "n"};
  *why = NULL;
  return tb_cuda_find(&q, why);
}

static void find_kernel_by_op_dtype_and_attribute(void **state) {
  (void)state;
  const char *why;
  const tb_act_params leaky = {0.1f, 0, 0};
  const tb_binary_params modern = {0}, legacy = {.legacy = true, .broadcast = true};
  const tb_softmax_params soft = {TB_SOFTMAX, -1, false}, hard = {TB_HARDMAX, -1, false};
  const tb_gelu_params erf_form = {false}, tanh_form = {true};
  const tb_reduce_params sum = {.op = TB_REDUCE_SUM, .keepdims = true, .axes_from_input = true};
  const tb_kernel *k = find("", "Relu", 14, NULL, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why);
  assert_non_null(k);
  assert_string_equal(k->name, "Relu");
  assert_int_equal(k->level, TB_KERNEL_REFERENCE);
  assert_non_null(find("", "LeakyRelu", 16, &leaky, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_non_null(find("", "Add", 14, &modern, 2, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_non_null(find("", "Softmax", 13, &soft, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_non_null(find("tb", "Gelu", 1, &erf_form, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_non_null(find("", "ReduceSum", 13, &sum, 2, TB_DTYPE_F32, TB_DTYPE_I64, &why));
  /* the float dtypes (float64, float16 and bfloat16 through 12_math.cu); others stay on the CPU */
  assert_non_null(find("", "Relu", 14, NULL, 1, TB_DTYPE_F16, TB_DTYPE_F16, &why));
  assert_non_null(find("", "Add", 14, &modern, 2, TB_DTYPE_BF16, TB_DTYPE_BF16, &why));
  assert_non_null(find("", "Add", 14, &modern, 2, TB_DTYPE_F64, TB_DTYPE_F64, &why));
  assert_null(find("", "Relu", 14, NULL, 1, TB_DTYPE_I32, TB_DTYPE_I32, &why));
  assert_string_equal(why, "the CUDA kernels for this op do not take these input types or attributes");
  assert_null(find("", "Add", 14, &modern, 2, TB_DTYPE_I64, TB_DTYPE_I64, &why));
  assert_null(find("", "Add", 14, &modern, 2, TB_DTYPE_F32, TB_DTYPE_F16, &why));
  /* attributes the kernels lack */
  assert_null(find("", "Add", 6, &legacy, 2, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_non_null(find("", "Hardmax", 13, &hard, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why)); /* cuda_ops_argtopk.c */
  /* the tanh form is not the elementwise family's erf kernel but cuda_ops_norm.c's tb_cu_dm_gelu_tanh_f32 */
  assert_true(find("tb", "Gelu", 1, &tanh_form, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why) != find("tb", "Gelu", 1, &erf_form, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_non_null(find("tb", "Gelu", 1, &tanh_form, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_non_null(find("", "Max", 13, NULL, 3, TB_DTYPE_F32, TB_DTYPE_F32, &why)); /* three inputs: cuda_ops_math.c's fold */
  /* ops without a kernel */
  assert_null(find("", "LpNormalization", 11, NULL, 1, TB_DTYPE_F32, TB_DTYPE_F32, &why));
  assert_string_equal(why, "no CUDA kernel for this op");
  /* every registered kernel is float32 at the reference level, with the shared prepare */
  assert_true(tb_cuda_kernel_count() >= 30);
  for (size_t i = 0; i < tb_cuda_kernel_count(); i++) {
    const tb_kernel *r = tb_cuda_kernel_at(i);
    assert_int_equal(r->level, TB_KERNEL_REFERENCE);
    bool product = r->prepare == tb_cuda_gemm_prepare || r->prepare == tb_cuda_gemm_prepare_tf32 || /* one per precision */
                   r->prepare == tb_cuda_gemm_prepare_bf16 || r->prepare == tb_cuda_gemm_prepare_fp16 ||
                   r->prepare == tb_cuda_gemm_prepare_fp8 || r->prepare == tb_cuda_gemm_prepare_fp8_as_bf16;
    bool conv = r->prepare == tb_cuda_conv_prepare_tf32 || r->prepare == tb_cuda_conv_prepare_bf16 || /* one per precision */
                r->prepare == tb_cuda_conv_prepare_fp16 || r->prepare == tb_cuda_conv_prepare_fp8;
    bool control = r >= tb_control_kernels && r < tb_control_kernels + TB_CONTROL_KERNEL_COUNT; /* If/Loop/Scan: nothing to load */
    assert_true(r->prepare == tb_cuda_prepare || product || conv ||
                r->prepare == tb_cuda_index_prepare || r->prepare == tb_cuda_rnn_prepare || r->prepare == tb_cuda_resize_prepare ||
                r->prepare == tb_cuda_range_prepare ||
                (control && !r->prepare)); /* the products keep cuBLASLt's handle; Resize its tables; Range its values; the index and recurrent kernels their flag */
  }
  assert_null(tb_cuda_kernel_at(tb_cuda_kernel_count()));
}

/* ---- A model on the fake cuda:0 ------------------------------------------------------------------- */

/* x [2,3,4] -> Relu -> LeakyRelu(0.2) -> Add(bias [4]) -> Softmax(axis -1) -> ReduceSum(axes [1], keepdims 0)
 * -> Mul(scale [2,1]) -> out [2,4]; and a Dropout with its mask output, which the CUDA kernel declines, on the CPU. */
static tb_model *chain_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "chain");
  const int64_t x_dims[3] = {2, 3, 4}, four = 4, one = 1, scale_dims[2] = {2, 1};
  const float bias[4] = {1, 2, 3, 4}, scale[2] = {0.5f, 2.0f};
  const int64_t axes[1] = {1};
  tbt_input(g, "x", TB_DTYPE_F32, 3, x_dims, NULL);
  tbt_const_f32(g, "bias", 1, &four, bias);
  tbt_const_f32(g, "scale", 2, scale_dims, scale);
  tbt_const_i64(g, "axes", 1, &one, axes);
  tbt_node(g, "Relu", "relu", "x", "r");
  int leaky = tbt_node(g, "LeakyRelu", "leaky", "r", "l");
  pt_attr_float(g, leaky, "alpha", 0.2f);
  tbt_node(g, "Add", "add", "l,bias", "a");
  tbt_node(g, "Softmax", "softmax", "a", "s");
  int reduce = tbt_node(g, "ReduceSum", "sum", "s,axes", "y");
  pt_attr_int(g, reduce, "keepdims", 0);
  tbt_node(g, "Mul", "mul", "y,scale", "out");
  tbt_node(g, "Dropout", "dropout", "out", "mm,mask");
  tbt_output(g, "mm");
  return tbt_model_of(m);
}

typedef struct chain {
  tb_backend *cuda, *cpu;
  tb_model *model;
  tb_prepared *prepared;
  const tb_prepare_result *result;
} chain;

static void chain_open(chain *c) {
  memset(c, 0, sizeof *c);
  c->cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &c->cpu));
  c->model = chain_model();
  /* node by node, every run (these tests count each run's launches): graph replay is test_cuda_graph's */
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .no_graph_capture = true};
  TB_ASSERT_OK(tb_model_prepare(c->model, c->cuda, &o, &c->prepared, &c->result));
}

static tb_status chain_run(chain *c, tb_tensor **out) {
  const int64_t x_dims[3] = {2, 3, 4};
  float x[24];
  for (int i = 0; i < 24; i++) x[i] = (float)(i - 12) * 0.25f;
  tb_tensor *in = tbt_f32(c->cpu, 3, x_dims, x);
  const char *names[1] = {"x"};
  *out = NULL;
  launch_reset();
  tb_status st = tb_prepared_run(c->prepared, 1, names, &in, 1, NULL, out);
  tb_tensor_destroy(in);
  return st;
}

/* Everything released: no device allocation, module, stream or context left. */
static void chain_close(chain *c) {
  tb_prepared_destroy(c->prepared);
  tb_model_destroy(c->model);
  tb_backend_destroy(c->cuda);
  tb_backend_destroy(c->cpu);
  assert_int_equal(live_allocations(), 0);
  assert_int_equal(fake_int("fake_cuda_live_modules"), 0);
  assert_int_equal(fake_int("fake_cuda_live_streams"), 0);
  assert_int_equal(fake_int("fake_cuda_live_contexts"), 0);
}

static void model_nodes_launch_their_kernels(void **state) {
  (void)state;
  chain c;
  chain_open(&c);
  assert_int_equal(c.result->device_nodes, 6);
  assert_int_equal(c.result->cpu_fallback_nodes, 1);
  TB_ASSERT_CONTAINS(c.result->fallback_ops[0], "Dropout (dropout): no cuda kernel for Dropout with inputs (f32)");
  tb_tensor *out = NULL;
  TB_ASSERT_OK(chain_run(&c, &out));
  assert_int_equal(fake_int("fake_cuda_launch_count"), 6);

  const fake_launch *relu = launch_at(0), *leaky = launch_at(1), *add = launch_at(2), *soft = launch_at(3), *sum = launch_at(4),
                    *mul = launch_at(5);
  expect_launch(relu, "tb_cu_relu_f32", 1, 256);
  assert_int_equal(arg_i64(relu, 2), 24);
  expect_launch(leaky, "tb_cu_leaky_relu_f32", 1, 256);
  assert_int_equal(arg_i64(leaky, 2), 24);
  assert_true(arg_f32(leaky, 3) == 0.2f);
  expect_launch(add, "tb_cu_add_f32_broadcast", 1, 256);
  assert_int_equal(arg_i64(add, 3), 24);
  tb_cuda_broadcast bc = arg_broadcast(add, 4);
  assert_int_equal(bc.rank, 2);
  assert_int_equal(bc.dims[0], 6);
  assert_int_equal(bc.dims[1], 4);
  assert_int_equal(bc.a_strides[0], 4);
  assert_int_equal(bc.b_strides[0], 0);
  assert_int_equal(bc.b_strides[1], 1);
  expect_launch(soft, "tb_cu_softmax_f32_rows", 6, 32); /* one block per row of 4 */
  assert_int_equal(arg_i64(soft, 2), 6);
  assert_int_equal(arg_i64(soft, 3), 4);
  expect_launch(sum, "tb_cu_reduce_sum_f32_cols", 1, 256); /* [2, 3, 4] over axis 1: outer 2, r 3, inner 4 */
  assert_int_equal(arg_i64(sum, 2), 2);
  assert_int_equal(arg_i64(sum, 3), 3);
  assert_int_equal(arg_i64(sum, 4), 4);
  expect_launch(mul, "tb_cu_mul_f32_broadcast", 1, 256); /* [2,4] * [2,1] */
  bc = arg_broadcast(mul, 4);
  assert_int_equal(bc.rank, 2);
  assert_int_equal(bc.b_strides[0], 1);
  assert_int_equal(bc.b_strides[1], 0);
  /* each node reads what the one before wrote: the output pointer is the next input */
  assert_int_equal(arg_i64(relu, 1), arg_i64(leaky, 0));
  assert_int_equal(arg_i64(leaky, 1), arg_i64(add, 0));
  assert_int_equal(arg_i64(add, 2), arg_i64(soft, 0));
  assert_int_equal(arg_i64(soft, 1), arg_i64(sum, 0));
  assert_int_equal(arg_i64(sum, 1), arg_i64(mul, 0));
  assert_true(arg_i64(add, 1) != arg_i64(add, 0)); /* the bias, uploaded once as a constant */
  /* the Dropout ran on the CPU: the output is there, [2, 4] (its values are the fake's, not computed) */
  assert_non_null(out);
  const int64_t mm_dims[2] = {2, 4};
  toh_assert_tensor(out, TB_DTYPE_F32, 2, mm_dims);
  tb_tensor_destroy(out);

  /* a second run launches the same kernels again, the constants not uploaded again */
  TB_ASSERT_OK(chain_run(&c, &out));
  assert_int_equal(fake_int("fake_cuda_launch_count"), 6);
  assert_int_equal(arg_i64(launch_at(2), 1), arg_i64(add, 1));
  tb_tensor_destroy(out);
  chain_close(&c);
}

static void launch_failing_mid_run_names_kernel_and_node(void **state) {
  (void)state;
  chain c;
  chain_open(&c);
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "3", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  tb_tensor *out = NULL;
  assert_int_equal(chain_run(&c, &out), TB_ERR_DRIVER);
  assert_null(out);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuLaunchKernel of tb_cu_add_f32_broadcast for node 'add' (Add) (grid 1 x 1 x 1 of "
                                      "256 threads) failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  TB_ASSERT_CONTAINS(tb_last_error(), "restart the process");
  assert_int_equal(fake_int("fake_cuda_launch_count"), 2); /* relu and leaky ran; nothing after the add */
  /* out of memory at launch is TB_ERR_OUT_OF_MEMORY */
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  assert_int_equal(chain_run(&c, &out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_cu_relu_f32 for node 'relu' (Relu)");
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY; free device memory");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  /* the prepared model still runs afterwards */
  TB_ASSERT_OK(chain_run(&c, &out));
  assert_int_equal(fake_int("fake_cuda_launch_count"), 6);
  tb_tensor_destroy(out);
  chain_close(&c);
}

static void missing_function_is_not_found(void **state) {
  (void)state;
  /* a module without the relu kernel: prepare loads it, the Relu node's run does not find its function */
  tb_cuda_module_test_source("extern \"C\" __global__ void tb_cu_add_f32_flat(const float *a) {}\n");
  chain c;
  chain_open(&c);
  tb_tensor *out = NULL;
  assert_int_equal(chain_run(&c, &out), TB_ERR_NOT_FOUND);
  assert_null(out);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'relu' (Relu): cuda:0: the CUDA kernels have no function 'tb_cu_relu_f32'");
  assert_int_equal(fake_int("fake_cuda_launch_count"), 0);
  chain_close(&c);
}

static void module_failure_fails_prepare_naming_the_node(void **state) {
  (void)state;
  setenv("FAKE_CUDA_FAIL", "module", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "999", 1);
  tb_backend *cuda = open_cuda0();
  tb_model *model = chain_model();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  assert_int_equal(tb_model_prepare(model, cuda, &o, &p, NULL), TB_ERR_DRIVER);
  assert_null(p);
  TB_ASSERT_CONTAINS(tb_last_error(), "relu");
  TB_ASSERT_CONTAINS(tb_last_error(), "cuModuleLoadData");
  /* with cpu_fallback the nodes run on the CPU instead, each with the reason */
  o.cpu_fallback = true;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->device_nodes, 0);
  assert_int_equal(r->cpu_fallback_nodes, 7);
  tb_prepared_destroy(p);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
  assert_int_equal(fake_int("fake_cuda_live_modules"), 0);
}

/* The weights go to the device at prepare: a device too small for them fails prepare, with the sizes. */
static void device_out_of_memory_is_a_status(void **state) {
  (void)state;
  setenv("FAKE_CUDA_MEM_CAPACITY", "1K", 1);
  tb_backend *cuda = open_cuda0();
  tb_model *model = chain_model();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  assert_int_equal(tb_model_prepare(model, cuda, &o, &p, NULL), TB_ERR_OUT_OF_MEMORY);
  assert_null(p);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: out of memory allocating");
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY (the driver reports 1024 bytes free of 1024)");
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
  assert_int_equal(fake_int("fake_cuda_live_contexts"), 0);
}

/* x [2,3,4] -> Clip(lo, hi inputs) -> PRelu(slope [3,1]) -> Softmax(axis 1) -> ReduceL2(axes [0, 2], keepdims)
 * -> out [1,3,1]: two broadcast launches for Clip, a column softmax, and the L2 of two axis runs as sum of
 * squares, sum, square root. */
static tb_model *passes_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "passes");
  const int64_t x_dims[3] = {2, 3, 4}, slope_dims[2] = {3, 1};
  const float lo = -1.0f, hi = 2.0f, slope[3] = {0.1f, 0.2f, 0.3f};
  tbt_input(g, "x", TB_DTYPE_F32, 3, x_dims, NULL);
  tbt_const_f32(g, "lo", 0, NULL, &lo);
  tbt_const_f32(g, "hi", 0, NULL, &hi);
  tbt_const_f32(g, "slope", 2, slope_dims, slope);
  tbt_node(g, "Clip", "clip", "x,lo,hi", "c");
  tbt_node(g, "PRelu", "prelu", "c,slope", "p");
  int soft = tbt_node(g, "Softmax", "softmax", "p", "s");
  pt_attr_int(g, soft, "axis", 1);
  int l2 = tbt_node(g, "ReduceL2", "l2", "s", "out");
  tb_attr *axes = pt_attr(g, l2, "axes", TB_ATTR_INTS);
  static const int64_t axes_v[2] = {0, 2};
  axes->ints = axes_v;
  axes->count = 2;
  tbt_output(g, "out");
  return tbt_model_of(m);
}

static void clip_softmax_columns_and_reduction_passes(void **state) {
  (void)state;
  tb_backend *cuda = open_cuda0(), *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_model *model = passes_model();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->device_nodes, 4);
  assert_int_equal(r->cpu_fallback_nodes, 0);
  const int64_t x_dims[3] = {2, 3, 4};
  float x[24] = {0};
  tb_tensor *in = tbt_f32(cpu, 3, x_dims, x), *out = NULL;
  const char *names[1] = {"x"};
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  assert_int_equal(fake_int("fake_cuda_launch_count"), 7);
  const fake_launch *lo = launch_at(0), *hi = launch_at(1), *prelu = launch_at(2), *soft = launch_at(3);
  expect_launch(lo, "tb_cu_max_f32_broadcast", 1, 256); /* y = max(x, lo) */
  tb_cuda_broadcast bc = arg_broadcast(lo, 4);
  assert_int_equal(bc.rank, 1);
  assert_int_equal(bc.dims[0], 24);
  assert_int_equal(bc.a_strides[0], 1);
  assert_int_equal(bc.b_strides[0], 0);
  expect_launch(hi, "tb_cu_min_f32_broadcast", 1, 256); /* y = min(y, hi), in place */
  assert_int_equal(arg_i64(hi, 0), arg_i64(lo, 2));
  assert_int_equal(arg_i64(hi, 2), arg_i64(lo, 2));
  expect_launch(prelu, "tb_cu_prelu_f32_broadcast", 1, 256);
  bc = arg_broadcast(prelu, 4); /* [2,3,4] with [3,1]: dims 2, 3, 4; the slope steps along the 3 */
  assert_int_equal(bc.rank, 3);
  assert_int_equal(bc.b_strides[0], 0);
  assert_int_equal(bc.b_strides[1], 1);
  assert_int_equal(bc.b_strides[2], 0);
  expect_launch(soft, "tb_cu_softmax_f32_cols", 1, 256); /* axis 1 of [2,3,4]: outer 2, len 3, inner 4 */
  assert_int_equal(arg_i64(soft, 2), 2);
  assert_int_equal(arg_i64(soft, 3), 3);
  assert_int_equal(arg_i64(soft, 4), 4);
  const fake_launch *sq = launch_at(4), *sum = launch_at(5), *root = launch_at(6);
  expect_launch(sq, "tb_cu_reduce_sum_square_f32_rows", 6, 32); /* axis 2 first: 6 rows of 4 */
  assert_int_equal(arg_i64(sq, 0), arg_i64(soft, 1));
  assert_int_equal(arg_i64(sq, 2), 6);
  assert_int_equal(arg_i64(sq, 3), 4);
  expect_launch(sum, "tb_cu_reduce_sum_f32_cols", 1, 256); /* then axis 0 of [2,3,1]: outer 1, r 2, inner 3 */
  assert_int_equal(arg_i64(sum, 0), arg_i64(sq, 1));
  assert_int_equal(arg_i64(sum, 2), 1);
  assert_int_equal(arg_i64(sum, 3), 2);
  assert_int_equal(arg_i64(sum, 4), 3);
  expect_launch(root, "tb_cu_sqrt_f32", 1, 256); /* and the square root into the output */
  assert_int_equal(arg_i64(root, 0), arg_i64(sum, 1));
  assert_int_equal(arg_i64(root, 2), 3);
  const int64_t out_dims[3] = {1, 3, 1};
  toh_assert_tensor(out, TB_DTYPE_F32, 3, out_dims);
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
}

/* ---- Values: the kernels' own source on the emulated grid (tests/cuda_emu) ------------------------- */

static void every_kernel_is_in_the_emulator(void **state) {
  (void)state;
  const char *path = tbt_fake("cuda_emu");
  if (access(path, R_OK) != 0) skip();
  void *h = dlopen(path, RTLD_NOW);
  if (!h) fail_msg("cannot load %s: %s", path, dlerror());
  int (*has)(const char *) = (int (*)(const char *))dlsym(h, "cuda_emu_has");
  assert_non_null(has);
  int n = 0;
  for (const char *const *name = tb_cuda_kernel_names; *name; name++, n++)
    if (!has(*name)) fail_msg("the emulator (tests/cuda_emu/cuda_emu.cpp) lacks %s; add it to its table", *name);
  assert_int_equal(n, 59 + 8 + 2 + 41 + 54 + 4 + 23 + 6 + 18 + 5 + 6 + 4 + 1 + 3 + 4); /* the first families' 59, the CNN kernels' 8 (test_cuda_conv),
                                                         the GEMM kernels' 2, the data kernels' 41 (test_cuda_data),
                                                         the math and index kernels' 54 (test_cuda_math), the
                                                         reduced-precision products' 4 (test_cuda_lowp), the layout,
                                                         window and Einsum kernels' 23 (test_cuda_layout), the
                                                         recurrent kernels' 2 and the quantized ops' 4
                                                         (test_cuda_rnn, test_cuda_quant), the math and index
                                                         kernels' float16 / bfloat16 18 (test_cuda_math), the
                                                         elementwise kernels' float64 / float16 / bfloat16 5
                                                         (test_cuda_ew_half), CumSum's block scans 6
                                                         (test_cuda_scan), the
                                                         reduced-precision convolutions' 4 (test_cuda_conv_lowp),
                                                         Resize's device tap tables 1 (test_cuda_resize),
                                                         ScatterND's row-parallel 3 (test_cuda_scatter_nd), the
                                                         products writing a 16-bit copy 4 (test_cuda_cast_fuse) */
  assert_false(has("tb_cu_no_such_kernel"));
}

/* Run `model` (one input x, n_out outputs) on the CPU at O0 and on the emulated cuda:0 at `level`; every
 * output element within 1e-6 + 1e-5 |cpu| (NaN where the CPU has NaN); returns the device nodes. */
static size_t compare_with_cpu(tb_model *model, size_t ndim, const int64_t *dims, const float *x, size_t n_out,
                               tb_opt_level level) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &pc, NULL));
  o.level = level;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &pg, &rg));
  size_t device_nodes = rg->device_nodes;
  tb_tensor *in = tbt_f32(cpu, ndim, dims, x), *want[16] = {NULL}, *got[16] = {NULL};
  const char *names[1] = {"x"};
  assert_true(n_out <= 16);
  TB_ASSERT_OK(tb_prepared_run(pc, 1, names, &in, n_out, NULL, want));
  TB_ASSERT_OK(tb_prepared_run(pg, 1, names, &in, n_out, NULL, got));
  for (size_t k = 0; k < n_out; k++) {
    size_t n = (size_t)tb_tensor_numel(want[k]);
    assert_int_equal(tb_tensor_numel(got[k]), n);
    float *a = malloc(n * sizeof *a + 1), *b = malloc(n * sizeof *b + 1);
    TB_ASSERT_OK(tb_tensor_copy_to_host(want[k], a, n * sizeof *a));
    TB_ASSERT_OK(tb_tensor_copy_to_host(got[k], b, n * sizeof *b));
    for (size_t i = 0; i < n; i++) {
      bool same = isnan(a[i]) ? isnan(b[i]) : a[i] == b[i] || fabsf(a[i] - b[i]) <= 1e-6f + 1e-5f * fabsf(a[i]);
      if (!same) fail_msg("output %zu element %zu: cuda:0 (emulated) %.9g, cpu %.9g", k, i, (double)b[i], (double)a[i]);
    }
    free(a);
    free(b);
    tb_tensor_destroy(want[k]);
    tb_tensor_destroy(got[k]);
  }
  tb_tensor_destroy(in);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  return device_nodes;
}

static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) & 0xffff) / 8192.0f - 4.0f; /* [-4, 4) */
  }
}

static void chain_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  const int64_t dims[3] = {2, 3, 4};
  float x[24];
  fill(x, 24, 1);
  tb_model *m = chain_model();
  assert_int_equal(compare_with_cpu(m, 3, dims, x, 1, TB_LEVEL_O0), 6);
  compare_with_cpu(m, 3, dims, x, 1, TB_LEVEL_O2);
  tb_model_destroy(m);
  m = passes_model();
  assert_int_equal(compare_with_cpu(m, 3, dims, x, 1, TB_LEVEL_O0), 4);
  tb_model_destroy(m);
}

/* Every unary op of the table on x [5, 70] (a 350-element input: two blocks of the elementwise grid). */
static void unary_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  static const char *const ops[] = {"Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Floor", "Ceil", "Neg", "Abs", "Softplus",
                                    "Elu",  "HardSigmoid", "Reciprocal", "Sqrt", "Log", "LeakyRelu"};
  const int64_t dims[2] = {5, 70};
  float x[350];
  fill(x, 350, 7);
  x[0] = 0.0f;
  x[1] = -0.0f;
  x[2] = 30.0f; /* Softplus's large branch, Exp near overflow */
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i += 8) {
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "unary");
    tbt_input(g, "x", TB_DTYPE_F32, 2, dims, NULL);
    size_t n = 0;
    for (size_t k = i; k < i + 8 && k < sizeof ops / sizeof ops[0]; k++, n++) {
      char out[16];
      snprintf(out, sizeof out, "y%zu", k);
      int node = tbt_node(g, ops[k], ops[k], "x", out);
      if (strcmp(ops[k], "HardSigmoid") == 0) pt_attr_float(g, node, "alpha", 0.3f);
      tbt_output(g, out);
    }
    tb_model *m = tbt_model_of(ir);
    assert_int_equal(compare_with_cpu(m, 2, dims, x, n, TB_LEVEL_O0), n);
    tb_model_destroy(m);
  }
}

/* The binary ops with equal shapes (_flat) and broadcast (_broadcast) on x [4, 6]: x op c, c [4, 6] in
 * [0.5, 2.5) (Pow as c ^ x, so no negative base), and x op r, r [6]. */
static void binary_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"};
  const int64_t dims[2] = {4, 6}, six = 6;
  float x[24], c[24], r[6];
  fill(x, 24, 11);
  fill(c, 24, 12);
  for (int i = 0; i < 24; i++) c[i] = c[i] / 4.0f + 1.5f;
  fill(r, 6, 13);
  x[3] = __builtin_nanf(""); /* NaN wins in Max and Min */
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "binary");
  tbt_input(g, "x", TB_DTYPE_F32, 2, dims, NULL);
  tbt_const_f32(g, "c", 2, dims, c);
  tbt_const_f32(g, "r", 1, &six, r);
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    char name[32], out[16], in[16];
    bool pow = strcmp(ops[k], "Pow") == 0;
    snprintf(name, sizeof name, "%s_flat", ops[k]);
    snprintf(out, sizeof out, "f%zu", k);
    tbt_node(g, ops[k], name, pow ? "c,x" : "x,c", out);
    tbt_output(g, out);
    snprintf(name, sizeof name, "%s_broadcast", ops[k]);
    snprintf(out, sizeof out, "b%zu", k);
    snprintf(in, sizeof in, "%s", pow ? "c,r" : "x,r");
    tbt_node(g, ops[k], name, in, out);
    tbt_output(g, out);
  }
  tb_model *m = tbt_model_of(ir);
  assert_int_equal(compare_with_cpu(m, 2, dims, x, 16, TB_LEVEL_O0), 16);
  tb_model_destroy(m);
}

/* Softmax / LogSoftmax along each axis and the reductions by rows, by columns and in passes, on x [3, 4, 50]. */
static void softmax_and_reduction_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  static const char *const reductions[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                           "ReduceL1",  "ReduceL2",   "ReduceSumSquare", "ReduceLogSumExp"};
  static const int64_t axes_sets[3][2] = {{2, -1}, {1, -1}, {0, 2}}; /* rows; columns; two passes */
  const int64_t dims[3] = {3, 4, 50};
  float x[600];
  fill(x, 600, 3);
  for (int axis = 0; axis < 3; axis++) {
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "softmax");
    tbt_input(g, "x", TB_DTYPE_F32, 3, dims, NULL);
    int a = tbt_node(g, "Softmax", "softmax", "x", "s");
    pt_attr_int(g, a, "axis", axis);
    int b = tbt_node(g, "LogSoftmax", "log_softmax", "x", "l");
    pt_attr_int(g, b, "axis", axis - 3);
    tbt_output(g, "s");
    tbt_output(g, "l");
    tb_model *m = tbt_model_of(ir);
    assert_int_equal(compare_with_cpu(m, 3, dims, x, 2, TB_LEVEL_O0), 2);
    tb_model_destroy(m);
  }
  for (float *v = x; v < x + 600; v++) *v *= 0.25f; /* keep ReduceProd of 50 values finite */
  for (int set = 0; set < 3; set++) {
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "reduce");
    tbt_input(g, "x", TB_DTYPE_F32, 3, dims, NULL);
    int64_t n_axes = axes_sets[set][1] == -1 ? 1 : 2;
    tbt_const_i64(g, "axes", 1, &n_axes, axes_sets[set]);
    for (size_t k = 0; k < sizeof reductions / sizeof reductions[0]; k++) {
      char out[16];
      snprintf(out, sizeof out, "r%zu", k);
      int node = tbt_node(g, reductions[k], reductions[k], strcmp(reductions[k], "ReduceSum") == 0 ? "x,axes" : "x", out);
      if (strcmp(reductions[k], "ReduceSum") != 0) {
        tb_attr *at = pt_attr(g, node, "axes", TB_ATTR_INTS);
        at->ints = axes_sets[set];
        at->count = (size_t)n_axes;
      }
      pt_attr_int(g, node, "keepdims", k % 2);
      tbt_output(g, out);
    }
    tb_model *m = tbt_model_of(ir);
    assert_int_equal(compare_with_cpu(m, 3, dims, x, 9, TB_LEVEL_O0), 9);
    tb_model_destroy(m);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(broadcast_descriptor),
      cmocka_unit_test(grid_choice),
      cmocka_unit_test(find_kernel_by_op_dtype_and_attribute),
      cmocka_unit_test_setup_teardown(model_nodes_launch_their_kernels, setup, teardown),
      cmocka_unit_test_setup_teardown(clip_softmax_columns_and_reduction_passes, setup, teardown),
      cmocka_unit_test_setup_teardown(launch_failing_mid_run_names_kernel_and_node, setup, teardown),
      cmocka_unit_test_setup_teardown(missing_function_is_not_found, setup, teardown),
      cmocka_unit_test_setup_teardown(module_failure_fails_prepare_naming_the_node, setup, teardown),
      cmocka_unit_test_setup_teardown(device_out_of_memory_is_a_status, setup, teardown),
      cmocka_unit_test(every_kernel_is_in_the_emulator),
      cmocka_unit_test_setup_teardown(chain_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(unary_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(binary_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(softmax_and_reduction_values_match_the_cpu, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
