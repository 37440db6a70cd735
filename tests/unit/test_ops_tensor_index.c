/* Tensor-family operators that select or place elements: Slice, Split, Gather, GatherElements, GatherND,
 * ScatterElements, ScatterND, Expand, Tile, Range, Pad — inference and reference kernels against
 * hand-computed results, clamping rules, and out-of-range indices rejected with the value named. */
#include <stdint.h>
#include "model/params.h"
#include "test_ops_tensor_util.h"

static const float F12[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void test_slice(void **state) {
  toh *t = ttn_new(*state, "Slice", 13, 5, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(1, 0));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(3, 4));
  toh_input(t, 3, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(0, 1));
  toh_input(t, 4, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(1, 2));
  ttn_check_inferred(t, false, TB_DTYPE_F32, 2, TTN_SHAPE(-1, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(4, 6, 8, 10));
  ttn_free(t);

  /* Negative step from the end; an end below -dim clamps to -1 (before the first element). */
  t = ttn_new(*state, "Slice", 13, 5, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(10), F12);
  toh_input(t, 1, TB_DTYPE_I32, 1, TTN_SHAPE(1), TTN_I32(-1));
  toh_input(t, 2, TB_DTYPE_I32, 1, TTN_SHAPE(1), TTN_I32(-11));
  toh_input(t, 4, TB_DTYPE_I32, 1, TTN_SHAPE(1), TTN_I32(-3));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(4), TTN_F32(9, 6, 3, 0));
  ttn_free(t);

  /* Extreme bounds clamp; axes negative. */
  t = ttn_new(*state, "Slice", 13, 4, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(INT64_MIN));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(INT64_MAX));
  toh_input(t, 3, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(-2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  ttn_free(t);

  /* Start past the end: empty. */
  t = ttn_new(*state, "Slice", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(10), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(20));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(30));
  TB_ASSERT_OK(ttn_run(t));
  toh_assert_tensor(t->out[0], TB_DTYPE_F32, 1, TTN_SHAPE(0));
  ttn_free(t);

  /* Opset 1: attributes. */
  tb_attr attrs[3] = {TOH_INTS_N("starts", TTN_I64(1), 1), TOH_INTS_N("ends", TTN_I64(1000), 1), TOH_INTS_N("axes", TTN_I64(1), 1)};
  t = ttn_new(*state, "Slice", 1, 1, 1, attrs, 3);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 3), TTN_F32(1, 2, 3, 5, 6, 7, 9, 10, 11));
  ttn_free(t);
}

static void test_slice_errors(void **state) {
  toh *t = ttn_new(*state, "Slice", 13, 5, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(10), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(0));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(5));
  toh_input(t, 4, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(0));
  ttn_run_fails(t, TB_ERR_MODEL, "node 'n0' (Slice): the step for axis 0 is 0");

  t = ttn_new(*state, "Slice", 13, 4, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(0, 0));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(1, 1));
  toh_input(t, 3, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(1, -1));
  ttn_run_fails(t, TB_ERR_MODEL, "axis 1 is sliced twice");

  t = ttn_new(*state, "Slice", 13, 4, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(0));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(1));
  toh_input(t, 3, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(2));
  ttn_run_fails(t, TB_ERR_MODEL, "axis 2 is out of range for rank 2");

  t = ttn_new(*state, "Slice", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(0, 0));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(1));
  assert_int_equal(toh_infer_tensors(t, false), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "starts has 2 entries but input 2 has 1");
  ttn_free(t);
}

