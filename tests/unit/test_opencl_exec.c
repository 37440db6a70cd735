/* The OpenCL backend's kernels, one node at a time on PoCL's opencl:0, against the CPU's level-0
 * reference kernels (tolerance |dev - ref| <= 1e-5 + 1e-4 |ref|; GEMM and Conv sums at 1e-4 + 1e-4 |ref|):
 * unary ops, broadcasting binary ops, float16 elementwise and Cast, every data-movement op, Conv with
 * groups / strides / pads / dilations and 1-D, the pools, BatchNormalization, reductions, softmax, layer
 * norm and the fused tb ops; each with outputs preallocated and left to the kernel; odd sizes throughout. */
#include "backend/opencl/cl_clblast.h"
#include "test_opencl_exec_util.h"

#define F32(nd, ...) TB_DTYPE_F32, nd, {__VA_ARGS__}
#define IN(nd, data, ...) ((toh_in){TB_DTYPE_F32, nd, {__VA_ARGS__}, data})

static void test_unary_ops(void **state) {
  (void)state;
  static const char *const ops[] = {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg", "Abs", "Identity", "Floor", "Ceil", "Sin", "Cos", "Softplus"};
  float x[105];
  clx_fill(x, 105, 1, -4.0f, 4.0f);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    toh t;
    toh_setup(&t, ops[i], 13, 1, 0, 1, NULL, 0);
    toh_in in[] = {IN(3, x, 3, 5, 7)};
    clx_check(&t, in);
    toh_teardown(&t);
  }
  float pos[33];
  clx_fill(pos, 33, 2, 0.01f, 9.0f);
  static const char *const positive[] = {"Sqrt", "Log", "Reciprocal"};
  for (size_t i = 0; i < 3; i++) {
    toh t;
    toh_setup(&t, positive[i], 13, 1, 0, 1, NULL, 0);
    toh_in in[] = {IN(2, pos, 3, 11)};
    clx_check(&t, in);
    toh_teardown(&t);
  }
  toh t;
  toh_setup(&t, "LeakyRelu", 16, 1, 0, 1, (tb_attr[]){TOH_FLOAT("alpha", 0.3f)}, 1);
  toh_in in[] = {IN(1, x, 105)};
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "HardSigmoid", 6, 1, 0, 1, (tb_attr[]){TOH_FLOAT("alpha", 0.25f), TOH_FLOAT("beta", 0.4f)}, 2);
  clx_check(&t, in);
  toh_teardown(&t);
}

static void check_binary(const char *op, size_t na, const int64_t *sa, size_t nb, const int64_t *sb, float lo, float hi) {
  float a[256], b[256];
  clx_fill(a, 256, 3, lo, hi);
  clx_fill(b, 256, 4, lo, hi);
  toh t;
  toh_setup(&t, op, 14, 2, 0, 1, NULL, 0);
  toh_in in[2] = {{TB_DTYPE_F32, na, {0}, a}, {TB_DTYPE_F32, nb, {0}, b}};
  memcpy(in[0].shape, sa, na * sizeof(int64_t));
  memcpy(in[1].shape, sb, nb * sizeof(int64_t));
  clx_check(&t, in);
  toh_teardown(&t);
}

static void test_binary_broadcast(void **state) {
  (void)state;
  static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  for (size_t i = 0; i < 6; i++) {
    check_binary(ops[i], 3, (int64_t[]){2, 3, 5}, 1, (int64_t[]){5}, 0.5f, 3.0f);
    check_binary(ops[i], 3, (int64_t[]){2, 1, 5}, 2, (int64_t[]){3, 1}, 0.5f, 3.0f);
    check_binary(ops[i], 0, (int64_t[]){0}, 2, (int64_t[]){7, 3}, 0.5f, 3.0f);
    check_binary(ops[i], 2, (int64_t[]){4, 9}, 2, (int64_t[]){4, 9}, -3.0f, 3.0f);
  }
  check_binary("Pow", 2, (int64_t[]){3, 7}, 2, (int64_t[]){3, 7}, 0.1f, 2.5f);
  /* Pow by the constant 2 of the encoder's layer norm, on negative bases */
  float x[21], two = 2.0f, half = 0.5f;
  clx_fill(x, 21, 5, -3.0f, 3.0f);
  toh t;
  toh_setup(&t, "Pow", 15, 2, 0, 1, NULL, 0);
  toh_in in[] = {IN(2, x, 3, 7), IN(0, &two, 0)};
  clx_check(&t, in);
  toh_teardown(&t);
  float pos[21];
  clx_fill(pos, 21, 6, 0.0f, 5.0f);
  toh_setup(&t, "Pow", 15, 2, 0, 1, NULL, 0);
  toh_in in2[] = {IN(2, pos, 3, 7), IN(1, &half, 1)};
  clx_check(&t, in2);
  toh_teardown(&t);
}

