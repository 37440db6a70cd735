/* The backend's memory on the CPU: tb_cpu_ops called directly (alignment, copies, fill patterns,
 * memory info from the recorded machine, a request larger than memory), exact allocator stats through
 * the handle after create/destroy/empty_cache, out-of-memory with the sizes and recovery, the memory
 * fraction, scopes, set_device refused while tensors live, the stats as JSON, and a backend without
 * memory support (TPU) refused at create. */
#include <cjson/cJSON.h>
#include "backend/backend_impl.h"
#include "test_tensor_util.h"

#define MIB ((uint64_t)1 << 20)
#define ZEN5_AVAILABLE (24246604ull * 1024ull) /* MemAvailable of the fixture */

static tb_memory_stats stats_of(tb_backend *b) {
  tb_memory_stats s;
  memset(&s, 0xEE, sizeof s);
  s.size = sizeof s;
  TB_ASSERT_OK(tb_backend_memory_stats(b, &s));
  return s;
}

static tb_tensor *f32_tensor(tb_backend *b, int64_t n) {
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, &n, &t));
  return t;
}

static void cpu_ops_directly(void **state) {
  tb_backend *b = *state;
  const tb_backend_ops *ops = &tb_cpu_ops;
  assert_int_equal(ops->kind, TB_BACKEND_CPU);
  void *st = NULL;
  TB_ASSERT_OK(ops->open(tb_backend_device(b), &st));
  assert_int_equal(ops->alignment(st), 64);
  uint64_t free_bytes = 0, total = 0;
  TB_ASSERT_OK(ops->memory_info(st, &free_bytes, &total));
  assert_int_equal(total, TBT_ZEN5_MEMORY_TOTAL);
  assert_int_equal(free_bytes, ZEN5_AVAILABLE);

  tb_devmem a, c;
  TB_ASSERT_OK(ops->alloc(st, 1000, &a));
  TB_ASSERT_OK(ops->alloc(st, 1000, &c));
  assert_int_equal(a.size, 1000);
  assert_int_equal((uintptr_t)a.handle % 64, 0);
  assert_ptr_equal(ops->host_pointer(st, a), a.handle);
  unsigned char in[1000], out[1000];
  tbt_random_bytes(in, sizeof in, 3);
  TB_ASSERT_OK(ops->write(st, a, 10, in, 900));
  TB_ASSERT_OK(ops->copy(st, c, 50, a, 10, 900));
  TB_ASSERT_OK(ops->read(st, c, 50, out, 900));
  assert_memory_equal(out, in, 900);
  /* Fill patterns of 1, 2, 4 and 8 bytes, at an offset, leaving the bytes around them alone. */
  static const size_t sizes[] = {1, 2, 4, 8};
  for (size_t k = 0; k < 4; k++) {
    unsigned char pattern[8];
    tbt_random_bytes(pattern, sizeof pattern, 40 + k);
    memset(a.handle, 0x5A, 1000);
    TB_ASSERT_OK(ops->fill(st, a, 16, pattern, sizes[k], 800));
    TB_ASSERT_OK(ops->read(st, a, 0, out, 1000));
    for (size_t i = 0; i < 1000; i++) {
      unsigned char want = (i >= 16 && i < 816) ? pattern[(i - 16) % sizes[k]] : 0x5A;
      if (out[i] != want) fail_msg("pattern %zu: byte %zu is 0x%02x, expected 0x%02x", sizes[k], i, out[i], want);
    }
  }
  assert_int_equal(ops->fill(st, a, 0, in, 3, 9), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "fill pattern of 3 bytes; it must be 1, 2, 4 or 8");
  assert_int_equal(ops->fill(st, a, 0, in, 4, 10), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "fill of 10 bytes is not a multiple of the 4-byte pattern");
  TB_ASSERT_OK(ops->synchronize(st));

  tb_devmem huge;
  assert_int_equal(ops->alloc(st, (size_t)1 << 50, &huge), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cpu:0: cannot allocate 1125899906842624 bytes: the machine has 25276514304 bytes");
  assert_null(huge.handle);
  ops->free(st, a);
  ops->free(st, c);
  ops->close(st);
}

static void stats_exact(void **state) {
  tb_backend *b = *state;
  tb_memory_stats s = stats_of(b);
  assert_int_equal(s.size, sizeof s);
  assert_int_equal(s.allocated, 0);
  assert_int_equal(s.reserved, 0);
  assert_int_equal(s.num_allocs, 0);
  assert_int_equal(s.limit, 0);
  assert_true(s.device_total_known);
  assert_int_equal(s.device_total, TBT_ZEN5_MEMORY_TOTAL);
  assert_true(s.device_free_known);
  assert_int_equal(s.device_free, ZEN5_AVAILABLE);

  tb_tensor *small = f32_tensor(b, 100); /* 400 bytes -> a 512-byte block in a 2 MiB segment */
  s = stats_of(b);
  assert_int_equal(s.allocated, 512);
  assert_int_equal(s.requested, 400);
  assert_int_equal(s.reserved, 2 * MIB);
  assert_int_equal(s.peak_allocated, 512);
  assert_int_equal(s.num_allocs, 1);
  assert_int_equal(s.num_device_allocs, 1);

  tb_tensor *mid = f32_tensor(b, 1000); /* 4000 -> 4096, same segment */
  s = stats_of(b);
  assert_int_equal(s.allocated, 512 + 4096);
  assert_int_equal(s.requested, 4400);
  assert_int_equal(s.reserved, 2 * MIB);
  assert_int_equal(s.num_device_allocs, 1);

  tb_tensor_destroy(small);
  s = stats_of(b);
  assert_int_equal(s.allocated, 4096);
  assert_int_equal(s.peak_allocated, 4608);
  assert_int_equal(s.num_frees, 1);
  tb_tensor_destroy(mid);
  s = stats_of(b);
  assert_int_equal(s.allocated, 0);
  assert_int_equal(s.requested, 0);
  assert_int_equal(s.reserved, 2 * MIB); /* cached */
  assert_int_equal(s.num_device_frees, 0);

  /* Reuse from the cache: no new device allocation. */
  small = f32_tensor(b, 100);
  s = stats_of(b);
  assert_int_equal(s.num_device_allocs, 1);
  assert_int_equal(s.num_allocs, 3);
  tb_tensor_destroy(small);

  TB_ASSERT_OK(tb_backend_empty_cache(b));
  s = stats_of(b);
  assert_int_equal(s.reserved, 0);
  assert_int_equal(s.num_device_frees, 1);
  assert_int_equal(s.peak_reserved, 2 * MIB);

  /* A large tensor (3 MiB) gets its own segment rounded to 2 MiB: 4 MiB. */
  tb_tensor *large = f32_tensor(b, 3 * (int64_t)MIB / 4);
  s = stats_of(b);
  assert_int_equal(s.allocated, 3 * MIB);
  assert_int_equal(s.reserved, 4 * MIB);
  assert_int_equal(s.peak_reserved, 4 * MIB);
  tb_tensor_destroy(large);
  TB_ASSERT_OK(tb_backend_reset_peak_memory(b));
  s = stats_of(b);
  assert_int_equal(s.peak_allocated, 0);
  assert_int_equal(s.peak_reserved, 4 * MIB);
  TB_ASSERT_OK(tb_backend_empty_cache(b));
  s = stats_of(b);
  assert_int_equal(s.reserved, 0);
  assert_int_equal(s.num_allocs, 4);
  assert_int_equal(s.num_frees, 4);
  assert_int_equal(s.num_device_allocs, 2);
  assert_int_equal(s.num_device_frees, 2);

  /* The struct's size is checked. */
  tb_memory_stats bad = {.size = 8};
  assert_int_equal(tb_backend_memory_stats(b, &bad), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "out_stats->size is 8; set it to sizeof(tb_memory_stats)");
  assert_int_equal(tb_backend_memory_stats(b, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_backend_memory_stats(NULL, &s), TB_ERR_INVALID_ARGUMENT);
}

static void out_of_memory_then_recovers(void **state) {
  tb_backend *b = *state;
  tb_tensor *keep = f32_tensor(b, 10);
  tb_tensor *t = (tb_tensor *)1;
  const int64_t huge[] = {(int64_t)1 << 48}; /* 2^50 bytes of f32 */
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 1, huge, &t), TB_ERR_OUT_OF_MEMORY);
  assert_null(t);
  const char *msg = tb_last_error();
  TB_ASSERT_CONTAINS(msg, "(1125899906842624 bytes)");
  TB_ASSERT_CONTAINS(msg, "512 bytes allocated");
  TB_ASSERT_CONTAINS(msg, "2.00 MiB reserved");
  tb_memory_stats s = stats_of(b);
  assert_int_equal(s.num_oom_retries, 1);
  assert_int_equal(s.allocated, 512);
  /* The process goes on: the next allocation works. */
  tb_tensor *next = f32_tensor(b, 1 << 20);
  float v = 1.5f, out[4];
  TB_ASSERT_OK(tb_tensor_fill(next, &v));
  tb_tensor *head = NULL;
  const int64_t four[] = {4};
  TB_ASSERT_OK(tb_tensor_view(next, 1, four, NULL, 0, &head));
  TB_ASSERT_OK(tb_tensor_copy_to_host(head, out, sizeof out));
  assert_true(out[3] == 1.5f);
  tb_tensor_destroy(head);
  tb_tensor_destroy(next);
  tb_tensor_destroy(keep);
}

