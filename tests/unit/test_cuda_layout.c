/* The CUDA layout, index, window and Einsum kernels (kernels/62_lp_lrn.cu, 71_index_more.cu, 72_einsum.cu;
 * cuda_ops_layout.c, cuda_ops_window.c, cuda_ops_einsum.c, LpPool in cuda_ops_pool.c) on the fake cuda:0 of the
 * recorded 8x H100 node, their values computed by the kernels' own source on the emulated grid (tests/cuda_emu)
 * and compared with the CPU backend at O0: DepthToSpace (DCR, CRD), SpaceToDepth, Trilu, ReverseSequence, OneHot,
 * GatherND, Scatter, the scatters' reductions (bit for bit: the CPU's order), NonZero, LRN, LpPool, GlobalLpPool
 * and Einsum on odd shapes, negative indices and axes, empty tensors and every data size (bool, float16, float32,
 * int64). Each model checks that all its nodes ran on the device. Also: find_kernel's answers, an index out of
 * range and a bad sequence length refused with the CPU's sentences before any launch, a failing launch and device
 * memory running out mid-NonZero as statuses with nothing leaked; NonZero's one 8-byte read per run (the fake's
 * copy records). Without the emulator the value tests print why
 * and check nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/error.h"
#include "ops/nn/nn_params.h"
#include "ops/tensor/tensor_params.h"
#include "pass_test.h"
#include "test_cuda_util.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_culayout"); }
static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* compare_runs at O0 within atol + rtol |cpu| (0, 0: byte for byte), every node on the device. */
static void all_on_device(tb_model *model, size_t n_in, const feed *in, size_t n_out, size_t nodes, double atol, double rtol) {
  size_t device = 0, fallbacks = 0;
  compare_runs(model, n_in, in, n_out, TB_LEVEL_O0, atol, rtol, &device, &fallbacks);
  assert_int_equal(fallbacks, 0);
  assert_int_equal(device, nodes);
}

static int cast(tb_graph *g, const char *name, const char *in, int64_t to) {
  int n = tbt_node(g, "Cast", name, in, name);
  pt_attr_int(g, n, "to", to);
  return n;
}

/* ---- find_kernel ------------------------------------------------------------------------------------ */

static const tb_kernel *find(const char *op, int opset, const void *params, size_t n_in, const tb_dtype *dts, const size_t *ranks) {
  tb_value_type types[4];
  const tb_value_type *in[4] = {NULL};
  for (size_t i = 0; i < n_in; i++) {
    types[i] = (tb_value_type){.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = dts[i]};
    if (ranks) {
      types[i].has_shape = true;
      types[i].ndim = ranks[i];
      for (size_t d = 0; d < ranks[i]; d++) types[i].dims[d].value = 3;
    }
    in[i] = &types[i];
  }
  tb_kernel_query q = {.domain = "", .op_type = op, .opset = opset, .params = params, .n_inputs = n_in, .in = in, .n_outputs = 1,
                       .level = TB_KERNEL_REFERENCE, .name = "n"};
  const char *why = NULL;
  return tb_cuda_find(&q, &why);
}

