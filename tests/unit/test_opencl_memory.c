/* The OpenCL backend's memory ops (tb_opencl_ops) for real on PoCL's CPU device: open the device
 * discovery numbered, round-trips of random bytes at many offsets and sizes up to 64 MiB, copies
 * between buffers, fills with every pattern width, memory info, an allocation above the device's
 * maximum (TB_ERR_OUT_OF_MEMORY with the numbers, and the next allocation works), and misuse. */
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "test_util.h"

#define OPENCL_ONLY (1u << TB_BACKEND_OPENCL)
#define MIB ((size_t)1 << 20)

typedef struct fixture {
  tb_device_list *list;
  const tb_device_info *dev;
  void *state;
} fixture;

static const tb_backend_ops *ops = &tb_opencl_ops;

static int open_pocl(void **state) {
  tbt_clear_env();
  unsetenv("TBT_FAKE_OPENCL");
  fixture *f = calloc(1, sizeof *f);
  f->list = tbt_discover(OPENCL_ONLY);
  f->dev = tbt_nth(f->list, TB_BACKEND_OPENCL, 0);
  if (!f->dev) fail_msg("no OpenCL device (PoCL expected); report: %s", tb_device_list_report(f->list, TB_BACKEND_OPENCL)->summary);
  TB_ASSERT_OK(ops->open(f->dev, &f->state));
  *state = f;
  return 0;
}

static int close_pocl(void **state) {
  fixture *f = *state;
  if (f->state) ops->close(f->state);
  tb_device_list_destroy(f->list);
  free(f);
  return 0;
}

static unsigned char *random_bytes(size_t n, unsigned seed) {
  unsigned char *p = malloc(n);
  assert_non_null(p);
  uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p[i] = (unsigned char)(x >> 24);
  }
  return p;
}

static void read_all(void *st, tb_devmem mem, unsigned char *out) { TB_ASSERT_OK(ops->read(st, mem, 0, out, mem.size)); }

static void opens_discovered_device(void **state) {
  fixture *f = *state;
  assert_int_equal(ops->kind, TB_BACKEND_OPENCL);
  assert_string_equal(f->dev->device, "opencl:0");
  size_t align = ops->alignment(f->state);
  assert_true(align >= 4 && (align & (align - 1)) == 0);
  const char *platform = tb_device_property(f->dev, "platform_name");
  if (platform && strstr(platform, "Portable Computing Language")) assert_int_equal(align, 128); /* PoCL: 1024 bits */
  tb_devmem mem = {0};
  TB_ASSERT_OK(ops->alloc(f->state, 4096, &mem));
  assert_non_null(mem.handle);
  assert_int_equal(mem.size, 4096);
  assert_null(ops->host_pointer); /* the host cannot address this memory */
  ops->free(f->state, mem);
  TB_ASSERT_OK(ops->synchronize(f->state));
}

static void round_trip_offsets_and_sizes(void **state) {
  fixture *f = *state;
  const size_t size = 1 * MIB + 333;
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(f->state, size, &mem));
  unsigned char *shadow = random_bytes(size, 1), *back = malloc(size);
  TB_ASSERT_OK(ops->write(f->state, mem, 0, shadow, size));
  const size_t offsets[] = {0, 1, 7, 128, 4093, 65536 + 3, size - 1};
  const size_t sizes[] = {1, 3, 127, 4097, 65537};
  unsigned seed = 2;
  for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      size_t off = offsets[o], n = sizes[s];
      if (off + n > size) continue;
      unsigned char *data = random_bytes(n, seed++);
      TB_ASSERT_OK(ops->write(f->state, mem, off, data, n));
      memcpy(shadow + off, data, n);
      unsigned char *got = malloc(n);
      TB_ASSERT_OK(ops->read(f->state, mem, off, got, n));
      assert_memory_equal(got, data, n);
      free(got);
      free(data);
    }
  }
  read_all(f->state, mem, back); /* every byte around the writes is still what it was */
  assert_memory_equal(back, shadow, size);
  TB_ASSERT_OK(ops->write(f->state, mem, 5, shadow, 0)); /* 0 bytes: nothing to do */
  free(back);
  free(shadow);
  ops->free(f->state, mem);
}

static void round_trip_64_mib(void **state) {
  fixture *f = *state;
  const size_t size = 64 * MIB;
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(f->state, size, &mem));
  unsigned char *data = random_bytes(size, 99), *back = calloc(1, size);
  TB_ASSERT_OK(ops->write(f->state, mem, 0, data, size));
  TB_ASSERT_OK(ops->synchronize(f->state));
  read_all(f->state, mem, back);
  assert_memory_equal(back, data, size);
  memset(back, 0, size);
  TB_ASSERT_OK(ops->read(f->state, mem, 3, back, size - 3)); /* odd offset, odd size */
  assert_memory_equal(back, data + 3, size - 3);
  free(back);
  free(data);
  ops->free(f->state, mem);
}

