/* The Vulkan kernels, one op at a time, on vulkan:0 (lavapipe) with the validation layer on, against the
 * level-0 CPU reference with |vulkan - ref| <= 1e-5 + 1e-4 * |ref| (fp32; erf's approximation and the
 * fp32 sums stay well inside it): elementwise ops (trigonometric, hyperbolic, activations with their
 * attributes) with broadcasting, MatMul / Gemm (transposes, alpha, beta, C broadcast, batches broadcast),
 * Conv (groups, strides, pads, dilations, 1-D, SAME padding), the fused ops, pools, BatchNormalization,
 * Softmax, LayerNormalization (with Mean and InvStdDev), reductions (any set of axes, an empty axes
 * input), Attention, the data movement ops, Gather and Cast, fp16 unary and binary ops; odd sizes
 * throughout, outputs preallocated and not; the reductions once more with subgroups switched off (the
 * shared-memory shaders). */
#include "backend/vulkan/vk_device.h"
#include "test_vulkan_exec_util.h"

static tb_backend *vk;

static int open_vk(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_CACHE_DIR", "off", 1); /* test_vulkan_exec_cache covers the cache */
  vk = vkx_open();
  return 0;
}

static int close_vk(void **state) {
  (void)state;
  vkx_close(vk);
  vk = NULL;
  unsetenv("TB_CACHE_DIR");
  return 0;
}

#define IN(...) ((toh_in[]){__VA_ARGS__})
#define F32(nd, shp, ptr) {TB_DTYPE_F32, nd, shp, ptr}
#define ATTRS(...) ((tb_attr[]){__VA_ARGS__}), (sizeof((tb_attr[]){__VA_ARGS__}) / sizeof(tb_attr))
#define NO_ATTRS NULL, 0

static float buf[8][8192];
static uint16_t half_buf[8][8192];
static double tol_rel = VKX_RTOL, tol_abs = VKX_ATOL;

/* A node run on the device vs the reference, with outputs preallocated and not. */
static void check(const char *domain, const char *op, int opset, const tb_attr *attrs, size_t n_attrs, size_t n_in, const toh_in *ins,
                  size_t n_out) {
  for (int prealloc = 0; prealloc < 2; prealloc++) {
    toh t;
    toh_begin(&t, NULL);
    vkx_add(&t, domain, op, opset, n_in, 0, n_out, attrs, n_attrs);
    for (size_t i = 0; i < n_in; i++) toh_input(&t, i, ins[i].dtype, ins[i].ndim, ins[i].shape, ins[i].data);
    vkx_check(&t, vk, prealloc != 0, tol_rel, tol_abs);
    toh_teardown(&t);
  }
  vkx_assert_quiet(vk);
}

static toh_in f32(size_t ndim, const int64_t *shape, int slot, float lo, float hi) {
  toh_in in = {TB_DTYPE_F32, ndim, {0}, buf[slot]};
  size_t n = 1;
  for (size_t d = 0; d < ndim; d++) n *= (size_t)(in.shape[d] = shape[d]);
  assert_true(n <= 8192);
  vkx_fill(buf[slot], n, (unsigned)slot + 7u, lo, hi);
  return in;
}

/* The same values as fp16. */
static toh_in f16(toh_in in, int slot) {
  int64_t n = 1;
  for (size_t d = 0; d < in.ndim; d++) n *= in.shape[d];
  for (int64_t i = 0; i < n; i++) half_buf[slot][i] = tb_f32_to_f16_ref(((const float *)in.data)[i]);
  in.dtype = TB_DTYPE_F16;
  in.data = half_buf[slot];
  return in;
}

#define X(slot, lo, hi, ...) f32(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (const int64_t[]){__VA_ARGS__}, slot, lo, hi)