static void find_kernel_by_dtype_and_attribute(void **state) {
  (void)state;
  const tb_dtype f32_i64_f32[3] = {TB_DTYPE_F32, TB_DTYPE_I64, TB_DTYPE_F32}, i64_i64_i64[3] = {TB_DTYPE_I64, TB_DTYPE_I64, TB_DTYPE_I64};
  tb_scatter_params none = {0}, add = {.reduction = TB_SCATTER_ADD}, max = {.reduction = TB_SCATTER_MAX};
  /* the reductions here, the plain scatters in cuda_ops_index.c: both found */
  assert_non_null(find("ScatterElements", 18, &add, 3, f32_i64_f32, NULL));
  assert_non_null(find("ScatterElements", 18, &none, 3, f32_i64_f32, NULL));
  assert_non_null(find("ScatterND", 18, &max, 3, i64_i64_i64, NULL));
  assert_non_null(find("Scatter", 10, &none, 3, f32_i64_f32, NULL));
  /* fp8 data is moved but not computed on */
  const tb_dtype fp8[3] = {TB_DTYPE_FP8_E4M3FN, TB_DTYPE_I64, TB_DTYPE_FP8_E4M3FN};
  assert_null(find("ScatterElements", 18, &add, 3, fp8, NULL));
  assert_null(find("NonZero", 13, NULL, 1, fp8, NULL));
  assert_non_null(find("NonZero", 13, NULL, 1, (const tb_dtype[]){TB_DTYPE_BOOL}, NULL));
  tb_gather_nd_params gnd = {.batch_dims = 1};
  assert_non_null(find("GatherND", 13, &gnd, 2, (const tb_dtype[]){TB_DTYPE_F16, TB_DTYPE_I64}, NULL));
  assert_null(find("GatherND", 13, &gnd, 2, (const tb_dtype[]){TB_DTYPE_F16, TB_DTYPE_F32}, NULL)); /* float indices */
  tb_depth_space_params ds = {.to_space = true, .blocksize = 2};
  assert_non_null(find("DepthToSpace", 13, &ds, 1, (const tb_dtype[]){TB_DTYPE_BF16}, NULL));
  /* the windows: float32 only */
  tb_lrn_params lrn = {.alpha = 1e-4f, .beta = 0.75f, .bias = 1, .size = 3};
  assert_non_null(find("LRN", 13, &lrn, 1, (const tb_dtype[]){TB_DTYPE_F32}, NULL));
  assert_null(find("LRN", 13, &lrn, 1, (const tb_dtype[]){TB_DTYPE_F16}, NULL));
  tb_pool_params lp = {.kind = TB_POOL_LP, .p = 2, .global = true};
  assert_non_null(find("GlobalLpPool", 2, &lp, 1, (const tb_dtype[]){TB_DTYPE_F32}, (const size_t[]){4}));
  assert_null(find("GlobalLpPool", 2, &lp, 1, (const tb_dtype[]){TB_DTYPE_F32}, (const size_t[]){6})); /* 4 spatial axes */
  /* Einsum: 1 or 2 inputs of one number dtype of known rank, at most 4 summed labels */
  tb_einsum_params mm = {.equation = "ij,jk->ik"}, five = {.equation = "abcdef->f"}, three = {.equation = "i,i,i->"};
  const size_t r2[2] = {2, 2}, r6[1] = {6}, r1[3] = {1, 1, 1};
  const tb_dtype f2[3] = {TB_DTYPE_F32, TB_DTYPE_F32, TB_DTYPE_F32};
  assert_non_null(find("Einsum", 12, &mm, 2, f2, r2));
  assert_null(find("Einsum", 12, &mm, 2, f2, NULL)); /* ranks unknown */
  assert_non_null(find("Einsum", 12, &mm, 2, (const tb_dtype[]){TB_DTYPE_F64, TB_DTYPE_F64}, r2));
  assert_null(find("Einsum", 12, &mm, 2, (const tb_dtype[]){TB_DTYPE_F32, TB_DTYPE_F64}, r2)); /* mixed */
  assert_non_null(find("Einsum", 12, &mm, 2, (const tb_dtype[]){TB_DTYPE_F16, TB_DTYPE_F16}, r2));
  assert_non_null(find("Einsum", 12, &mm, 2, (const tb_dtype[]){TB_DTYPE_U8, TB_DTYPE_U8}, r2));
  assert_null(find("Einsum", 12, &mm, 2, (const tb_dtype[]){TB_DTYPE_BOOL, TB_DTYPE_BOOL}, r2)); /* the CPU takes numbers */
  assert_null(find("Einsum", 12, &five, 1, f2, r6));
  assert_null(find("Einsum", 12, &three, 3, f2, r1));
}

/* ---- Values ------------------------------------------------------------------------------------------ */

/* DepthToSpace (DCR on float32, CRD on float16), SpaceToDepth (bool), Trilu (upper, lower with k -1 on int64,
 * k 2 on float16, a wide k), ReverseSequence with either batch axis, GatherND (batch_dims 0 and 1, negative
 * indices, float16 slices) and OneHot (int64 and float indices, negative ones and ones out of range, axes -1
 * and 0). */
static void layout_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[2 * 8 * 3 * 5], s[2 * 3 * 4 * 6], r[5 * 3 * 2];
  fill(x, 240, 1);
  fill(s, 144, 2);
  fill(r, 30, 3);
  int64_t k64[3 * 5 * 7];
  for (int i = 0; i < 105; i++) k64[i] = (i * 7919) % 23 - 11;
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "layout");
  tbt_input(g, "x", TB_DTYPE_F32, 4, (const int64_t[]){2, 8, 3, 5}, NULL);
  tbt_input(g, "s", TB_DTYPE_F32, 4, (const int64_t[]){2, 3, 4, 6}, NULL);
  tbt_input(g, "r", TB_DTYPE_F32, 3, (const int64_t[]){5, 3, 2}, NULL);
  tbt_input(g, "k", TB_DTYPE_I64, 3, (const int64_t[]){3, 5, 7}, NULL);
  size_t outs = 0, nodes = 0;
