/* The CUDA data-movement, index, logic and LayerNorm kernels (kernels/70_data.cu, cuda_ops_data.c,
 * cuda_ops_index.c, cuda_ops_logic.c, cuda_ops_norm.c) on the fake cuda:0 of the recorded 8x H100 node, their
 * values computed by the kernels' own source on the emulated grid (tests/cuda_emu) and compared with the
 * CPU backend at O0: floats within 1e-6 + 1e-5 |cpu| (LayerNorm 1e-5 + 1e-4: float against the CPU's
 * double), every other dtype byte for byte. Each model checks that all its nodes ran on the device. Also:
 * find_kernel's answers by dtype and attribute, the bundled encoder at O2 (what still falls back), a bad
 * Gather index, a failing launch and device memory running out. Without the emulator (no C++ compiler)
 * the value tests print why and check nothing. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/error.h"
#include "ops/elementwise/ew_params.h"
#include "ops/nn/nn_params.h"
#include "ops/tensor/tensor_params.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_util.h"
#include "test_cuda_values.h"
#include "test_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cudata"); }
static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* compare_runs at O0 with every node on the device. */
static void all_on_device(tb_model *m, size_t n_in, const feed *in, size_t n_out, size_t nodes) {
  size_t device = 0, fallbacks = 0;
  compare_runs(m, n_in, in, n_out, TB_LEVEL_O0, 1e-6, 1e-5, &device, &fallbacks);
  assert_int_equal(fallbacks, 0);
  assert_int_equal(device, nodes);
}

/* The ONNX TensorProto code of a dtype, for Cast's 'to'. */
static int64_t onnx_code(tb_dtype dt) {
  switch (dt) {
    case TB_DTYPE_F32: return 1;
    case TB_DTYPE_U8: return 2;
    case TB_DTYPE_I8: return 3;
    case TB_DTYPE_I32: return 6;
    case TB_DTYPE_I64: return 7;
    case TB_DTYPE_BOOL: return 9;
    case TB_DTYPE_F16: return 10;
    case TB_DTYPE_F64: return 11;
    case TB_DTYPE_BF16: return 16;
    default: fail_msg("no ONNX code for %s here", tb_dtype_name(dt));
  }
  return 0;
}

/* ---- find_kernel ------------------------------------------------------------------------------------ */

