/* Tensors on every backend that is real on this machine — the CPU, OpenCL (PoCL) and Vulkan (lavapipe,
 * validation layer on) — through the public API only: every dtype round-trips bit-exactly, strided views
 * and fills agree with the CPU, tensors copy between backends, stats are exact, and asking for more
 * memory than the device has fails with TB_ERR_OUT_OF_MEMORY while the next allocation works. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/vulkan/vk_backend.h"
#include "test_tensor_util.h"

static const char *const backends[] = {"cpu", "opencl:0", "vulkan:0"};
#define NBACKENDS (sizeof backends / sizeof backends[0])

static tb_backend *open_backend(const char *name) {
  tb_backend *b = NULL;
  tb_status st = tb_backend_create(name, &b);
  if (st != TB_OK) fail_msg("tb_backend_create(%s): %s: %s", name, tb_status_str(st), tb_last_error());
  return b;
}

static int setup(void **state) {
  (void)state;
  tbt_clear_env(); /* the real machine: PoCL and lavapipe */
  return 0;
}

static void every_dtype_round_trips(void **state) {
  (void)state;
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    for (int t = 0; t < TB_DTYPE_COUNT; t++) {
      const int64_t shape[3] = {3, 5, 7};
      tb_tensor *x = NULL;
      TB_ASSERT_OK(tb_tensor_create(b, (tb_dtype)t, 3, shape, &x));
      size_t n = tb_tensor_nbytes(x);
      unsigned char *in = malloc(n), *out = malloc(n);
      tbt_random_bytes(in, n, (uint64_t)(k * 100 + (size_t)t));
      memset(out, 0xA5, n);
      TB_ASSERT_OK(tb_tensor_copy_from_host(x, in, n));
      TB_ASSERT_OK(tb_tensor_copy_to_host(x, out, n));
      if (memcmp(in, out, n) != 0) fail_msg("%s: dtype %s does not round-trip", backends[k], tb_dtype_name((tb_dtype)t));
      free(in);
      free(out);
      tb_tensor_destroy(x);
    }
    TB_ASSERT_OK(tb_backend_synchronize(b));
    const char *v = getenv("TB_VULKAN_VALIDATION");
    if (tb_backend_kind_of(b) == TB_BACKEND_VULKAN && v && strcmp(v, "1") == 0)
      assert_true(tb_vk_validation_counting(b->state)); /* the layer is really on */
    tb_backend_destroy(b);
  }
}

/* A transposed view written and read on each backend gives what the CPU gives. */
static void strided_views_match_the_cpu(void **state) {
  (void)state;
  float expect[4 * 6], got[4 * 6], src[6 * 4];
  for (int i = 0; i < 24; i++) src[i] = (float)i * 0.5f - 3.0f;
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 6; c++) expect[r * 6 + c] = src[c * 4 + r];
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    const int64_t shape[2] = {6, 4}, tshape[2] = {4, 6}, tstrides[2] = {1, 4};
    tb_tensor *x = NULL, *xt = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 2, shape, &x));
    TB_ASSERT_OK(tb_tensor_copy_from_host(x, src, sizeof src));
    TB_ASSERT_OK(tb_tensor_view(x, 2, tshape, tstrides, 0, &xt));
    assert_false(tb_tensor_is_contiguous(xt));
    TB_ASSERT_OK(tb_tensor_copy_to_host(xt, got, sizeof got));
    assert_memory_equal(got, expect, sizeof got);
    tb_tensor_destroy(xt);
    tb_tensor_destroy(x);
    tb_backend_destroy(b);
  }
}