#define OUT(op, name, in, out) (output(g, op, name, in, out), outs++, nodes++)
  int n = tbt_node(g, "DepthToSpace", "d2s_dcr", "x", "d2s_dcr");
  pt_attr_int(g, n, "blocksize", 2);
  tbt_output(g, "d2s_dcr"), outs++, nodes++;
  cast(g, "xh", "x", 10), nodes++; /* float16 */
  n = tbt_node(g, "DepthToSpace", "d2s_crd", "xh", "d2s_crd");
  pt_attr_int(g, n, "blocksize", 2);
  pt_attr_string(g, n, "mode", "CRD");
  tbt_output(g, "d2s_crd"), outs++, nodes++;
  cast(g, "sb", "s", 9), nodes++; /* bool */
  n = tbt_node(g, "SpaceToDepth", "s2d", "sb", "s2d");
  pt_attr_int(g, n, "blocksize", 2);
  tbt_output(g, "s2d"), outs++, nodes++;
  OUT("Trilu", "triu", "x", "triu");
  tbt_const_i64(g, "km1", 0, NULL, (const int64_t[]){-1});
  tbt_const_i64(g, "k2", 0, NULL, (const int64_t[]){2});
  tbt_const_i64(g, "k9", 0, NULL, (const int64_t[]){-9});
  n = tbt_node(g, "Trilu", "tril", "k,km1", "tril");
  pt_attr_int(g, n, "upper", 0);
  tbt_output(g, "tril"), outs++, nodes++;
  OUT("Trilu", "triu_h", "xh,k2", "triu_h");
  OUT("Trilu", "triu_wide", "s,k9", "triu_wide");
  /* ReverseSequence: time 0, batch 1 (the defaults) on [5, 3, 2]; batch 0, time 1 on k [3, 5, 7] */
  tbt_const_i64(g, "lens3", 1, (const int64_t[]){3}, (const int64_t[]){5, 0, 2});
  OUT("ReverseSequence", "rev_tb", "r,lens3", "rev_tb");
  n = tbt_node(g, "ReverseSequence", "rev_bt", "k,lens3", "rev_bt");
  pt_attr_int(g, n, "batch_axis", 0);
  pt_attr_int(g, n, "time_axis", 1);
  tbt_output(g, "rev_bt"), outs++, nodes++;
  /* GatherND: [2, 8, 3, 5] with [4, 2] indices (slices of 15), batch_dims 1 with [2, 3, 3] (single elements) */
  tbt_const_i64(g, "nd0", 2, (const int64_t[]){4, 2}, (const int64_t[]){0, 7, -1, -8, 1, 3, 0, 0});
  OUT("GatherND", "gnd0", "x,nd0", "gnd0");
  OUT("GatherND", "gnd0_h", "xh,nd0", "gnd0_h");
  tbt_const_i64(g, "nd1", 3, (const int64_t[]){2, 3, 3}, (const int64_t[]){7, 2, 4, -1, 0, 0, 3, -3, -5, 0, 1, 2, 5, 2, 1, -8, -1, -1});
  n = tbt_node(g, "GatherND", "gnd1", "x,nd1", "gnd1");
  pt_attr_int(g, n, "batch_dims", 1);
  tbt_output(g, "gnd1"), outs++, nodes++;
  /* OneHot: depth 5, int64 indices of k's first row (values -11..11: negatives wrap, the rest are off rows) */
  tbt_const_i64(g, "depth", 0, NULL, (const int64_t[]){5});
  tbt_const_f32(g, "vals", 1, (const int64_t[]){2}, (const float[]){-0.5f, 3.0f});
  tbt_const_i64(g, "ivals", 1, (const int64_t[]){2}, (const int64_t[]){7, -1});
  OUT("OneHot", "onehot", "k,depth,vals", "onehot");
  n = tbt_node(g, "OneHot", "onehot_ax0", "k,depth,ivals", "onehot_ax0");
  pt_attr_int(g, n, "axis", 0);
  tbt_output(g, "onehot_ax0"), outs++, nodes++;
  OUT("OneHot", "onehot_f", "r,depth,vals", "onehot_f"); /* float indices, truncated */
  tb_model *model = tbt_model_of(ir);
  const feed in[4] = {{"x", TB_DTYPE_F32, 4, {2, 8, 3, 5}, x},
                      {"s", TB_DTYPE_F32, 4, {2, 3, 4, 6}, s},
                      {"r", TB_DTYPE_F32, 3, {5, 3, 2}, r},
                      {"k", TB_DTYPE_I64, 3, {3, 5, 7}, k64}};
  all_on_device(model, 4, in, outs, nodes, 0, 0);
  tb_model_destroy(model);
#undef OUT
}

/* ScatterElements with add, mul, min, max on float32 (duplicates along the axis, negative indices, a NaN update),
 * int64 and float16 (axis 0), ScatterND with add and mul (duplicate rows) and min on int64, and the deprecated
 * Scatter (duplicates: the last one wins, as on the CPU): bit for bit. */
