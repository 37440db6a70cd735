/* The OpenCL kernels added for the ONNX conformance suite on opencl:0 (PoCL), one node at a time against the
 * CPU's level-0 reference (|dev - ref| <= 1e-5 + 1e-4 |ref|, 1e-4 + 1e-4 |ref| for ConvTranspose sums;
 * indices exactly): the inverse trig / hyperbolic ops and the parametric activations, PRelu (also before
 * opset 7, per channel), Mod (fmod 1), Clip (attributes and inputs), the variadic Max / Min / Sum / Mean,
 * Hardmax, ArgMax / ArgMin (ties), ReduceLogSumExp, LayerNormalization with its Mean and InvStdDev outputs,
 * ConvTranspose (groups, strides, pads, dilations, output_padding, output_shape, auto_pad, 1-D), Tile,
 * DepthToSpace / SpaceToDepth, Pad (constant, reflect, edge; negative pads; float16), Dropout and float
 * Constant; and the cases find_kernel leaves to the CPU (3-D windows, Dropout's mask, float Mod with
 * fmod 0, stash_type 0, unknown pad modes), so they never fail on the device. */
#include "test_opencl_exec_util.h"

#define IN(nd, data, ...) ((toh_in){TB_DTYPE_F32, nd, {__VA_ARGS__}, data})
#define NONE ((toh_in){TOH_NONE, 0, {0}, NULL})

static void check_unary(const char *op, int opset, const float *x, const tb_attr *attrs, size_t n_attrs) {
  toh t;
  toh_setup(&t, op, opset, 1, 0, 1, attrs, n_attrs);
  toh_in in[] = {IN(3, x, 3, 5, 7)};
  clx_check(&t, in);
  toh_teardown(&t);
}

static void test_more_unary(void **state) {
  (void)state;
  float x[105], unit[105], big[105];
  clx_fill(x, 105, 40, -3.0f, 3.0f);
  clx_fill(unit, 105, 41, -0.99f, 0.99f);
  clx_fill(big, 105, 42, 1.0f, 6.0f);
  x[3] = 0.0f, x[4] = 2.5f, x[5] = -2.5f, x[6] = 0.5f; /* Round: halves to even; Sign: zero */
  static const char *const any[] = {"Atan", "Asinh", "Cosh", "Sinh", "Tan", "Softsign", "Round", "Sign", "Selu", "Celu", "ThresholdedRelu", "Shrink"};
  for (size_t i = 0; i < sizeof any / sizeof any[0]; i++) check_unary(any[i], 13, x, NULL, 0);
  static const char *const in_unit[] = {"Acos", "Asin", "Atanh"};
  for (size_t i = 0; i < 3; i++) check_unary(in_unit[i], 13, unit, NULL, 0);
  check_unary("Acosh", 13, big, NULL, 0);
  check_unary("Selu", 6, x, (tb_attr[]){TOH_FLOAT("alpha", 2.0f), TOH_FLOAT("gamma", 3.0f)}, 2);
  check_unary("Celu", 12, x, (tb_attr[]){TOH_FLOAT("alpha", 2.0f)}, 1);
  check_unary("ThresholdedRelu", 10, x, (tb_attr[]){TOH_FLOAT("alpha", 0.7f)}, 1);
  check_unary("Shrink", 9, x, (tb_attr[]){TOH_FLOAT("bias", 1.5f), TOH_FLOAT("lambd", 1.0f)}, 2);
}