static void test_split(void **state) {
  toh *t = ttn_new(*state, "Split", 13, 2, 2, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(6), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(2, 4));
  TB_ASSERT_OK(toh_infer_tensors(t, false));
  toh_assert_type(&t->out_types[1], TB_DTYPE_F32, 1, TTN_SHAPE(-1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(0, 1));
  ttn_check(t, 1, TB_DTYPE_F32, 1, TTN_SHAPE(4), TTN_F32(2, 3, 4, 5));
  ttn_free(t);

  tb_attr axis = TOH_INT("axis", 1);
  t = ttn_new(*state, "Split", 13, 1, 2, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 4), F12);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), TTN_F32(0, 1, 4, 5, 8, 9));
  ttn_check(t, 1, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), TTN_F32(2, 3, 6, 7, 10, 11));
  ttn_free(t);

  /* Opset 18 num_outputs: 7 into 3 gives 3, 3, 1. */
  tb_attr num = TOH_INT("num_outputs", 3);
  t = ttn_new(*state, "Split", 18, 1, 3, &num, 1);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(7), F12);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(3), TTN_F32(0, 1, 2));
  ttn_check(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(1), TTN_F32(6));
  ttn_free(t);

  /* Opset 11 attribute that does not add up; an uneven equal split. */
  tb_attr split = TOH_INTS_N("split", TTN_I64(2, 2), 2);
  t = ttn_new(*state, "Split", 11, 1, 2, &split, 1);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(6), F12);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "split sizes add up to 4 but the axis has size 6");
  ttn_free(t);
  t = ttn_new(*state, "Split", 13, 1, 4, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(6), F12);
  ttn_run_fails(t, TB_ERR_MODEL, "size 6 cannot be split into 4 equal parts");
}

static void test_gather(void **state) {
  const float data[6] = {1, 2, 3, 4, 5, 6};
  toh *t = ttn_new(*state, "Gather", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), data);
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 2), TTN_I64(0, 1, 1, 2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(2, 2, 2), TTN_F32(1, 2, 3, 4, 3, 4, 5, 6));
  ttn_free(t);

  tb_attr axis = TOH_INT("axis", 1);
  t = ttn_new(*state, "Gather", 13, 2, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), data);
  toh_input(t, 1, TB_DTYPE_I32, 1, TTN_SHAPE(1), TTN_I32(-1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 1), TTN_F32(2, 4, 6));
  ttn_free(t);

  /* A scalar index drops the axis. */
  t = ttn_new(*state, "Gather", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), data);
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(5, 6));
  ttn_free(t);

  t = ttn_new(*state, "Gather", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), data);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(0, 3));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "node 'n0' (Gather): index 3 (indices element 1) is out of range for axis 0 of size 3");
  t = ttn_new(*state, "Gather", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 2), data);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(-4));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "index -4");
}

static void test_gather_elements_nd(void **state) {
  tb_attr axis = TOH_INT("axis", 1);
  toh *t = ttn_new(*state, "GatherElements", 13, 2, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 2, 3, 4));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 2), TTN_I64(0, 0, 1, 0));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 1, 4, 3));
  ttn_free(t);
  t = ttn_new(*state, "GatherElements", 13, 2, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 2, 3, 4));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 2), TTN_I64(0, 0, 2, 0));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "index 2 (indices element 2) is out of range for axis 1 of size 2");

  t = ttn_new(*state, "GatherND", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(2, 2), TTN_I32(0, 1, 2, 3));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 2), TTN_I64(0, 0, 1, 1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 1, TTN_SHAPE(2), TTN_I32(0, 3));
  ttn_free(t);
  t = ttn_new(*state, "GatherND", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(2, 2), TTN_I32(0, 1, 2, 3));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 1), TTN_I64(1, 0));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(2, 2), TTN_I32(2, 3, 0, 1));
  ttn_free(t);
  tb_attr bd = TOH_INT("batch_dims", 1);
  t = ttn_new(*state, "GatherND", 13, 2, 1, &bd, 1);
  toh_input(t, 0, TB_DTYPE_I32, 3, TTN_SHAPE(2, 2, 2), TTN_I32(0, 1, 2, 3, 4, 5, 6, 7));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 1), TTN_I64(1, 0));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(2, 2), TTN_I32(2, 3, 4, 5));
  ttn_free(t);
  t = ttn_new(*state, "GatherND", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(2, 2), TTN_I32(0, 1, 2, 3));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(1, 2), TTN_I64(0, 2));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "index 2 (indices element 1) is out of range for axis 1 of size 2");
}