static void memory_fraction(void **state) {
  tb_backend *b = *state;
  TB_ASSERT_OK(tb_backend_set_memory_fraction(b, 0.5));
  tb_memory_stats s = stats_of(b);
  assert_int_equal(s.limit, TBT_ZEN5_MEMORY_TOTAL / 2);
  /* 60% of the machine is over the limit: refused before the device is asked. */
  tb_tensor *t = NULL;
  const int64_t big[] = {(int64_t)(TBT_ZEN5_MEMORY_TOTAL / 10 * 6 / 4)};
  assert_int_equal(tb_tensor_create(b, TB_DTYPE_F32, 1, big, &t), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "over the limit 11.77 GiB from memory fraction 0.5");
  s = stats_of(b);
  assert_int_equal(s.num_device_allocs, 0);
  tb_tensor *small = f32_tensor(b, 1000);
  tb_tensor_destroy(small);
  TB_ASSERT_OK(tb_backend_set_memory_fraction(b, 1.0));
  assert_int_equal(stats_of(b).limit, 0);
  static const double bad[] = {0.0, -0.25, 1.5};
  for (size_t i = 0; i < 3; i++) assert_int_equal(tb_backend_set_memory_fraction(b, bad[i]), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "fraction 1.5 for cpu:0 must be in (0, 1]");
  assert_int_equal(tb_backend_set_memory_fraction(b, 0.0 / 0.0), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_backend_set_memory_fraction(NULL, 0.5), TB_ERR_INVALID_ARGUMENT);
}

