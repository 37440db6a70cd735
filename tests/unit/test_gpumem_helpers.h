/* Checks of the device-memory suite (test_device_memory.c, run for CUDA, HIP and Level Zero): each runs on
 * an opened backend over its fake runtime, and asserts the
 * bytes that come back, so a wrong offset, size or pattern anywhere shows up as a mismatch. */
#ifndef TB_TEST_GPUMEM_HELPERS_H
#define TB_TEST_GPUMEM_HELPERS_H
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "backend/allocator.h"
#include "backend/backend_impl.h"
#include "test_util.h"

/* A function the fake exports for tests. The test keeps its own reference to the fake (the same file the
 * library opens, so the same copy), so its counts survive the library closing its handle. */
static inline void *gpumem_fake_symbol(const char *fake, const char *name) {
  void *h = dlopen(tbt_fake(fake), RTLD_NOW);
  if (!h) fail_msg("cannot load %s: %s", fake, dlerror());
  void *sym = dlsym(h, name);
  if (!sym) fail_msg("%s does not export %s", fake, name);
  return sym; /* the reference is kept on purpose: one per lookup, released at exit */
}

/* Bytes i of a test pattern: distinct for neighbouring offsets, never the fake's 0xa5 fill. */
static inline unsigned char gpumem_byte(size_t i, unsigned seed) { return (unsigned char)((i * 131u + seed * 7u) % 251u); }

static inline void gpumem_pattern(unsigned char *buf, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) buf[i] = gpumem_byte(i, seed);
}

/* Write at several offsets (aligned and not), read each back, and read one sub-range across two writes. */
static inline void gpumem_round_trip(const tb_backend_ops *ops, void *state) {
  enum { SIZE = 65536 };
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(state, SIZE, &mem));
  assert_int_equal(mem.size, SIZE);
  assert_non_null(mem.handle);
  static const size_t offsets[] = {0, 256, 4097, SIZE - 1000};
  static const size_t sizes[] = {256, 3000, 999, 1000};
  unsigned char *in = malloc(SIZE), *out = malloc(SIZE);
  assert_non_null(in);
  assert_non_null(out);
  for (size_t k = 0; k < 4; k++) {
    gpumem_pattern(in, sizes[k], (unsigned)k + 1);
    TB_ASSERT_OK(ops->write(state, mem, offsets[k], in, sizes[k]));
    memset(out, 0, SIZE);
    TB_ASSERT_OK(ops->read(state, mem, offsets[k], out, sizes[k]));
    assert_memory_equal(in, out, sizes[k]);
  }
  /* [200, 600): the tail of the first write and the start of the second. */
  TB_ASSERT_OK(ops->read(state, mem, 200, out, 400));
  for (size_t i = 0; i < 56; i++) assert_int_equal(out[i], gpumem_byte(200 + i, 1));
  for (size_t i = 56; i < 312; i++) assert_int_equal(out[i], gpumem_byte(i - 56, 2));
  assert_null(ops->host_pointer); /* the host cannot address this memory */
  TB_ASSERT_OK(ops->write(state, mem, SIZE, in, 0)); /* zero bytes at the end: nothing to do */
  ops->free(state, mem);
  free(in);
  free(out);
}

/* Device-to-device copies between two allocations and within one (at offsets). */
static inline void gpumem_copy(const tb_backend_ops *ops, void *state) {
  enum { SIZE = 8192 };
  tb_devmem a, b;
  TB_ASSERT_OK(ops->alloc(state, SIZE, &a));
  TB_ASSERT_OK(ops->alloc(state, SIZE, &b));
  unsigned char in[SIZE], out[SIZE];
  gpumem_pattern(in, SIZE, 9);
  TB_ASSERT_OK(ops->write(state, a, 0, in, SIZE));
  TB_ASSERT_OK(ops->fill(state, b, 0, "\0", 1, SIZE));
  TB_ASSERT_OK(ops->copy(state, b, 512, a, 1024, 4096));
  TB_ASSERT_OK(ops->read(state, b, 0, out, SIZE));
  for (size_t i = 0; i < SIZE; i++)
    assert_int_equal(out[i], i >= 512 && i < 512 + 4096 ? in[i - 512 + 1024] : 0);
  TB_ASSERT_OK(ops->copy(state, a, 0, a, 4096, 4096)); /* second half onto the first */
  TB_ASSERT_OK(ops->read(state, a, 0, out, 4096));
  assert_memory_equal(out, in + 4096, 4096);
  ops->free(state, a);
  ops->free(state, b);
}

/* Fill [offset, offset + bytes) of a zeroed allocation with a pattern and check every byte. */
static inline void gpumem_fill_one(const tb_backend_ops *ops, void *state, const void *pattern, size_t size,
                                   size_t offset, size_t bytes) {
  enum { SIZE = 4096 };
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(state, SIZE, &mem));
  TB_ASSERT_OK(ops->fill(state, mem, 0, "\0", 1, SIZE));
  TB_ASSERT_OK(ops->fill(state, mem, offset, pattern, size, bytes));
  unsigned char out[SIZE];
  TB_ASSERT_OK(ops->read(state, mem, 0, out, SIZE));
  const unsigned char *p = pattern;
  for (size_t i = 0; i < SIZE; i++) {
    unsigned char want = (i >= offset && i < offset + bytes) ? p[(i - offset) % size] : 0;
    if (out[i] != want)
      fail_msg("fill of %zu bytes with a %zu-byte pattern at offset %zu: byte %zu is 0x%02x, expected 0x%02x", bytes,
               size, offset, i, out[i], want);
  }
  ops->free(state, mem);
}