static void test_float16(void **state) {
  (void)state;
  float f[60];
  uint16_t h[60], g[5];
  clx_fill(f, 60, 7, -3.0f, 3.0f);
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, f, TB_DTYPE_F16, h, 60, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, f + 10, TB_DTYPE_F16, g, 5, true));
  toh t;
  toh_setup(&t, "Add", 14, 2, 0, 1, NULL, 0);
  toh_in add[] = {{TB_DTYPE_F16, 3, {3, 4, 5}, h}, {TB_DTYPE_F16, 1, {5}, g}};
  clx_check_tol(&t, add, true, 0.0, 0.0); /* rounded once from exact float sums: bit-exact with the CPU */
  toh_teardown(&t);
  toh_setup(&t, "Relu", 14, 1, 0, 1, NULL, 0);
  toh_in relu[] = {{TB_DTYPE_F16, 2, {6, 10}, h}};
  clx_check_tol(&t, relu, false, 0.0, 0.0);
  toh_teardown(&t);
  toh_setup(&t, "Transpose", 13, 1, 0, 1, (tb_attr[]){TOH_INTS("perm", 1, 0)}, 1);
  clx_check_tol(&t, relu, true, 0.0, 0.0);
  toh_teardown(&t);
  toh_setup(&t, "Cast", 13, 1, 0, 1, (tb_attr[]){TOH_INT("to", 10)}, 1);
  toh_in to16[] = {IN(2, f, 6, 10)};
  clx_check_tol(&t, to16, true, 0.0, 0.0);
  toh_teardown(&t);
  toh_setup(&t, "Cast", 13, 1, 0, 1, (tb_attr[]){TOH_INT("to", 1)}, 1);
  clx_check_tol(&t, relu, false, 0.0, 0.0);
  toh_teardown(&t);
  /* Cast to int32 stays on the CPU */
  toh_setup(&t, "Cast", 13, 1, 0, 1, (tb_attr[]){TOH_INT("to", 6)}, 1);
  tb_value_type ty = toh_type(TB_DTYPE_F32, 1, (int64_t[]){4});
  const tb_value_type *tys[] = {&ty};
  assert_null(tbt_backend_kernel_find(clx_dev, t.graph, toh_node(&t), tys));
  toh_teardown(&t);
}