static void scopes_empty_the_cache(void **state) {
  tb_backend *b = *state;
  TB_ASSERT_OK(tb_backend_scope_begin(b));
  TB_ASSERT_OK(tb_backend_scope_begin(b));
  tb_tensor_destroy(f32_tensor(b, 100));
  assert_int_equal(stats_of(b).reserved, 2 * MIB);
  TB_ASSERT_OK(tb_backend_scope_end(b)); /* inner: nothing released */
  assert_int_equal(stats_of(b).reserved, 2 * MIB);
  TB_ASSERT_OK(tb_backend_scope_end(b)); /* outermost: synchronize and release */
  tb_memory_stats s = stats_of(b);
  assert_int_equal(s.reserved, 0);
  assert_int_equal(s.num_device_frees, 1);
  assert_int_equal(tb_backend_scope_end(b), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "no scope is open on cpu:0");
  /* Memory still in use survives the scope. */
  TB_ASSERT_OK(tb_backend_scope_begin(b));
  tb_tensor *t = f32_tensor(b, 100);
  TB_ASSERT_OK(tb_backend_scope_end(b));
  assert_int_equal(stats_of(b).allocated, 512);
  tb_tensor_destroy(t);
  TB_ASSERT_OK(tb_backend_synchronize(b));
  assert_int_equal(tb_backend_synchronize(NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_backend_scope_begin(NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_backend_empty_cache(NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_backend_reset_peak_memory(NULL), TB_ERR_INVALID_ARGUMENT);
}

static void set_device_refused_while_tensors_live(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = f32_tensor(b, 10), *v = NULL;
  const int64_t two[] = {2};
  TB_ASSERT_OK(tb_tensor_view(t, 1, two, NULL, 3, &v));
  assert_int_equal(tb_backend_set_device(b, 1), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "2 tensors made on cpu:0 are still alive (1 storage, DLPack exports included); destroy them "
                     "before moving the backend to cpu:1");
  TB_ASSERT_OK(tb_backend_set_device(b, 0)); /* where it already is */
  DLManagedTensorVersioned *m = NULL;
  TB_ASSERT_OK(tb_tensor_to_dlpack(v, &m));
  tb_tensor_destroy(v);
  tb_tensor_destroy(t);
  assert_int_equal(tb_backend_set_device(b, 1), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "0 tensors made on cpu:0 are still alive (1 storage");
  m->deleter(m);
  /* Nothing alive: now the device index itself is checked. */
  assert_int_equal(tb_backend_set_device(b, 1), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "cpu:1");
  assert_int_equal(tb_backend_set_device(b, -1), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "index -1 must be >= 0");
  assert_int_equal(tb_backend_set_device(NULL, 0), TB_ERR_INVALID_ARGUMENT);
  /* The backend still works after the refusals. */
  tb_tensor_destroy(f32_tensor(b, 10));
  assert_string_equal(tb_backend_device(b)->device, "cpu:0");
}

static double json_number(const cJSON *o, const char *key) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(item)) fail_msg("JSON key %s is not a number", key);
  return item->valuedouble;
}

static void stats_as_json(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = f32_tensor(b, 100);
  tb_memory_stats s = stats_of(b);
  char *json = NULL;
  TB_ASSERT_OK(tb_memory_stats_to_json(&s, &json));
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  assert_true(json_number(o, "allocated_bytes") == 512);
  assert_true(json_number(o, "requested_bytes") == 400);
  assert_true(json_number(o, "reserved_bytes") == 2 * MIB);
  assert_true(json_number(o, "peak_allocated_bytes") == 512);
  assert_true(json_number(o, "peak_reserved_bytes") == 2 * MIB);
  assert_true(json_number(o, "num_allocs") == 1);
  assert_true(json_number(o, "num_frees") == 0);
  assert_true(json_number(o, "num_device_allocs") == 1);
  assert_true(json_number(o, "num_device_frees") == 0);
  assert_true(json_number(o, "num_oom_retries") == 0);
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "limit_bytes")));
  assert_true(json_number(o, "device_total_bytes") == (double)TBT_ZEN5_MEMORY_TOTAL);
  assert_true(json_number(o, "device_free_bytes") == (double)ZEN5_AVAILABLE);
  cJSON_Delete(o);
  tb_free(json);
  /* Unknown device memory is null; a limit is a number. */
  s.device_free_known = s.device_total_known = false;
  s.limit = 1024;
  TB_ASSERT_OK(tb_memory_stats_to_json(&s, &json));
  o = cJSON_Parse(json);
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "device_free_bytes")));
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "device_total_bytes")));
  assert_true(json_number(o, "limit_bytes") == 1024);
  cJSON_Delete(o);
  tb_free(json);
  s.size = 3;
  assert_int_equal(tb_memory_stats_to_json(&s, &json), TB_ERR_INVALID_ARGUMENT);
  assert_null(json);
  assert_int_equal(tb_memory_stats_to_json(NULL, &json), TB_ERR_INVALID_ARGUMENT);
  tb_tensor_destroy(t);
}

/* A backend whose kind has no memory support in this build cannot be created: the recorded TPU VM. */
static void backend_without_memory_support(void **state) {
  (void)state;
  tbt_clear_env();
  tbt_use_fixture("tpu_v5e");
  tbt_no_vendor_libs();
  unsetenv("TB_TPU_LIB"); /* the fixture's libtpu.so is found where pip puts it */
  tb_backend *b = (tb_backend *)1;
  tb_status st = tb_backend_create("tpu", &b);
  if (st != TB_ERR_UNSUPPORTED) fail_msg("tpu: %s: %s", tb_status_str(st), tb_last_error());
  assert_null(b);
  TB_ASSERT_CONTAINS(tb_last_error(), "memory and execution on tpu are not implemented in this build (device tpu:0)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(cpu_ops_directly, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(stats_exact, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(out_of_memory_then_recovers, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(memory_fraction, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(scopes_empty_the_cache, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(set_device_refused_while_tensors_live, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test_setup_teardown(stats_as_json, tbt_cpu_setup, tbt_cpu_teardown),
      cmocka_unit_test(backend_without_memory_support),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