static void test_scatter(void **state) {
  float zeros[9] = {0};
  toh *t = ttn_new(*state, "ScatterElements", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 3), zeros);
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 3), TTN_I64(1, 0, 2, 0, 2, 1));
  toh_input(t, 2, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), TTN_F32(1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 3), TTN_F32(2.0f, 1.1f, 0, 1.0f, 0, 2.2f, 0, 2.1f, 1.2f));
  ttn_free(t);

  tb_attr red = TOH_STR("reduction", "add");
  t = ttn_new(*state, "ScatterElements", 16, 3, 1, &red, 1);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(5), TTN_I64(1, 2, 3, 4, 5));
  toh_input(t, 1, TB_DTYPE_I32, 1, TTN_SHAPE(2), TTN_I32(1, -4));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(10, 20));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(5), TTN_I64(1, 32, 3, 4, 5));
  ttn_free(t);
  red = TOH_STR("reduction", "max");
  t = ttn_new(*state, "ScatterElements", 16, 3, 1, &red, 1);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(5), TTN_I64(1, 2, 3, 4, 5));
  toh_input(t, 1, TB_DTYPE_I32, 1, TTN_SHAPE(2), TTN_I32(1, -4));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(10, 20));
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown reduction 'max'");
  ttn_free(t);

  t = ttn_new(*state, "ScatterElements", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(3), zeros);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(3));
  toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(1), TTN_F32(1));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "index 3 (indices element 0) is out of range for axis 0 of size 3");

  t = ttn_new(*state, "ScatterND", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(8), TTN_F32(1, 2, 3, 4, 5, 6, 7, 8));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(4, 1), TTN_I64(4, 3, 1, 7));
  toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(4), TTN_F32(9, 10, 11, 12));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(8), TTN_F32(1, 11, 3, 10, 9, 6, 7, 12));
  ttn_free(t);
  red = TOH_STR("reduction", "mul");
  t = ttn_new(*state, "ScatterND", 16, 3, 1, &red, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 2, 3, 4));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 1), TTN_I64(1, 1));
  toh_input(t, 2, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(2, 2, 3, 3));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 2, 18, 24));
  ttn_free(t);
  t = ttn_new(*state, "ScatterND", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(8), TTN_F32(1, 2, 3, 4, 5, 6, 7, 8));
  toh_input(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(1, 1), TTN_I64(8));
  toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(1), TTN_F32(9));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "index 8 (indices element 0) is out of range for axis 0 of size 8");
}

static void test_expand_tile(void **state) {
  toh *t = ttn_new(*state, "Expand", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 1), TTN_F32(1, 2, 3));
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(2, 1, 2));
  ttn_check_inferred(t, false, TB_DTYPE_F32, 3, TTN_SHAPE(-1, -1, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 3, TTN_SHAPE(2, 3, 2), TTN_F32(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  ttn_free(t);
  t = ttn_new(*state, "Expand", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 1), TTN_F32(1, 2, 3));
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(2, 2));
  ttn_run_fails(t, TB_ERR_MODEL, "shapes [3, 1] and [2, 2] cannot broadcast");

  t = ttn_new(*state, "Tile", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_U8, 2, TTN_SHAPE(2, 2), (const uint8_t[]){1, 2, 3, 4});
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(2, 2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_U8, 2, TTN_SHAPE(4, 4),
            (const uint8_t[]){1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
  ttn_free(t);
  t = ttn_new(*state, "Tile", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_U8, 2, TTN_SHAPE(2, 2), (const uint8_t[]){1, 2, 3, 4});
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(2));
  assert_int_equal(toh_infer_tensors(t, false), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "repeats has 1 entries for an input of rank 2");
  ttn_free(t);
}

static void test_range(void **state) {
  toh *t = ttn_new(*state, "Range", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I32, 0, NULL, TTN_I32(10));
  toh_input(t, 1, TB_DTYPE_I32, 0, NULL, TTN_I32(4));
  toh_input(t, 2, TB_DTYPE_I32, 0, NULL, TTN_I32(-3));
  ttn_check_inferred(t, false, TB_DTYPE_I32, 1, TTN_SHAPE(-1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 1, TTN_SHAPE(2), TTN_I32(10, 7));
  ttn_free(t);
  t = ttn_new(*state, "Range", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 0, NULL, TTN_F32(1));
  toh_input(t, 1, TB_DTYPE_F32, 0, NULL, TTN_F32(5.5f));
  toh_input(t, 2, TB_DTYPE_F32, 0, NULL, TTN_F32(1.5f));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(3), TTN_F32(1, 2.5f, 4));
  ttn_free(t);
  t = ttn_new(*state, "Range", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I64, 0, NULL, TTN_I64(0));
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(5));
  toh_input(t, 2, TB_DTYPE_I64, 0, NULL, TTN_I64(0));
  ttn_run_fails(t, TB_ERR_MODEL, "delta is 0");
}

