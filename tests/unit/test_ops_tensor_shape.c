/* Tensor-family operators that reshape or assemble data: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
 * Concat, Shape, Size, Constant, ConstantOfShape — inference (with and without input values) and the
 * reference kernels against hand-computed results, and their errors. */
#include "test_ops_tensor_util.h"

static const float F6[6] = {1, 2, 3, 4, 5, 6};

static void test_reshape(void **state) {
  toh *t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(3, -1, 1));
  ttn_check_inferred(t, true, TB_DTYPE_F32, 3, TTN_SHAPE(3, 2, 1));
  /* Prepare time: the shape's value is unknown, its length (the rank) is known. */
  ttn_check_inferred(t, false, TB_DTYPE_F32, 3, TTN_SHAPE(-1, -1, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(3, 2, 1), F6);
  ttn_free(t);

  /* 0 copies the input's dim; with allowzero it is a real 0. */
  t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(2, 3, 1), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(0, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  ttn_free(t);

  tb_attr az = TOH_INT("allowzero", 1);
  t = ttn_new(*state, "Reshape", 14, 2, 1, &az, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(0, 3), NULL);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(3, 0, 5));
  TB_ASSERT_OK(ttn_run(t));
  toh_assert_tensor(t->out[0], TB_DTYPE_F32, 3, TTN_SHAPE(3, 0, 5));
  ttn_free(t);

  /* Any dtype moves as bytes. */
  t = ttn_new(*state, "Reshape", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_U8, 1, TTN_SHAPE(4), (const uint8_t[]){9, 8, 7, 6});
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(2, 2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_U8, 2, TTN_SHAPE(2, 2), (const uint8_t[]){9, 8, 7, 6});
  ttn_free(t);
}

static void test_reshape_errors(void **state) {
  toh *t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(-1, -1));
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Reshape)");
  TB_ASSERT_CONTAINS(tb_last_error(), "more than one -1");
  assert_int_equal(ttn_run(t), TB_ERR_MODEL);
  ttn_free(t);

  t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(4, 2));
  ttn_run_fails(t, TB_ERR_MODEL, "cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)");

  t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(4, -1));
  ttn_run_fails(t, TB_ERR_MODEL, "-1 cannot be inferred");

  /* 0 beyond the input's rank; a negative size; an int32 shape (int64 only). */
  t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(6), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(6, 0));
  ttn_run_fails(t, TB_ERR_MODEL, "copies dim 1");
  t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(6), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(-2, -3));
  ttn_run_fails(t, TB_ERR_MODEL, "negative size -2");
  t = ttn_new(*state, "Reshape", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(6), F6);
  toh_input(t, 1, TB_DTYPE_I32, 1, TTN_SHAPE(1), TTN_I32(6));
  assert_int_not_equal(toh_infer_tensors(t, true), TB_OK);
  TB_ASSERT_CONTAINS(tb_last_error(), "input 1 has element type i32");
  ttn_free(t);
}

static void test_flatten(void **state) {
  tb_attr axis = TOH_INT("axis", -1);
  toh *t = ttn_new(*state, "Flatten", 13, 1, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(1, 2, 3), F6);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  ttn_free(t);

  axis = TOH_INT("axis", 0);
  t = ttn_new(*state, "Flatten", 13, 1, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(1, 2, 3), F6);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 6), F6);
  ttn_free(t);

  axis = TOH_INT("axis", 4);
  t = ttn_new(*state, "Flatten", 13, 1, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(1, 2, 3), F6);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "axis 4 is out of range [-3, 3]");
  ttn_free(t);
}

static void test_squeeze_unsqueeze(void **state) {
  /* Opset 13: axes as an input. */
  toh *t = ttn_new(*state, "Squeeze", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 2, 1, 3), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(-2));
  ttn_check_inferred(t, false, TB_DTYPE_F32, 3, TTN_SHAPE(-1, -1, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(1, 2, 3), F6);
  ttn_free(t);
  /* No axes: every dim of size 1. */
  t = ttn_new(*state, "Squeeze", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 2, 1, 3), F6);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  ttn_free(t);
  /* Opset 11: axes as an attribute; squeezing a dim that is not 1 is an error. */
  tb_attr axes = TOH_INTS_N("axes", TTN_I64(1), 1);
  t = ttn_new(*state, "Squeeze", 11, 1, 1, &axes, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  ttn_run_fails(t, TB_ERR_MODEL, "cannot squeeze axis 1 of size 3");

  t = ttn_new(*state, "Unsqueeze", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(0, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 2, 3, 1), F6);
  ttn_free(t);
  axes = TOH_INTS_N("axes", TTN_I64(1, 1), 2);
  t = ttn_new(*state, "Unsqueeze", 11, 1, 1, &axes, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "axes repeats axis 1");
  ttn_free(t);
  axes = TOH_INTS_N("axes", TTN_I64(4), 1);
  t = ttn_new(*state, "Unsqueeze", 11, 1, 1, &axes, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "axes 4 is out of range for rank 3");
  ttn_free(t);
}