static void unary_ops(void **state) {
  (void)state;
  static const char *const ops[] = {"Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Neg", "Abs", "Floor", "Ceil", "Identity"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) check("", ops[i], 13, NO_ATTRS, 1, IN(X(0, -4, 4, 3, 37)), 1);
  check("", "HardSwish", 14, NO_ATTRS, 1, IN(X(0, -4, 4, 3, 37)), 1);
  check("", "Sqrt", 13, NO_ATTRS, 1, IN(X(0, 0, 9, 101)), 1);
  check("", "Log", 13, NO_ATTRS, 1, IN(X(0, 0.01f, 9, 101)), 1);
  check("", "Reciprocal", 13, NO_ATTRS, 1, IN(X(0, 0.5f, 9, 101)), 1);
  check("", "LeakyRelu", 16, ATTRS(TOH_FLOAT("alpha", 0.2f)), 1, IN(X(0, -3, 3, 2, 2, 5)), 1);
  check("", "HardSigmoid", 6, ATTRS(TOH_FLOAT("alpha", 0.3f), TOH_FLOAT("beta", 0.4f)), 1, IN(X(0, -5, 5, 77)), 1);
  check("tb", "Gelu", 1, NO_ATTRS, 1, IN(X(0, -5, 5, 4, 33)), 1);
  check("tb", "Gelu", 1, ATTRS(TOH_STR("approximate", "tanh")), 1, IN(X(0, -5, 5, 4, 33)), 1);
  /* trigonometric and hyperbolic functions on their domains; activations with default and given attributes */
  static const char *const trig[] = {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh"};
  for (size_t i = 0; i < sizeof trig / sizeof trig[0]; i++) check("", trig[i], 9, NO_ATTRS, 1, IN(X(0, -0.95f, 0.95f, 3, 41)), 1);
  check("", "Acosh", 9, NO_ATTRS, 1, IN(X(0, 1.01f, 9, 101)), 1);
  static const char *const acts[] = {"Elu", "Selu", "Celu", "Softplus", "Softsign", "ThresholdedRelu", "Sign", "Round", "Shrink"};
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) check("", acts[i], 13, NO_ATTRS, 1, IN(X(0, -30, 30, 3, 37)), 1);
  check("", "Elu", 6, ATTRS(TOH_FLOAT("alpha", 2.0f)), 1, IN(X(0, -3, 3, 77)), 1);
  check("", "Selu", 6, ATTRS(TOH_FLOAT("alpha", 2.0f), TOH_FLOAT("gamma", 3.0f)), 1, IN(X(0, -3, 3, 77)), 1);
  check("", "Celu", 12, ATTRS(TOH_FLOAT("alpha", 2.0f)), 1, IN(X(0, -3, 3, 77)), 1);
  check("", "ThresholdedRelu", 10, ATTRS(TOH_FLOAT("alpha", 2.0f)), 1, IN(X(0, -3, 3, 77)), 1);
  check("", "Shrink", 9, ATTRS(TOH_FLOAT("lambd", 1.5f), TOH_FLOAT("bias", 1.5f)), 1, IN(X(0, -3, 3, 77)), 1);
  float halves[6] = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}; /* Round: halves to even */
  check("", "Round", 11, NO_ATTRS, 1, IN(F32(1, {6}, halves)), 1);
}

static void binary_ops_broadcast(void **state) {
  (void)state;
  static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    check("", ops[i], 13, NO_ATTRS, 2, IN(X(0, -2, 2, 2, 3, 5), X(1, 0.5f, 2, 3, 1)), 1);
    check("", ops[i], 13, NO_ATTRS, 2, IN(X(0, -2, 2, 1), X(1, 0.5f, 2, 4, 1, 3)), 1);
    check("", ops[i], 13, NO_ATTRS, 2, IN(X(0, -2, 2, 2, 1, 3, 1, 2, 3), X(1, 0.5f, 2, 4, 3, 1, 2, 1)), 1);
  }
  float two = 2.0f, three = 3.0f, half = 0.5f;
  check("", "Pow", 15, NO_ATTRS, 2, IN(X(0, -3, 3, 5, 7), F32(1, {1}, &two)), 1);
  check("", "Pow", 15, NO_ATTRS, 2, IN(X(0, -3, 3, 5, 7), F32(1, {1}, &three)), 1);
  check("", "Pow", 15, NO_ATTRS, 2, IN(X(0, 0, 3, 5, 7), F32(1, {1}, &half)), 1);
  /* PRelu: slope per channel and scalar; the multi-input ops with 1, 2 and 3 inputs broadcast together */
  check("", "PRelu", 16, NO_ATTRS, 2, IN(X(0, -3, 3, 2, 3, 4, 5), X(1, 0.1f, 0.9f, 3, 1, 1)), 1);
  check("", "PRelu", 16, NO_ATTRS, 2, IN(X(0, -3, 3, 7, 9), X(1, 0.1f, 0.9f, 1)), 1);
  check("", "PRelu", 6, NO_ATTRS, 2, IN(X(0, -3, 3, 2, 3, 4, 5), X(1, 0.1f, 0.9f, 3)), 1); /* opset 6: slope per channel */
  static const char *const variadic[] = {"Sum", "Mean", "Max", "Min"};
  for (size_t i = 0; i < sizeof variadic / sizeof variadic[0]; i++) {
    check("", variadic[i], 13, NO_ATTRS, 3, IN(X(0, -2, 2, 3, 1, 5), X(1, -2, 2, 4, 1), X(2, -2, 2, 2, 1, 1, 1)), 1);
    check("", variadic[i], 13, NO_ATTRS, 2, IN(X(0, -2, 2, 3, 5), X(1, -2, 2, 3, 5)), 1);
    check("", variadic[i], 13, NO_ATTRS, 1, IN(X(0, -2, 2, 3, 5)), 1);
  }
  float lo = -0.5f, hi = 0.7f;
  check("", "Clip", 13, NO_ATTRS, 3, IN(X(0, -2, 2, 3, 37), F32(0, {0}, &lo), F32(0, {0}, &hi)), 1);
  check("", "Clip", 13, NO_ATTRS, 1, IN(X(0, -2, 2, 3, 37)), 1);
  check("", "Clip", 6, ATTRS(TOH_FLOAT("min", -0.5f), TOH_FLOAT("max", 0.7f)), 1, IN(X(0, -2, 2, 3, 37)), 1);
  check("", "Clip", 6, NO_ATTRS, 1, IN(X(0, -2, 2, 3, 37)), 1);
  for (int omit_min = 0; omit_min < 2; omit_min++) { /* only max, only min */
    toh t;
    toh_begin(&t, NULL);
    vkx_add(&t, "", "Clip", 13, 3, omit_min ? 2u : 4u, 1, NULL, 0);
    toh_in x = X(0, -2, 2, 5, 7);
    toh_input(&t, 0, TB_DTYPE_F32, 2, x.shape, x.data);
    toh_input(&t, omit_min ? 2 : 1, TB_DTYPE_F32, 0, NULL, omit_min ? &hi : &lo);
    vkx_check(&t, vk, false, tol_rel, tol_abs);
    toh_teardown(&t);
  }
}