static void copy_between_buffers(void **state) {
  fixture *f = *state;
  const size_t size = 256 * 1024 + 5;
  tb_devmem a, b;
  TB_ASSERT_OK(ops->alloc(f->state, size, &a));
  TB_ASSERT_OK(ops->alloc(f->state, size, &b));
  unsigned char *da = random_bytes(size, 3), *db = random_bytes(size, 4), *back = malloc(size);
  TB_ASSERT_OK(ops->write(f->state, a, 0, da, size));
  TB_ASSERT_OK(ops->write(f->state, b, 0, db, size));
  TB_ASSERT_OK(ops->copy(f->state, b, 1001, a, 17, 100003));
  memcpy(db + 1001, da + 17, 100003);
  TB_ASSERT_OK(ops->copy(f->state, b, size - 1, a, 0, 1));
  db[size - 1] = da[0];
  TB_ASSERT_OK(ops->copy(f->state, a, 0, a, 200000, 1000)); /* within one buffer, not overlapping */
  memcpy(da, da + 200000, 1000);
  read_all(f->state, b, back);
  assert_memory_equal(back, db, size);
  read_all(f->state, a, back);
  assert_memory_equal(back, da, size);

  assert_int_equal(ops->copy(f->state, a, 10, a, 0, 100), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "overlaps");
  assert_int_equal(ops->copy(f->state, b, size - 10, a, 0, 11), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "copy destination of 11 bytes at offset 262139 is outside the 262149-byte buffer");
  free(back);
  free(da);
  free(db);
  ops->free(f->state, a);
  ops->free(f->state, b);
}

static void fill_every_pattern_width(void **state) {
  fixture *f = *state;
  const size_t size = 64 * 1024;
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(f->state, size, &mem));
  unsigned char *shadow = random_bytes(size, 5), *back = malloc(size);
  TB_ASSERT_OK(ops->write(f->state, mem, 0, shadow, size));
  const unsigned char pattern[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  const size_t widths[] = {1, 2, 4, 8};
  for (size_t w = 0; w < 4; w++) {
    size_t pw = widths[w], off = pw * (100 + 37 * w), n = pw * (1001 + 13 * w);
    TB_ASSERT_OK(ops->fill(f->state, mem, off, pattern, pw, n));
    for (size_t i = 0; i < n; i++) shadow[off + i] = pattern[i % pw];
    read_all(f->state, mem, back);
    assert_memory_equal(back, shadow, size);
  }
  TB_ASSERT_OK(ops->fill(f->state, mem, 0, pattern, 8, size)); /* the whole buffer */
  read_all(f->state, mem, back);
  for (size_t i = 0; i < size; i++) assert_int_equal(back[i], pattern[i % 8]);

  assert_int_equal(ops->fill(f->state, mem, 2, pattern, 4, 8), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "not a whole number of 4-byte patterns");
  assert_int_equal(ops->fill(f->state, mem, 0, pattern, 3, 9), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "use 1, 2, 4 or 8");
  free(back);
  free(shadow);
  ops->free(f->state, mem);
}