static void find_kernel_by_dtype_and_attribute(void **state) {
  (void)state;
  const tb_dtype i64[2] = {TB_DTYPE_I64, TB_DTYPE_I64}, f16_i32[2] = {TB_DTYPE_F16, TB_DTYPE_I32}, f32_f32[2] = {TB_DTYPE_F32, TB_DTYPE_F32};
  const tb_dtype f32_i64[3] = {TB_DTYPE_F32, TB_DTYPE_I64, TB_DTYPE_F32}, bools[2] = {TB_DTYPE_BOOL, TB_DTYPE_BOOL};
  tb_transpose_params tp = {0};
  tb_axis_params ax = {0};
  /* data movement takes any dtype of 1, 2, 4 or 8 bytes */
  assert_non_null(tcv_find("", "Transpose", 13, &tp, 1, i64, 1));
  assert_non_null(tcv_find("", "Transpose", 13, &tp, 1, bools, 1));
  assert_non_null(tcv_find("", "Concat", 13, &ax, 2, i64, 1));
  assert_null(tcv_find("", "Concat", 13, &ax, 2, (const tb_dtype[]){TB_DTYPE_I64, TB_DTYPE_I32}, 1)); /* mixed */
  assert_non_null(tcv_find("", "Reshape", 14, NULL, 2, i64, 1));
  assert_non_null(tcv_find("", "Gather", 13, &ax, 2, f16_i32, 1));
  assert_null(tcv_find("", "Gather", 13, &ax, 2, f32_f32, 1)); /* float indices */
  /* scatters (the reductions from cuda_ops_layout.c, test_cuda_layout); ScatterND with int64 indices */
  tb_scatter_params none = {0}, add = {.reduction = TB_SCATTER_ADD};
  assert_non_null(tcv_find("", "ScatterElements", 16, &none, 3, f32_i64, 1));
  assert_non_null(tcv_find("", "ScatterElements", 16, &add, 3, f32_i64, 1)); /* the reductions: cuda_ops_layout.c */
  assert_non_null(tcv_find("", "ScatterND", 16, &none, 3, f32_i64, 1));
  /* Cast between the computable dtypes; fp8 stays on the CPU */
  tb_cast_params to_f16 = {.to = TB_DTYPE_F16}, to_fp8 = {.to = TB_DTYPE_FP8_E4M3FN};
  assert_non_null(tcv_find("", "Cast", 19, &to_f16, 1, i64, 1));
  assert_null(tcv_find("", "Cast", 19, &to_fp8, 1, f32_f32, 1));
  /* comparisons of one dtype; logic on bool only; legacy broadcasting declined */
  tb_binary_params modern = {0}, legacy = {.legacy = true, .broadcast = true};
  assert_non_null(tcv_find("", "Less", 13, &modern, 2, i64, 1));
  assert_null(tcv_find("", "Less", 13, &modern, 2, (const tb_dtype[]){TB_DTYPE_I64, TB_DTYPE_F32}, 1));
  assert_null(tcv_find("", "Equal", 6, &legacy, 2, i64, 1));
  assert_non_null(tcv_find("", "And", 13, &modern, 2, bools, 1));
  assert_null(tcv_find("", "Or", 13, &modern, 2, i64, 1));
  assert_non_null(tcv_find("", "Where", 16, NULL, 3, (const tb_dtype[]){TB_DTYPE_BOOL, TB_DTYPE_I64, TB_DTYPE_I64}, 1));
  assert_null(tcv_find("", "Where", 16, NULL, 3, (const tb_dtype[]){TB_DTYPE_F32, TB_DTYPE_I64, TB_DTYPE_I64}, 1));
  /* LayerNormalization: float32, only the Y output */
  tb_norm_params ln = {.kind = TB_NORM_LAYER, .epsilon = 1e-5f, .axis = -1}, ln_stats = ln;
  ln_stats.mean_output = true;
  const tb_dtype f3[3] = {TB_DTYPE_F32, TB_DTYPE_F32, TB_DTYPE_F32};
  assert_non_null(tcv_find("", "LayerNormalization", 17, &ln, 3, f3, 1));
  assert_non_null(tcv_find("tb", "LayerNormalization", 1, &ln, 3, f3, 1));
  assert_null(tcv_find("", "LayerNormalization", 17, &ln_stats, 3, f3, 2));
  assert_null(tcv_find("", "LayerNormalization", 17, &ln, 3, (const tb_dtype[]){TB_DTYPE_F16, TB_DTYPE_F16, TB_DTYPE_F16}, 1));
}

/* ---- Values ------------------------------------------------------------------------------------------ */

/* Transpose (tiled: [40, 70] and a batch swap of [3, 5, 37]; strided: perm (2, 0, 1)), Slice with steps and a
 * negative axis, Concat, Split, Expand, Tile, Pad in its three modes, Reshape, Flatten, Squeeze, Unsqueeze,
 * Identity, on float32. */