static void matmul_and_gemm(void **state) {
  (void)state;
  check("", "MatMul", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 5, 7), X(1, -1, 1, 7, 3)), 1);
  check("", "MatMul", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 2, 4, 17, 9), X(1, -1, 1, 9, 13)), 1);
  check("", "MatMul", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 2, 1, 5, 6), X(1, -1, 1, 3, 6, 4)), 1);
  check("", "MatMul", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 2, 4, 16, 8), X(1, -1, 1, 2, 4, 8, 16)), 1);
  check("", "MatMul", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 7), X(1, -1, 1, 7, 3)), 1);
  check("", "MatMul", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 3, 7), X(1, -1, 1, 7)), 1);
  check("", "Gemm", 13, NO_ATTRS, 3, IN(X(0, -1, 1, 5, 19), X(1, -1, 1, 19, 10), X(2, -1, 1, 10)), 1);
  check("", "Gemm", 13, ATTRS(TOH_INT("transA", 1), TOH_INT("transB", 1), TOH_FLOAT("alpha", 0.5f), TOH_FLOAT("beta", 2.0f)), 3,
        IN(X(0, -1, 1, 19, 5), X(1, -1, 1, 10, 19), X(2, -1, 1, 5, 1)), 1);
  check("", "Gemm", 13, ATTRS(TOH_INT("transB", 1)), 3, IN(X(0, -1, 1, 1, 64), X(1, -1, 1, 10, 64), X(2, -1, 1, 1)), 1);
  check("", "Gemm", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 33, 17), X(1, -1, 1, 17, 18)), 1);
  check("tb", "FusedMatMul", 1, ATTRS(TOH_STR("activation", "Tanh")), 2, IN(X(0, -1, 1, 2, 9, 8), X(1, -1, 1, 8, 5)), 1);
  check("tb", "FusedGemm", 1, ATTRS(TOH_STR("activation", "Relu"), TOH_INT("transB", 1)), 3,
        IN(X(0, -1, 1, 3, 16), X(1, -1, 1, 10, 16), X(2, -1, 1, 10)), 1);
  check("tb", "FusedGemm", 1, ATTRS(TOH_STR("activation", "Clip"), TOH_FLOAT("activation_min", -0.2f), TOH_FLOAT("activation_max", 0.3f)),
        2, IN(X(0, -1, 1, 3, 16), X(1, -1, 1, 16, 7)), 1);
}