static void scatter_reductions_match_the_cpu_bit_for_bit(void **state) {
  (void)state;
  if (!emulator_here()) return;
  float x[4 * 5], u[4 * 3];
  fill(x, 20, 4);
  fill(u, 12, 5);
  u[4] = NAN;
  int64_t k[4 * 5];
  for (int i = 0; i < 20; i++) k[i] = i * 37 % 11 - 5;
  tb_ir_model *ir = tbt_ir_model(18);
  tb_graph *g = tb_graph_new(ir, NULL, "scatter");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){4, 5}, NULL);
  tbt_input(g, "u", TB_DTYPE_F32, 2, (const int64_t[]){4, 3}, NULL);
  tbt_input(g, "k", TB_DTYPE_I64, 2, (const int64_t[]){4, 5}, NULL);
  /* along axis 1: row r's three updates hit columns idx[r] (duplicates in rows 0 and 2) */
  tbt_const_i64(g, "idx", 2, (const int64_t[]){4, 3}, (const int64_t[]){1, -4, 1, 0, 4, 2, 3, 3, -2, 4, 0, -5});
  static const char *const reds[4] = {"add", "mul", "min", "max"};
  size_t outs = 0, nodes = 0;
  for (int i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "se_%s", reds[i]);
    int n = tbt_node(g, "ScatterElements", name, "x,idx,u", name);
    pt_attr_int(g, n, "axis", -1);
    pt_attr_string(g, n, "reduction", reds[i]);
    tbt_output(g, name), outs++, nodes++;
  }
  cast(g, "uk", "u", 7), nodes++; /* int64 updates (the NaN becomes 0) */
  int n = tbt_node(g, "ScatterElements", "se_k", "k,idx,uk", "se_k");
  pt_attr_int(g, n, "axis", 1);
  pt_attr_string(g, n, "reduction", "mul");
  tbt_output(g, "se_k"), outs++, nodes++;
  cast(g, "xh", "x", 10), nodes++;
  cast(g, "uh", "u", 10), nodes++;
  tbt_const_i64(g, "idx0", 2, (const int64_t[]){2, 3}, (const int64_t[]){3, 0, 3, 3, -4, 1});
  tbt_const_i64(g, "u0shape", 1, (const int64_t[]){2}, (const int64_t[]){2, 3});
  tbt_const_i64(g, "zero2", 1, (const int64_t[]){2}, (const int64_t[]){0, 0});
  tbt_node(g, "Slice", "uh0", "uh,zero2,u0shape", "uh0"), nodes++;
  n = tbt_node(g, "ScatterElements", "se_h", "xh,idx0,uh0", "se_h");
  pt_attr_int(g, n, "axis", 0);
  pt_attr_string(g, n, "reduction", "add");
  tbt_output(g, "se_h"), outs++, nodes++;
  /* ScatterND: rows 1, 3, 1 of x get u's first three columns... of width 5: updates [3, 5] from k */
  tbt_const_i64(g, "ndi", 2, (const int64_t[]){3, 1}, (const int64_t[]){1, -1, 1});
  float nd_u[15];
  fill(nd_u, 15, 6);
  tbt_const_f32(g, "ndu", 2, (const int64_t[]){3, 5}, nd_u);
  static const char *const nd_reds[2] = {"add", "mul"};
  for (int i = 0; i < 2; i++) {
    char name[16];
    snprintf(name, sizeof name, "snd_%s", nd_reds[i]);
    n = tbt_node(g, "ScatterND", name, "x,ndi,ndu", name);
    pt_attr_string(g, n, "reduction", nd_reds[i]);
    tbt_output(g, name), outs++, nodes++;
  }
  /* element-wise ScatterND on int64 (k = rank: one thread for the slice of 1) */
  tbt_const_i64(g, "ndk", 2, (const int64_t[]){4, 2}, (const int64_t[]){0, 1, 3, -1, 0, 1, -4, -4});
  tbt_const_i64(g, "ndku", 1, (const int64_t[]){4}, (const int64_t[]){-100, 6, -7, 100});
  n = tbt_node(g, "ScatterND", "snd_min", "k,ndk,ndku", "snd_min");
  pt_attr_string(g, n, "reduction", "min");
  tbt_output(g, "snd_min"), outs++, nodes++;
  tb_model *model = tbt_model_of(ir);
  const feed in[3] = {{"x", TB_DTYPE_F32, 2, {4, 5}, x}, {"u", TB_DTYPE_F32, 2, {4, 3}, u}, {"k", TB_DTYPE_I64, 2, {4, 5}, k}};
  all_on_device(model, 3, in, outs, nodes, 0, 0);
  tb_model_destroy(model);

  /* the deprecated Scatter (opset 10) */
  ir = tbt_ir_model(10);
  g = tb_graph_new(ir, NULL, "scatter10");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){4, 5}, NULL);
  tbt_input(g, "u", TB_DTYPE_F32, 2, (const int64_t[]){4, 3}, NULL);
  tbt_const_i64(g, "idx", 2, (const int64_t[]){4, 3}, (const int64_t[]){1, -4, 1, 0, 4, 2, 3, 3, -2, 4, 0, -5});
  n = tbt_node(g, "Scatter", "scatter", "x,idx,u", "y");
  pt_attr_int(g, n, "axis", 1);
  tbt_output(g, "y");
  model = tbt_model_of(ir);
  all_on_device(model, 2, in, 1, 1, 0, 0);
  tb_model_destroy(model);
}

/* NonZero over float32 (zeros, -0, a NaN), int64, bool (through a comparison), a scalar, an all-zero and an
 * empty input; 700 elements: three chunks of 256 with their offsets. */