static void movement_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[3 * 5 * 37], m[40 * 70], e[5];
  fill(x, 3 * 5 * 37, 1);
  fill(m, 40 * 70, 2);
  fill(e, 5, 3);
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "movement");
  const int64_t xd[3] = {3, 5, 37}, md[2] = {40, 70}, ed[2] = {5, 1};
  tbt_input(g, "x", TB_DTYPE_F32, 3, xd, NULL);
  tbt_input(g, "m", TB_DTYPE_F32, 2, md, NULL);
  tbt_input(g, "e", TB_DTYPE_F32, 2, ed, NULL);
  output(g, "Transpose", "t2", "m", "y_t2");
  int t = tbt_node(g, "Transpose", "tb", "x", "y_tb");
  pt_attr_ints(g, t, "perm", 3, (const int64_t[]){0, 2, 1});
  tbt_output(g, "y_tb");
  t = tbt_node(g, "Transpose", "tg", "x", "y_tg");
  pt_attr_ints(g, t, "perm", 3, (const int64_t[]){2, 0, 1});
  tbt_output(g, "y_tg");
  const int64_t three = 3, one = 1;
  tbt_const_i64(g, "starts", 1, &three, (const int64_t[]){-1, 1, 2});
  tbt_const_i64(g, "ends", 1, &three, (const int64_t[]){-100, 5, 30});
  tbt_const_i64(g, "axes", 1, &three, (const int64_t[]){-1, 1, 0});
  tbt_const_i64(g, "steps", 1, &three, (const int64_t[]){-3, 2, 1});
  output(g, "Slice", "slice", "x,starts,ends,axes,steps", "y_slice");
  t = tbt_node(g, "Transpose", "tb_back", "y_tb", "y_tb_back");
  pt_attr_ints(g, t, "perm", 3, (const int64_t[]){0, 2, 1});
  int c = tbt_node(g, "Concat", "concat", "x,y_tb_back,x", "y_concat");
  pt_attr_int(g, c, "axis", -2);
  tbt_output(g, "y_concat");
  tbt_const_i64(g, "split", 1, &(int64_t){2}, (const int64_t[]){2, 3});
  int s = tbt_node(g, "Split", "split", "x,split", "y_s0,y_s1");
  pt_attr_int(g, s, "axis", 1);
  tbt_output(g, "y_s0");
  tbt_output(g, "y_s1");
  tbt_const_i64(g, "shape", 1, &three, (const int64_t[]){3, 5, 4});
  output(g, "Expand", "expand", "e,shape", "y_expand");
  tbt_const_i64(g, "repeats", 1, &three, (const int64_t[]){2, 1, 3});
  output(g, "Tile", "tile", "x,repeats", "y_tile");
  tbt_const_i64(g, "pads", 1, &(int64_t){6}, (const int64_t[]){1, 2, 3, 0, 1, 4});
  static const char *const modes[3] = {"constant", "reflect", "edge"};
  for (int k = 0; k < 3; k++) {
    char name[16], out[16];
    snprintf(name, sizeof name, "pad_%s", modes[k]);
    snprintf(out, sizeof out, "y_pad%d", k);
    int p = tbt_node(g, "Pad", name, "x,pads", out);
    pt_attr_string(g, p, "mode", modes[k]);
    tbt_output(g, out);
  }
  tbt_const_i64(g, "flat", 1, &(int64_t){2}, (const int64_t[]){15, -1});
  output(g, "Reshape", "reshape", "x,flat", "y_reshape");
  output(g, "Flatten", "flatten", "x", "y_flatten");
  tbt_const_i64(g, "ax0", 1, &one, (const int64_t[]){0});
  output(g, "Unsqueeze", "unsqueeze", "x,ax0", "y_unsq");
  tbt_const_i64(g, "ax1", 1, &one, (const int64_t[]){1});
  output(g, "Squeeze", "squeeze", "e,ax1", "y_sq");
  output(g, "Identity", "identity", "m", "y_id");
  tb_model *model = tbt_model_of(ir);
  const feed in[3] = {{"x", TB_DTYPE_F32, 3, {3, 5, 37}, x}, {"m", TB_DTYPE_F32, 2, {40, 70}, m}, {"e", TB_DTYPE_F32, 2, {5, 1}, e}};
  all_on_device(model, 3, in, 17, 17);
  tb_model_destroy(model);
}

/* Integer, bool, float16 and bfloat16 data through the same kernels; Cast between the pairs; comparisons,
 * logic and Where with broadcasting; Shape, Size, ConstantOfShape, Range. */
static void dtype_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  int64_t k[4 * 6];
  float x[4 * 6], r[6];
  for (int i = 0; i < 24; i++) k[i] = (i * 7919) % 23 - 11 + (i == 5 ? (int64_t)1 << 40 : 0);
  fill(x, 24, 5);
  fill(r, 6, 6);
  x[3] = r[3]; /* equal somewhere: Equal, LessOrEqual */
  x[7] = 2.5f, x[8] = -2.5f, x[9] = 1e6f, x[10] = 70000.0f; /* round-half cases, f16 overflow */
  x[11] = 1e-6f;                                            /* an f16 subnormal */
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "dtypes");
  const int64_t d2[2] = {4, 6}, six = 6;
  tbt_input(g, "k", TB_DTYPE_I64, 2, d2, NULL);
  tbt_input(g, "x", TB_DTYPE_F32, 2, d2, NULL);
  tbt_input(g, "r", TB_DTYPE_F32, 1, &six, NULL);
  size_t n_out = 0, nodes = 0;