static void conv_ops(void **state) {
  (void)state;
  check("", "Conv", 11, ATTRS(TOH_INTS("kernel_shape", 3, 3), TOH_INTS("pads", 1, 1, 1, 1), TOH_INTS("strides", 2, 2)), 3,
        IN(X(0, -1, 1, 1, 3, 9, 9), X(1, -1, 1, 4, 3, 3, 3), X(2, -1, 1, 4)), 1);
  check("", "Conv", 11, ATTRS(TOH_INT("group", 2), TOH_INTS("dilations", 2, 2), TOH_INTS("pads", 0, 1, 2, 1)), 2,
        IN(X(0, -1, 1, 2, 4, 7, 8), X(1, -1, 1, 6, 2, 3, 3)), 1);
  check("", "Conv", 11, ATTRS(TOH_STR("auto_pad", "SAME_UPPER"), TOH_INTS("strides", 2, 1)), 2,
        IN(X(0, -1, 1, 1, 2, 6, 5), X(1, -1, 1, 3, 2, 2, 2)), 1);
  check("", "Conv", 11, ATTRS(TOH_INTS("pads", 1, 0)), 3, IN(X(0, -1, 1, 2, 3, 11), X(1, -1, 1, 5, 3, 3), X(2, -1, 1, 5)), 1);
  check("", "Conv", 11, ATTRS(TOH_INT("group", 3)), 2, IN(X(0, -1, 1, 1, 3, 5, 5), X(1, -1, 1, 3, 1, 3, 3)), 1);
  check("tb", "FusedConv", 1, ATTRS(TOH_STR("activation", "Relu"), TOH_INTS("pads", 1, 1, 1, 1)), 4,
        IN(X(0, -1, 1, 1, 3, 6, 6), X(1, -1, 1, 4, 3, 3, 3), X(2, -1, 1, 4), X(3, -1, 1, 1, 4, 6, 6)), 1);
  check("tb", "FusedConv", 1, ATTRS(TOH_STR("activation", "LeakyRelu"), TOH_FLOAT("activation_alpha", 0.1f)), 2,
        IN(X(0, -1, 1, 1, 3, 6, 6), X(1, -1, 1, 4, 3, 3, 3)), 1);
}

static void pools_and_batchnorm(void **state) {
  (void)state;
  check("", "MaxPool", 12, ATTRS(TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 1, 1)), 1,
        IN(X(0, -1, 1, 1, 2, 9, 9)), 1);
  check("", "MaxPool", 12, ATTRS(TOH_INTS("kernel_shape", 2, 2), TOH_INTS("strides", 2, 2), TOH_INT("ceil_mode", 1)), 1,
        IN(X(0, -1, 1, 1, 2, 7, 7)), 1);
  check("", "MaxPool", 12, ATTRS(TOH_INTS("kernel_shape", 3), TOH_INTS("dilations", 2)), 1, IN(X(0, -1, 1, 2, 3, 11)), 1);
  check("", "AveragePool", 11, ATTRS(TOH_INTS("kernel_shape", 3, 3), TOH_INTS("pads", 1, 1, 1, 1)), 1, IN(X(0, -1, 1, 1, 2, 6, 7)), 1);
  check("", "AveragePool", 11, ATTRS(TOH_INTS("kernel_shape", 3, 3), TOH_INTS("pads", 1, 1, 1, 1), TOH_INT("count_include_pad", 1)), 1,
        IN(X(0, -1, 1, 1, 2, 6, 7)), 1);
  check("", "GlobalAveragePool", 1, NO_ATTRS, 1, IN(X(0, -1, 1, 2, 3, 5, 7)), 1);
  check("", "GlobalMaxPool", 1, NO_ATTRS, 1, IN(X(0, -1, 1, 2, 3, 5, 7)), 1);
  check("", "BatchNormalization", 15, ATTRS(TOH_FLOAT("epsilon", 1e-3f)), 5,
        IN(X(0, -1, 1, 2, 3, 4, 5), X(1, 0.5f, 1.5f, 3), X(2, -1, 1, 3), X(3, -0.5f, 0.5f, 3), X(4, 0.5f, 2, 3)), 1);
}