static void test_prelu_mod_clip(void **state) {
  (void)state;
  float x[210], slope[7], d[210];
  clx_fill(x, 210, 43, -4.0f, 4.0f);
  clx_fill(slope, 7, 44, 0.1f, 0.9f);
  clx_fill(d, 210, 45, 0.5f, 2.0f);
  for (int i = 0; i < 210; i += 2) d[i] = -d[i]; /* mixed signs of the divisor */
  toh t;
  toh_setup(&t, "PRelu", 16, 2, 0, 1, NULL, 0);
  toh_in pr[] = {IN(3, x, 5, 6, 7), IN(1, slope, 7)};
  clx_check(&t, pr);
  toh_in pr2[] = {IN(3, x, 5, 7, 6), IN(2, slope, 7, 1)};
  clx_check(&t, pr2);
  toh_teardown(&t);
  toh_setup(&t, "Mod", 13, 2, 0, 1, (tb_attr[]){TOH_INT("fmod", 1)}, 1);
  toh_in md[] = {IN(2, x, 6, 35), IN(2, d, 6, 35)};
  clx_check(&t, md);
  toh_in mb[] = {IN(2, x, 6, 35), IN(1, d, 35)};
  clx_check(&t, mb);
  toh_teardown(&t);
  toh_setup(&t, "Clip", 6, 1, 0, 1, (tb_attr[]){TOH_FLOAT("min", -1.0f), TOH_FLOAT("max", 2.0f)}, 2);
  toh_in c6[] = {IN(2, x, 6, 35)};
  clx_check(&t, c6);
  toh_teardown(&t);
  float lo = -0.5f, hi = 1.25f;
  toh_setup(&t, "Clip", 13, 3, 0, 1, NULL, 0);
  toh_in both[] = {IN(2, x, 6, 35), IN(0, &lo, 0), IN(0, &hi, 0)};
  clx_check(&t, both);
  toh_teardown(&t);
  toh_setup(&t, "Clip", 13, 3, 1u << 1, 1, NULL, 0); /* max only */
  toh_in max_only[] = {IN(2, x, 6, 35), NONE, IN(0, &hi, 0)};
  clx_check(&t, max_only);
  toh_teardown(&t);
  toh_setup(&t, "Clip", 13, 1, 0, 1, NULL, 0); /* no bounds: a copy */
  toh_in none[] = {IN(2, x, 6, 35)};
  clx_check(&t, none);
  toh_teardown(&t);
}

static void test_variadic(void **state) {
  (void)state;
  float a[105], b[105], c[105];
  clx_fill(a, 105, 46, -2.0f, 2.0f);
  clx_fill(b, 105, 47, -2.0f, 2.0f);
  clx_fill(c, 105, 48, -2.0f, 2.0f);
  static const char *const ops[] = {"Max", "Min", "Sum", "Mean"};
  for (size_t i = 0; i < 4; i++) {
    toh t;
    toh_setup(&t, ops[i], 13, 3, 0, 1, NULL, 0);
    toh_in three[] = {IN(3, a, 3, 5, 7), IN(1, b, 7), IN(2, c, 5, 1)};
    clx_check(&t, three);
    toh_teardown(&t);
    toh_setup(&t, ops[i], 13, 1, 0, 1, NULL, 0);
    toh_in one[] = {IN(2, a, 5, 7)};
    clx_check(&t, one);
    toh_teardown(&t);
    toh_setup(&t, ops[i], 13, 2, 0, 1, NULL, 0);
    toh_in two[] = {IN(2, a, 5, 7), IN(2, b, 5, 7)};
    clx_check(&t, two);
    toh_teardown(&t);
  }
}

static void test_hardmax_argextreme_reduce(void **state) {
  (void)state;
  float x[3 * 5 * 7];
  clx_fill(x, 105, 49, -3.0f, 3.0f);
  x[7] = x[8] = 9.0f; /* a tie: the first index wins, or the last with select_last_index */
  toh_in in[] = {IN(3, x, 3, 5, 7)};
  toh t;
  toh_setup(&t, "Hardmax", 13, 1, 0, 1, (tb_attr[]){TOH_INT("axis", 1)}, 1);
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "Hardmax", 11, 1, 0, 1, (tb_attr[]){TOH_INT("axis", 1)}, 1); /* coerced to 2-D */
  clx_check(&t, in);
  toh_teardown(&t);
  static const char *const arg[] = {"ArgMax", "ArgMin"};
  for (size_t i = 0; i < 2; i++)
    for (int last = 0; last < 2; last++) {
      toh_setup(&t, arg[i], 13, 1, 0, 1, (tb_attr[]){TOH_INT("axis", -1), TOH_INT("keepdims", last), TOH_INT("select_last_index", last)}, 3);
      clx_check_tol(&t, in, true, 0.0, 0.0);
      clx_check_tol(&t, in, false, 0.0, 0.0);
      toh_teardown(&t);
      toh_setup(&t, arg[i], 13, 1, 0, 1, (tb_attr[]){TOH_INT("axis", 1)}, 1);
      clx_check_tol(&t, in, true, 0.0, 0.0);
      toh_teardown(&t);
    }
  toh_setup(&t, "ReduceLogSumExp", 13, 1, 0, 1, (tb_attr[]){TOH_INTS("axes", 0, 2)}, 1);
  clx_check(&t, in);
  toh_teardown(&t);
  float large[12];
  clx_fill(large, 12, 50, 80.0f, 100.0f); /* exp overflows float without the shift by the maximum */
  toh_setup(&t, "ReduceLogSumExp", 13, 1, 0, 1, (tb_attr[]){TOH_INTS("axes", 1), TOH_INT("keepdims", 0)}, 2);
  toh_in lg[] = {IN(2, large, 3, 4)};
  clx_check(&t, lg);
  toh_teardown(&t);
}