static void test_transpose(void **state) {
  toh *t = ttn_new(*state, "Transpose", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), TTN_F32(1, 4, 2, 5, 3, 6));
  ttn_free(t);

  /* [1,2,3] with perm (2,0,1) -> [3,1,2]; int16 elements. */
  tb_attr perm = TOH_INTS_N("perm", TTN_I64(2, 0, 1), 3);
  t = ttn_new(*state, "Transpose", 13, 1, 1, &perm, 1);
  toh_input(t, 0, TB_DTYPE_I16, 3, TTN_SHAPE(1, 2, 3), (const int16_t[]){1, 2, 3, 4, 5, 6});
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I16, 3, TTN_SHAPE(3, 1, 2), (const int16_t[]){1, 4, 2, 5, 3, 6});
  ttn_free(t);

  perm = TOH_INTS_N("perm", TTN_I64(0, 0), 2);
  t = ttn_new(*state, "Transpose", 13, 1, 1, &perm, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), F6);
  ttn_run_fails(t, TB_ERR_MODEL, "perm is not a permutation");
}

/* Large enough for the blocked path (the last two output dims >= 16, the source-contiguous dim second to
 * last): BERT's key transpose [1, 20, 3, 37] -> perm (0, 2, 3, 1) = [1, 3, 37, 20]; elements of 1, 2, 4 and
 * 8 bytes, every value checked against the index arithmetic. */
static void test_transpose_blocked(void **state) {
  enum { B = 2, S = 20, H = 3, D = 37, N = B * S * H * D };
  static const tb_dtype dtypes[] = {TB_DTYPE_U8, TB_DTYPE_I16, TB_DTYPE_F32, TB_DTYPE_I64};
  static const int64_t perms[][4] = {{0, 2, 3, 1}, {0, 2, 1, 3}, {1, 0, 3, 2}};
  for (size_t di = 0; di < sizeof dtypes / sizeof *dtypes; di++)
    for (size_t pi = 0; pi < sizeof perms / sizeof *perms; pi++) {
      const int64_t in_shape[4] = {B, S, H, D}, *p = perms[pi];
      size_t size = tb_dtype_size(dtypes[di]);
      unsigned char *in = malloc(N * size), *want = malloc(N * size);
      assert_non_null(in);
      assert_non_null(want);
      for (int64_t i = 0; i < N; i++) { /* element i holds i (modulo the type's range) */
        uint64_t v = (uint64_t)i * 2654435761u;
        memcpy(in + (size_t)i * size, &v, size);
      }
      int64_t out_shape[4], in_strides[4] = {S * H * D, H * D, D, 1};
      for (int d = 0; d < 4; d++) out_shape[d] = in_shape[p[d]];
      int64_t o = 0;
      for (int64_t a = 0; a < out_shape[0]; a++)
        for (int64_t b = 0; b < out_shape[1]; b++)
          for (int64_t c = 0; c < out_shape[2]; c++)
            for (int64_t e = 0; e < out_shape[3]; e++, o++) {
              int64_t src = a * in_strides[p[0]] + b * in_strides[p[1]] + c * in_strides[p[2]] + e * in_strides[p[3]];
              memcpy(want + (size_t)o * size, in + (size_t)src * size, size);
            }
      tb_attr perm = TOH_INTS_N("perm", p, 4);
      toh *t = ttn_new(*state, "Transpose", 13, 1, 1, &perm, 1);
      toh_input(t, 0, dtypes[di], 4, in_shape, in);
      TB_ASSERT_OK(ttn_run(t));
      ttn_check(t, 0, dtypes[di], 4, out_shape, want);
      ttn_free(t);
      free(in);
      free(want);
    }
}

