/* The Vulkan backend's memory (tb_vulkan_ops) for real on lavapipe with the Khronos validation layer on:
 * open vulkan:N as discovery numbered it, round-trips of random bytes at many offsets and sizes (1 byte
 * to beyond the allocator's block size), copies, fills of every pattern width, suballocation from shared
 * VkDeviceMemory blocks, merging of freed ranges, the staging path forced on, out-of-memory with the
 * numbers (and the next allocation works), misuse, and through the caching allocator. Every test ends
 * by asserting that the validation layer reported nothing. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/allocator.h"
#include "backend/backend_impl.h"
#include "backend/vulkan/vk_backend.h"
#include "backend/vulkan/vk_device.h"
#include "test_util.h"

#define VULKAN_ONLY (1u << TB_BACKEND_VULKAN)
#define MIB ((size_t)1 << 20)

typedef struct fixture {
  tb_device_list *list;
  const tb_device_info *dev;
  void *state;
} fixture;

static const tb_backend_ops *ops = &tb_vulkan_ops;

static const tb_device_info *find_lavapipe(const tb_device_list *list) {
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_VULKAN, i);
    if (d && strstr(d->name, "llvmpipe")) return d;
  }
  return NULL;
}

static void assert_no_validation_messages(void *st) {
  char first[512];
  unsigned n = tb_vk_validation_messages(st, first, sizeof first);
  if (n) fail_msg("the validation layer reported %u message(s); first: %s", n, first);
}

static int open_lavapipe(void **state) {
  tbt_clear_env();
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  fixture *f = calloc(1, sizeof *f);
  f->list = tbt_discover(VULKAN_ONLY);
  f->dev = find_lavapipe(f->list);
  if (!f->dev) fail_msg("no llvmpipe device; Vulkan report: %s", tb_device_list_report(f->list, TB_BACKEND_VULKAN)->summary);
  TB_ASSERT_OK(ops->open(f->dev, &f->state));
  assert_true(tb_vk_validation_counting(f->state));
  *state = f;
  return 0;
}

static int close_lavapipe(void **state) {
  fixture *f = *state;
  if (f->state) {
    assert_no_validation_messages(f->state);
    tb_vk_memory_counters c;
    tb_vk_memory_counters_get(f->state, &c);
    assert_int_equal(c.live, 0);
    ops->close(f->state);
  }
  char first[512];
  unsigned closed = tb_vk_closed_validation_messages(first, sizeof first);
  if (closed) fail_msg("the validation layer reported %u message(s) by device destruction; first: %s", closed, first);
  tb_device_list_destroy(f->list);
  free(f);
  return 0;
}

static unsigned char *random_bytes(size_t n, unsigned seed) {
  unsigned char *p = malloc(n ? n : 1);
  assert_non_null(p);
  uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    p[i] = (unsigned char)(x >> 24);
  }
  return p;
}

static void assert_bytes(const unsigned char *got, const unsigned char *want, size_t n, const char *what) {
  if (memcmp(got, want, n) == 0) return;
  size_t i = 0;
  while (got[i] == want[i]) i++;
  fail_msg("%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, got[i], want[i]);
}

static void opens_discovered_device(void **state) {
  fixture *f = *state;
  assert_int_equal(ops->kind, TB_BACKEND_VULKAN);
  assert_int_equal(f->dev->index, 0); /* lavapipe is the only Vulkan device here */
  assert_int_equal(ops->alignment(f->state), 16); /* llvmpipe: minStorageBufferOffsetAlignment 16 */
  vk_state *s = f->state;
  assert_int_equal(s->queue_family, 0);
  assert_int_equal(s->max_allocation, (uint64_t)2 << 30);
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.block_size, 64 * MIB);
  assert_int_equal(c.blocks, 0);
  assert_int_equal(c.allocate_calls, 0);
  TB_ASSERT_OK(ops->synchronize(f->state));
  uint64_t free_bytes = 1, total = 0;
  assert_int_equal(ops->memory_info(f->state, &free_bytes, &total), TB_ERR_UNSUPPORTED); /* llvmpipe: no memory budget */
  TB_ASSERT_CONTAINS(tb_last_error(), "VK_EXT_memory_budget");
  assert_int_equal(total, f->dev->memory_total);
  assert_int_equal(free_bytes, 0);
}