static void test_layernorm_stats(void **state) {
  (void)state;
  static float x[3 * 5 * 7 * 2], sc[210], bi[210];
  clx_fill(x, sizeof x / 4, 52, -3.0f, 3.0f);
  clx_fill(sc, 210, 53, 0.5f, 1.5f);
  clx_fill(bi, 210, 54, -1.0f, 1.0f);
  static const int64_t axes[] = {0, 1, -1, -3};
  for (size_t i = 0; i < 4; i++) {
    toh t;
    toh_setup(&t, "LayerNormalization", 17, 3, 0, 3, (tb_attr[]){TOH_INT("axis", axes[i]), TOH_FLOAT("epsilon", 1e-3f)}, 2);
    int64_t cols = 1, dims[4] = {3, 5, 7, 2};
    size_t first = (size_t)(axes[i] < 0 ? axes[i] + 4 : axes[i]);
    toh_in ln[] = {IN(4, x, 3, 5, 7, 2), {TB_DTYPE_F32, 4 - first, {0}, sc}, {TB_DTYPE_F32, 4 - first, {0}, bi}};
    for (size_t d = first; d < 4; d++) cols *= dims[d], ln[1].shape[d - first] = ln[2].shape[d - first] = dims[d];
    assert_true(cols <= 210);
    clx_check(&t, ln); /* Y, Mean and InvStdDev, each compared */
    toh_teardown(&t);
  }
  /* Y and InvStdDev only (Mean omitted): the kernel leaves the omitted output alone */
  toh t;
  toh_begin(&t, NULL);
  toh_add(&t, "LayerNormalization", 17, 2, 0, 3, 1u << 1, (tb_attr[]){TOH_INT("axis", -1)}, 1);
  tb_tensor *in[2] = {toh_tensor(&t, &IN(2, x, 15, 14)), toh_tensor(&t, &IN(1, sc, 14))}, *ref[3] = {0}, *dev[3] = {0};
  TB_ASSERT_OK(toh_run_tensors(&t, in, ref, true));
  TB_ASSERT_OK(clx_run_device(&t, in, dev, false, NULL));
  assert_null(dev[1]);
  for (size_t o = 0; o < 3; o += 2) {
    assert_non_null(dev[o]);
    assert_int_equal(tb_tensor_numel(dev[o]), o == 0 ? 15 * 14 : 15);
    float *a = clx_read(dev[o]), *b = clx_read(ref[o]);
    for (int64_t i = 0; i < tb_tensor_numel(dev[o]); i++) assert_true(fabs((double)a[i] - b[i]) <= CLX_ATOL + CLX_RTOL * fabs((double)b[i]));
    free(a);
    free(b);
  }
  toh_clear(in, 2);
  toh_clear(ref, 3);
  toh_clear(dev, 3);
  toh_teardown(&t);
}

