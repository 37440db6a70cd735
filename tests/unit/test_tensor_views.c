/* Views on the CPU backend: transposes by strides, slices with an offset, broadcasts (stride 0) that
 * read but refuse writes, out-of-range views rejected with the numbers, strided copies in and out
 * checked against a manual gather/scatter, fill of a strided view, views outliving their base. */
#include "test_tensor_util.h"

/* A 4x6 f32 tensor holding 0..23. */
static tb_tensor *iota_4x6(tb_backend *b) {
  const int64_t shape[] = {4, 6};
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 2, shape, &t));
  float v[24];
  for (int i = 0; i < 24; i++) v[i] = (float)i;
  TB_ASSERT_OK(tb_tensor_copy_from_host(t, v, sizeof v));
  return t;
}

static void transpose_by_strides(void **state) {
  tb_tensor *base = iota_4x6(*state), *tr = NULL;
  const int64_t shape[] = {6, 4}, strides[] = {1, 6};
  TB_ASSERT_OK(tb_tensor_view(base, 2, shape, strides, 0, &tr));
  assert_false(tb_tensor_is_contiguous(tr));
  assert_memory_equal(tb_tensor_strides(tr), strides, sizeof strides);
  assert_ptr_equal(tb_tensor_host_data(tr), tb_tensor_host_data(base));
  float out[24];
  TB_ASSERT_OK(tb_tensor_copy_to_host(tr, out, sizeof out));
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 4; j++) assert_true(out[i * 4 + j] == (float)(j * 6 + i));
  /* Writing through the transpose writes the base's elements. */
  float in[24];
  for (int i = 0; i < 24; i++) in[i] = (float)(100 + i);
  TB_ASSERT_OK(tb_tensor_copy_from_host(tr, in, sizeof in));
  TB_ASSERT_OK(tb_tensor_copy_to_host(base, out, sizeof out));
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 6; c++) assert_true(out[r * 6 + c] == (float)(100 + c * 4 + r));
  tb_tensor_destroy(tr);
  tb_tensor_destroy(base);
}

static void slice_with_offset(void **state) {
  tb_tensor *base = iota_4x6(*state), *s = NULL;
  /* Rows 1..2, columns 2..4. */
  const int64_t shape[] = {2, 3}, strides[] = {6, 1};
  TB_ASSERT_OK(tb_tensor_view(base, 2, shape, strides, 8, &s));
  assert_int_equal(tb_tensor_offset(s), 8);
  assert_false(tb_tensor_is_contiguous(s));
  assert_ptr_equal(tb_tensor_host_data(s), (float *)tb_tensor_host_data(base) + 8);
  float out[6];
  TB_ASSERT_OK(tb_tensor_copy_to_host(s, out, sizeof out));
  const float expect[] = {8, 9, 10, 14, 15, 16};
  assert_memory_equal(out, expect, sizeof expect);
  /* Writing the slice leaves every other element of the base alone. */
  const float in[] = {-1, -2, -3, -4, -5, -6};
  TB_ASSERT_OK(tb_tensor_copy_from_host(s, in, sizeof in));
  float all[24];
  TB_ASSERT_OK(tb_tensor_copy_to_host(base, all, sizeof all));
  for (int i = 0; i < 24; i++) {
    int r = i / 6, c = i % 6;
    float want = (r >= 1 && r <= 2 && c >= 2 && c <= 4) ? in[(r - 1) * 3 + (c - 2)] : (float)i;
    if (all[i] != want) fail_msg("element %d is %g, expected %g", i, (double)all[i], (double)want);
  }
  /* A contiguous row slice: rows 2..3 are one block from offset 12. */
  tb_tensor *rows = NULL;
  const int64_t rshape[] = {2, 6};
  TB_ASSERT_OK(tb_tensor_view(base, 2, rshape, NULL, 12, &rows));
  assert_true(tb_tensor_is_contiguous(rows));
  float r[12];
  TB_ASSERT_OK(tb_tensor_copy_to_host(rows, r, sizeof r));
  assert_true(r[0] == 12 && r[1] == 13 && r[2] == -4 && r[11] == 23);
  /* A scalar view of one element. */
  tb_tensor *one = NULL;
  TB_ASSERT_OK(tb_tensor_view(base, 0, NULL, NULL, 23, &one));
  float x = 0;
  TB_ASSERT_OK(tb_tensor_copy_to_host(one, &x, sizeof x));
  assert_true(x == 23.0f);
  tb_tensor_destroy(one);
  tb_tensor_destroy(rows);
  tb_tensor_destroy(s);
  tb_tensor_destroy(base);
}