static void norms_and_reductions(void **state) {
  (void)state;
  check("", "Softmax", 13, NO_ATTRS, 1, IN(X(0, -5, 5, 3, 4, 101)), 1);
  check("", "Softmax", 13, ATTRS(TOH_INT("axis", 1)), 1, IN(X(0, -5, 5, 3, 7, 5)), 1);
  check("", "Softmax", 11, ATTRS(TOH_INT("axis", 1)), 1, IN(X(0, -5, 5, 3, 7, 5)), 1);
  check("", "LogSoftmax", 13, NO_ATTRS, 1, IN(X(0, -5, 5, 6, 33)), 1);
  check("", "LayerNormalization", 17, NO_ATTRS, 3, IN(X(0, -3, 3, 2, 5, 64), X(1, 0.5f, 1.5f, 64), X(2, -1, 1, 64)), 1);
  check("", "LayerNormalization", 17, ATTRS(TOH_INT("axis", -2), TOH_FLOAT("epsilon", 1e-3f)), 2, IN(X(0, -3, 3, 3, 5, 7), X(1, 0.5f, 1.5f, 5, 7)), 1);
  check("tb", "LayerNormalization", 1, NO_ATTRS, 3, IN(X(0, -3, 3, 2, 16, 200), X(1, 0.5f, 1.5f, 200), X(2, -1, 1, 200)), 1);
  check("", "InstanceNormalization", 6, NO_ATTRS, 3, IN(X(0, -3, 3, 2, 3, 5, 7), X(1, 0.5f, 1.5f, 3), X(2, -1, 1, 3)), 1);
  check("", "InstanceNormalization", 6, ATTRS(TOH_FLOAT("epsilon", 1e-2f)), 3, IN(X(0, -3, 3, 3, 4, 70), X(1, 0.5f, 1.5f, 4), X(2, -1, 1, 4)), 1);
  /* the optional outputs Mean (2 outputs) and Mean + InvStdDev (3) */
  check("", "LayerNormalization", 17, ATTRS(TOH_INT("axis", 1)), 3, IN(X(0, -3, 3, 3, 5, 7), X(1, 0.5f, 1.5f, 5, 7), X(2, -1, 1, 7)), 2);
  check("", "LayerNormalization", 17, ATTRS(TOH_INT("axis", 0)), 2, IN(X(0, -3, 3, 4, 9), X(1, 0.5f, 1.5f, 4, 9)), 3);
  check("", "LayerNormalization", 17, NO_ATTRS, 3, IN(X(0, -3, 3, 2, 3, 70), X(1, 0.5f, 1.5f, 70), X(2, -1, 1, 70)), 3);
  check("", "ReduceMean", 13, ATTRS(TOH_INTS("axes", -1)), 1, IN(X(0, -3, 3, 2, 16, 64)), 1);
  check("", "ReduceMean", 13, ATTRS(TOH_INTS("axes", 1, 2), TOH_INT("keepdims", 0)), 1, IN(X(0, -3, 3, 2, 3, 5, 7)), 1);
  check("", "ReduceMax", 13, NO_ATTRS, 1, IN(X(0, -3, 3, 3, 5, 7)), 1);
  check("", "ReduceMin", 13, ATTRS(TOH_INTS("axes", 0)), 1, IN(X(0, -3, 3, 9, 5)), 1);
  int64_t axes[2] = {1, 2};
  check("", "ReduceSum", 13, NO_ATTRS, 2, IN(X(0, -3, 3, 2, 3, 5, 7), {TB_DTYPE_I64, 1, {2}, axes}), 1);
  /* axes that are not one contiguous run (MVN's [0, 2, 3]), size-1 dimensions between them, rank 5 */
  check("", "ReduceMean", 13, ATTRS(TOH_INTS("axes", 0, 2, 3)), 1, IN(X(0, -3, 3, 2, 3, 5, 7)), 1);
  check("", "ReduceMax", 13, ATTRS(TOH_INTS("axes", 0, -1), TOH_INT("keepdims", 0)), 1, IN(X(0, -3, 3, 3, 5, 7)), 1);
  check("", "ReduceMin", 13, ATTRS(TOH_INTS("axes", 1, 3)), 1, IN(X(0, -3, 3, 2, 3, 1, 5, 4)), 1);
  check("", "ReduceSumSquare", 13, ATTRS(TOH_INTS("axes", 0, 3), TOH_INT("keepdims", 0)), 1, IN(X(0, -3, 3, 3, 1, 5, 2)), 1);
  int64_t axes3[3] = {0, 2, 4};
  check("", "ReduceSum", 13, NO_ATTRS, 2, IN(X(0, -3, 3, 2, 3, 5, 7, 3), {TB_DTYPE_I64, 1, {3}, axes3}), 1);
  /* L1, L2, log-sum-exp (large values: the max is subtracted first), product (values near 1) */
  check("", "ReduceL1", 13, ATTRS(TOH_INTS("axes", 0, 2)), 1, IN(X(0, -3, 3, 3, 5, 7)), 1);
  check("", "ReduceL2", 13, ATTRS(TOH_INTS("axes", -1), TOH_INT("keepdims", 0)), 1, IN(X(0, -3, 3, 3, 5, 130)), 1);
  check("", "ReduceLogSumExp", 13, ATTRS(TOH_INTS("axes", 1)), 1, IN(X(0, 50, 90, 3, 70, 2)), 1);
  check("", "ReduceLogSumExp", 13, NO_ATTRS, 1, IN(X(0, -3, 3, 4, 5)), 1);
  check("", "ReduceProd", 13, ATTRS(TOH_INTS("axes", 0, 2)), 1, IN(X(0, 0.8f, 1.25f, 5, 3, 19)), 1);
  check("", "ReduceProd", 13, NO_ATTRS, 1, IN(X(0, -1.1f, 1.1f, 3, 7)), 1);
  /* axes = [] (an empty value input): every axis, or none with noop_with_empty_axes */
  check("", "ReduceSum", 13, NO_ATTRS, 2, IN(X(0, -3, 3, 3, 2, 2), {TB_DTYPE_I64, 1, {0}, NULL}), 1);
  check("", "ReduceSum", 13, ATTRS(TOH_INT("noop_with_empty_axes", 1)), 2, IN(X(0, -3, 3, 3, 2, 2), {TB_DTYPE_I64, 1, {0}, NULL}), 1);
  check("tb", "Attention", 1, ATTRS(TOH_FLOAT("scale", 8.0f), TOH_INT("scale_divide", 1)), 3,
        IN(X(0, -1, 1, 2, 4, 16, 8), X(1, -1, 1, 2, 4, 8, 16), X(2, -1, 1, 2, 4, 16, 8)), 1);
  check("tb", "Attention", 1, ATTRS(TOH_FLOAT("scale", 0.3f)), 3, IN(X(0, -1, 1, 3, 5, 7), X(1, -1, 1, 7, 70), X(2, -1, 1, 3, 70, 9)), 1);
}