static void wrong_devices_are_refused(void **state) {
  fixture *f = *state;
  void *st = NULL;
  tb_device_info info = *f->dev;
  info.backend = TB_BACKEND_OPENCL;
  assert_int_equal(ops->open(&info, &st), TB_ERR_INVALID_ARGUMENT);
  assert_null(st);
  info = *f->dev;
  info.index = 7;
  assert_int_equal(ops->open(&info, &st), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "no device 7");
  assert_null(st);
  info = *f->dev;
  assert_true(info.uuid[0] != '\0');
  info.uuid = "01234567-89ab-cdef-0123-456789abcdef";
  assert_int_equal(ops->open(&info, &st), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "01234567-89ab-cdef-0123-456789abcdef");
  assert_null(st);
}

/* Write random bytes at offsets into allocations of many sizes and read them back, whole and in parts. */
static void round_trips(void *st, size_t block_size) {
  const size_t sizes[] = {1, 3, 17, 4096, 4097, MIB + 7, 64 * MIB, block_size + 12345};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t n = sizes[i];
    tb_devmem mem;
    TB_ASSERT_OK(ops->alloc(st, n, &mem));
    assert_int_equal(mem.size, n);
    unsigned char *want = random_bytes(n, (unsigned)i), *got = malloc(n);
    TB_ASSERT_OK(ops->write(st, mem, 0, want, n));
    memset(got, 0, n);
    TB_ASSERT_OK(ops->read(st, mem, 0, got, n));
    assert_bytes(got, want, n, "whole round trip");
    const size_t offsets[] = {1, 5, 16, 4095};
    for (size_t k = 0; k < 4; k++) {
      size_t off = offsets[k] % n, len = (n - off) / 2 + 1;
      unsigned char *part = random_bytes(len, (unsigned)(100 + k));
      TB_ASSERT_OK(ops->write(st, mem, off, part, len));
      memcpy(want + off, part, len);
      memset(got, 0, n);
      TB_ASSERT_OK(ops->read(st, mem, off, got, len));
      assert_bytes(got, part, len, "partial read");
      free(part);
    }
    TB_ASSERT_OK(ops->read(st, mem, 0, got, n));
    assert_bytes(got, want, n, "round trip after partial writes");
    free(want);
    free(got);
    ops->free(st, mem);
  }
}

static void round_trips_mapped(void **state) {
  fixture *f = *state;
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  round_trips(f->state, c.block_size);
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.staging_bytes, 0); /* lavapipe's only memory type is host-visible: no staging */
  assert_int_equal(c.blocks, 0);
  assert_int_equal(c.free_calls, c.allocate_calls);
}

static void round_trips_through_staging(void **state) {
  fixture *f = *state;
  tb_vk_force_staging(f->state, true);
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(f->state, 100, &mem));
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  assert_false(c.last_mapped);
  ops->free(f->state, mem);
  round_trips(f->state, c.block_size);
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.staging_bytes, 16 * MIB); /* grown on demand to its cap; 64 MiB went in pieces */
}

static void copies(void *st) {
  const size_t n = 3 * MIB + 11;
  tb_devmem a, b;
  TB_ASSERT_OK(ops->alloc(st, n, &a));
  TB_ASSERT_OK(ops->alloc(st, n, &b));
  unsigned char *ra = random_bytes(n, 1), *rb = random_bytes(n, 2), *got = malloc(n);
  TB_ASSERT_OK(ops->write(st, a, 0, ra, n));
  TB_ASSERT_OK(ops->write(st, b, 0, rb, n));
  TB_ASSERT_OK(ops->copy(st, b, 7, a, 1000, 2 * MIB + 1)); /* b[7..] = a[1000..] */
  memcpy(rb + 7, ra + 1000, 2 * MIB + 1);
  TB_ASSERT_OK(ops->copy(st, b, 0, a, 0, 1));
  rb[0] = ra[0];
  TB_ASSERT_OK(ops->read(st, b, 0, got, n));
  assert_bytes(got, rb, n, "copy between allocations");
  /* overlapping ranges of one allocation, both directions: memmove semantics */
  TB_ASSERT_OK(ops->copy(st, a, 100, a, 0, 2 * MIB));
  memmove(ra + 100, ra, 2 * MIB);
  TB_ASSERT_OK(ops->copy(st, a, 3, a, 50, MIB));
  memmove(ra + 3, ra + 50, MIB);
  TB_ASSERT_OK(ops->copy(st, a, 2 * MIB, a, 0, MIB)); /* same allocation, apart */
  memmove(ra + 2 * MIB, ra, MIB);
  TB_ASSERT_OK(ops->read(st, a, 0, got, n));
  assert_bytes(got, ra, n, "copy within one allocation");
  free(ra);
  free(rb);
  free(got);
  ops->free(st, a);
  ops->free(st, b);
}