#define OUT(op, name, in, out) (output(g, op, name, in, out), n_out++, nodes++)
  OUT("Transpose", "k_t", "k", "k_t");
  int c = tbt_node(g, "Concat", "k_cat", "k,k", "k_cat");
  pt_attr_int(g, c, "axis", 0);
  tbt_output(g, "k_cat"), n_out++, nodes++;
  static const tb_dtype casts[] = {TB_DTYPE_I64, TB_DTYPE_I32, TB_DTYPE_F16, TB_DTYPE_BF16, TB_DTYPE_BOOL, TB_DTYPE_F64, TB_DTYPE_U8, TB_DTYPE_I8};
  for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++) {
    char name[16], back[16];
    snprintf(name, sizeof name, "x_c%zu", i);
    int n = tbt_node(g, "Cast", name, "x", name);
    pt_attr_int(g, n, "to", onnx_code(casts[i]));
    tbt_output(g, name), n_out++, nodes++;
    snprintf(back, sizeof back, "x_c%zu_f", i); /* and back to float32 */
    n = tbt_node(g, "Cast", back, name, back);
    pt_attr_int(g, n, "to", onnx_code(TB_DTYPE_F32));
    tbt_output(g, back), n_out++, nodes++;
  }
  int n = tbt_node(g, "Cast", "k_f", "k", "k_f");
  pt_attr_int(g, n, "to", onnx_code(TB_DTYPE_F32));
  tbt_output(g, "k_f"), n_out++, nodes++;
  /* f16 data through the movement kernels (2-byte elements) and bool (1-byte) */
  OUT("Transpose", "h_t", "x_c2", "h_t");
  OUT("Transpose", "b_t", "x_c4", "b_t");
  static const char *const cmp[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
  for (size_t i = 0; i < 5; i++) {
    char name[16];
    snprintf(name, sizeof name, "cmp%zu", i);
    OUT(cmp[i], name, "x,r", name);
  }
  tbt_node(g, "Transpose", "k_t_t", "k_t", "k_t_t"), nodes++;
  OUT("Equal", "k_eq", "k,k_t_t", "k_eq");
  OUT("Less", "k_lt", "k,k_t_t", "k_lt");
  OUT("And", "and", "cmp1,x_c4", "and");
  OUT("Or", "or", "cmp0,cmp2", "or");
  OUT("Xor", "xor", "cmp1,x_c4", "xor");
  OUT("Not", "not", "cmp1", "not");
  OUT("Where", "where", "cmp1,x,r", "where");
  OUT("Where", "where_k", "cmp2,k,k_t_t", "where_k");
  OUT("Shape", "shape", "x", "shape");
  OUT("Size", "size", "k", "size");
  OUT("ConstantOfShape", "cos", "shape", "cos");
  tb_model *model = tbt_model_of(ir);
  const feed in[3] = {{"k", TB_DTYPE_I64, 2, {4, 6}, k}, {"x", TB_DTYPE_F32, 2, {4, 6}, x}, {"r", TB_DTYPE_F32, 1, {6}, r}};
  all_on_device(model, 3, in, n_out, nodes);
  tb_model_destroy(model);
#undef OUT
}

/* Gather along axes 0 and 1 with int64 and int32 indices (negatives), GatherElements, ScatterElements, ScatterND. */
static void index_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  float x[5 * 7], u[2 * 3];
  fill(x, 35, 9);
  fill(u, 6, 10);
  tb_ir_model *ir = tbt_ir_model(16);
  tb_graph *g = tb_graph_new(ir, NULL, "index");
  const int64_t xd[2] = {5, 7}, ud[2] = {2, 3};
  tbt_input(g, "x", TB_DTYPE_F32, 2, xd, NULL);
  tbt_input(g, "u", TB_DTYPE_F32, 2, ud, NULL);
  const int64_t id[2] = {2, 3};
  tbt_const_i64(g, "i64", 2, id, (const int64_t[]){0, -1, 3, 4, 2, -5});
  int32_t i32v[4] = {6, -7, 0, 3};
  tbt_const(g, "i32", TB_DTYPE_I32, 1, &(int64_t){4}, i32v);
  output(g, "Gather", "g0", "x,i64", "g0");
  int n = tbt_node(g, "Gather", "g1", "x,i32", "g1");
  pt_attr_int(g, n, "axis", -1);
  tbt_output(g, "g1");
  tbt_const_i64(g, "ge_idx", 2, id, (const int64_t[]){6, 0, -2, 2, 3, 5}); /* no duplicate in a row: ScatterElements */
  n = tbt_node(g, "GatherElements", "ge", "x,ge_idx", "ge");
  pt_attr_int(g, n, "axis", 1);
  tbt_output(g, "ge");
  n = tbt_node(g, "ScatterElements", "se", "x,ge_idx,u", "se");
  pt_attr_int(g, n, "axis", 1);
  tbt_output(g, "se");
  tbt_const_i64(g, "nd_idx", 2, (const int64_t[]){2, 1}, (const int64_t[]){4, -5});
  const int64_t upd_dims[2] = {2, 7};
  float nd_upd[14];
  fill(nd_upd, 14, 11);
  tbt_const_f32(g, "nd_upd", 2, upd_dims, nd_upd);
  output(g, "ScatterND", "snd", "x,nd_idx,nd_upd", "snd");
  tb_model *model = tbt_model_of(ir);
  const feed in[2] = {{"x", TB_DTYPE_F32, 2, {5, 7}, x}, {"u", TB_DTYPE_F32, 2, {2, 3}, u}};
  all_on_device(model, 2, in, 5, 5);
  tb_model_destroy(model);
}