static void nonzero_matches_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[7 * 100];
  fill(x, 700, 7);
  for (int i = 0; i < 700; i += 3) x[i] = 0.0f;
  x[1] = -0.0f, x[2] = NAN;
  int64_t k[2 * 3 * 4] = {0, 5, 0, 0, -1, 0, 0, 0, 0, 0, 0, 7, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  float z[6] = {0}, one = 2.5f;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "nonzero");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){7, 100}, NULL);
  tbt_input(g, "k", TB_DTYPE_I64, 3, (const int64_t[]){2, 3, 4}, NULL);
  tbt_input(g, "z", TB_DTYPE_F32, 2, (const int64_t[]){2, 3}, NULL);
  tbt_input(g, "e", TB_DTYPE_F32, 2, (const int64_t[]){3, 0}, NULL);
  tbt_input(g, "one", TB_DTYPE_F32, 0, NULL, NULL);
  output(g, "NonZero", "nz_x", "x", "nz_x");
  output(g, "NonZero", "nz_k", "k", "nz_k");
  tbt_const_f32(g, "half", 0, NULL, (const float[]){0.5f});
  tbt_node(g, "Less", "less", "x,half", "mask");
  output(g, "NonZero", "nz_mask", "mask", "nz_mask");
  output(g, "NonZero", "nz_z", "z", "nz_z");
  output(g, "NonZero", "nz_e", "e", "nz_e");
  output(g, "NonZero", "nz_one", "one", "nz_one");
  tb_model *model = tbt_model_of(ir);
  const feed in[5] = {{"x", TB_DTYPE_F32, 2, {7, 100}, x},
                      {"k", TB_DTYPE_I64, 3, {2, 3, 4}, k},
                      {"z", TB_DTYPE_F32, 2, {2, 3}, z},
                      {"e", TB_DTYPE_F32, 2, {3, 0}, z},
                      {"one", TB_DTYPE_F32, 0, {0}, &one}};
  all_on_device(model, 5, in, 6, 7, 0, 0);
  tb_model_destroy(model);
}

/* NonZero's one read per run: inputs of 700, 300000 and 3000000 float32 values (1, 5 and 32 blocks of the count
 * kernel, whose last block scans the chunks' counts), mostly zeros with whole chunks of them, and an all-zero one:
 * each run copies exactly one 8-byte word to the host (the total), uploads only its input, launches the count and the
 * fill (the count alone when nothing is found), and gives the CPU's coordinates byte for byte. */
static void nonzero_reads_one_word_per_run(void **state) {
  (void)state;
  if (!emulator_here()) return;
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* the calls counted are one run's: no capture attempt (NonZero's read ends it) */
  unsigned long long (*dtoh_bytes)(void) = (unsigned long long (*)(void))fake_symbol("fake_cuda_dtoh_bytes");
  const int64_t sizes[4][2] = {{7, 100}, {600, 500}, {3000, 1000}, {40, 50}};
  for (int k = 0; k < 4; k++) {
    size_t n = (size_t)(sizes[k][0] * sizes[k][1]);
    float *x = calloc(n, sizeof *x);
    for (size_t i = 0; k < 3 && i < n; i++) {
      unsigned h = (unsigned)i * 2654435761u;
      if (h % 97 < 3 && (i / 20000) % 3 != 1) x[i] = (float)(h % 7) - 3.0f; /* sparse, every third run of 20000 empty */
    }
    if (k < 3) x[n - 1] = NAN, x[0] = -0.0f;
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "nz");
    tbt_input(g, "x", TB_DTYPE_F32, 2, sizes[k], NULL);
    output(g, "NonZero", "nz", "x", "y");
    tb_model *m = tbt_model_of(ir);
    tb_backend *cpu = NULL, *cuda = open_cuda0();
    TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
    tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
    tb_prepared *pc = NULL, *pg = NULL;
    TB_ASSERT_OK(tb_model_prepare(m, cpu, &o, &pc, NULL));
    TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, NULL));
    const feed in = {"x", TB_DTYPE_F32, 2, {sizes[k][0], sizes[k][1]}, x};
    tb_tensor *t = make_input(cpu, &in), *want = NULL, *got = NULL;
    const char *names[1] = {"x"};
    TB_ASSERT_OK(tb_prepared_run(pc, 1, names, &t, 1, NULL, &want));
    for (int run = 0; run < 2; run++) {
      tcu_call_log_reset();
      launch_reset();
      unsigned long long before = dtoh_bytes();
      TB_ASSERT_OK(tb_prepared_run(pg, 1, names, &t, 1, NULL, &got));
      assert_int_equal(tcu_calls("cuMemcpyDtoHAsync_v2") + tcu_calls("cuMemcpyDtoH_v2"), 1);
      assert_int_equal(dtoh_bytes() - before, 8);
      assert_int_equal(tcu_uploads(), (n * 4 + (8 << 20) - 1) >> 23); /* x, in 8 MiB staged pieces: the chunks' starts stay on the device */
      assert_int_equal(launches_of("tb_cu_dm_nonzero_count"), 1);
      assert_int_equal(launches_of("tb_cu_dm_nonzero_fill"), k < 3 ? 1 : 0);
      assert_int_equal(fake_int("fake_cuda_launch_count"), k < 3 ? 2 : 1);
      expect_same(want, got, 0, 0, 0);
      tb_tensor_destroy(got);
    }
    if (k == 2) assert_int_equal(launch_at(0)->grid[0], 32); /* 8175 chunks of 367 in 256-thread blocks */
    tb_tensor_destroy(want);
    tb_tensor_destroy(t);
    tb_prepared_destroy(pc);
    tb_prepared_destroy(pg);
    tb_model_destroy(m);
    tb_backend_destroy(cuda);
    tb_backend_destroy(cpu);
    free(x);
  }
  unsetenv("TB_GRAPH_CAPTURE");
}