static void broadcast_reads_but_refuses_writes(void **state) {
  tb_tensor *base = iota_4x6(*state), *bc = NULL;
  /* Row 1 repeated three times. */
  const int64_t shape[] = {3, 6}, strides[] = {0, 1};
  TB_ASSERT_OK(tb_tensor_view(base, 2, shape, strides, 6, &bc));
  float out[18];
  TB_ASSERT_OK(tb_tensor_copy_to_host(bc, out, sizeof out));
  for (int i = 0; i < 18; i++) assert_true(out[i] == (float)(6 + i % 6));
  assert_int_equal(tb_tensor_copy_from_host(bc, out, sizeof out), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "stride 0 in dimension 0 (size 3), so its elements overlap");
  float v = 1;
  assert_int_equal(tb_tensor_fill(bc, &v), TB_ERR_INVALID_ARGUMENT);
  /* As a copy source it is fine. */
  tb_tensor *dst = NULL;
  TB_ASSERT_OK(tb_tensor_create(tb_tensor_backend(base), TB_DTYPE_F32, 2, shape, &dst));
  TB_ASSERT_OK(tb_tensor_copy(dst, bc));
  float got[18];
  TB_ASSERT_OK(tb_tensor_copy_to_host(dst, got, sizeof got));
  assert_memory_equal(got, out, sizeof out);
  assert_int_equal(tb_tensor_copy(bc, dst), TB_ERR_INVALID_ARGUMENT);
  tb_tensor_destroy(dst);
  tb_tensor_destroy(bc);
  tb_tensor_destroy(base);
}

static void out_of_range_views_rejected(void **state) {
  tb_tensor *base = iota_4x6(*state), *v = (tb_tensor *)1;
  const int64_t full[] = {4, 6};
  assert_int_equal(tb_tensor_view(base, 2, full, NULL, 1, &v), TB_ERR_INVALID_ARGUMENT);
  assert_null(v);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "shape [4, 6], strides [6, 1] and offset 1 reach element 24, but the storage holds 24 elements (0 to 23)");
  const int64_t tshape[] = {6, 4}, bad_strides[] = {1, 7};
  assert_int_equal(tb_tensor_view(base, 2, tshape, bad_strides, 0, &v), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "reach element 26");
  const int64_t neg[] = {-1, 1};
  assert_int_equal(tb_tensor_view(base, 2, tshape, neg, 0, &v), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "stride 0 is -1; strides must be >= 0");
  assert_int_equal(tb_tensor_view(base, 2, full, NULL, -1, &v), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "offset -1 is outside the storage of 24 elements");
  assert_int_equal(tb_tensor_view(base, 2, full, NULL, 25, &v), TB_ERR_INVALID_ARGUMENT);
  const int64_t huge_stride[] = {INT64_MAX, 1};
  assert_int_equal(tb_tensor_view(base, 2, full, huge_stride, 0, &v), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "reach element past 2^63-1");
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  assert_int_equal(tb_tensor_view(base, 9, nine, NULL, 0, &v), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "ndim 9 exceeds the maximum of 8");
  assert_int_equal(tb_tensor_view(NULL, 2, full, NULL, 0, &v), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_tensor_view(base, 2, full, NULL, 0, NULL), TB_ERR_INVALID_ARGUMENT);
  /* An empty view may sit at the very end. */
  const int64_t empty[] = {0, 6};
  TB_ASSERT_OK(tb_tensor_view(base, 2, empty, NULL, 24, &v));
  assert_int_equal(tb_tensor_numel(v), 0);
  tb_tensor_destroy(v);
  tb_tensor_destroy(base);
}