static void test_data_movement(void **state) {
  (void)state;
  float x[210], y[210], z[210];
  clx_fill(x, 210, 8, -2.0f, 2.0f);
  clx_fill(y, 210, 9, -2.0f, 2.0f);
  clx_fill(z, 210, 10, -2.0f, 2.0f);
  toh t;
  toh_setup(&t, "Transpose", 13, 1, 0, 1, (tb_attr[]){TOH_INTS("perm", 0, 2, 3, 1)}, 1);
  toh_in tr[] = {IN(4, x, 2, 3, 5, 7)};
  clx_check(&t, tr);
  toh_teardown(&t);
  toh_setup(&t, "Transpose", 13, 1, 0, 1, NULL, 0);
  clx_check(&t, tr);
  toh_teardown(&t);
  int64_t shape[] = {6, -1, 7};
  toh_setup(&t, "Reshape", 14, 2, 0, 1, NULL, 0);
  toh_in rs[] = {IN(4, x, 2, 3, 5, 7), {TB_DTYPE_I64, 1, {3}, shape}};
  clx_check(&t, rs);
  toh_teardown(&t);
  toh_setup(&t, "Flatten", 13, 1, 0, 1, (tb_attr[]){TOH_INT("axis", 2)}, 1);
  clx_check(&t, tr);
  toh_teardown(&t);
  int64_t axes[] = {0, 2};
  toh_setup(&t, "Unsqueeze", 13, 2, 0, 1, NULL, 0);
  toh_in us[] = {IN(2, x, 5, 7), {TB_DTYPE_I64, 1, {2}, axes}};
  clx_check(&t, us);
  toh_teardown(&t);
  int64_t sq_axes[] = {1};
  toh_setup(&t, "Squeeze", 13, 2, 0, 1, NULL, 0);
  toh_in sq[] = {IN(3, x, 5, 1, 7), {TB_DTYPE_I64, 1, {1}, sq_axes}};
  clx_check(&t, sq);
  toh_teardown(&t);
  toh_setup(&t, "Concat", 13, 3, 0, 1, (tb_attr[]){TOH_INT("axis", 1)}, 1);
  toh_in cc[] = {IN(3, x, 2, 3, 5), IN(3, y, 2, 1, 5), IN(3, z, 2, 4, 5)};
  clx_check(&t, cc);
  toh_teardown(&t);
  toh_setup(&t, "Concat", 13, 2, 0, 1, (tb_attr[]){TOH_INT("axis", -1)}, 1);
  toh_in cc2[] = {IN(2, x, 3, 5), IN(2, y, 3, 2)};
  clx_check(&t, cc2);
  toh_teardown(&t);
  int64_t split[] = {2, 5};
  toh_setup(&t, "Split", 13, 2, 0, 2, (tb_attr[]){TOH_INT("axis", -1)}, 1);
  toh_in sp[] = {IN(3, x, 3, 2, 7), {TB_DTYPE_I64, 1, {2}, split}};
  clx_check(&t, sp);
  toh_teardown(&t);
  int64_t starts[] = {4, 1}, ends[] = {-100, 7}, sl_axes[] = {2, 0}, steps[] = {-2, 3};
  toh_setup(&t, "Slice", 13, 5, 0, 1, NULL, 0);
  toh_in sl[] = {IN(3, x, 8, 3, 7), {TB_DTYPE_I64, 1, {2}, starts}, {TB_DTYPE_I64, 1, {2}, ends}, {TB_DTYPE_I64, 1, {2}, sl_axes},
                 {TB_DTYPE_I64, 1, {2}, steps}};
  clx_check(&t, sl);
  toh_teardown(&t);
  int64_t to_shape[] = {2, 3, 5};
  toh_setup(&t, "Expand", 13, 2, 0, 1, NULL, 0);
  toh_in ex[] = {IN(2, x, 3, 1), {TB_DTYPE_I64, 1, {3}, to_shape}};
  clx_check(&t, ex);
  toh_teardown(&t);
  int64_t idx[] = {3, -1, 0, 4, 4, -5};
  toh_setup(&t, "Gather", 13, 2, 0, 1, (tb_attr[]){TOH_INT("axis", 1)}, 1);
  toh_in ga[] = {IN(3, x, 2, 5, 3), {TB_DTYPE_I64, 2, {2, 3}, idx}};
  clx_check(&t, ga);
  toh_teardown(&t);
  int32_t idx32[] = {6, 0, 2};
  toh_setup(&t, "Gather", 13, 2, 0, 1, NULL, 0);
  toh_in ga32[] = {IN(2, x, 7, 4), {TB_DTYPE_I32, 1, {3}, idx32}};
  clx_check(&t, ga32);
  toh_teardown(&t);
}