static void memory_info_total_from_device(void **state) {
  fixture *f = *state;
  uint64_t free_bytes = 1, total = 0;
  assert_int_equal(ops->memory_info(f->state, &free_bytes, &total), TB_ERR_UNSUPPORTED); /* PoCL: free unknown */
  assert_true(f->dev->memory_total_known);
  assert_int_equal(total, f->dev->memory_total);
  assert_int_equal(free_bytes, 0);
  TB_ASSERT_CONTAINS(tb_last_error(), "does not report free memory");
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:0 (");
}

static void oversized_allocation_is_out_of_memory(void **state) {
  fixture *f = *state;
  const char *max_text = tb_device_property(f->dev, "max_alloc_bytes");
  assert_non_null(max_text);
  unsigned long long max_alloc = strtoull(max_text, NULL, 10);
  assert_true(max_alloc > 0);
  tb_devmem mem = {(void *)1, 1};
  assert_int_equal(ops->alloc(f->state, (size_t)max_alloc + 1, &mem), TB_ERR_OUT_OF_MEMORY);
  assert_null(mem.handle);
  assert_int_equal(mem.size, 0);
  char want[160];
  snprintf(want, sizeof want, "clCreateBuffer of %llu bytes failed with -61 CL_INVALID_BUFFER_SIZE", max_alloc + 1);
  TB_ASSERT_CONTAINS(tb_last_error(), want);
  snprintf(want, sizeof want, "the largest single allocation is %llu bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)", max_alloc);
  TB_ASSERT_CONTAINS(tb_last_error(), want);
  snprintf(want, sizeof want, "of %llu bytes of global memory", (unsigned long long)f->dev->memory_total);
  TB_ASSERT_CONTAINS(tb_last_error(), want);
  assert_int_equal(ops->alloc(f->state, SIZE_MAX / 2, &mem), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "CL_DEVICE_MAX_MEM_ALLOC_SIZE");

  /* the process goes on: the next allocation works */
  TB_ASSERT_OK(ops->alloc(f->state, 1000, &mem));
  unsigned char *data = random_bytes(1000, 6), back[1000];
  TB_ASSERT_OK(ops->write(f->state, mem, 0, data, 1000));
  TB_ASSERT_OK(ops->read(f->state, mem, 0, back, 1000));
  assert_memory_equal(back, data, 1000);
  free(data);
  ops->free(f->state, mem);
}

/* PoCL accepts any number of buffers (it allocates on first use); the backend refuses buffers past the
 * device's global memory, and the next allocation that fits works. */
static void allocations_past_global_memory(void **state) {
  fixture *f = *state;
  uint64_t total = f->dev->memory_total;
  size_t max_alloc = (size_t)strtoull(tb_device_property(f->dev, "max_alloc_bytes"), NULL, 10);
  tb_devmem mems[64];
  size_t n = 0;
  while ((n + 1) * (uint64_t)max_alloc <= total && n < 63) TB_ASSERT_OK(ops->alloc(f->state, max_alloc, &mems[n++]));
  assert_true(n >= 1);
  uint64_t held = n * (uint64_t)max_alloc;
  tb_devmem extra = {0};
  if (held < total) { /* no room for another maximal buffer */
    assert_int_equal(ops->alloc(f->state, max_alloc, &extra), TB_ERR_OUT_OF_MEMORY);
    char want[256];
    snprintf(want, sizeof want, "an allocation of %zu bytes does not fit: %llu bytes are already allocated of the device's "
             "%llu bytes (CL_DEVICE_GLOBAL_MEM_SIZE)", max_alloc, (unsigned long long)held, (unsigned long long)total);
    TB_ASSERT_CONTAINS(tb_last_error(), want);
    TB_ASSERT_OK(ops->alloc(f->state, (size_t)(total - held), &mems[n++])); /* exactly what is left fits */
  }
  assert_int_equal(ops->alloc(f->state, 1, &extra), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "an allocation of 1 bytes does not fit");
  ops->free(f->state, mems[0]);
  TB_ASSERT_OK(ops->alloc(f->state, max_alloc, &mems[0])); /* room again */
  unsigned char in[100], out[100];
  for (int i = 0; i < 100; i++) in[i] = (unsigned char)(i * 7);
  TB_ASSERT_OK(ops->write(f->state, mems[0], max_alloc - 100, in, 100));
  TB_ASSERT_OK(ops->read(f->state, mems[0], max_alloc - 100, out, 100));
  assert_memory_equal(in, out, 100);
  for (size_t i = 0; i < n; i++) ops->free(f->state, mems[i]);
}

static void out_of_range_and_zero(void **state) {
  fixture *f = *state;
  tb_devmem mem;
  unsigned char buf[16] = {0};
  assert_int_equal(ops->alloc(f->state, 0, &mem), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "0 bytes");
  TB_ASSERT_OK(ops->alloc(f->state, 10, &mem));
  assert_int_equal(ops->write(f->state, mem, 8, buf, 3), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "write of 3 bytes at offset 8 is outside the 10-byte buffer");
  assert_int_equal(ops->read(f->state, mem, SIZE_MAX, buf, 2), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "read of 2 bytes");
  TB_ASSERT_OK(ops->read(f->state, mem, 10, buf, 0));
  ops->free(f->state, mem);
}

static void open_checks_index_and_name(void **state) {
  fixture *f = *state;
  tb_device_info copy = *f->dev;
  void *st = (void *)1;
  copy.index = 4000;
  copy.device = "opencl:4000";
  assert_int_equal(ops->open(&copy, &st), TB_ERR_NOT_FOUND);
  assert_null(st);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:4000 (");
  TB_ASSERT_CONTAINS(tb_last_error(), "not found: the OpenCL loader");
  TB_ASSERT_CONTAINS(tb_last_error(), "discover again");

  copy = *f->dev;
  copy.name = "Some Other Device";
  assert_int_equal(ops->open(&copy, &st), TB_ERR_NOT_FOUND);
  char want[256];
  snprintf(want, sizeof want, "the OpenCL device at that index is now '%s'", f->dev->name);
  TB_ASSERT_CONTAINS(tb_last_error(), want);

  copy = *f->dev;
  copy.backend = TB_BACKEND_VULKAN;
  assert_int_equal(ops->open(&copy, &st), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "not an OpenCL device");

  /* a second context on the same device works alongside the first */
  TB_ASSERT_OK(ops->open(f->dev, &st));
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(st, 64, &mem));
  ops->free(st, mem);
  ops->close(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(opens_discovered_device, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(round_trip_offsets_and_sizes, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(round_trip_64_mib, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(copy_between_buffers, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(fill_every_pattern_width, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(memory_info_total_from_device, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(oversized_allocation_is_out_of_memory, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(allocations_past_global_memory, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(out_of_range_and_zero, open_pocl, close_pocl),
      cmocka_unit_test_setup_teardown(open_checks_index_and_name, open_pocl, close_pocl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