static void reductions_without_subgroups(void **state) {
  tb_vk_compute_stats stats;
  TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &stats));
  assert_true(stats.subgroup_arithmetic); /* lavapipe reports it */
  assert_true(stats.subgroups_used);
  tb_vk_force_no_subgroups(vk->state, true);
  TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &stats));
  assert_false(stats.subgroups_used);
  norms_and_reductions(state);
  tb_vk_force_no_subgroups(vk->state, false);
}

static void data_movement(void **state) {
  (void)state;
  int64_t shape[3] = {4, -1, 5}, axes1[1] = {1}, axes2[2] = {0, 2};
  check("", "Reshape", 14, NO_ATTRS, 2, IN(X(0, -1, 1, 2, 2, 3, 5), {TB_DTYPE_I64, 1, {3}, shape}), 1);
  check("", "Flatten", 13, ATTRS(TOH_INT("axis", 2)), 1, IN(X(0, -1, 1, 2, 3, 4, 5)), 1);
  check("", "Squeeze", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 3, 1, 5), {TB_DTYPE_I64, 1, {1}, axes1}), 1);
  check("", "Unsqueeze", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 3, 5), {TB_DTYPE_I64, 1, {2}, axes2}), 1);
  check("", "Transpose", 13, ATTRS(TOH_INTS("perm", 0, 2, 1, 3)), 1, IN(X(0, -1, 1, 2, 3, 5, 7)), 1);
  check("", "Transpose", 13, NO_ATTRS, 1, IN(X(0, -1, 1, 3, 5, 7)), 1);
  int64_t starts[2] = {1, -1}, ends[2] = {4, -100}, sl_axes[2] = {0, 2}, steps[2] = {2, -2};
  check("", "Slice", 13, NO_ATTRS, 5,
        IN(X(0, -1, 1, 5, 3, 9), {TB_DTYPE_I64, 1, {2}, starts}, {TB_DTYPE_I64, 1, {2}, ends}, {TB_DTYPE_I64, 1, {2}, sl_axes},
           {TB_DTYPE_I64, 1, {2}, steps}),
        1);
  /* DepthToSpace in both modes and SpaceToDepth (batch 2 keeps all 6 copy dimensions) */
  check("", "DepthToSpace", 13, ATTRS(TOH_INT("blocksize", 2)), 1, IN(X(0, -1, 1, 2, 12, 3, 5)), 1);
  check("", "DepthToSpace", 13, ATTRS(TOH_INT("blocksize", 3), TOH_STR("mode", "CRD")), 1, IN(X(0, -1, 1, 2, 18, 2, 3)), 1);
  check("", "SpaceToDepth", 13, ATTRS(TOH_INT("blocksize", 2)), 1, IN(X(0, -1, 1, 2, 3, 4, 6)), 1);
  /* Pad: constant (value from the device input, the attribute, the default 0), edge, reflect, negative pads crop */
  int64_t pads[8] = {0, 1, 2, 0, 1, 0, 3, -1};
  float pad_value = 1.25f;
  check("", "Pad", 13, NO_ATTRS, 3, IN(X(0, -1, 1, 2, 3, 4, 5), {TB_DTYPE_I64, 1, {8}, pads}, F32(0, {0}, &pad_value)), 1);
  check("", "Pad", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 2, 3, 4, 5), {TB_DTYPE_I64, 1, {8}, pads}), 1);
  check("", "Pad", 13, ATTRS(TOH_STR("mode", "edge")), 2, IN(X(0, -1, 1, 2, 3, 4, 5), {TB_DTYPE_I64, 1, {8}, pads}), 1);
  int64_t rpads[6] = {1, 2, 0, 2, 3, 0};
  check("", "Pad", 13, ATTRS(TOH_STR("mode", "reflect")), 2, IN(X(0, -1, 1, 3, 4, 5), {TB_DTYPE_I64, 1, {6}, rpads}), 1);
  check("", "Pad", 2, ATTRS(TOH_INTS("pads", 0, 0, 1, 2, 0, 0, 3, 1), TOH_FLOAT("value", -2.5f)), 1, IN(X(0, -1, 1, 1, 3, 4, 5)), 1);
  /* Constant with float32 values: a value tensor, value_floats, value_float */
  float cvals[6] = {1.5f, -2, 3, 0.25f, 5, -6};
  tb_ir_tensor value = {"v", TB_DTYPE_F32, 2, {2, 3}, cvals, sizeof cvals};
  check("", "Constant", 13, ATTRS(TOH_TENSOR("value", &value)), 0, NULL, 1);
  check("", "Constant", 13, ATTRS(TOH_FLOATS("value_floats", 1.5f, -2, 3)), 0, NULL, 1);
  check("", "Constant", 13, ATTRS(TOH_FLOAT("value_float", 0.75f)), 0, NULL, 1);
  int64_t to[3] = {2, 3, 4};
  check("", "Expand", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 3, 1), {TB_DTYPE_I64, 1, {3}, to}), 1);
  check("", "Concat", 13, ATTRS(TOH_INT("axis", 1)), 3, IN(X(0, -1, 1, 2, 3, 5), X(1, -1, 1, 2, 1, 5), X(2, -1, 1, 2, 4, 5)), 1);
  int64_t parts[3] = {2, 5, 1};
  check("", "Split", 13, ATTRS(TOH_INT("axis", -1)), 2, IN(X(0, -1, 1, 3, 8), {TB_DTYPE_I64, 1, {3}, parts}), 3);
  check("", "Split", 13, ATTRS(TOH_INT("axis", 0)), 1, IN(X(0, -1, 1, 6, 4)), 2);
  int64_t idx64[5] = {3, 0, -1, 2, 3};
  int32_t idx32[4] = {1, 0, 1, 1};
  check("", "Gather", 13, NO_ATTRS, 2, IN(X(0, -1, 1, 10, 6), {TB_DTYPE_I64, 2, {5, 1}, idx64}), 1);
  check("", "Gather", 13, ATTRS(TOH_INT("axis", 1)), 2, IN(X(0, -1, 1, 3, 2, 4), {TB_DTYPE_I32, 1, {4}, idx32}), 1);
}