static void test_gather_out_of_range(void **state) {
  (void)state;
  float x[12] = {0};
  int64_t idx[] = {1, 4};
  toh t;
  toh_setup(&t, "Gather", 13, 2, 0, 1, NULL, 0);
  tb_tensor *in[2] = {toh_tensor(&t, &IN(2, x, 4, 3)), toh_tensor(&t, &(toh_in){TB_DTYPE_I64, 1, {2}, idx})}, *out[1] = {NULL};
  assert_int_equal(clx_run_device(&t, in, out, true, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "index 4 at position 1 is outside [-4, 4)");
  TB_ASSERT_CONTAINS(tb_last_error(), "n0");
  toh_clear(in, 2);
  toh_clear(out, 1);
  toh_teardown(&t);
}

static void test_conv(void **state) {
  (void)state;
  static float x[2 * 4 * 9 * 11], w[6 * 2 * 3 * 3], b[6], w1[5 * 3 * 4], x1[2 * 3 * 13];
  clx_fill(x, sizeof x / 4, 11, -1.0f, 1.0f);
  clx_fill(w, sizeof w / 4, 12, -1.0f, 1.0f);
  clx_fill(b, 6, 13, -1.0f, 1.0f);
  toh t;
  toh_setup(&t, "Conv", 11, 3, 0, 1,
            (tb_attr[]){TOH_INT("group", 2), TOH_INTS("strides", 2, 1), TOH_INTS("pads", 1, 0, 2, 1), TOH_INTS("dilations", 1, 2)}, 4);
  toh_in in[] = {IN(4, x, 2, 4, 9, 11), IN(4, w, 6, 2, 3, 3), IN(1, b, 6)};
  clx_check_tol(&t, in, true, 1e-4, 1e-4);
  clx_check_tol(&t, in, false, 1e-4, 1e-4);
  toh_teardown(&t);
  toh_setup(&t, "Conv", 11, 2, 0, 1, (tb_attr[]){TOH_STR("auto_pad", "SAME_UPPER"), TOH_INTS("strides", 2, 2)}, 2);
  toh_in same[] = {IN(4, x, 2, 4, 9, 11), IN(4, w, 4, 4, 3, 1)};
  clx_check_tol(&t, same, true, 1e-4, 1e-4);
  toh_teardown(&t);
  clx_fill(w1, sizeof w1 / 4, 14, -1.0f, 1.0f);
  clx_fill(x1, sizeof x1 / 4, 15, -1.0f, 1.0f);
  toh_setup(&t, "Conv", 11, 2, 0, 1, (tb_attr[]){TOH_INTS("pads", 2, 1), TOH_INTS("strides", 3)}, 2);
  toh_in one_d[] = {IN(3, x1, 2, 3, 13), IN(3, w1, 5, 3, 4)};
  clx_check_tol(&t, one_d, true, 1e-4, 1e-4);
  toh_teardown(&t);
}

static void test_pool_norm(void **state) {
  (void)state;
  static float x[2 * 3 * 9 * 7], s[3], b[3], m[3], v[3];
  clx_fill(x, sizeof x / 4, 16, -2.0f, 2.0f);
  clx_fill(s, 3, 17, 0.5f, 1.5f);
  clx_fill(b, 3, 18, -1.0f, 1.0f);
  clx_fill(m, 3, 19, -0.5f, 0.5f);
  clx_fill(v, 3, 20, 0.2f, 2.0f);
  toh_in in[] = {IN(4, x, 2, 3, 9, 7)};
  toh t;
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, (tb_attr[]){TOH_INTS("kernel_shape", 3, 2), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 0, 1, 1)}, 3);
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2), TOH_INTS("strides", 2, 2), TOH_INT("ceil_mode", 1)}, 3);
  clx_check(&t, in);
  toh_teardown(&t);
  for (int pad = 0; pad < 2; pad++) {
    toh_setup(&t, "AveragePool", 11, 1, 0, 1,
              (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 1), TOH_INTS("pads", 1, 1, 1, 1), TOH_INT("count_include_pad", pad)}, 4);
    clx_check(&t, in);
    toh_teardown(&t);
  }
  toh_setup(&t, "GlobalAveragePool", 1, 1, 0, 1, NULL, 0);
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "GlobalMaxPool", 1, 1, 0, 1, NULL, 0);
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "BatchNormalization", 15, 5, 0, 1, (tb_attr[]){TOH_FLOAT("epsilon", 1e-3f)}, 1);
  toh_in bn[] = {IN(4, x, 2, 3, 9, 7), IN(1, s, 3), IN(1, b, 3), IN(1, m, 3), IN(1, v, 3)};
  clx_check(&t, bn);
  toh_teardown(&t);
}