static void test_tile_depth_space_dropout(void **state) {
  (void)state;
  float x[2 * 8 * 3 * 4];
  clx_fill(x, sizeof x / 4, 55, -2.0f, 2.0f);
  int64_t reps[] = {2, 1, 3};
  toh t;
  toh_setup(&t, "Tile", 13, 2, 0, 1, NULL, 0);
  toh_in tl[] = {IN(3, x, 2, 3, 5), {TB_DTYPE_I64, 1, {3}, reps}};
  clx_check(&t, tl);
  int64_t reps4[] = {1, 2, 2, 1};
  toh_in tl4[] = {IN(4, x, 2, 3, 2, 3), {TB_DTYPE_I64, 1, {4}, reps4}};
  clx_check(&t, tl4);
  toh_teardown(&t);
  toh_setup(&t, "DepthToSpace", 13, 1, 0, 1, (tb_attr[]){TOH_INT("blocksize", 2)}, 1);
  toh_in ds[] = {IN(4, x, 2, 8, 3, 4)};
  clx_check(&t, ds);
  toh_teardown(&t);
  toh_setup(&t, "DepthToSpace", 13, 1, 0, 1, (tb_attr[]){TOH_INT("blocksize", 2), TOH_STR("mode", "CRD")}, 2);
  clx_check(&t, ds);
  toh_teardown(&t);
  toh_setup(&t, "SpaceToDepth", 13, 1, 0, 1, (tb_attr[]){TOH_INT("blocksize", 2)}, 1);
  toh_in sd[] = {IN(4, x, 2, 3, 4, 8)};
  clx_check(&t, sd);
  toh_teardown(&t);
  float ratio = 0.0f, half = 0.5f;
  bool on = true;
  toh_setup(&t, "Dropout", 13, 3, 0, 1, NULL, 0);
  toh_in zero_ratio[] = {IN(2, x, 8, 9), IN(0, &ratio, 0), {TB_DTYPE_BOOL, 0, {0}, &on}};
  clx_check(&t, zero_ratio); /* training with ratio 0: a copy */
  tb_tensor *in[3] = {toh_tensor(&t, &IN(2, x, 8, 9)), toh_tensor(&t, &IN(0, &half, 0)), toh_tensor(&t, &(toh_in){TB_DTYPE_BOOL, 0, {0}, &on})};
  tb_tensor *out[1] = {NULL};
  assert_int_equal(clx_run_device(&t, in, out, false, NULL), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "training_mode is true");
  TB_ASSERT_CONTAINS(tb_last_error(), "n0");
  toh_clear(in, 3);
  toh_clear(out, 1);
  toh_teardown(&t);
  toh_setup(&t, "Dropout", 13, 1, 0, 1, NULL, 0);
  toh_in plain[] = {IN(3, x, 4, 6, 8)};
  clx_check(&t, plain);
  toh_teardown(&t);
}

static void test_constant_and_old_prelu(void **state) {
  (void)state;
  float v[15], x[60], one = 0.25f;
  clx_fill(v, 15, 56, -5.0f, 5.0f);
  clx_fill(x, 60, 57, -3.0f, 3.0f);
  tb_ir_tensor value;
  memset(&value, 0, sizeof value);
  value.dtype = TB_DTYPE_F32;
  value.ndim = 2;
  value.dims[0] = 3, value.dims[1] = 5;
  value.data = v;
  value.nbytes = sizeof v;
  const tb_attr attrs[][1] = {{TOH_TENSOR("value", &value)}, {TOH_FLOATS_N("value_floats", v, 7)}, {TOH_FLOAT("value_float", 1.5f)}};
  for (size_t i = 0; i < 3; i++) {
    toh t;
    toh_setup(&t, "Constant", 13, 0, 0, 1, attrs[i], 1);
    clx_check(&t, NULL);
    toh_teardown(&t);
  }
  toh t;
  toh_setup(&t, "Constant", 13, 0, 0, 1, (tb_attr[]){TOH_INTS("value_ints", 1, 2)}, 1);
  assert_null(tbt_backend_kernel_find(clx_dev, t.graph, toh_node(&t), NULL)); /* shapes stay on the CPU */
  toh_teardown(&t);
  /* PRelu before opset 7: a single slope, and a 2-D one (broadcast from the right), on the device */
  toh_setup(&t, "PRelu", 6, 2, 0, 1, NULL, 0);
  toh_in single[] = {IN(3, x, 3, 4, 5), IN(1, &one, 1)};
  clx_check(&t, single);
  toh_in last_axis[] = {IN(3, x, 3, 4, 5), IN(2, v, 1, 5)};
  clx_check(&t, last_axis);
  toh_teardown(&t);
}