/* A 3-d strided view of random int16 data, against the same gather written out by hand. */
static void strided_copies_match_manual_gather(void **state) {
  tb_backend *b = *state;
  const int64_t bshape[] = {60};
  tb_tensor *base = NULL, *v = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_I16, 1, bshape, &base));
  int16_t data[60];
  tbt_random_bytes(data, sizeof data, 11);
  TB_ASSERT_OK(tb_tensor_copy_from_host(base, data, sizeof data));
  const int64_t shape[] = {3, 2, 4}, strides[] = {13, 5, 2};
  const int64_t off = 3; /* last element: 3 + 26 + 5 + 6 = 40 */
  TB_ASSERT_OK(tb_tensor_view(base, 3, shape, strides, off, &v));
  int16_t got[24], want[24];
  TB_ASSERT_OK(tb_tensor_copy_to_host(v, got, sizeof got));
  int k = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < 4; l++) want[k++] = data[off + i * 13 + j * 5 + l * 2];
  assert_memory_equal(got, want, sizeof want);

  /* Scatter: new values land exactly where the gather read them; the rest keep their bytes. */
  int16_t in[24], expect[60];
  tbt_random_bytes(in, sizeof in, 12);
  memcpy(expect, data, sizeof data);
  k = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < 4; l++) expect[off + i * 13 + j * 5 + l * 2] = in[k++];
  TB_ASSERT_OK(tb_tensor_copy_from_host(v, in, sizeof in));
  int16_t all[60];
  TB_ASSERT_OK(tb_tensor_copy_to_host(base, all, sizeof all));
  assert_memory_equal(all, expect, sizeof expect);

  /* Fill of the strided view. */
  int16_t seven = 7;
  TB_ASSERT_OK(tb_tensor_fill(v, &seven));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++)
      for (int l = 0; l < 4; l++) expect[off + i * 13 + j * 5 + l * 2] = 7;
  TB_ASSERT_OK(tb_tensor_copy_to_host(base, all, sizeof all));
  assert_memory_equal(all, expect, sizeof expect);

  /* tb_tensor_copy from a strided view to a contiguous tensor and into another strided view. */
  tb_tensor *dense = NULL, *v2 = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_I16, 3, shape, &dense));
  TB_ASSERT_OK(tb_tensor_copy(dense, v));
  TB_ASSERT_OK(tb_tensor_copy_to_host(dense, got, sizeof got));
  for (int i = 0; i < 24; i++) assert_int_equal(got[i], 7);
  const int64_t strides2[] = {1, 3, 6}; /* a permuted layout over elements 0..23 */
  TB_ASSERT_OK(tb_tensor_view(base, 3, shape, strides2, 0, &v2));
  tbt_random_bytes(in, sizeof in, 13);
  TB_ASSERT_OK(tb_tensor_copy_from_host(dense, in, sizeof in));
  TB_ASSERT_OK(tb_tensor_copy(v2, dense));
  TB_ASSERT_OK(tb_tensor_copy_to_host(v2, got, sizeof got));
  assert_memory_equal(got, in, sizeof in);
  TB_ASSERT_OK(tb_tensor_copy_to_host(base, all, sizeof all));
  assert_int_equal(all[1 * 1 + 1 * 3 + 2 * 6], in[1 * 8 + 1 * 4 + 2]);
  tb_tensor_destroy(v2);
  tb_tensor_destroy(dense);
  tb_tensor_destroy(v);
  tb_tensor_destroy(base);
}

static void views_share_storage_and_outlive_base(void **state) {
  tb_backend *b = *state;
  tb_tensor *base = iota_4x6(b), *row = NULL, *elem = NULL;
  const int64_t rshape[] = {6};
  TB_ASSERT_OK(tb_tensor_view(base, 1, rshape, NULL, 18, &row));
  /* A view of a view addresses the same storage; its offset is from the storage's start. */
  const int64_t eshape[] = {2}, estride[] = {3};
  TB_ASSERT_OK(tb_tensor_view(row, 1, eshape, estride, 19, &elem));
  tb_tensor_destroy(base);
  tb_memory_stats s = {.size = sizeof s};
  TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
  assert_int_equal(s.num_frees, 0); /* the storage is still held by the views */
  float out[2];
  TB_ASSERT_OK(tb_tensor_copy_to_host(elem, out, sizeof out));
  assert_true(out[0] == 19 && out[1] == 22);
  tb_tensor_destroy(row);
  tb_tensor_destroy(elem);
  TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
  assert_int_equal(s.num_frees, 1);
  assert_int_equal(s.allocated, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(transpose_by_strides, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(slice_with_offset, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(broadcast_reads_but_refuses_writes, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(out_of_range_views_rejected, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(strided_copies_match_manual_gather, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(views_share_storage_and_outlive_base, tbt_cpu_setup, tbt_cpu_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