static void test_reduce_softmax_layernorm(void **state) {
  (void)state;
  static float x[3 * 5 * 7 * 2], sc[14], bi[14];
  clx_fill(x, sizeof x / 4, 21, -3.0f, 3.0f);
  clx_fill(sc, 14, 22, 0.5f, 1.5f);
  clx_fill(bi, 14, 23, -1.0f, 1.0f);
  toh_in in[] = {IN(4, x, 3, 5, 7, 2)};
  toh t;
  static const char *const reduce[] = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceSumSquare", "ReduceL1", "ReduceL2"};
  for (size_t i = 0; i < 6; i++) {
    toh_setup(&t, reduce[i], 13, 1, 0, 1, (tb_attr[]){TOH_INTS("axes", 1, -1), TOH_INT("keepdims", (int64_t)(i % 2))}, 2);
    clx_check(&t, in);
    toh_teardown(&t);
  }
  toh_setup(&t, "ReduceMean", 13, 1, 0, 1, (tb_attr[]){TOH_INTS("axes", -1)}, 1);
  clx_check(&t, in);
  toh_teardown(&t);
  int64_t axes[] = {0, 2};
  toh_setup(&t, "ReduceSum", 13, 2, 0, 1, NULL, 0);
  toh_in rs[] = {IN(4, x, 3, 5, 7, 2), {TB_DTYPE_I64, 1, {2}, axes}};
  clx_check(&t, rs);
  toh_teardown(&t);
  toh_setup(&t, "ReduceProd", 13, 1, 0, 1, NULL, 0); /* no axes: everything */
  toh_in small[] = {IN(2, x, 2, 3)};
  clx_check(&t, small);
  toh_teardown(&t);
  toh_setup(&t, "Softmax", 13, 1, 0, 1, (tb_attr[]){TOH_INT("axis", 1)}, 1);
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "Softmax", 11, 1, 0, 1, (tb_attr[]){TOH_INT("axis", 2)}, 1); /* coerced to 2-D */
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "LogSoftmax", 13, 1, 0, 1, NULL, 0);
  clx_check(&t, in);
  toh_teardown(&t);
  toh_setup(&t, "LayerNormalization", 17, 3, 0, 1, (tb_attr[]){TOH_INT("axis", -2), TOH_FLOAT("epsilon", 1e-4f)}, 2);
  toh_in ln[] = {IN(4, x, 3, 5, 7, 2), IN(2, sc, 7, 2), IN(2, bi, 7, 2)};
  clx_check(&t, ln);
  toh_teardown(&t);
  clx_tb_node(&t, "LayerNormalization", 3, 0, (tb_attr[]){TOH_INT("axis", -1)}, 1);
  toh_in tln[] = {IN(3, x, 15, 7, 2), IN(1, sc, 2), IN(1, bi, 2)};
  clx_check(&t, tln);
  toh_teardown(&t);
}