static void fill_matches_for_each_size(void **state) {
  (void)state;
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    const tb_dtype types[] = {TB_DTYPE_U8, TB_DTYPE_BF16, TB_DTYPE_F32, TB_DTYPE_I64};
    const uint64_t pattern = 0x0123456789abcdefull;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
      const int64_t shape[1] = {1001};
      tb_tensor *x = NULL;
      TB_ASSERT_OK(tb_tensor_create(b, types[t], 1, shape, &x));
      TB_ASSERT_OK(tb_tensor_fill(x, &pattern));
      size_t es = tb_dtype_size(types[t]), n = tb_tensor_nbytes(x);
      unsigned char *out = malloc(n);
      TB_ASSERT_OK(tb_tensor_copy_to_host(x, out, n));
      for (size_t i = 0; i < n; i += es)
        if (memcmp(out + i, &pattern, es) != 0) fail_msg("%s: fill of %s wrong at byte %zu", backends[k], tb_dtype_name(types[t]), i);
      free(out);
      tb_tensor_destroy(x);
    }
    tb_backend_destroy(b);
  }
}

/* CPU -> OpenCL -> Vulkan -> CPU keeps every bit. */
static void copies_between_backends(void **state) {
  (void)state;
  tb_backend *b[NBACKENDS];
  tb_tensor *x[NBACKENDS];
  const int64_t shape[2] = {64, 33};
  for (size_t k = 0; k < NBACKENDS; k++) {
    b[k] = open_backend(backends[k]);
    TB_ASSERT_OK(tb_tensor_create(b[k], TB_DTYPE_F16, 2, shape, &x[k]));
  }
  size_t n = tb_tensor_nbytes(x[0]);
  unsigned char *in = malloc(n), *out = malloc(n);
  tbt_random_bytes(in, n, 7);
  TB_ASSERT_OK(tb_tensor_copy_from_host(x[0], in, n));
  TB_ASSERT_OK(tb_tensor_copy(x[1], x[0]));
  TB_ASSERT_OK(tb_tensor_copy(x[2], x[1]));
  tb_tensor *back = NULL;
  TB_ASSERT_OK(tb_tensor_create(b[0], TB_DTYPE_F16, 2, shape, &back));
  TB_ASSERT_OK(tb_tensor_copy(back, x[2]));
  TB_ASSERT_OK(tb_tensor_copy_to_host(back, out, n));
  assert_memory_equal(in, out, n);
  /* A shape mismatch is refused with both shapes named. */
  const int64_t other[2] = {33, 64};
  tb_tensor *wrong = NULL;
  TB_ASSERT_OK(tb_tensor_create(b[1], TB_DTYPE_F16, 2, other, &wrong));
  assert_int_equal(tb_tensor_copy(wrong, x[0]), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "64");
  tb_tensor_destroy(wrong);
  tb_tensor_destroy(back);
  free(in);
  free(out);
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_tensor_destroy(x[k]);
    tb_backend_destroy(b[k]);
  }
}

/* Exact allocator stats on each backend, and an out-of-memory request that leaves the backend usable. */
static void stats_and_out_of_memory(void **state) {
  (void)state;
  for (size_t k = 0; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    tb_memory_stats s = {.size = sizeof s};
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.allocated, 0);
    assert_int_equal(s.num_allocs, 0);
    assert_true(s.device_total_known);
    const int64_t shape[1] = {1000};
    tb_tensor *x = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, shape, &x));
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.requested, 4000);
    assert_true(s.allocated >= 4000 && s.allocated < 4000 + 4096);
    assert_true(s.reserved >= s.allocated);
    assert_int_equal(s.num_allocs, 1);
    uint64_t reserved = s.reserved;
    tb_tensor_destroy(x);
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.allocated, 0);
    assert_int_equal(s.reserved, reserved); /* cached */
    TB_ASSERT_OK(tb_backend_empty_cache(b));
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.reserved, 0);

    /* Twice the device's memory. */
    const int64_t huge[1] = {(int64_t)(s.device_total / 2)};
    tb_tensor *h = NULL;
    assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 1, huge, &h), TB_ERR_OUT_OF_MEMORY);
    assert_null(h);
    TB_ASSERT_CONTAINS(tb_last_error(), "out of memory allocating");
    TB_ASSERT_CONTAINS(tb_last_error(), "reserved");
    TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, shape, &x));
    tb_tensor_destroy(x);
    tb_backend_destroy(b);
  }
}