static void copies_mapped(void **state) { copies(((fixture *)*state)->state); }
static void copies_through_staging(void **state) {
  fixture *f = *state;
  tb_vk_force_staging(f->state, true);
  copies(f->state);
}

/* Fill [offset, offset+bytes) of a random allocation with a pattern and compare with the host's version. */
static void fill_case(void *st, tb_devmem mem, unsigned char *want, size_t offset, const void *pattern, size_t psize, size_t bytes) {
  TB_ASSERT_OK(ops->fill(st, mem, offset, pattern, psize, bytes));
  for (size_t i = 0; i < bytes; i++) want[offset + i] = ((const unsigned char *)pattern)[i % psize];
  unsigned char *got = malloc(mem.size);
  TB_ASSERT_OK(ops->read(st, mem, 0, got, mem.size));
  char what[64];
  snprintf(what, sizeof what, "fill %zu-byte pattern at %zu for %zu", psize, offset, bytes);
  assert_bytes(got, want, mem.size, what);
  free(got);
}

static void fills(void *st) {
  const size_t n = 2 * MIB + 64;
  tb_devmem mem;
  TB_ASSERT_OK(ops->alloc(st, n, &mem));
  unsigned char *want = random_bytes(n, 9);
  TB_ASSERT_OK(ops->write(st, mem, 0, want, n));
  const uint8_t p1 = 0xa5;
  const uint16_t p2 = 0xbeef;
  const uint32_t p4 = 0xdeadbeef;
  const uint64_t p8 = 0x0123456789abcdefull;
  fill_case(st, mem, want, 0, &p4, 4, n);           /* vkCmdFillBuffer */
  fill_case(st, mem, want, 16, &p1, 1, 4096);       /* 1-byte pattern, 4-aligned: vkCmdFillBuffer */
  fill_case(st, mem, want, 3, &p1, 1, 101);         /* unaligned: through the host */
  fill_case(st, mem, want, 8, &p2, 2, 1000);        /* 2-byte pattern: vkCmdFillBuffer */
  fill_case(st, mem, want, 10, &p2, 2, 6);          /* offset not a multiple of 4 */
  fill_case(st, mem, want, 64, &p8, 8, 2 * MIB);    /* 8-byte pattern: through the host */
  fill_case(st, mem, want, 5, &p8, 8, 21);          /* a partial last repetition */
  fill_case(st, mem, want, 1, &p4, 4, 4);           /* 4-byte pattern at an odd offset */
  const uint8_t p3[3] = {1, 2, 3};
  assert_int_equal(ops->fill(st, mem, 0, p3, 3, 6), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "1, 2, 4 or 8 bytes, not 3");
  free(want);
  ops->free(st, mem);
}

static void fills_mapped(void **state) { fills(((fixture *)*state)->state); }
static void fills_through_staging(void **state) {
  fixture *f = *state;
  tb_vk_force_staging(f->state, true);
  fills(f->state);
}

/* Host-visible memory treated as not coherent: every host access flushes or invalidates whole
 * nonCoherentAtomSize ranges (the validation layer checks their offsets and sizes). */
static void noncoherent_memory(void **state) {
  fixture *f = *state;
  tb_vk_force_noncoherent(f->state, true);
  tb_devmem a, b;
  TB_ASSERT_OK(ops->alloc(f->state, 10, &a));
  TB_ASSERT_OK(ops->alloc(f->state, 10, &b));
  uint64_t oa, ob;
  tb_vk_allocation_memory(a, &oa);
  tb_vk_allocation_memory(b, &ob);
  assert_int_equal(ob - oa, 64); /* llvmpipe's nonCoherentAtomSize: ranges never share an atom */
  ops->free(f->state, a);
  ops->free(f->state, b);
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  round_trips(f->state, c.block_size);
  copies(f->state);
  fills(f->state);
}