static void test_gemm_family(void **state) {
  (void)state;
  static float a[17 * 23], b[4 * 9 * 6], c[13]; /* a: the largest left operand, 17 x 23 */
  clx_fill(a, sizeof a / 4, 24, -1.0f, 1.0f);
  clx_fill(b, sizeof b / 4, 25, -1.0f, 1.0f);
  clx_fill(c, 13, 26, -1.0f, 1.0f);
  for (int blas = 0; blas < 2; blas++) {
    if (blas) unsetenv("TB_CLBLAST");
    else setenv("TB_CLBLAST", "off", 1);
    unsigned long calls = tb_clblast_calls();
    toh t;
    toh_setup(&t, "MatMul", 13, 2, 0, 1, NULL, 0);
    toh_in bm[] = {IN(4, a, 2, 1, 5, 9), IN(3, b, 4, 9, 6)};
    clx_check_tol(&t, bm, true, 1e-4, 1e-4);
    clx_check_tol(&t, bm, false, 1e-4, 1e-4);
    toh_in v1[] = {IN(1, a, 9), IN(3, b, 4, 9, 6)};
    clx_check_tol(&t, v1, true, 1e-4, 1e-4);
    toh_in v2[] = {IN(3, a, 3, 5, 9), IN(1, b, 9)};
    clx_check_tol(&t, v2, true, 1e-4, 1e-4);
    toh_in big[] = {IN(2, a, 17, 23), IN(2, b, 23, 9)};
    clx_check_tol(&t, big, true, 1e-4, 1e-4);
    toh_teardown(&t);
    toh_setup(&t, "Gemm", 13, 3, 0, 1,
              (tb_attr[]){TOH_INT("transA", 1), TOH_INT("transB", 1), TOH_FLOAT("alpha", 0.7f), TOH_FLOAT("beta", -1.3f)}, 4);
    toh_in g[] = {IN(2, a, 9, 5), IN(2, b, 13, 9), IN(1, c, 13)};
    clx_check_tol(&t, g, true, 1e-4, 1e-4);
    toh_in g2[] = {IN(2, a, 9, 5), IN(2, b, 13, 9), IN(2, c, 5, 1)};
    clx_check_tol(&t, g2, false, 1e-4, 1e-4);
    toh_teardown(&t);
    toh_setup(&t, "Gemm", 13, 2, 0, 1, NULL, 0);
    toh_in g3[] = {IN(2, a, 7, 11), IN(2, b, 11, 3)};
    clx_check_tol(&t, g3, true, 1e-4, 1e-4);
    toh_teardown(&t);
    clx_tb_node(&t, "FusedGemm", 3, 0, (tb_attr[]){TOH_INT("transB", 1), TOH_STR("activation", "Relu")}, 2);
    toh_in fg[] = {IN(2, a, 5, 9), IN(2, b, 13, 9), IN(1, c, 13)};
    clx_check_tol(&t, fg, true, 1e-4, 1e-4);
    toh_teardown(&t);
    clx_tb_node(&t, "FusedMatMul", 2, 0, (tb_attr[]){TOH_STR("activation", "LeakyRelu"), TOH_FLOAT("activation_alpha", 0.2f)}, 2);
    toh_in fm[] = {IN(3, a, 3, 5, 9), IN(2, b, 9, 6)};
    clx_check_tol(&t, fm, true, 1e-4, 1e-4);
    toh_teardown(&t);
    if (blas) assert_true(tb_clblast_calls() > calls); /* CLBlast ran the products */
    else assert_int_equal(tb_clblast_calls(), calls); /* the built-in tiled kernel did */
  }
  unsetenv("TB_CLBLAST");
}

static void test_fused_ops(void **state) {
  (void)state;
  static float x[2 * 4 * 7 * 5], w[6 * 4 * 3 * 3], b[6], r[2 * 6 * 7 * 5], q[2 * 3 * 5 * 8], k[2 * 3 * 8 * 7], v[2 * 3 * 7 * 4], mask[5 * 7];
  clx_fill(x, sizeof x / 4, 27, -1.0f, 1.0f);
  clx_fill(w, sizeof w / 4, 28, -1.0f, 1.0f);
  clx_fill(b, 6, 29, -1.0f, 1.0f);
  clx_fill(r, sizeof r / 4, 30, -1.0f, 1.0f);
  toh t;
  clx_tb_node(&t, "FusedConv", 4, 0, (tb_attr[]){TOH_INTS("pads", 1, 1, 1, 1), TOH_STR("activation", "Clip"), TOH_FLOAT("activation_min", -0.5f), TOH_FLOAT("activation_max", 0.8f)}, 4);
  toh_in fc[] = {IN(4, x, 2, 4, 7, 5), IN(4, w, 6, 4, 3, 3), IN(1, b, 6), IN(4, r, 2, 6, 7, 5)};
  clx_check_tol(&t, fc, true, 1e-4, 1e-4);
  toh_teardown(&t);
  clx_tb_node(&t, "Gelu", 1, 0, NULL, 0);
  toh_in ge[] = {IN(2, x, 7, 20)};
  clx_check(&t, ge);
  toh_teardown(&t);
  clx_tb_node(&t, "Gelu", 1, 0, (tb_attr[]){TOH_STR("approximate", "tanh")}, 1);
  clx_check(&t, ge);
  toh_teardown(&t);
  clx_fill(q, sizeof q / 4, 31, -1.0f, 1.0f);
  clx_fill(k, sizeof k / 4, 32, -1.0f, 1.0f);
  clx_fill(v, sizeof v / 4, 33, -1.0f, 1.0f);
  clx_fill(mask, sizeof mask / 4, 34, -2.0f, 0.0f);
  clx_tb_node(&t, "Attention", 4, 0, (tb_attr[]){TOH_FLOAT("scale", 2.5f), TOH_INT("scale_divide", 1)}, 2);
  toh_in at[] = {IN(4, q, 2, 3, 5, 8), IN(4, k, 2, 3, 8, 7), IN(4, v, 2, 3, 7, 4), IN(2, mask, 5, 7)};
  clx_check_tol(&t, at, true, 1e-4, 1e-4);
  toh_teardown(&t);
  clx_tb_node(&t, "Attention", 4, 1u << 3, NULL, 0);
  toh_in at2[] = {IN(3, q, 3, 5, 8), IN(4, k, 2, 3, 8, 7), IN(3, v, 3, 7, 4), {TOH_NONE, 0, {0}, NULL}};
  clx_check_tol(&t, at2, false, 1e-4, 1e-4);
  toh_teardown(&t);
}