static void test_concat(void **state) {
  tb_attr axis = TOH_INT("axis", 1);
  toh *t = ttn_new(*state, "Concat", 13, 3, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 1), TTN_F32(1, 2));
  toh_input(t, 1, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(3, 4, 5, 6));
  toh_input(t, 2, TB_DTYPE_F32, 2, TTN_SHAPE(2, 0), NULL);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), TTN_F32(1, 3, 4, 2, 5, 6));
  ttn_free(t);

  /* Unknown dims: the axis sum is unknown, the others come from whichever input knows them. */
  t = ttn_new(*state, "Concat", 13, 2, 1, &axis, 1);
  tb_value_type a = {TB_VALUE_TENSOR, true, TB_DTYPE_F32, true, 2, {{-1, 0}, {4, -1}}};
  tb_value_type b = {TB_VALUE_TENSOR, true, TB_DTYPE_F32, true, 2, {{3, -1}, {-1, -1}}};
  const tb_value_type *types[2] = {&a, &b};
  TB_ASSERT_OK(toh_infer_values(t, types, NULL, t->out_types));
  toh_assert_type(&t->out_types[0], TB_DTYPE_F32, 2, TTN_SHAPE(3, -1));
  b.dims[1].value = 2;
  TB_ASSERT_OK(toh_infer_values(t, types, NULL, t->out_types));
  toh_assert_type(&t->out_types[0], TB_DTYPE_F32, 2, TTN_SHAPE(3, 6));
  b.dims[0].value = 5;
  a.dims[0].value = 3;
  assert_int_equal(toh_infer_values(t, types, NULL, t->out_types), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input 1 has size 5 on dim 0 where another input has 3");
  ttn_free(t);

  axis = TOH_INT("axis", 2);
  t = ttn_new(*state, "Concat", 13, 2, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 1), TTN_F32(1, 2));
  toh_input(t, 1, TB_DTYPE_F32, 2, TTN_SHAPE(2, 1), TTN_F32(1, 2));
  ttn_run_fails(t, TB_ERR_MODEL, "axis 2 is out of range for rank 2");
  t = ttn_new(*state, "Concat", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 1), TTN_F32(1, 2));
  toh_input(t, 1, TB_DTYPE_F32, 2, TTN_SHAPE(2, 1), TTN_F32(1, 2));
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "'axis' is required");
  ttn_free(t);
}

static void test_shape_size(void **state) {
  toh *t = ttn_new(*state, "Shape", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(1, 2, 3), F6);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(1, 2, 3));
  ttn_free(t);

  tb_attr se[2] = {TOH_INT("start", -2), TOH_INT("end", 100)};
  t = ttn_new(*state, "Shape", 15, 1, 1, se, 2);
  toh_input(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(1, 2, 3), F6);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(2, 3));
  ttn_free(t);
  se[0] = TOH_INT("start", 2);
  se[1] = TOH_INT("end", 1);
  t = ttn_new(*state, "Shape", 15, 1, 1, se, 2);
  toh_input(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(1, 2, 3), F6);
  TB_ASSERT_OK(ttn_run(t));
  toh_assert_tensor(t->out[0], TB_DTYPE_I64, 1, TTN_SHAPE(0));
  ttn_free(t);

  t = ttn_new(*state, "Size", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_BOOL, 3, TTN_SHAPE(1, 2, 3), (const uint8_t[]){1, 0, 1, 0, 1, 0});
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 0, NULL, TTN_I64(6));
  ttn_free(t);
}

static void test_constant(void **state) {
  int64_t dims[2] = {2, 2};
  const int32_t data[4] = {1, -2, 3, -4};
  tb_ir_tensor value = {"v", TB_DTYPE_I32, 2, {2, 2}, data, sizeof data};
  (void)dims;
  tb_attr a = TOH_TENSOR("value", &value);
  toh *t = ttn_new(*state, "Constant", 13, 0, 1, &a, 1);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(2, 2), data);
  ttn_free(t);

  a = TOH_FLOAT("value_float", 2.5f);
  t = ttn_new(*state, "Constant", 13, 0, 1, &a, 1);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 0, NULL, TTN_F32(2.5f));
  ttn_free(t);
  a = TOH_INTS_N("value_ints", TTN_I64(7, 8, 9), 3);
  t = ttn_new(*state, "Constant", 13, 0, 1, &a, 1);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(7, 8, 9));
  ttn_free(t);
  a = TOH_INT("value_int", -5);
  t = ttn_new(*state, "Constant", 13, 0, 1, &a, 1);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 0, NULL, TTN_I64(-5));
  ttn_free(t);
  a = TOH_FLOATS_N("value_floats", TTN_F32(0.5f, 1.5f), 2);
  t = ttn_new(*state, "Constant", 13, 0, 1, &a, 1);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(0.5f, 1.5f));
  ttn_free(t);

  tb_attr sparse = {0};
  sparse.name = "sparse_value";
  sparse.type = TB_ATTR_SPARSE_TENSOR;
  t = ttn_new(*state, "Constant", 13, 0, 1, &sparse, 1);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "sparse_value");
  ttn_free(t);
  tb_attr two[2] = {TOH_INT("value_int", 1), TOH_FLOAT("value_float", 1)};
  t = ttn_new(*state, "Constant", 13, 0, 1, two, 2);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "exactly one value attribute");
  ttn_free(t);
  t = ttn_new(*state, "Constant", 13, 0, 1, NULL, 0);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  ttn_free(t);
}