static inline void gpumem_fill_patterns(const tb_backend_ops *ops, void *state) {
  const unsigned char p1[1] = {0x5c};
  const unsigned char p2[2] = {0x34, 0x12};
  const unsigned char p4[4] = {0x78, 0x56, 0x34, 0x12};
  const unsigned char p8[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const unsigned char p8same[8] = {0xef, 0xbe, 0xad, 0xde, 0xef, 0xbe, 0xad, 0xde};
  gpumem_fill_one(ops, state, p1, 1, 3, 1001);
  gpumem_fill_one(ops, state, p2, 2, 256, 1024);
  gpumem_fill_one(ops, state, p4, 4, 512, 2048);
  gpumem_fill_one(ops, state, p8, 8, 1024, 2048);
  gpumem_fill_one(ops, state, p8same, 8, 0, 4096);
  gpumem_fill_one(ops, state, p4, 4, 2, 400); /* a misaligned target */
  gpumem_fill_one(ops, state, p2, 2, 0, 0);
}

/* Requests outside an allocation and malformed fills are refused before the driver sees them. */
static inline void gpumem_bad_requests(const tb_backend_ops *ops, void *state, const char *label) {
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(state, 1024, &mem));
  unsigned char buf[64] = {0};
  assert_int_equal(ops->write(state, mem, 1000, buf, 64), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), label);
  TB_ASSERT_CONTAINS(tb_last_error(), "write of 64 bytes at offset 1000 lies outside an allocation of 1024 bytes");
  assert_int_equal(ops->read(state, mem, 1025, buf, 0), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(ops->read(state, mem, SIZE_MAX, buf, 2), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(ops->copy(state, mem, 0, mem, 1000, 64), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "copy source");
  assert_int_equal(ops->fill(state, mem, 0, buf, 3, 9), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "fill pattern of 3 bytes");
  assert_int_equal(ops->fill(state, mem, 0, buf, 4, 6), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "not a multiple");
  ops->free(state, mem);
}

/* Through the caching allocator: blocks at offsets inside the raw allocations, data intact, the cache
 * released to the fake by empty_cache, and the stats' driver numbers those of the fake (`fake_free`
 * before anything is allocated). Returns with the allocator destroyed. */
static inline void gpumem_through_allocator(const tb_backend_ops *ops, void *state, const char *label,
                                            uint64_t fake_total, uint64_t fake_free) {
  tb_allocator *a = NULL;
  TB_ASSERT_OK(tb_allocator_create(ops, state, label, &a));
  tb_block *blocks[3];
  unsigned char in[3000], out[3000];
  for (int i = 0; i < 3; i++) {
    TB_ASSERT_OK(tb_allocator_alloc(a, 1000 + (size_t)i * 1000, &blocks[i]));
    assert_int_equal(blocks[i]->offset % ops->alignment(state), 0);
    gpumem_pattern(in, blocks[i]->requested, (unsigned)i + 20);
    TB_ASSERT_OK(ops->write(state, blocks[i]->mem, blocks[i]->offset, in, blocks[i]->requested));
  }
  for (int i = 0; i < 3; i++) {
    gpumem_pattern(in, blocks[i]->requested, (unsigned)i + 20);
    TB_ASSERT_OK(ops->read(state, blocks[i]->mem, blocks[i]->offset, out, blocks[i]->requested));
    assert_memory_equal(in, out, blocks[i]->requested);
  }
  tb_memory_stats stats = {.size = sizeof stats};
  tb_allocator_stats(a, &stats);
  assert_int_equal(stats.requested, 6000);
  assert_true(stats.reserved >= stats.allocated);
  assert_true(stats.device_total_known);
  assert_true(stats.device_free_known);
  assert_int_equal(stats.device_total, fake_total);
  assert_int_equal(stats.device_free, fake_free - stats.reserved);
  for (int i = 0; i < 3; i++) tb_allocator_free(a, blocks[i]);
  assert_int_equal(tb_allocator_live_blocks(a), 0);
  tb_allocator_empty_cache(a);
  tb_allocator_stats(a, &stats);
  assert_int_equal(stats.reserved, 0);
  assert_int_equal(stats.device_free, fake_free);
  tb_allocator_destroy(a);
}

/* The allocator's out-of-memory path over a full device: the cache is released, the retry fails, the
 * message has the sizes, and the next (smaller) allocation works. */
static inline void gpumem_allocator_oom(const tb_backend_ops *ops, void *state, const char *label, size_t too_big) {
  tb_allocator *a = NULL;
  TB_ASSERT_OK(tb_allocator_create(ops, state, label, &a));
  tb_block *small = NULL, *big = NULL;
  TB_ASSERT_OK(tb_allocator_alloc(a, 4096, &small));
  tb_allocator_free(a, small); /* cached */
  assert_int_equal(tb_allocator_alloc(a, too_big, &big), TB_ERR_OUT_OF_MEMORY);
  assert_null(big);
  TB_ASSERT_CONTAINS(tb_last_error(), label);
  char size[32];
  snprintf(size, sizeof size, "%zu", too_big);
  TB_ASSERT_CONTAINS(tb_last_error(), size);
  tb_memory_stats stats = {.size = sizeof stats};
  tb_allocator_stats(a, &stats);
  assert_int_equal(stats.num_oom_retries, 1);
  assert_int_equal(stats.reserved, 0); /* the cached segment went back to the device */
  TB_ASSERT_OK(tb_allocator_alloc(a, 4096, &small));
  tb_allocator_free(a, small);
  tb_allocator_destroy(a);
}

#endif
