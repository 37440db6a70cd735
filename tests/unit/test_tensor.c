/* Tensors on the CPU backend: every dtype round-trips bit-exactly, accessors, scalars and empty
 * tensors, shape checks (overflow, too many dimensions, negative sizes), fill for every dtype, and
 * copies within one backend and between two. */
#include <pthread.h>
#include "test_tensor_util.h"

static const int64_t shape3[] = {3, 5, 7};

static void every_dtype_round_trips(void **state) {
  tb_backend *b = *state;
  for (int d = 0; d < TB_DTYPE_COUNT; d++) {
    tb_tensor *t = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, (tb_dtype)d, 3, shape3, &t));
    size_t es = tb_dtype_size((tb_dtype)d), n = 105 * es;
    assert_int_equal(tb_tensor_dtype(t), d);
    assert_int_equal(tb_tensor_ndim(t), 3);
    assert_int_equal(tb_tensor_numel(t), 105);
    assert_int_equal(tb_tensor_nbytes(t), n);
    assert_memory_equal(tb_tensor_shape(t), shape3, sizeof shape3);
    const int64_t strides[] = {35, 7, 1};
    assert_memory_equal(tb_tensor_strides(t), strides, sizeof strides);
    assert_int_equal(tb_tensor_offset(t), 0);
    assert_true(tb_tensor_is_contiguous(t));
    assert_ptr_equal(tb_tensor_backend(t), b);
    unsigned char *in = malloc(n), *out = malloc(n);
    tbt_random_bytes(in, n, (uint64_t)d + 1);
    memset(out, 0xAB, n);
    TB_ASSERT_OK(tb_tensor_copy_from_host(t, in, n));
    TB_ASSERT_OK(tb_tensor_copy_to_host(t, out, n));
    if (memcmp(in, out, n)) fail_msg("%s did not round-trip bit-exactly", tb_dtype_name((tb_dtype)d));
    /* The CPU backend's memory is the host's: host_data sees the same bytes, 64-byte aligned. */
    void *host = tb_tensor_host_data(t);
    assert_non_null(host);
    assert_int_equal((uintptr_t)host % 64, 0);
    assert_memory_equal(host, in, n);
    free(in);
    free(out);
    tb_tensor_destroy(t);
  }
}

static void wrong_sizes_and_nulls(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 3, shape3, &t));
  float buf[105] = {0};
  assert_int_equal(tb_tensor_copy_from_host(t, buf, 10), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "bytes is 10 but the f32 tensor of shape [3, 5, 7] holds 420 bytes");
  assert_int_equal(tb_tensor_copy_to_host(t, buf, 424), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "bytes is 424");
  assert_int_equal(tb_tensor_copy_to_host(t, NULL, 420), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_tensor_copy_from_host(NULL, buf, 420), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_tensor_fill(t, NULL), TB_ERR_INVALID_ARGUMENT);
  tb_tensor *u = (tb_tensor *)1;
  assert_int_equal(tb_tensor_create(NULL, TB_DTYPE_F32, 3, shape3, &u), TB_ERR_INVALID_ARGUMENT);
  assert_null(u);
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_COUNT, 3, shape3, &u), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dtype 12 is not a tb_dtype value");
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 2, NULL, &u), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "shape must not be NULL when ndim is 2");
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 3, shape3, NULL), TB_ERR_INVALID_ARGUMENT);
  /* Accessors of NULL. */
  assert_int_equal(tb_tensor_numel(NULL), 0);
  assert_int_equal(tb_tensor_nbytes(NULL), 0);
  assert_null(tb_tensor_shape(NULL));
  assert_null(tb_tensor_backend(NULL));
  assert_null(tb_tensor_host_data(NULL));
  assert_int_equal(tb_tensor_dtype(NULL), TB_DTYPE_COUNT);
  assert_false(tb_tensor_is_contiguous(NULL));
  tb_tensor_destroy(NULL);
  tb_tensor_destroy(t);
}

static void scalar_tensor(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F64, 0, NULL, &t));
  assert_int_equal(tb_tensor_ndim(t), 0);
  assert_int_equal(tb_tensor_numel(t), 1);
  assert_int_equal(tb_tensor_nbytes(t), 8);
  assert_true(tb_tensor_is_contiguous(t));
  double v = 2.718281828459045, out = 0;
  TB_ASSERT_OK(tb_tensor_copy_from_host(t, &v, sizeof v));
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, &out, sizeof out));
  assert_memory_equal(&out, &v, sizeof v);
  double w = -0.5;
  TB_ASSERT_OK(tb_tensor_fill(t, &w));
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, &out, sizeof out));
  assert_true(out == -0.5);
  tb_tensor_destroy(t);
}