static void cast_f16(void **state) {
  (void)state;
  check("", "Cast", 13, ATTRS(TOH_INT("to", 10)), 1, IN(X(0, -70000, 70000, 37)), 1);
  check("", "Cast", 13, ATTRS(TOH_INT("to", 10)), 1, IN(X(0, -2, 2, 3, 5)), 1);
  uint16_t halves[9];
  for (int i = 0; i < 9; i++) halves[i] = tb_f32_to_f16_ref((float)(i - 4) * 0.37f);
  check("", "Cast", 13, ATTRS(TOH_INT("to", 1)), 1, IN({TB_DTYPE_F16, 1, {9}, halves}), 1);
}

/* fp16 unary and binary kernels (shaderFloat16 + 16-bit storage, both reported by lavapipe), against the
 * reference rounded to fp16: within one fp16 ulp, |d| <= 1e-3 + 1e-3 * |ref|. */
static void fp16_elementwise(void **state) {
  (void)state;
  tb_vk_compute_stats stats;
  TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &stats));
  assert_true(stats.shader_float16);
  assert_true(stats.fp16_kernels);
  tol_rel = tol_abs = 1e-3;
  static const char *const unary[] = {"Relu", "Sigmoid", "Tanh", "Exp", "Erf", "Neg", "Abs", "Identity"};
  for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) check("", unary[i], 13, NO_ATTRS, 1, IN(f16(X(0, -4, 4, 3, 37), 0)), 1);
  check("tb", "Gelu", 1, NO_ATTRS, 1, IN(f16(X(0, -4, 4, 5, 9), 0)), 1);
  static const char *const binary[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
  for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++)
    check("", binary[i], 13, NO_ATTRS, 2, IN(f16(X(0, -2, 2, 2, 3, 5), 0), f16(X(1, 0.5f, 2, 3, 1), 1)), 1);
  check("", "PRelu", 16, NO_ATTRS, 2, IN(f16(X(0, -2, 2, 2, 3, 5), 0), f16(X(1, 0.1f, 0.9f, 3, 1), 1)), 1);
  check("", "Mean", 13, NO_ATTRS, 3, IN(f16(X(0, -2, 2, 2, 3, 5), 0), f16(X(1, -2, 2, 3, 1), 1), f16(X(2, -2, 2, 5), 2)), 1);
  check("", "Sin", 7, NO_ATTRS, 1, IN(f16(X(0, -3, 3, 4, 9), 0)), 1);
  tol_rel = VKX_RTOL;
  tol_abs = VKX_ATOL;
}