/* LRN (odd and even sizes, rank 4 and 3), LpPool (p 2 with pads and strides, p 3 with dilations and ceil_mode,
 * p 1 SAME_UPPER, 1-D and 3-D), GlobalLpPool (p 1, 2, 3). */
static void windows_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[2 * 5 * 6 * 7], v[2 * 3 * 3 * 4 * 5], w[3 * 4 * 11];
  fill(x, 420, 8);
  fill(v, 360, 9);
  fill(w, 132, 10);
  tb_ir_model *ir = tbt_ir_model(18);
  tb_graph *g = tb_graph_new(ir, NULL, "windows");
  tbt_input(g, "x", TB_DTYPE_F32, 4, (const int64_t[]){2, 5, 6, 7}, NULL);
  tbt_input(g, "v", TB_DTYPE_F32, 5, (const int64_t[]){2, 3, 3, 4, 5}, NULL);
  tbt_input(g, "w", TB_DTYPE_F32, 3, (const int64_t[]){3, 4, 11}, NULL);
  int n = tbt_node(g, "LRN", "lrn3", "x", "lrn3");
  pt_attr_int(g, n, "size", 3);
  tbt_output(g, "lrn3");
  n = tbt_node(g, "LRN", "lrn4", "w", "lrn4");
  pt_attr_int(g, n, "size", 4);
  pt_attr_float(g, n, "alpha", 0.02f);
  pt_attr_float(g, n, "beta", 0.5f);
  pt_attr_float(g, n, "bias", 2.0f);
  tbt_output(g, "lrn4");
  n = tbt_node(g, "LpPool", "lp2", "x", "lp2");
  pt_attr_ints(g, n, "kernel_shape", 2, (const int64_t[]){3, 2});
  pt_attr_ints(g, n, "pads", 4, (const int64_t[]){1, 0, 1, 1});
  pt_attr_ints(g, n, "strides", 2, (const int64_t[]){2, 1});
  tbt_output(g, "lp2");
  n = tbt_node(g, "LpPool", "lp3", "x", "lp3");
  pt_attr_int(g, n, "p", 3);
  pt_attr_ints(g, n, "kernel_shape", 2, (const int64_t[]){2, 2});
  pt_attr_ints(g, n, "dilations", 2, (const int64_t[]){2, 1});
  pt_attr_ints(g, n, "strides", 2, (const int64_t[]){2, 2});
  pt_attr_int(g, n, "ceil_mode", 1);
  tbt_output(g, "lp3");
  n = tbt_node(g, "LpPool", "lp1", "w", "lp1");
  pt_attr_int(g, n, "p", 1);
  pt_attr_ints(g, n, "kernel_shape", 1, (const int64_t[]){4});
  pt_attr_string(g, n, "auto_pad", "SAME_UPPER");
  tbt_output(g, "lp1");
  n = tbt_node(g, "LpPool", "lp3d", "v", "lp3d");
  pt_attr_ints(g, n, "kernel_shape", 3, (const int64_t[]){2, 2, 3});
  tbt_output(g, "lp3d");
  for (int p = 1; p <= 3; p++) {
    char name[16];
    snprintf(name, sizeof name, "glp%d", p);
    n = tbt_node(g, "GlobalLpPool", name, p == 3 ? "v" : "x", name);
    pt_attr_int(g, n, "p", p);
    tbt_output(g, name);
  }
  tb_model *model = tbt_model_of(ir);
  const feed in[3] = {{"x", TB_DTYPE_F32, 4, {2, 5, 6, 7}, x}, {"v", TB_DTYPE_F32, 5, {2, 3, 3, 4, 5}, v}, {"w", TB_DTYPE_F32, 3, {3, 4, 11}, w}};
  all_on_device(model, 3, in, 9, 9, 0, 1e-6);
  tb_model_destroy(model);
}

/* Einsum on its generic kernel: a trace, a diagonal, a full sum, a permutation, two-input equations with a diagonal
 * or a label summed within one input, and float64 (a batched product and a trace):
 * the CPU's order, so bit for bit. Then the float32 products on the GEMM family (the own tiled kernel here):
 * batched, implicit, with B transposed, an ellipsis that broadcasts, an outer product of vectors; and after
 * permutations (cuda_einsum_permute.c): an outer product, a product whose output puts the column first, three
 * summed labels, a two-input reduction, attention scores, a broadcast ellipsis with the output transposed, two row
 * labels around a column label, a full contraction, an empty output, sums over an empty axis (zeros); within 1e-6 + 1e-5 |cpu| (float sums against
 * the CPU's double). */