/* CUDA, ROCm and Level Zero through the public API, on recorded machines with the fake drivers: a tensor
 * round-trips and the stats show the driver's memory. (Not run on the hardware: see docs/testing.md.) */
static void vendor_backends_with_fake_drivers(void **state) {
  (void)state;
  static const struct { const char *fixture, *device, *lib_var, *fake, *lib_var2, *fake2; } cases[] = {
      {"h100x8", "cuda:1", "TB_CUDA_LIB", "fake_cuda", "TB_NVML_LIB", "fake_nvml"},
      {"mi300x", "rocm:2", "TB_HIP_LIB", "fake_hip", "TB_ROCM_SMI_LIB", "fake_rocm_smi"},
      {"intel_max", "xpu:3", "TB_ZE_LIB", "fake_ze", NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tbt_clear_env();
    tbt_no_vendor_libs();
    tbt_use_fixture(cases[i].fixture);
    setenv(cases[i].lib_var, tbt_fake(cases[i].fake), 1);
    if (cases[i].lib_var2) setenv(cases[i].lib_var2, tbt_fake(cases[i].fake2), 1);
    tb_backend *b = open_backend(cases[i].device);
    assert_string_equal(tb_backend_device(b)->device, cases[i].device);
    const int64_t shape[2] = {17, 31};
    tb_tensor *x = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_BF16, 2, shape, &x));
    size_t n = tb_tensor_nbytes(x);
    unsigned char *in = malloc(n), *out = malloc(n);
    tbt_random_bytes(in, n, i + 11);
    TB_ASSERT_OK(tb_tensor_copy_from_host(x, in, n));
    TB_ASSERT_OK(tb_tensor_copy_to_host(x, out, n));
    assert_memory_equal(in, out, n);
    tb_memory_stats s = {.size = sizeof s};
    TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
    assert_int_equal(s.num_allocs, 1);
    assert_true(s.device_total_known);
    assert_true(s.device_total > 0 && s.device_free_known && s.device_free <= s.device_total); /* the fake driver's own capacity */
    free(in);
    free(out);
    tb_tensor_destroy(x);
    tb_backend_destroy(b);
  }
}

/* DLPack export is for memory the host can address: a device tensor is refused even when it is empty. */
static void dlpack_export_needs_host_memory(void **state) {
  (void)state;
  for (size_t k = 1; k < NBACKENDS; k++) {
    tb_backend *b = open_backend(backends[k]);
    const int64_t empty[1] = {0};
    tb_tensor *x = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, empty, &x));
    DLManagedTensorVersioned *m = NULL;
    assert_int_equal(tb_tensor_to_dlpack(x, &m), TB_ERR_UNSUPPORTED);
    assert_null(m);
    TB_ASSERT_CONTAINS(tb_last_error(), "copy it to a CPU tensor first");
    tb_tensor_destroy(x);
    tb_backend_destroy(b);
  }
}

/* Runs last: every Vulkan device the tests above opened and closed ran under the validation layer
 * (TB_VULKAN_VALIDATION=1 in the test environment), and the layer reported nothing. */
static void vulkan_validation_reported_nothing(void **state) {
  (void)state;
  const char *v = getenv("TB_VULKAN_VALIDATION");
  if (!v || strcmp(v, "1") != 0) skip();
  char first[512] = "";
  unsigned n = tb_vk_closed_validation_messages(first, sizeof first);
  if (n != 0) fail_msg("the Vulkan validation layer reported %u message(s); the first: %s", n, first);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(every_dtype_round_trips, setup),
      cmocka_unit_test_setup(strided_views_match_the_cpu, setup),
      cmocka_unit_test_setup(fill_matches_for_each_size, setup),
      cmocka_unit_test_setup(copies_between_backends, setup),
      cmocka_unit_test_setup(stats_and_out_of_memory, setup),
      cmocka_unit_test(vendor_backends_with_fake_drivers),
      cmocka_unit_test_setup(dlpack_export_needs_host_memory, setup),
      cmocka_unit_test(vulkan_validation_reported_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