static void small_allocations_share_a_block(void **state) {
  fixture *f = *state;
  enum { N = 200 };
  tb_devmem mems[N];
  for (int i = 0; i < N; i++) TB_ASSERT_OK(ops->alloc(f->state, 1000 + (size_t)i, &mems[i]));
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.allocate_calls, 1);
  assert_int_equal(c.blocks, 1);
  assert_int_equal(c.block_bytes, 64 * MIB);
  assert_int_equal(c.live, N);
  assert_true(c.last_mapped);
  uint64_t off0 = 0, memory = tb_vk_allocation_memory(mems[0], &off0);
  for (int i = 1; i < N; i++) {
    uint64_t off = 0;
    assert_int_equal(tb_vk_allocation_memory(mems[i], &off), memory);
    assert_int_equal(off % 16, 0); /* the buffer's alignment */
    uint64_t prev = 0;
    tb_vk_allocation_memory(mems[i - 1], &prev);
    assert_true(off >= prev + 1000 + (uint64_t)i - 1); /* no overlap: first fit lays them out in order */
  }
  for (int i = 0; i < N; i++) {
    unsigned char byte = (unsigned char)i;
    TB_ASSERT_OK(ops->fill(f->state, mems[i], 0, &byte, 1, mems[i].size));
  }
  for (int i = 0; i < N; i++) {
    unsigned char got[1199];
    TB_ASSERT_OK(ops->read(f->state, mems[i], 0, got, mems[i].size));
    for (size_t k = 0; k < mems[i].size; k++)
      if (got[k] != (unsigned char)i) fail_msg("allocation %d byte %zu is %u: a neighbour wrote into it", i, k, got[k]);
  }
  for (int i = 0; i < N; i++) ops->free(f->state, mems[i]);
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.blocks, 0); /* an empty block goes back to the driver */
  assert_int_equal(c.free_calls, 1);
}

static void freed_ranges_merge(void **state) {
  fixture *f = *state;
  tb_devmem x, y, z, keep;
  TB_ASSERT_OK(ops->alloc(f->state, 4096, &x));
  TB_ASSERT_OK(ops->alloc(f->state, 4096, &y));
  TB_ASSERT_OK(ops->alloc(f->state, 4096, &z));
  TB_ASSERT_OK(ops->alloc(f->state, 64 * MIB - 3 * 4096, &keep)); /* fills the block exactly */
  uint64_t ox, oy, oz, ok;
  uint64_t memory = tb_vk_allocation_memory(x, &ox);
  assert_int_equal(tb_vk_allocation_memory(y, &oy), memory);
  assert_int_equal(tb_vk_allocation_memory(z, &oz), memory);
  assert_int_equal(tb_vk_allocation_memory(keep, &ok), memory);
  assert_int_equal(ox, 0);
  assert_int_equal(oy, 4096);
  assert_int_equal(oz, 8192);
  assert_int_equal(ok, 12288);
  ops->free(f->state, y);
  ops->free(f->state, x);
  tb_devmem xy, more;
  TB_ASSERT_OK(ops->alloc(f->state, 8192, &xy)); /* fits only if x and y merged */
  uint64_t oxy;
  assert_int_equal(tb_vk_allocation_memory(xy, &oxy), memory);
  assert_int_equal(oxy, 0);
  ops->free(f->state, z);
  ops->free(f->state, xy);
  TB_ASSERT_OK(ops->alloc(f->state, 3 * 4096, &more)); /* x, y, z merged on both sides */
  uint64_t om;
  assert_int_equal(tb_vk_allocation_memory(more, &om), memory);
  assert_int_equal(om, 0);
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.allocate_calls, 1);
  assert_int_equal(c.blocks, 1);
  ops->free(f->state, more);
  ops->free(f->state, keep);
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.blocks, 0);
}

static void large_allocations_get_their_own_block(void **state) {
  fixture *f = *state;
  tb_devmem small, big;
  TB_ASSERT_OK(ops->alloc(f->state, 100, &small));
  TB_ASSERT_OK(ops->alloc(f->state, 64 * MIB + 1, &big));
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.allocate_calls, 2);
  assert_int_equal(c.blocks, 2);
  assert_int_equal(c.block_bytes, 64 * MIB + 65 * MIB); /* the request rounded up to whole MiB */
  assert_int_not_equal(tb_vk_allocation_memory(small, NULL), tb_vk_allocation_memory(big, NULL));
  ops->free(f->state, big);
  ops->free(f->state, small);
}