static void einsum_matches_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float a[3 * 5 * 7], b[3 * 7 * 4], m[6 * 6], t[2 * 3 * 4 * 5];
  fill(a, 105, 11);
  fill(b, 84, 12);
  fill(m, 36, 13);
  fill(t, 120, 14);
  const feed in[5] = {{"a", TB_DTYPE_F32, 3, {3, 5, 7}, a}, {"b", TB_DTYPE_F32, 3, {3, 7, 4}, b}, {"m", TB_DTYPE_F32, 2, {6, 6}, m},
                      {"t", TB_DTYPE_F32, 4, {2, 3, 4, 5}, t}, {"e", TB_DTYPE_F32, 2, {3, 0}, NULL}};
  static const struct {
    const char *name, *in, *eq;
  } generic[] = {
      {"tr", "m", "ii"},         {"diag", "m", "ii->i"},          {"sum", "t", "abcd->"},
      {"perm", "t", "abcd->dbca"}, {"dg2", "m,m", "ii,ij->j"},     {"own", "m,m", "ij,jk->k"},
      {"bdiag", "m,t", "ii,abcd->ad"},
  }, product[] = {
      {"bmm", "a,b", "bij,bjk->bik"}, {"mm", "m,m", "ij,jk"}, {"mmt", "m,m", "ik,jk->ij"},
      {"ell", "a,b1", "...ij,...jk->...ik"}, {"vv", "m,m", "ij,ik->jk"},
      /* products after permutations (cuda_einsum_permute.c) */
      {"outer", "m,m", "ij,kl->ijlk"}, {"ji", "m,m", "ik,kj->ji"}, {"three", "t,t", "abcd,abce->de"},
      {"dot", "a,a", "bij,bij->j"}, {"attn", "t,t", "bhqd,bhkd->bhqk"}, {"ellt", "a,b1", "...ij,...jk->...ki"},
      {"rows2", "t,b", "abcd,bxc->dxa"}, {"full", "a,a", "bij,bij->"}, {"eout", "e,m", "ij,kl->ijkl"},
      {"esum", "e,e", "ij,ij->i"}, {"esum2", "e,e", "ij,kj->ik"},
  };
  for (int pass = 0; pass < 2; pass++) {
    tb_ir_model *ir = tbt_ir_model(12);
    tb_graph *g = tb_graph_new(ir, NULL, "einsum");
    tbt_input(g, "a", TB_DTYPE_F32, 3, (const int64_t[]){3, 5, 7}, NULL);
    tbt_input(g, "b", TB_DTYPE_F32, 3, (const int64_t[]){3, 7, 4}, NULL);
    tbt_input(g, "m", TB_DTYPE_F32, 2, (const int64_t[]){6, 6}, NULL);
    tbt_input(g, "t", TB_DTYPE_F32, 4, (const int64_t[]){2, 3, 4, 5}, NULL);
    tbt_input(g, "e", TB_DTYPE_F32, 2, (const int64_t[]){3, 0}, NULL);
    tbt_const_f32(g, "b1", 3, (const int64_t[]){1, 7, 4}, b);
    size_t count = pass == 0 ? sizeof generic / sizeof generic[0] : sizeof product / sizeof product[0], nodes = count, outs = count;
    for (size_t i = 0; i < count; i++) {
      const char *name = pass == 0 ? generic[i].name : product[i].name;
      int n = tbt_node(g, "Einsum", name, pass == 0 ? generic[i].in : product[i].in, name);
      pt_attr_string(g, n, "equation", pass == 0 ? generic[i].eq : product[i].eq);
      tbt_output(g, name);
    }
    if (pass == 0) { /* float64 */
      cast(g, "a64", "a", 11);
      cast(g, "b64", "b", 11);
      cast(g, "m64", "m", 11);
      int n = tbt_node(g, "Einsum", "bmm64", "a64,b64", "bmm64");
      pt_attr_string(g, n, "equation", "bij,bjk->bik");
      tbt_output(g, "bmm64");
      n = tbt_node(g, "Einsum", "tr64", "m64", "tr64");
      pt_attr_string(g, n, "equation", "ii");
      tbt_output(g, "tr64");
      nodes += 5, outs += 2;
    }
    tb_model *model = tbt_model_of(ir);
    launch_reset();
    all_on_device(model, 5, in, outs, nodes, pass == 0 ? 0 : 1e-6, pass == 0 ? 0 : 1e-5);
    assert_int_equal(launches_of("tb_cu_gemm_f32") > 0, pass == 1);
    assert_int_equal(launches_of("tb_cu_dm_einsum") > 0, pass == 0);
    assert_int_equal(launches_of("tb_cu_dm_copy_b4") > 0, pass == 1); /* the permuted products' operand copies */
    tb_model_destroy(model);
  }
}

/* ---- Errors ----------------------------------------------------------------------------------------- */

static tb_status run_one(tb_prepared *p, size_t n_in, const feed *in, tb_tensor **out) {
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_tensor *t[4] = {NULL};
  const char *names[4];
  for (size_t i = 0; i < n_in; i++) t[i] = make_input(cpu, &in[i]), names[i] = in[i].name;
  *out = NULL;
  launch_reset();
  tb_status st = tb_prepared_run(p, n_in, names, t, 1, NULL, out);
  for (size_t i = 0; i < n_in; i++) tb_tensor_destroy(t[i]);
  tb_backend_destroy(cpu);
  return st;
}

static tb_prepared *prepare_on_device(tb_backend *cuda, tb_model *model) {
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->cpu_fallback_nodes, 0);
  return p;
}

/* A GatherND index out of range is refused by the device's check of its launch (one launch, the CPU's sentence at
 * the end of the run); a sequence length over the time axis and a Trilu k of two values are refused before any
 * launch with the sentences naming them; the GatherND model runs again with good indices. */