static void empty_tensor(void **state) {
  tb_backend *b = *state;
  const int64_t shape[] = {4, 0, 3};
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_I32, 3, shape, &t));
  assert_int_equal(tb_tensor_numel(t), 0);
  assert_int_equal(tb_tensor_nbytes(t), 0);
  assert_true(tb_tensor_is_contiguous(t));
  const int64_t strides[] = {3, 3, 1};
  assert_memory_equal(tb_tensor_strides(t), strides, sizeof strides);
  TB_ASSERT_OK(tb_tensor_copy_from_host(t, NULL, 0));
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, NULL, 0));
  int32_t v = 7;
  TB_ASSERT_OK(tb_tensor_fill(t, &v));
  tb_tensor *u = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_I32, 3, shape, &u));
  TB_ASSERT_OK(tb_tensor_copy(u, t));
  /* An empty tensor takes no memory from the allocator. */
  tb_memory_stats s = {.size = sizeof s};
  TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
  assert_int_equal(s.allocated, 0);
  assert_int_equal(s.num_allocs, 0);
  tb_tensor_destroy(u);
  tb_tensor_destroy(t);
}

static void shape_checks(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = (tb_tensor *)1;
  const int64_t huge[] = {INT64_MAX, 2};
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_U8, 2, huge, &t), TB_ERR_INVALID_ARGUMENT);
  assert_null(t);
  TB_ASSERT_CONTAINS(tb_last_error(), "shape [9223372036854775807, 2] is too large: dimension 0 (size 9223372036854775807)");
  const int64_t one_huge[] = {INT64_MAX};
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 1, one_huge, &t), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "of 4-byte elements");
  /* 2^31 * 2^31 * 2 = 2^63 elements overflows at the first dimension. */
  const int64_t product[] = {(int64_t)1 << 31, (int64_t)1 << 31, 2};
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_I8, 3, product, &t), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dimension 0 (size 2147483648)");
  /* Even with a zero dimension the strides must fit. */
  const int64_t zero_then_huge[] = {0, INT64_MAX, INT64_MAX};
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_I8, 3, zero_then_huge, &t), TB_ERR_INVALID_ARGUMENT);
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 9, nine, &t), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "ndim 9 exceeds the maximum of 8 dimensions");
  const int64_t negative[] = {2, -1};
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 2, negative, &t), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dimension 1 has size -1; sizes must be >= 0");
  /* Eight dimensions are fine. */
  const int64_t eight[8] = {2, 1, 2, 1, 2, 1, 2, 3};
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 8, eight, &t));
  assert_int_equal(tb_tensor_numel(t), 48);
  assert_int_equal(tb_tensor_strides(t)[0], 24);
  tb_tensor_destroy(t);
}

static void fill_every_dtype(void **state) {
  tb_backend *b = *state;
  const int64_t shape[] = {2, 3, 5};
  for (int d = 0; d < TB_DTYPE_COUNT; d++) {
    size_t es = tb_dtype_size((tb_dtype)d);
    unsigned char value[8], out[30 * 8];
    tbt_random_bytes(value, es, 100 + (uint64_t)d);
    tb_tensor *t = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, (tb_dtype)d, 3, shape, &t));
    TB_ASSERT_OK(tb_tensor_fill(t, value));
    TB_ASSERT_OK(tb_tensor_copy_to_host(t, out, 30 * es));
    for (size_t i = 0; i < 30; i++)
      if (memcmp(out + i * es, value, es)) fail_msg("%s: element %zu differs after fill", tb_dtype_name((tb_dtype)d), i);
    tb_tensor_destroy(t);
  }
}