static void test_pad(void **state) {
  (void)state;
  float x[3 * 4 * 5], cv = -7.5f;
  clx_fill(x, 60, 58, -3.0f, 3.0f);
  int64_t pads[] = {1, 2, -1, 0, 3, 2}; /* begin per axis, then end; a negative one crops */
  static const char *const modes[] = {"constant", "reflect", "edge"};
  for (size_t m = 0; m < 3; m++) {
    toh t;
    toh_setup(&t, "Pad", 13, 3, 0, 1, (tb_attr[]){TOH_STR("mode", modes[m])}, 1);
    toh_in in[] = {IN(3, x, 3, 4, 5), {TB_DTYPE_I64, 1, {6}, pads}, IN(0, &cv, 0)};
    clx_check(&t, in);
    toh_teardown(&t);
  }
  toh t;
  toh_setup(&t, "Pad", 2, 1, 0, 1, (tb_attr[]){TOH_INTS("pads", 0, 1, 2, 0, 2, 1), TOH_FLOAT("value", 1.25f)}, 2);
  toh_in old[] = {IN(3, x, 3, 4, 5)};
  clx_check(&t, old);
  toh_teardown(&t);
  uint16_t h[60], hv;
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, x, TB_DTYPE_F16, h, 60, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, &cv, TB_DTYPE_F16, &hv, 1, true));
  toh_setup(&t, "Pad", 13, 3, 0, 1, NULL, 0);
  toh_in half[] = {{TB_DTYPE_F16, 3, {3, 4, 5}, h}, {TB_DTYPE_I64, 1, {6}, pads}, {TB_DTYPE_F16, 0, {0}, &hv}};
  clx_check_tol(&t, half, true, 0.0, 0.0);
  toh_teardown(&t);
  /* PRelu before opset 7 with a 1-D slope of the channel count: along dim 1 */
  float slope[4] = {0.1f, 0.2f, 0.3f, 0.4f};
  toh_setup(&t, "PRelu", 6, 2, 0, 1, NULL, 0);
  toh_in per_channel[] = {IN(3, x, 3, 4, 5), IN(1, slope, 4)};
  clx_check(&t, per_channel);
  toh_teardown(&t);
}

static void test_conv_transpose(void **state) {
  (void)state;
  static float x[2 * 4 * 5 * 6], w[4 * 3 * 3 * 2], b[6], x1[2 * 3 * 7], w1[3 * 2 * 4];
  clx_fill(x, sizeof x / 4, 59, -1.0f, 1.0f);
  clx_fill(w, sizeof w / 4, 60, -1.0f, 1.0f);
  clx_fill(b, 6, 61, -1.0f, 1.0f);
  clx_fill(x1, sizeof x1 / 4, 62, -1.0f, 1.0f);
  clx_fill(w1, sizeof w1 / 4, 63, -1.0f, 1.0f);
  toh t;
  toh_setup(&t, "ConvTranspose", 11, 3, 0, 1,
            (tb_attr[]){TOH_INT("group", 2), TOH_INTS("strides", 2, 3), TOH_INTS("pads", 1, 0, 0, 2), TOH_INTS("dilations", 1, 2),
                        TOH_INTS("output_padding", 1, 0)}, 5);
  toh_in g[] = {IN(4, x, 2, 4, 5, 6), IN(4, w, 4, 3, 3, 2), IN(1, b, 6)};
  clx_check_tol(&t, g, true, 1e-4, 1e-4);
  clx_check_tol(&t, g, false, 1e-4, 1e-4);
  toh_teardown(&t);
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, (tb_attr[]){TOH_INTS("strides", 2, 2), TOH_INTS("output_shape", 10, 13)}, 2);
  toh_in os[] = {IN(4, x, 2, 4, 5, 6), IN(4, w, 4, 1, 3, 2)};
  clx_check_tol(&t, os, true, 1e-4, 1e-4);
  toh_teardown(&t);
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, (tb_attr[]){TOH_STR("auto_pad", "SAME_UPPER"), TOH_INTS("strides", 2)}, 2);
  toh_in one_d[] = {IN(3, x1, 2, 3, 7), IN(3, w1, 3, 2, 4)};
  clx_check_tol(&t, one_d, true, 1e-4, 1e-4);
  toh_teardown(&t);
}

static const tb_kernel *find(toh *t, const tb_value_type *const *in) {
  return tbt_backend_kernel_find(clx_dev, t->graph, toh_node(t), in);
}