static void bad_indices_and_lengths_are_refused(void **state) {
  (void)state;
  tb_backend *cuda = open_cuda0();
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "bad");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){4, 3}, NULL);
  tbt_input(g, "i", TB_DTYPE_I64, 2, (const int64_t[]){2, 2}, NULL);
  output(g, "GatherND", "gnd", "x,i", "y");
  tb_model *model = tbt_model_of(ir);
  tb_prepared *p = prepare_on_device(cuda, model);
  static const float x[12] = {0};
  tb_tensor *out = NULL;
  feed in[2] = {{"x", TB_DTYPE_F32, 2, {4, 3}, x}, {"i", TB_DTYPE_I64, 2, {2, 2}, (const int64_t[]){1, 2, 0, -4}}};
  assert_int_equal(run_one(p, 2, in, &out), TB_ERR_INVALID_ARGUMENT);
  assert_null(out);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'gnd' (GatherND): index -4 (indices element 3) is out of range for axis 1 of size 3");
  assert_int_equal(launches_of("tb_cu_dm_gather_nd_b4"), 1);
  in[1].data = (const int64_t[]){1, 2, 0, -3};
  TB_ASSERT_OK(run_one(p, 2, in, &out));
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  tb_model_destroy(model);

  ir = tbt_ir_model(13);
  g = tb_graph_new(ir, NULL, "badlen");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){4, 3}, NULL);
  tbt_input(g, "l", TB_DTYPE_I64, 1, (const int64_t[]){3}, NULL);
  output(g, "ReverseSequence", "rev", "x,l", "y");
  model = tbt_model_of(ir);
  p = prepare_on_device(cuda, model);
  in[1] = (feed){"l", TB_DTYPE_I64, 1, {3}, (const int64_t[]){4, 5, 0}};
  assert_int_equal(run_one(p, 2, in, &out), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'rev' (ReverseSequence): sequence length 5 (batch 1) is out of range [0, 4]");
  assert_int_equal(fake_int("fake_cuda_launch_count"), 0);
  tb_prepared_destroy(p);
  tb_model_destroy(model);

  ir = tbt_ir_model(14);
  g = tb_graph_new(ir, NULL, "badk");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){4, 3}, NULL);
  tbt_input(g, "k", TB_DTYPE_I64, 1, (const int64_t[]){2}, NULL);
  output(g, "Trilu", "trilu", "x,k", "y");
  model = tbt_model_of(ir);
  p = prepare_on_device(cuda, model);
  in[1] = (feed){"k", TB_DTYPE_I64, 1, {2}, (const int64_t[]){1, 2}};
  assert_int_equal(run_one(p, 2, in, &out), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'trilu' (Trilu): k holds 2 values; give one (a scalar)");
  assert_int_equal(fake_int("fake_cuda_launch_count"), 0);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
}

/* NonZero's count launch failing (illegal address, then out of memory) and its fill failing: statuses naming the
 * kernel and node, the scratch counts freed (teardown counts the allocations); then a good run. */
static void nonzero_launch_failures_are_statuses(void **state) {
  (void)state;
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* the launches counted from the first: no capture attempt before them */
  tb_backend *cuda = open_cuda0();
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "nz");
  tbt_input(g, "x", TB_DTYPE_F32, 1, (const int64_t[]){5}, NULL);
  output(g, "NonZero", "nz", "x", "y");
  tb_model *model = tbt_model_of(ir);
  tb_prepared *p = prepare_on_device(cuda, model);
  const feed in[1] = {{"x", TB_DTYPE_F32, 1, {5}, (const float[]){0, 1, 0, 2, 3}}};
  tb_tensor *out = NULL;
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(run_one(p, 1, in, &out), TB_ERR_DRIVER);
  assert_null(out);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_dm_nonzero_count for node 'nz' (NonZero)");
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  assert_int_equal(run_one(p, 1, in, &out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY; free device memory");
  if (emulator_here()) { /* the fill is launched only when the emulated count finds values */
    setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "2", 1);
    setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
    assert_int_equal(run_one(p, 1, in, &out), TB_ERR_DRIVER);
    assert_null(out);
    TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_dm_nonzero_fill for node 'nz' (NonZero)");
  }
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(run_one(p, 1, in, &out));
  if (emulator_here()) {
    int64_t got[3] = {0};
    assert_int_equal(tb_tensor_numel(out), 3);
    TB_ASSERT_OK(tb_tensor_copy_to_host(out, got, sizeof got));
    assert_int_equal(got[0], 1);
    assert_int_equal(got[1], 3);
    assert_int_equal(got[2], 4);
  }
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  unsetenv("TB_GRAPH_CAPTURE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_kernel_by_dtype_and_attribute),
      cmocka_unit_test_setup_teardown(layout_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(scatter_reductions_match_the_cpu_bit_for_bit, setup, teardown),
      cmocka_unit_test_setup_teardown(nonzero_matches_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(nonzero_reads_one_word_per_run, setup, teardown),
      cmocka_unit_test_setup_teardown(windows_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(einsum_matches_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_indices_and_lengths_are_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(nonzero_launch_failures_are_statuses, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