static void declines_what_it_cannot_run(void **state) {
  (void)state;
  toh t;
  toh_begin(&t, NULL);
  toh_add(&t, "Add", 13, 2, 0, 1, 0, NULL, 0);
  int64_t dims[1] = {3};
  tb_value_type i64 = toh_type(TB_DTYPE_I64, 1, dims), f = toh_type(TB_DTYPE_F32, 1, dims);
  const tb_value_type *ints[2] = {&i64, &i64}, *floats[2] = {&f, &f};
  assert_null(tbt_backend_kernel_find(vk, t.graph, toh_node(&t), ints)); /* int64 arithmetic stays on the CPU */
  assert_non_null(tbt_backend_kernel_find(vk, t.graph, toh_node(&t), floats));
  toh_teardown(&t);
  toh_begin(&t, NULL);
  toh_add(&t, "GRU", 14, 3, 0, 1, 0, NULL, 0); /* LSTM: test_vulkan_exec_lstm */
  assert_null(tbt_backend_kernel_find(vk, t.graph, toh_node(&t), floats));
  toh_teardown(&t);
  /* an int64 Constant feeds shape arithmetic: the CPU */
  int64_t ivals[2] = {3, 4};
  tb_ir_tensor ivalue = {"v", TB_DTYPE_I64, 1, {2}, ivals, sizeof ivals};
  tb_attr iattr = TOH_TENSOR("value", &ivalue);
  toh_begin(&t, NULL);
  toh_add(&t, "Constant", 13, 0, 0, 1, 0, &iattr, 1);
  assert_null(tbt_backend_kernel_find(vk, t.graph, toh_node(&t), NULL));
  toh_teardown(&t);
  /* a driver without a compute entry point: every node goes to the CPU */
  toh_begin(&t, NULL);
  toh_add(&t, "Add", 13, 2, 0, 1, 0, NULL, 0);
  vk_state *s = vk->state;
  snprintf(s->compute_missing, sizeof s->compute_missing, "vkCmdDispatch");
  assert_null(tbt_backend_kernel_find(vk, t.graph, toh_node(&t), floats));
  s->compute_missing[0] = '\0';
  assert_non_null(tbt_backend_kernel_find(vk, t.graph, toh_node(&t), floats));
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unary_ops),
      cmocka_unit_test(binary_ops_broadcast),
      cmocka_unit_test(matmul_and_gemm),
      cmocka_unit_test(conv_ops),
      cmocka_unit_test(pools_and_batchnorm),
      cmocka_unit_test(norms_and_reductions),
      cmocka_unit_test(reductions_without_subgroups),
      cmocka_unit_test(data_movement),
      cmocka_unit_test(cast_f16),
      cmocka_unit_test(fp16_elementwise),
      cmocka_unit_test(declines_what_it_cannot_run),
  };
  return cmocka_run_group_tests(tests, open_vk, close_vk);
}