static void copy_same_backend_and_between_backends(void **state) {
  tb_backend *b = *state, *other = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &other));
  assert_ptr_not_equal(other, b);
  int64_t shape[] = {64, 33};
  size_t n = 64 * 33 * 2;
  unsigned char *in = malloc(n), *out = malloc(n);
  tbt_random_bytes(in, n, 7);
  tb_tensor *src = NULL, *same = NULL, *far = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_BF16, 2, shape, &src));
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_BF16, 2, shape, &same));
  TB_ASSERT_OK(tb_tensor_create(other, TB_DTYPE_BF16, 2, shape, &far));
  TB_ASSERT_OK(tb_tensor_copy_from_host(src, in, n));
  TB_ASSERT_OK(tb_tensor_copy(same, src));
  TB_ASSERT_OK(tb_tensor_copy_to_host(same, out, n));
  assert_memory_equal(out, in, n);
  TB_ASSERT_OK(tb_tensor_copy(far, src));
  memset(out, 0, n);
  TB_ASSERT_OK(tb_tensor_copy_to_host(far, out, n));
  assert_memory_equal(out, in, n);
  assert_ptr_equal(tb_tensor_backend(far), other);
  /* And back, into a tensor that held something else. */
  unsigned char zero[2] = {0, 0};
  TB_ASSERT_OK(tb_tensor_fill(src, zero));
  TB_ASSERT_OK(tb_tensor_copy(src, far));
  TB_ASSERT_OK(tb_tensor_copy_to_host(src, out, n));
  assert_memory_equal(out, in, n);

  /* Mismatches name both sides. */
  tb_tensor *f32 = NULL, *wide = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 2, shape, &f32));
  assert_int_equal(tb_tensor_copy(f32, src), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dst is f32 but src is bf16");
  int64_t shape2[] = {33, 64};
  TB_ASSERT_OK(tb_tensor_create(other, TB_DTYPE_BF16, 2, shape2, &wide));
  assert_int_equal(tb_tensor_copy(wide, src), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dst has shape [33, 64] but src has shape [64, 33]");
  assert_int_equal(tb_tensor_copy(NULL, src), TB_ERR_INVALID_ARGUMENT);
  tb_tensor_destroy(wide);
  tb_tensor_destroy(f32);
  tb_tensor_destroy(far);
  tb_tensor_destroy(same);
  tb_tensor_destroy(src);
  tb_backend_destroy(other);
  free(in);
  free(out);
}

/* A tensor keeps its backend alive: destroying the handle first is allowed, and the memory stays
 * valid until the tensor goes (ASan would see a use after free otherwise). */
static void tensor_outlives_backend_handle(void **state) {
  (void)state;
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  const int64_t shape[] = {1000};
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_I64, 1, shape, &t));
  int64_t v = -42;
  TB_ASSERT_OK(tb_tensor_fill(t, &v));
  tb_backend_destroy(b);
  int64_t out[1000];
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, out, sizeof out));
  assert_int_equal(out[0], -42);
  assert_int_equal(out[999], -42);
  assert_string_equal(tb_backend_device(tb_tensor_backend(t))->device, "cpu:0");
  tb_tensor_destroy(t);
}

/* Four threads create, view, export and destroy tensors on one backend at once; the counts add up. */
static void *churn(void *arg) {
  tb_backend *b = arg;
  for (int i = 0; i < 200; i++) {
    const int64_t shape[] = {16 + i % 7, 9};
    tb_tensor *t = NULL, *v = NULL;
    if (tb_tensor_create(b, TB_DTYPE_F32, 2, shape, &t) != TB_OK) return (void *)1;
    const int64_t row[] = {9};
    DLManagedTensorVersioned *m = NULL;
    if (tb_tensor_view(t, 1, row, NULL, 9, &v) != TB_OK || tb_tensor_to_dlpack(v, &m) != TB_OK) return (void *)2;
    float x = (float)i;
    if (tb_tensor_fill(v, &x) != TB_OK) return (void *)3;
    tb_tensor_destroy(t);
    tb_tensor_destroy(v);
    float got;
    memcpy(&got, (char *)m->dl_tensor.data + m->dl_tensor.byte_offset, sizeof got);
    m->deleter(m);
    if (got != x) return (void *)4;
  }
  return NULL;
}

static void threads_share_a_backend(void **state) {
  tb_backend *b = *state;
  pthread_t th[4];
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&th[i], NULL, churn, b), 0);
  for (int i = 0; i < 4; i++) {
    void *rc = NULL;
    pthread_join(th[i], &rc);
    if (rc) fail_msg("thread %d failed at step %p: %s", i, rc, tb_last_error());
  }
  tb_memory_stats s = {.size = sizeof s};
  TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
  assert_int_equal(s.num_allocs, 800);
  assert_int_equal(s.num_frees, 800);
  assert_int_equal(s.allocated, 0);
  TB_ASSERT_OK(tb_backend_set_device(b, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_dtype_round_trips, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(wrong_sizes_and_nulls, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(scalar_tensor, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(empty_tensor, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(shape_checks, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(fill_every_dtype, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(copy_same_backend_and_between_backends, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(tensor_outlives_backend_handle, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(threads_share_a_backend, tbt_cpu_setup, tbt_cpu_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