static void out_of_memory_then_recovers(void **state) {
  fixture *f = *state;
  tb_devmem mem;
  size_t too_big = (size_t)3 << 30;
  assert_int_equal(ops->alloc(f->state, too_big, &mem), TB_ERR_OUT_OF_MEMORY);
  assert_null(mem.handle);
  TB_ASSERT_CONTAINS(tb_last_error(), "vulkan:0");
  TB_ASSERT_CONTAINS(tb_last_error(), "3221225472 bytes");
  TB_ASSERT_CONTAINS(tb_last_error(), "maxMemoryAllocationSize = 2147483648");
  /* the heap check: 1.5 GiB held, another 1 GiB does not fit in the 2 GiB heap */
  tb_devmem held;
  TB_ASSERT_OK(ops->alloc(f->state, (size_t)3 << 29, &held));
  assert_int_equal(ops->alloc(f->state, (size_t)1 << 30, &mem), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "1073741824 bytes");
  TB_ASSERT_CONTAINS(tb_last_error(), "heap 0 is 2147483648 bytes");
  TB_ASSERT_CONTAINS(tb_last_error(), "holds 1610612736 bytes in 1 allocation");
  ops->free(f->state, held);
  /* the driver's own out-of-memory codes */
  tb_vk_fail_next_allocation(f->state, -2);
  assert_int_equal(ops->alloc(f->state, 1000, &mem), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "-2 VK_ERROR_OUT_OF_DEVICE_MEMORY");
  TB_ASSERT_CONTAINS(tb_last_error(), "67108864 bytes");
  tb_vk_fail_next_allocation(f->state, -1);
  assert_int_equal(ops->alloc(f->state, 1000, &mem), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "-1 VK_ERROR_OUT_OF_HOST_MEMORY");
  tb_vk_fail_next_allocation(f->state, -4);
  assert_int_equal(ops->alloc(f->state, 1000, &mem), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "-4 VK_ERROR_DEVICE_LOST");
  /* and the next allocation works */
  TB_ASSERT_OK(ops->alloc(f->state, MIB, &mem));
  unsigned char *want = random_bytes(MIB, 5), *got = malloc(MIB);
  TB_ASSERT_OK(ops->write(f->state, mem, 0, want, MIB));
  TB_ASSERT_OK(ops->read(f->state, mem, 0, got, MIB));
  assert_bytes(got, want, MIB, "after out of memory");
  free(want);
  free(got);
  ops->free(f->state, mem);
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.live, 0);
  assert_int_equal(c.blocks, 0);
}