/* LayerNormalization over the last axis of [6, 64] (two blocks' worth of threads per row), over axes 1..2 of
 * [2, 3, 40] with a scalar bias, and without a bias; tb::Gelu's tanh form. */
static void layer_norm_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[6 * 64], z[2 * 3 * 40], s64[64], b64[64], s120[120];
  fill(x, 384, 21);
  fill(z, 240, 22);
  fill(s64, 64, 23);
  fill(b64, 64, 24);
  fill(s120, 120, 25);
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "ln");
  const int64_t xd[2] = {6, 64}, zd[3] = {2, 3, 40}, c64 = 64, sd[2] = {3, 40}, one = 1;
  tbt_input(g, "x", TB_DTYPE_F32, 2, xd, NULL);
  tbt_input(g, "z", TB_DTYPE_F32, 3, zd, NULL);
  tbt_const_f32(g, "s64", 1, &c64, s64);
  tbt_const_f32(g, "b64", 1, &c64, b64);
  tbt_const_f32(g, "s120", 2, sd, s120);
  tbt_const_f32(g, "b1", 1, &one, (const float[]){0.25f});
  output(g, "LayerNormalization", "ln_last", "x,s64,b64", "y0");
  int n = tbt_node(g, "LayerNormalization", "ln_two", "z,s120,b1", "y1");
  pt_attr_int(g, n, "axis", 1);
  pt_attr_float(g, n, "epsilon", 1e-3f);
  tbt_output(g, "y1");
  output(g, "LayerNormalization", "ln_nobias", "x,s64", "y2");
  /* tb::Gelu, the tanh form (GPT-2's) */
  int in[1] = {tb_graph_value(g, "x")}, out[1] = {tb_graph_value(g, "y3")};
  n = tb_graph_add_node(g, "gelu_tanh", "Gelu", "tb", in, 1, out, 1, NULL, 0);
  assert_true(n >= 0);
  pt_attr_string(g, n, "approximate", "tanh");
  tbt_output(g, "y3");
  tb_model *model = tbt_model_of(ir);
  const feed feeds[2] = {{"x", TB_DTYPE_F32, 2, {6, 64}, x}, {"z", TB_DTYPE_F32, 3, {2, 3, 40}, z}};
  size_t device = 0, fallbacks = 0;
  compare_runs(model, 2, feeds, 4, TB_LEVEL_O0, 1e-5, 1e-4, &device, &fallbacks);
  assert_int_equal(fallbacks, 0);
  assert_int_equal(device, 4);
  tb_model_destroy(model);
}

/* The bundled encoder (models/encoder_small.onnx) at O2: Reshape, Transpose and the recognised
 * LayerNormalization run on cuda:0; what still falls back is listed (the products and the fused attention:
 * other kernel families), and the values match the CPU's. */
static void encoder_at_o2_falls_back_only_for_products_and_attention(void **state) {
  (void)state;
  tb_model *model = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &model));
  tb_backend *cuda = open_cuda0();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  for (size_t i = 0; i < r->cpu_fallback_nodes; i++) {
    const char *f = r->fallback_ops[i];
    print_message("encoder O2 fallback: %s\n", f);
    if (strncmp(f, "FusedMatMul", 11) != 0 && strncmp(f, "MatMul", 6) != 0 && strncmp(f, "Attention", 9) != 0)
      fail_msg("%s falls back to the CPU", f);
  }
  assert_true(r->device_nodes >= 9); /* 4 Reshape, 4 Transpose, 2 LayerNormalization, the Adds */
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  if (emulator_here()) {
    static float x[2 * 16 * 64];
    fill(x, 2 * 16 * 64, 31);
    for (float *v = x; v < x + 2 * 16 * 64; v++) *v *= 0.25f;
    const feed in[1] = {{"x", TB_DTYPE_F32, 3, {2, 16, 64}, x}};
    size_t device = 0, fallbacks = 0;
    compare_runs(model, 1, in, 1, TB_LEVEL_O2, 1e-5, 1e-4, &device, &fallbacks);
  }
  tb_model_destroy(model);
}