/* Ops and types the device leaves to the CPU: find_kernel says NULL. */
static void test_declined(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "Shape", 15, 1, 0, 1, NULL, 0);
  tb_value_type f = toh_type(TB_DTYPE_F32, 1, (int64_t[]){4}), i64 = toh_type(TB_DTYPE_I64, 1, (int64_t[]){4});
  const tb_value_type *one_f[] = {&f}, *one_i[] = {&i64}, *two_i[] = {&i64, &i64};
  assert_null(tbt_backend_kernel_find(clx_dev, t.graph, toh_node(&t), one_f));
  toh_teardown(&t);
  toh_setup(&t, "Add", 14, 2, 0, 1, NULL, 0);
  assert_null(tbt_backend_kernel_find(clx_dev, t.graph, toh_node(&t), two_i));
  toh_teardown(&t);
  toh_setup(&t, "Relu", 14, 1, 0, 1, NULL, 0);
  assert_null(tbt_backend_kernel_find(clx_dev, t.graph, toh_node(&t), one_i));
  assert_non_null(tbt_backend_kernel_find(clx_dev, t.graph, toh_node(&t), one_f));
  toh_teardown(&t);
}

/* TB_CLBLAST: off and 0 switch CLBlast off; a value that is neither on/1 nor off/0 is not guessed at: the
 * built-in GEMM runs and the reason names the value. */
static void test_clblast_switch(void **state) {
  (void)state;
  char why[300] = "";
  setenv("TB_CLBLAST", "off", 1);
  assert_false(tb_clblast_available(why, sizeof why));
  assert_string_equal(why, "TB_CLBLAST=off");
  setenv("TB_CLBLAST", "yes please", 1);
  assert_false(tb_clblast_available(why, sizeof why));
  assert_string_equal(why, "TB_CLBLAST='yes please' is not one of on, 1, off, 0; the built-in GEMM runs");
  setenv("TB_CLBLAST", "on", 1);
  bool on = tb_clblast_available(why, sizeof why);
  unsetenv("TB_CLBLAST");
  assert_int_equal(on, tb_clblast_available(why, sizeof why)); /* on is the default */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unary_ops),       cmocka_unit_test(test_binary_broadcast), cmocka_unit_test(test_float16),
      cmocka_unit_test(test_data_movement),   cmocka_unit_test(test_gather_out_of_range), cmocka_unit_test(test_conv),
      cmocka_unit_test(test_pool_norm),       cmocka_unit_test(test_reduce_softmax_layernorm),
      cmocka_unit_test(test_gemm_family),     cmocka_unit_test(test_clblast_switch),     cmocka_unit_test(test_fused_ops),        cmocka_unit_test(test_declined),
  };
  return cmocka_run_group_tests(tests, clx_setup, clx_teardown);
}