static void test_pad(void **state) {
  const float row[3] = {1, 2, 3};
  tb_attr mode = TOH_STR("mode", "reflect");
  toh *t = ttn_new(*state, "Pad", 13, 2, 1, &mode, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(4), TTN_I64(0, 2, 0, 2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 7), TTN_F32(3, 2, 1, 2, 3, 2, 1));
  ttn_free(t);
  mode = TOH_STR("mode", "edge");
  t = ttn_new(*state, "Pad", 13, 2, 1, &mode, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(4), TTN_I64(1, 2, 0, 1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 6), TTN_F32(1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3));
  ttn_free(t);
  /* Constant with a value input; negative pads crop. */
  t = ttn_new(*state, "Pad", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(4), TTN_I64(0, -1, 1, 1));
  toh_input(t, 2, TB_DTYPE_F32, 0, NULL, TTN_F32(9));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 3), TTN_F32(2, 3, 9, 9, 9, 9));
  ttn_free(t);
  /* Opset 18 axes; opset 2 attributes. */
  t = ttn_new(*state, "Pad", 18, 4, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(1, 1));
  toh_input(t, 3, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(-1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 5), TTN_F32(0, 1, 2, 3, 0));
  ttn_free(t);
  tb_attr old[2] = {TOH_INTS_N("pads", TTN_I64(0, 1, 0, 0), 4), TOH_FLOAT("value", 1.5f)};
  t = ttn_new(*state, "Pad", 2, 1, 1, old, 2);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 4), TTN_F32(1.5f, 1, 2, 3));
  ttn_free(t);

  t = ttn_new(*state, "Pad", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(1, 1));
  ttn_run_fails(t, TB_ERR_MODEL, "pads has 2 entries; 4 expected");
  t = ttn_new(*state, "Pad", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(4), TTN_I64(0, -2, 0, -2));
  ttn_run_fails(t, TB_ERR_MODEL, "negative");
  mode = TOH_STR("mode", "wrap");
  t = ttn_new(*state, "Pad", 13, 2, 1, &mode, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 3), row);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(4), TTN_I64(0, 1, 0, 1));
  assert_int_equal(tb_node_parse_params(t->graph, toh_node(t)), TB_ERR_UNSUPPORTED); /* at prepare: no kernel runs */
  TB_ASSERT_CONTAINS(tb_last_error(), "mode 'wrap' is not supported");
  ttn_free(t);
}

/* Hostile values: sizes that overflow or cannot be allocated are errors, never crashes; extreme steps. */
static void test_hostile_values(void **state) {
  toh *t = ttn_new(*state, "Tile", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_U8, 1, TTN_SHAPE(2), (const uint8_t[]){1, 2});
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(INT64_MAX));
  ttn_run_fails(t, TB_ERR_MODEL, "overflows");
  t = ttn_new(*state, "Expand", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(1), TTN_F32(1));
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(1 << 30, 1 << 30, 1 << 30));
  assert_int_not_equal(toh_run_owned(t, false), TB_OK);
  ttn_free(t);
  t = ttn_new(*state, "Slice", 13, 5, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(10), F12);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(INT64_MAX));
  toh_input(t, 2, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(INT64_MIN));
  toh_input(t, 4, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(INT64_MIN));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(1), TTN_F32(9));
  ttn_free(t);
  t = ttn_new(*state, "Range", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I64, 0, NULL, TTN_I64(INT64_MIN));
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(INT64_MAX));
  toh_input(t, 2, TB_DTYPE_I64, 0, NULL, TTN_I64(1));
  assert_int_not_equal(toh_run_owned(t, false), TB_OK);
  ttn_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_slice),   cmocka_unit_test(test_slice_errors),       cmocka_unit_test(test_split),
      cmocka_unit_test(test_gather),  cmocka_unit_test(test_gather_elements_nd), cmocka_unit_test(test_scatter),
      cmocka_unit_test(test_expand_tile), cmocka_unit_test(test_range),          cmocka_unit_test(test_pad), cmocka_unit_test(test_hostile_values),
  };
  return cmocka_run_group_tests(tests, tbt_cpu_setup, tbt_cpu_teardown);
}