/* ---- Errors ----------------------------------------------------------------------------------------- */

static tb_model *gather_model(void) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "gather");
  const int64_t xd[2] = {5, 3}, two = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 2, xd, NULL);
  tbt_input(g, "i", TB_DTYPE_I64, 1, &two, NULL);
  output(g, "Gather", "gather", "x,i", "y");
  return tbt_model_of(ir);
}

static tb_status run_gather(tb_prepared *p, tb_backend *cpu, const int64_t *idx, tb_tensor **out) {
  static const float x[15] = {0};
  const feed in[2] = {{"x", TB_DTYPE_F32, 2, {5, 3}, x}, {"i", TB_DTYPE_I64, 1, {2}, idx}};
  tb_tensor *t[2] = {make_input(cpu, &in[0]), make_input(cpu, &in[1])};
  const char *names[2] = {"x", "i"};
  *out = NULL;
  launch_reset();
  tb_status st = tb_prepared_run(p, 2, names, t, 1, NULL, out);
  tb_tensor_destroy(t[0]);
  tb_tensor_destroy(t[1]);
  return st;
}

/* An index outside the axis is found by the device and named at the end of the run (the gather launched, its
 * flag read then); a launch failure names the kernel and the node (out of memory: TB_ERR_OUT_OF_MEMORY); the
 * prepared model runs again afterwards. */
static void bad_index_and_launch_failures_are_statuses(void **state) {
  (void)state;
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_model *model = gather_model();
  /* each run launches (a graph would replay the first run's launch: test_cuda_graph has Gather in a graph) */
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .no_graph_capture = true};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->device_nodes, 1);
  tb_tensor *out = NULL;
  assert_int_equal(run_gather(p, cpu, (const int64_t[]){1, 5}, &out), TB_ERR_INVALID_ARGUMENT);
  assert_null(out);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'gather' (Gather): index 5 (indices element 1) is out of range for axis 0 of size 5");
  assert_int_equal(((int (*)(void))fake_symbol("fake_cuda_launch_count"))(), 1);
  assert_int_equal(run_gather(p, cpu, (const int64_t[]){-6, 0}, &out), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'gather' (Gather): index -6 (indices element 0) is out of range for axis 0 of size 5");
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(run_gather(p, cpu, (const int64_t[]){1, -5}, &out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuLaunchKernel of tb_cu_dm_gather_b4 for node 'gather' (Gather) (grid 1 x 1 x 1 of "
                                      "256 threads) failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  assert_int_equal(run_gather(p, cpu, (const int64_t[]){1, -5}, &out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY; free device memory");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(run_gather(p, cpu, (const int64_t[]){1, -5}, &out));
  assert_int_equal(((int (*)(void))fake_symbol("fake_cuda_launch_count"))(), 1);
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

/* A device too small for a run's activations: the run fails out of memory with the sizes, nothing leaks. */
static void device_memory_running_out_is_a_status(void **state) {
  (void)state;
  setenv("FAKE_CUDA_MEM_CAPACITY", "64K", 1);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "big");
  const int64_t xd[2] = {200, 100};
  tbt_input(g, "x", TB_DTYPE_F32, 2, xd, NULL);
  output(g, "Transpose", "transpose", "x", "y");
  tb_model *model = tbt_model_of(ir);
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, NULL));
  static float x[20000];
  const feed in = {"x", TB_DTYPE_F32, 2, {200, 100}, x};
  tb_tensor *t = make_input(cpu, &in), *out = NULL;
  const char *names[1] = {"x"};
  assert_int_equal(tb_prepared_run(p, 1, names, &t, 1, NULL, &out), TB_ERR_OUT_OF_MEMORY);
  assert_null(out);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: out of memory allocating");
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_tensor_destroy(t);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_kernel_by_dtype_and_attribute),
      cmocka_unit_test_setup_teardown(movement_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(dtype_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(index_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(layer_norm_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(encoder_at_o2_falls_back_only_for_products_and_attention, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_index_and_launch_failures_are_statuses, setup, teardown),
      cmocka_unit_test_setup_teardown(device_memory_running_out_is_a_status, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