static void misuse_is_refused(void **state) {
  fixture *f = *state;
  tb_devmem mem, none;
  assert_int_equal(ops->alloc(f->state, 0, &none), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_OK(ops->alloc(f->state, 100, &mem));
  unsigned char buf[200] = {0};
  assert_int_equal(ops->write(f->state, mem, 50, buf, 51), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "[50, 101) is outside the 100-byte allocation");
  assert_int_equal(ops->read(f->state, mem, 101, buf, 0), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(ops->copy(f->state, mem, 0, mem, 90, 20), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_OK(ops->read(f->state, mem, 100, buf, 0));
  ops->free(f->state, mem);
}

/* The caching allocator over tb_vulkan_ops: blocks carved from its segments, stats, empty_cache. */
static void through_the_caching_allocator(void **state) {
  fixture *f = *state;
  tb_allocator *al = NULL;
  TB_ASSERT_OK(tb_allocator_create(ops, f->state, "vulkan:0", &al));
  tb_block *blocks[16];
  for (int i = 0; i < 16; i++) TB_ASSERT_OK(tb_allocator_alloc(al, 1000 + (size_t)i * 512, &blocks[i]));
  for (int i = 0; i < 16; i++) {
    unsigned char *want = random_bytes(blocks[i]->requested, (unsigned)i), *got = malloc(blocks[i]->requested);
    TB_ASSERT_OK(ops->write(f->state, blocks[i]->mem, blocks[i]->offset, want, blocks[i]->requested));
    TB_ASSERT_OK(ops->read(f->state, blocks[i]->mem, blocks[i]->offset, got, blocks[i]->requested));
    assert_bytes(got, want, blocks[i]->requested, "through the caching allocator");
    assert_int_equal(blocks[i]->offset % ops->alignment(f->state), 0);
    free(want);
    free(got);
  }
  tb_memory_stats stats = {.size = sizeof stats};
  tb_allocator_stats(al, &stats);
  assert_int_equal(stats.num_allocs, 16);
  assert_true(stats.reserved >= stats.allocated);
  assert_false(stats.device_free_known); /* llvmpipe has no VK_EXT_memory_budget */
  for (int i = 0; i < 16; i++) tb_allocator_free(al, blocks[i]);
  tb_allocator_empty_cache(al);
  tb_allocator_stats(al, &stats);
  assert_int_equal(stats.reserved, 0);
  assert_int_equal(stats.num_device_frees, stats.num_device_allocs);
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(f->state, &c);
  assert_int_equal(c.live, 0);
  assert_int_equal(c.blocks, 0);
  /* out of memory through the allocator, then it goes on */
  tb_block *b = NULL;
  assert_int_equal(tb_allocator_alloc(al, (size_t)3 << 30, &b), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_OK(tb_allocator_alloc(al, 4096, &b));
  tb_allocator_free(al, b);
  tb_allocator_destroy(al);
}

typedef struct worker {
  void *state;
  unsigned seed;
  int failures;
  char first[256];
} worker;

/* Allocate, write, copy, read back and free, over and over; failures are counted, not asserted
 * (cmocka's asserts belong to the main thread). */
static void *work(void *arg) {
  worker *w = arg;
  for (unsigned i = 0; i < 40; i++) {
    size_t n = 1 + (size_t)((w->seed * 7919u + i * 104729u) % (3 * MIB));
    unsigned char *want = random_bytes(n, w->seed * 1000 + i), *got = malloc(n);
    tb_devmem a, b;
    bool ok = ops->alloc(w->state, n, &a) == TB_OK;
    if (ok && ops->alloc(w->state, n, &b) != TB_OK) {
      ops->free(w->state, a);
      ok = false;
    }
    if (ok) {
      ok = ops->write(w->state, a, 0, want, n) == TB_OK && ops->copy(w->state, b, 0, a, 0, n) == TB_OK &&
           ops->read(w->state, b, 0, got, n) == TB_OK && memcmp(got, want, n) == 0;
      ops->free(w->state, a);
      ops->free(w->state, b);
    }
    if (!ok && w->failures++ == 0) snprintf(w->first, sizeof w->first, "%zu bytes, round %u: %s", n, i, tb_last_error());
    free(want);
    free(got);
  }
  return NULL;
}

static void threads(void *st) {
  enum { T = 4 };
  worker w[T];
  pthread_t t[T];
  for (int i = 0; i < T; i++) {
    w[i] = (worker){.state = st, .seed = (unsigned)i + 1};
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < T; i++)
    if (w[i].failures) fail_msg("thread %d: %d failure(s); first: %s", i, w[i].failures, w[i].first);
  tb_vk_memory_counters c;
  tb_vk_memory_counters_get(st, &c);
  assert_int_equal(c.live, 0);
  assert_int_equal(c.blocks, 0);
}

/* Four threads share the device (one command buffer, one staging buffer, one allocator). */
static void threads_share_the_device(void **state) {
  fixture *f = *state;
  threads(f->state);
  tb_vk_force_staging(f->state, true);
  threads(f->state);
}

/* The counting is real: a call the layer objects to is counted (and then forgotten, so the close check
 * still holds for everything else). */
static void validation_messages_are_counted(void **state) {
  fixture *f = *state;
  vk_state *s = f->state;
  tb_vk_buffer_create_info bad = {.sType = TB_VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 0, .usage = TB_VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
  tb_vk_buffer buffer = 0;
  if (s->vk.vkCreateBuffer(s->device, &bad, NULL, &buffer) == TB_VK_SUCCESS && buffer) s->vk.vkDestroyBuffer(s->device, buffer, NULL);
  char first[512];
  assert_true(tb_vk_validation_messages(f->state, first, sizeof first) >= 1);
  TB_ASSERT_CONTAINS(first, "VkBufferCreateInfo");
  s->validation.warnings = s->validation.errors = 0;
  s->validation.first_message[0] = '\0';
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(opens_discovered_device, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(wrong_devices_are_refused, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(round_trips_mapped, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(round_trips_through_staging, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(copies_mapped, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(copies_through_staging, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(fills_mapped, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(fills_through_staging, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(noncoherent_memory, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(small_allocations_share_a_block, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(freed_ranges_merge, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(large_allocations_get_their_own_block, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(out_of_memory_then_recovers, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(misuse_is_refused, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(through_the_caching_allocator, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(threads_share_the_device, open_lavapipe, close_lavapipe),
      cmocka_unit_test_setup_teardown(validation_messages_are_counted, open_lavapipe, close_lavapipe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
