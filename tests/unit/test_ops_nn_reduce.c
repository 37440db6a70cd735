/* Reductions (axes as attribute or input, keepdims, noop_with_empty_axes), ArgMax/ArgMin
 * (select_last_index), Einsum (implicit/explicit output, ellipsis, diagonals, bad equations) and the
 * quantization ops (per tensor and per axis, round half to even, saturation). */
#include "test_ops_nn_util.h"

#define F32 TB_DTYPE_F32

static const float x23[6] = {1, 2, 3, 4, 5, 6}; /* [[1,2,3],[4,5,6]] */

static void run_reduce(const char *op, int opset, const tb_attr *attrs, size_t n_attrs, size_t ndim,
                       const int64_t *shape, const float *want) {
  toh t;
  tb_tensor *out[1];
  toh_setup(&t, op, opset, 1, 0, 1, attrs, n_attrs);
  toh_in in[1] = {{F32, 2, {2, 3}, x23}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], ndim, shape, want);
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_reduce_kernels(void **state) {
  (void)state;
  tb_attr ax1[] = {TOH_INTS("axes", 1)};
  tb_attr ax0_flat[] = {TOH_INTS("axes", -2), TOH_INT("keepdims", 0)};
  run_reduce("ReduceSum", 11, ax1, 1, 2, (int64_t[]){2, 1}, (float[]){6, 15});
  run_reduce("ReduceMean", 13, ax0_flat, 2, 1, (int64_t[]){3}, (float[]){2.5f, 3.5f, 4.5f});
  run_reduce("ReduceMax", 13, ax1, 1, 2, (int64_t[]){2, 1}, (float[]){3, 6});
  run_reduce("ReduceMin", 13, ax0_flat, 2, 1, (int64_t[]){3}, (float[]){1, 2, 3});
  run_reduce("ReduceProd", 13, ax1, 1, 2, (int64_t[]){2, 1}, (float[]){6, 120});
  run_reduce("ReduceL1", 13, ax1, 1, 2, (int64_t[]){2, 1}, (float[]){6, 15});
  run_reduce("ReduceL2", 13, ax1, 1, 2, (int64_t[]){2, 1}, (float[]){sqrtf(14), sqrtf(77)});
  run_reduce("ReduceSumSquare", 13, ax1, 1, 2, (int64_t[]){2, 1}, (float[]){14, 77});
  run_reduce("ReduceLogSumExp", 13, ax1, 1, 2, (int64_t[]){2, 1},
             (float[]){(float)log(exp(1) + exp(2) + exp(3)), (float)log(exp(4) + exp(5) + exp(6))});
  /* No axes: every axis. */
  run_reduce("ReduceSum", 11, NULL, 0, 2, (int64_t[]){1, 1}, (float[]){21});
}