/* What the device leaves to the CPU, so a conformance test never fails on opencl:0 where the CPU passes. */
static void test_declined_cases(void **state) {
  (void)state;
  tb_value_type x5 = toh_type(TB_DTYPE_F32, 5, (int64_t[]){1, 3, 4, 4, 4}), x4 = toh_type(TB_DTYPE_F32, 4, (int64_t[]){1, 3, 4, 4});
  tb_value_type w5 = toh_type(TB_DTYPE_F32, 5, (int64_t[]){2, 3, 2, 2, 2}), u8 = toh_type(TB_DTYPE_U8, 4, (int64_t[]){1, 3, 4, 4});
  tb_value_type x6 = toh_type(TB_DTYPE_F32, 5, (int64_t[]){2, 2, 2, 2, 2}), reps = toh_type(TB_DTYPE_I64, 1, (int64_t[]){5});
  tb_value_type sc = toh_type(TB_DTYPE_F32, 1, (int64_t[]){4});
  tb_value_type f64 = toh_type(TB_DTYPE_F64, 2, (int64_t[]){3, 4});
  const tb_value_type *pool5[] = {&x5}, *pool4[] = {&x4}, *pool_u8[] = {&u8}, *conv5[] = {&x5, &w5}, *tile5[] = {&x6, &reps};
  toh t;
  static const char *const pools[] = {"MaxPool", "AveragePool"};
  for (size_t i = 0; i < 2; i++) {
    toh_setup(&t, pools[i], 12, 1, 0, 1, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2, 2)}, 1);
    assert_null(find(&t, pool5)); /* 3-D windows: the CPU */
    toh_teardown(&t);
    toh_setup(&t, pools[i], 12, 1, 0, 1, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2)}, 1);
    assert_non_null(find(&t, pool4));
    assert_null(find(&t, pool_u8));
    toh_teardown(&t);
  }
  toh_setup(&t, "MaxPool", 12, 1, 0, 2, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2)}, 1);
  assert_null(find(&t, pool4)); /* the Indices output */
  toh_teardown(&t);
  toh_setup(&t, "Conv", 11, 2, 0, 1, NULL, 0);
  assert_null(find(&t, conv5));
  toh_teardown(&t);
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, NULL, 0);
  assert_null(find(&t, conv5));
  toh_teardown(&t);
  toh_setup(&t, "Dropout", 13, 1, 0, 2, NULL, 0);
  assert_null(find(&t, pool4)); /* the mask output */
  toh_teardown(&t);
  toh_setup(&t, "Dropout", 13, 1, 0, 1, NULL, 0);
  assert_non_null(find(&t, pool4));
  toh_teardown(&t);
  toh_setup(&t, "Tile", 13, 2, 0, 1, NULL, 0);
  assert_null(find(&t, tile5)); /* rank 5: ten copy dims */
  toh_teardown(&t);
  const tb_value_type *mod[] = {&x4, &x4};
  toh_setup(&t, "Mod", 13, 2, 0, 1, NULL, 0);
  assert_null(find(&t, mod)); /* fmod = 0 on floats: the CPU reports the model error */
  toh_teardown(&t);
  const tb_value_type *pad_wrap[] = {&x4};
  toh_setup(&t, "Pad", 2, 1, 0, 1, (tb_attr[]){TOH_STR("mode", "wrap"), TOH_INTS("pads", 0, 0, 1, 1, 0, 0, 1, 1)}, 2);
  assert_null(find(&t, pad_wrap)); /* a mode the kernel does not know: the CPU says what it thinks */
  toh_teardown(&t);
  const tb_value_type *ln[] = {&x4, &sc};
  toh_setup(&t, "LayerNormalization", 17, 2, 0, 3, (tb_attr[]){TOH_INT("stash_type", 0)}, 1);
  assert_null(find(&t, ln));
  toh_teardown(&t);
  toh_setup(&t, "LayerNormalization", 17, 2, 0, 3, NULL, 0);
  assert_non_null(find(&t, ln));
  toh_teardown(&t);
  const tb_value_type *dbl[] = {&f64};
  toh_setup(&t, "ReduceLogSumExp", 13, 1, 0, 1, NULL, 0);
  assert_null(find(&t, dbl));
  toh_teardown(&t);
  toh_setup(&t, "ArgMax", 13, 1, 0, 1, NULL, 0);
  assert_null(find(&t, dbl));
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_more_unary),
      cmocka_unit_test(test_prelu_mod_clip),
      cmocka_unit_test(test_variadic),
      cmocka_unit_test(test_hardmax_argextreme_reduce),
      cmocka_unit_test(test_layernorm_stats),
      cmocka_unit_test(test_tile_depth_space_dropout),
      cmocka_unit_test(test_constant_and_old_prelu),
      cmocka_unit_test(test_pad),
      cmocka_unit_test(test_conv_transpose),
      cmocka_unit_test(test_declined_cases),
  };
  return cmocka_run_group_tests(tests, clx_setup, clx_teardown);
}