static void test_constant_of_shape(void **state) {
  const int32_t seven = 7;
  tb_ir_tensor value = {"v", TB_DTYPE_I32, 1, {1}, &seven, sizeof seven};
  tb_attr a = TOH_TENSOR("value", &value);
  toh *t = ttn_new(*state, "ConstantOfShape", 13, 1, 1, &a, 1);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(2, 2));
  ttn_check_inferred(t, false, TB_DTYPE_I32, 2, TTN_SHAPE(-1, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(2, 2), TTN_I32(7, 7, 7, 7));
  ttn_free(t);
  /* Default: float 0; an empty shape gives a scalar. */
  t = ttn_new(*state, "ConstantOfShape", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(0), NULL);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 0, NULL, TTN_F32(0));
  ttn_free(t);
  t = ttn_new(*state, "ConstantOfShape", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(2, -3));
  ttn_run_fails(t, TB_ERR_MODEL, "negative size -3");
}

/* Prepare-time inference keeps symbolic dims (batch) where the output dim is the input's. */
static void test_symbols(void **state) {
  tb_value_type x = {TB_VALUE_TENSOR, true, TB_DTYPE_F32, true, 3, {{-1, 0}, {2, -1}, {3, -1}}};
  toh *t = ttn_new(*state, "Transpose", 13, 1, 1, NULL, 0);
  const tb_value_type *in1[1] = {&x};
  TB_ASSERT_OK(toh_infer_values(t, in1, NULL, t->out_types));
  toh_assert_type(&t->out_types[0], TB_DTYPE_F32, 3, TTN_SHAPE(3, 2, -1));
  assert_int_equal(t->out_types[0].dims[2].symbol, 0);
  ttn_free(t);

  /* Reshape [batch, 2, 3] by [0, -1]: the 0 copies batch; the -1 waits for batch's value. */
  tb_value_type s = {TB_VALUE_TENSOR, true, TB_DTYPE_I64, true, 1, {{2, -1}}};
  const int64_t shape[2] = {0, -1};
  tb_ir_tensor sv = {"s", TB_DTYPE_I64, 1, {2}, shape, sizeof shape};
  const tb_value_type *in2[2] = {&x, &s};
  const tb_ir_tensor *vals[2] = {NULL, &sv};
  t = ttn_new(*state, "Reshape", 13, 2, 1, NULL, 0);
  TB_ASSERT_OK(toh_infer_values(t, in2, vals, t->out_types));
  toh_assert_type(&t->out_types[0], TB_DTYPE_F32, 2, TTN_SHAPE(-1, -1));
  assert_int_equal(t->out_types[0].dims[0].symbol, 0);
  ttn_free(t);

  /* Shape of a ranked input with unknown dims: a known length. Unknown rank: rank-1 output. */
  t = ttn_new(*state, "Shape", 13, 1, 1, NULL, 0);
  TB_ASSERT_OK(toh_infer_values(t, in1, NULL, t->out_types));
  toh_assert_type(&t->out_types[0], TB_DTYPE_I64, 1, TTN_SHAPE(3));
  tb_value_type unranked = {TB_VALUE_TENSOR, true, TB_DTYPE_F32, false, 0, {{0, 0}}};
  const tb_value_type *in3[1] = {&unranked};
  TB_ASSERT_OK(toh_infer_values(t, in3, NULL, t->out_types));
  toh_assert_type(&t->out_types[0], TB_DTYPE_I64, 1, TTN_SHAPE(-1));
  ttn_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape),         cmocka_unit_test(test_reshape_errors), cmocka_unit_test(test_flatten),
      cmocka_unit_test(test_squeeze_unsqueeze), cmocka_unit_test(test_transpose), cmocka_unit_test(test_transpose_blocked), cmocka_unit_test(test_concat),
      cmocka_unit_test(test_shape_size),      cmocka_unit_test(test_constant),       cmocka_unit_test(test_constant_of_shape), cmocka_unit_test(test_symbols),
  };
  return cmocka_run_group_tests(tests, tbt_cpu_setup, tbt_cpu_teardown);
}