static void test_reduce_axes_input(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  tb_value_type o;
  /* ReduceSum 13: axes from input 1; absent axes with noop_with_empty_axes: identity. */
  const int64_t axes[1] = {0};
  tb_attr keep0[] = {TOH_INT("keepdims", 0)};
  toh_setup(&t, "ReduceSum", 13, 2, 0, 1, keep0, 1);
  toh_in in[2] = {{F32, 2, {2, 3}, x23}, {TB_DTYPE_I64, 1, {1}, axes}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 1, (int64_t[]){3}, (float[]){5, 7, 9});
  toh_free_outs(out, 1);
  /* Infer without the axes' value: rank unknown when keepdims is 0. */
  tb_value_type tx = toh_type(F32, 2, (int64_t[]){2, 3}), ta = toh_type(TB_DTYPE_I64, 1, (int64_t[]){1});
  const tb_value_type *ins[2] = {&tx, &ta};
  TB_ASSERT_OK(toh_infer(&t, ins, &o));
  assert_false(o.has_shape);
  const int64_t bad_axes[1] = {INT64_MAX};
  toh_in bad[2] = {{F32, 2, {2, 3}, x23}, {TB_DTYPE_I64, 1, {1}, bad_axes}};
  assert_int_equal(toh_run(&t, bad, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "out of range for rank 2");
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr noop[] = {TOH_INT("noop_with_empty_axes", 1)};
  toh_setup(&t, "ReduceSum", 13, 2, 1u << 1, 1, noop, 1); /* axes omitted */
  toh_in none[2] = {{F32, 2, {2, 3}, x23}, {TOH_NONE, 0, {0}, NULL}};
  TB_ASSERT_OK(toh_run(&t, none, out));
  nnt_assert_f32(out[0], 2, (int64_t[]){2, 3}, x23);
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* Attribute axes: infer shapes, repeated and out-of-range axes. */
  tb_attr twice[] = {TOH_INTS("axes", 1, -1)};
  toh_setup(&t, "ReduceMean", 13, 1, 0, 1, twice, 1);
  const tb_value_type *one[1] = {&tx};
  assert_int_equal(toh_infer(&t, one, &o), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "axis -1 is listed twice");
  toh_teardown(&t);
  tb_attr keep[] = {TOH_INTS("axes", -1)};
  toh_setup(&t, "ReduceMax", 13, 1, 0, 1, keep, 1);
  TB_ASSERT_OK(toh_infer(&t, one, &o));
  toh_assert_dims(&o, 2, (int64_t[]){2, 1});
  toh_teardown(&t);
}

static void test_argmax(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  const float x[6] = {1, 3, 3, 0, -1, 0};
  toh_in in[1] = {{F32, 2, {2, 3}, x}};
  tb_attr first[] = {TOH_INT("axis", 1)};
  toh_setup(&t, "ArgMax", 13, 1, 0, 1, first, 1);
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_i64(out[0], 2, (int64_t[]){2, 1}, (int64_t[]){1, 0});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr last[] = {TOH_INT("axis", -1), TOH_INT("select_last_index", 1), TOH_INT("keepdims", 0)};
  toh_setup(&t, "ArgMax", 13, 1, 0, 1, last, 3);
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_i64(out[0], 1, (int64_t[]){2}, (int64_t[]){2, 2});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  toh_setup(&t, "ArgMin", 13, 1, 0, 1, last, 3);
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_i64(out[0], 1, (int64_t[]){2}, (int64_t[]){0, 1});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr bad[] = {TOH_INT("axis", 2)};
  toh_setup(&t, "ArgMin", 13, 1, 0, 1, bad, 1);
  tb_value_type tx = toh_type(F32, 2, (int64_t[]){2, 3}), o;
  const tb_value_type *ins[1] = {&tx};
  assert_int_equal(toh_infer(&t, ins, &o), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (ArgMin)");
  toh_teardown(&t);
}

static tb_status einsum(const char *eq, size_t n_in, const toh_in *in, tb_tensor **out) {
  toh t;
  tb_attr a[] = {TOH_STR("equation", eq)};
  toh_setup(&t, "Einsum", 12, n_in, 0, 1, a, 1);
  tb_status st = toh_run(&t, in, out);
  toh_teardown(&t);
  return st;
}

static void test_einsum(void **state) {
  (void)state;
  tb_tensor *out[1];
  const float sq[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  toh_in m[1] = {{F32, 2, {3, 3}, sq}};
  TB_ASSERT_OK(einsum("ii->i", 1, m, out)); /* diagonal */
  nnt_assert_f32(out[0], 1, (int64_t[]){3}, (float[]){1, 5, 9});
  toh_free_outs(out, 1);
  TB_ASSERT_OK(einsum("ii", 1, m, out)); /* implicit: trace */
  nnt_assert_f32(out[0], 0, NULL, (float[]){15});
  toh_free_outs(out, 1);
  TB_ASSERT_OK(einsum("ji", 1, m, out)); /* implicit output sorted: transpose */
  nnt_assert_f32(out[0], 2, (int64_t[]){3, 3}, (float[]){1, 4, 7, 2, 5, 8, 3, 6, 9});
  toh_free_outs(out, 1);
  toh_in two[2] = {{F32, 2, {2, 3}, x23}, {F32, 2, {3, 3}, sq}};
  TB_ASSERT_OK(einsum("ij, jk -> ik", 2, two, out));
  nnt_assert_f32(out[0], 2, (int64_t[]){2, 3}, (float[]){30, 36, 42, 66, 81, 96});
  toh_free_outs(out, 1);
  /* Ellipsis with broadcasting: [2,1,3] x [3] over "...j,j->...". */
  const float v[3] = {1, 0, -1};
  toh_in ell[2] = {{F32, 3, {2, 1, 3}, x23}, {F32, 1, {3}, v}};
  TB_ASSERT_OK(einsum("...j,j->...", 2, ell, out));
  nnt_assert_f32(out[0], 2, (int64_t[]){2, 1}, (float[]){-2, -2});
  toh_free_outs(out, 1);
  assert_int_equal(einsum("ij,jk->iz", 2, two, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "output label 'z' is not in any input");
  toh_free_outs(out, 1);
  toh_in abt[2] = {{F32, 2, {2, 3}, x23}, {F32, 2, {3, 3}, sq}};
  TB_ASSERT_OK(einsum("ij,kj", 2, abt, out)); /* implicit "ik": a @ b^T */
  nnt_assert_f32(out[0], 2, (int64_t[]){2, 3}, (float[]){14, 32, 50, 32, 77, 122});
  toh_free_outs(out, 1);
}

static void test_einsum_errors(void **state) {
  (void)state;
  tb_tensor *out[1];
  toh_in two[2] = {{F32, 2, {2, 3}, x23}, {F32, 2, {2, 3}, x23}};
  assert_int_equal(einsum("ij,jk", 2, two, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "label 'j' has size 3 in one place and 2 in another");
  toh_free_outs(out, 1);
  assert_int_equal(einsum("ijk,jk", 2, two, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "3 letters for an input of rank 2");
  toh_free_outs(out, 1);
  assert_int_equal(einsum("ij", 2, two, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "fewer terms than inputs");
  toh_free_outs(out, 1);
  assert_int_equal(einsum("i.j,ij", 2, two, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "'.' outside an ellipsis");
  toh_free_outs(out, 1);
  assert_int_equal(einsum("ij,ij->ii", 2, two, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "listed twice");
  toh_free_outs(out, 1);
}

static void test_quantize(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  /* Half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2; zp 128; saturation at 0 and 255. */
  const float x[6] = {0.5f, 1.5f, 2.5f, -1000, 1000, -3.5f}, s[1] = {1};
  const uint8_t zp[1] = {128};
  toh_setup(&t, "QuantizeLinear", 13, 3, 0, 1, NULL, 0);
  toh_in in[3] = {{F32, 1, {6}, x}, {F32, 0, {0}, s}, {TB_DTYPE_U8, 0, {0}, zp}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  const uint8_t want[6] = {128, 130, 130, 0, 255, 124};
  assert_int_equal(tb_tensor_dtype(out[0]), TB_DTYPE_U8);
  assert_memory_equal(tb_tensor_host_data(out[0]), want, 6);
  toh_free_outs(out, 1);
  /* Per axis (axis 1 of [2, 2]) with int8. */
  const float x4[4] = {10, 10, -10, 10}, s2[2] = {2, 5};
  const int8_t zp2[2] = {0, -1};
  toh_in pa[3] = {{F32, 2, {2, 2}, x4}, {F32, 1, {2}, s2}, {TB_DTYPE_I8, 1, {2}, zp2}};
  TB_ASSERT_OK(toh_run(&t, pa, out));
  const int8_t want2[4] = {5, 1, -5, 1};
  assert_memory_equal(tb_tensor_host_data(out[0]), want2, 4);
  toh_free_outs(out, 1);
  toh_teardown(&t);
  toh_setup(&t, "DequantizeLinear", 13, 3, 0, 1, NULL, 0);
  const int8_t q[4] = {5, 1, -128, 127};
  toh_in dq[3] = {{TB_DTYPE_I8, 2, {2, 2}, q}, {F32, 1, {2}, s2}, {TB_DTYPE_I8, 1, {2}, zp2}};
  TB_ASSERT_OK(toh_run(&t, dq, out));
  nnt_assert_f32(out[0], 2, (int64_t[]){2, 2}, (float[]){10, 10, -256, 640});
  toh_free_outs(out, 1);
  tb_value_type tq = toh_type(TB_DTYPE_I8, 2, (int64_t[]){2, 3}), ts = toh_type(F32, 1, (int64_t[]){2}), o;
  const tb_value_type *ins[3] = {&tq, &ts, NULL};
  assert_int_equal(toh_infer(&t, ins, &o), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "has 2 values for axis 1 of size 3");
  toh_teardown(&t);
  /* MatMulInteger with zero points. */
  const uint8_t a[4] = {11, 12, 13, 14}, b[2] = {3, 4}, azp[1] = {10}, bzp[1] = {1};
  toh_setup(&t, "MatMulInteger", 10, 4, 0, 1, NULL, 0);
  toh_in mi[4] = {{TB_DTYPE_U8, 2, {2, 2}, a}, {TB_DTYPE_U8, 2, {2, 1}, b}, {TB_DTYPE_U8, 0, {0}, azp}, {TB_DTYPE_U8, 0, {0}, bzp}};
  TB_ASSERT_OK(toh_run(&t, mi, out));
  const int32_t wmi[2] = {1 * 2 + 2 * 3, 3 * 2 + 4 * 3};
  assert_int_equal(tb_tensor_dtype(out[0]), TB_DTYPE_I32);
  assert_memory_equal(tb_tensor_host_data(out[0]), wmi, sizeof wmi);
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reduce_kernels), cmocka_unit_test(test_reduce_axes_input), cmocka_unit_test(test_argmax),
      cmocka_unit_test(test_einsum),         cmocka_unit_test(test_einsum_errors),     cmocka_unit_test(test_quantize),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
