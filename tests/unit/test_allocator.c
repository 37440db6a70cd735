/* The caching allocator over a fake device: exact stats after allocate, free, reuse from the cache,
 * split, merge (every order of three neighbours), empty_cache, peaks, alignment classes, zero-size
 * blocks, driver errors passed through, bad arguments, and nested holds of freed blocks. */
#include <math.h>
#include <stdint.h>
#include "test_allocator_fake.h"
#include "test_util.h"

typedef struct fixture {
  fake_dev dev;
  tb_allocator *a;
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fake_init(&fx->dev, 64 * MIB);
  if (tb_allocator_create(&fake_ops, &fx->dev, "fake:0", &fx->a) != TB_OK) return -1;
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  tb_allocator_destroy(fx->a);
  pthread_mutex_destroy(&fx->dev.lock);
  free(fx);
  return 0;
}

static tb_block *alloc_ok(tb_allocator *a, size_t bytes) {
  tb_block *b = NULL;
  TB_ASSERT_OK(tb_allocator_alloc(a, bytes, &b));
  assert_non_null(b);
  return b;
}

static void test_alloc_free_reuse(void **state) {
  fixture *fx = *state;
  tb_block *b = alloc_ok(fx->a, 1000);
  assert_int_equal(b->size, 1024);
  assert_int_equal(b->requested, 1000);
  assert_int_equal(b->offset, 0);
  assert_int_equal(b->mem.size, 2 * MIB);
  ASSERT_STATS(fx->a, 1024, 1000, 2 * MIB, 1, 0, 1, 0);
  tb_memory_stats s = fake_stats(fx->a);
  assert_int_equal(s.size, sizeof s);
  assert_int_equal(s.peak_allocated, 1024);
  assert_int_equal(s.peak_reserved, 2 * MIB);
  assert_int_equal(s.num_oom_retries, 0);
  assert_int_equal(s.limit, 0);
  assert_true(s.device_free_known);
  assert_true(s.device_total_known);
  assert_int_equal(s.device_free, 62 * MIB);
  assert_int_equal(s.device_total, 64 * MIB);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 1);
  void *first_handle = b->mem.handle;

  tb_allocator_free(fx->a, b);
  ASSERT_STATS(fx->a, 0, 0, 2 * MIB, 1, 1, 1, 0);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 0);
  assert_int_equal(fx->dev.frees, 0);

  /* From the cache: same segment, same place, no device call. */
  b = alloc_ok(fx->a, 700);
  assert_ptr_equal(b->mem.handle, first_handle);
  assert_int_equal(b->offset, 0);
  assert_int_equal(b->size, 1024);
  ASSERT_STATS(fx->a, 1024, 700, 2 * MIB, 2, 1, 1, 0);
  assert_int_equal(fx->dev.alloc_calls, 1);
  tb_allocator_free(fx->a, b);
}

static void test_split_small_and_large(void **state) {
  fixture *fx = *state;
  tb_block *a = alloc_ok(fx->a, 1000), *b = alloc_ok(fx->a, 3000), *c = alloc_ok(fx->a, 512), *d = alloc_ok(fx->a, 1);
  assert_int_equal(a->offset, 0);
  assert_int_equal(b->offset, 1024);
  assert_int_equal(b->size, 3072);
  assert_int_equal(c->offset, 4096);
  assert_int_equal(c->size, 512);
  assert_int_equal(d->offset, 4608);
  assert_int_equal(d->size, 512);
  assert_ptr_equal(a->mem.handle, d->mem.handle);
  ASSERT_STATS(fx->a, 1024 + 3072 + 512 + 512, 1000 + 3000 + 512 + 1, 2 * MIB, 4, 0, 1, 0);

  /* 1 MiB exactly is still small: it shares the small segment. */
  tb_block *e = alloc_ok(fx->a, MIB);
  assert_ptr_equal(e->mem.handle, a->mem.handle);
  assert_int_equal(e->offset, 5120);
  ASSERT_STATS(fx->a, 5120 + MIB, 4513 + MIB, 2 * MIB, 5, 0, 1, 0);

  /* 1.5 MiB is large: a 2 MiB segment of its own, split; the 0.5 MiB rest is cached in the large pool. */
  tb_block *l1 = alloc_ok(fx->a, 3 * MIB / 2);
  assert_int_equal(l1->offset, 0);
  assert_int_equal(l1->size, 3 * MIB / 2);
  assert_int_equal(l1->mem.size, 2 * MIB);
  ASSERT_STATS(fx->a, 5120 + MIB + 3 * MIB / 2, 4513 + MIB + 3 * MIB / 2, 4 * MIB, 6, 0, 2, 0);
  /* 1.2 MiB (rounded to 512) does not fit the 0.5 MiB rest: a new segment. */
  tb_block *l2 = alloc_ok(fx->a, 1258291);
  assert_int_equal(l2->size, 1258496);
  assert_int_equal(l2->mem.size, 2 * MIB);
  ASSERT_STATS(fx->a, 5120 + MIB + 3 * MIB / 2 + 1258496, 4513 + MIB + 3 * MIB / 2 + 1258291, 6 * MIB, 7, 0, 3, 0);
  /* 5 MiB: a segment rounded up to 6 MiB, its 1 MiB rest cached. */
  tb_block *l3 = alloc_ok(fx->a, 5 * MIB);
  assert_int_equal(l3->mem.size, 6 * MIB);
  ASSERT_STATS(fx->a, 5120 + MIB + 3 * MIB / 2 + 1258496 + 5 * MIB, 4513 + MIB + 3 * MIB / 2 + 1258291 + 5 * MIB,
               12 * MIB, 8, 0, 4, 0);
  /* 1 MiB + 512 fits none of the cached large rests (0.5 MiB, 819 KiB, 1 MiB): a fifth segment. */
  tb_block *l4 = alloc_ok(fx->a, MIB + 1);
  assert_int_equal(l4->size, MIB + 512);
  assert_int_equal(l4->mem.size, 2 * MIB);
  assert_int_equal(fake_stats(fx->a).num_device_allocs, 5);
  tb_block *all[] = {a, b, c, d, e, l1, l2, l3, l4};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tb_allocator_free(fx->a, all[i]);
  ASSERT_STATS(fx->a, 0, 0, 14 * MIB, 9, 9, 5, 0);
}

/* Three neighbours x, y, z (256 KiB each) and a guard g after them; free x, y, z in `order`; the 768 KiB
 * they leave must be one block: a 700 KiB request lands at offset 0 without a device call. */
static void merge_in_order(const int order[3]) {
  fake_dev dev;
  fake_init(&dev, 64 * MIB);
  tb_allocator *a = NULL;
  TB_ASSERT_OK(tb_allocator_create(&fake_ops, &dev, "fake:0", &a));
  tb_block *blk[3];
  for (int i = 0; i < 3; i++) {
    blk[i] = alloc_ok(a, 256 * KIB);
    assert_int_equal(blk[i]->offset, (size_t)i * 256 * KIB);
  }
  tb_block *guard = alloc_ok(a, 1000);
  assert_int_equal(guard->offset, 768 * KIB);
  for (int i = 0; i < 3; i++) tb_allocator_free(a, blk[order[i]]);
  ASSERT_STATS(a, 1024, 1000, 2 * MIB, 4, 3, 1, 0);
  /* Best fit: the merged 768 KiB block, not the ~1.25 MiB tail after the guard. */
  tb_block *big = alloc_ok(a, 700 * KIB);
  assert_int_equal(big->offset, 0);
  assert_int_equal(big->size, 700 * KIB);
  assert_ptr_equal(big->mem.handle, guard->mem.handle);
  /* The 68 KiB rest stays between them and merges back when big is freed. */
  tb_block *rest = alloc_ok(a, 68 * KIB);
  assert_int_equal(rest->offset, 700 * KIB);
  ASSERT_STATS(a, 1024 + 768 * KIB, 1000 + 768 * KIB, 2 * MIB, 6, 3, 1, 0);
  assert_int_equal(dev.alloc_calls, 1);
  tb_allocator_free(a, big);
  tb_allocator_free(a, rest);
  tb_allocator_free(a, guard);
  /* Everything merged into one free block: the segment is released whole. */
  tb_allocator_empty_cache(a);
  ASSERT_STATS(a, 0, 0, 0, 6, 6, 1, 1);
  assert_int_equal(dev.used, 0);
  tb_allocator_destroy(a);
  pthread_mutex_destroy(&dev.lock);
}

static void test_merge_every_order(void **state) {
  (void)state;
  static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int i = 0; i < 6; i++) merge_in_order(orders[i]);
}

static void test_merge_large_segment(void **state) {
  fixture *fx = *state;
  /* A 6 MiB segment split into three 2 MiB blocks; freed middle, last, first: one 6 MiB block again. */
  tb_block *x = alloc_ok(fx->a, 6 * MIB);
  tb_allocator_free(fx->a, x);
  tb_block *p = alloc_ok(fx->a, 2 * MIB), *q = alloc_ok(fx->a, 2 * MIB), *r = alloc_ok(fx->a, 2 * MIB);
  assert_ptr_equal(p->mem.handle, q->mem.handle);
  assert_ptr_equal(q->mem.handle, r->mem.handle);
  assert_int_equal(p->offset + q->offset + r->offset, 6 * MIB); /* 0, 2 and 4 MiB in some order */
  tb_allocator_free(fx->a, q);
  tb_allocator_free(fx->a, r);
  tb_allocator_free(fx->a, p);
  tb_block *y = alloc_ok(fx->a, 5 * MIB);
  assert_int_equal(y->offset, 0);
  ASSERT_STATS(fx->a, 5 * MIB, 5 * MIB, 6 * MIB, 5, 4, 1, 0);
  tb_allocator_free(fx->a, y);
}

static void test_empty_cache(void **state) {
  fixture *fx = *state;
  tb_block *l1 = alloc_ok(fx->a, 4 * MIB), *l2 = alloc_ok(fx->a, 6 * MIB), *l3 = alloc_ok(fx->a, 2 * MIB);
  ASSERT_STATS(fx->a, 12 * MIB, 12 * MIB, 12 * MIB, 3, 0, 3, 0);
  tb_allocator_free(fx->a, l2);
  ASSERT_STATS(fx->a, 6 * MIB, 6 * MIB, 12 * MIB, 3, 1, 3, 0);
  tb_allocator_empty_cache(fx->a);
  /* Only whole segments are in use: reserved drops to allocated. */
  ASSERT_STATS(fx->a, 6 * MIB, 6 * MIB, 6 * MIB, 3, 1, 3, 1);
  assert_int_equal(fx->dev.frees, 1);
  assert_int_equal(fx->dev.used, 6 * MIB);
  assert_int_equal(fake_stats(fx->a).device_free, 58 * MIB);

  /* A small block keeps its whole segment; a free small segment goes back. */
  tb_block *s1 = alloc_ok(fx->a, 1000);
  tb_block *s2 = alloc_ok(fx->a, MIB);
  tb_block *s3 = alloc_ok(fx->a, MIB); /* does not fit the first small segment's rest: a second one */
  assert_ptr_not_equal(s1->mem.handle, s3->mem.handle);
  ASSERT_STATS(fx->a, 8 * MIB + 1024, 8 * MIB + 1000, 10 * MIB, 6, 1, 5, 1);
  tb_allocator_free(fx->a, s3);
  tb_allocator_empty_cache(fx->a);
  ASSERT_STATS(fx->a, 7 * MIB + 1024, 7 * MIB + 1000, 8 * MIB, 6, 2, 5, 2);
  tb_allocator_free(fx->a, s1);
  tb_allocator_free(fx->a, s2);
  tb_allocator_free(fx->a, l1);
  tb_allocator_free(fx->a, l3);
  tb_allocator_empty_cache(fx->a);
  ASSERT_STATS(fx->a, 0, 0, 0, 6, 6, 5, 5);
  assert_int_equal(fx->dev.used, 0);
  assert_int_equal(fx->dev.frees, 5);
  /* An empty cache is a no-op. */
  tb_allocator_empty_cache(fx->a);
  ASSERT_STATS(fx->a, 0, 0, 0, 6, 6, 5, 5);
}

static void test_peak_and_reset(void **state) {
  fixture *fx = *state;
  tb_block *a = alloc_ok(fx->a, 4 * MIB), *b = alloc_ok(fx->a, 2 * MIB);
  tb_memory_stats s = fake_stats(fx->a);
  assert_int_equal(s.peak_allocated, 6 * MIB);
  assert_int_equal(s.peak_reserved, 6 * MIB);
  tb_allocator_free(fx->a, a);
  s = fake_stats(fx->a);
  assert_int_equal(s.allocated, 2 * MIB);
  assert_int_equal(s.peak_allocated, 6 * MIB);
  tb_allocator_reset_peak(fx->a);
  s = fake_stats(fx->a);
  assert_int_equal(s.peak_allocated, 2 * MIB);
  assert_int_equal(s.peak_reserved, 6 * MIB);
  tb_allocator_empty_cache(fx->a);
  s = fake_stats(fx->a);
  assert_int_equal(s.reserved, 2 * MIB);
  assert_int_equal(s.peak_reserved, 6 * MIB);
  tb_allocator_reset_peak(fx->a);
  s = fake_stats(fx->a);
  assert_int_equal(s.peak_reserved, 2 * MIB);
  assert_int_equal(s.peak_allocated, 2 * MIB);
  /* A new high mark raises both again. */
  tb_block *c = alloc_ok(fx->a, 3 * MIB);
  s = fake_stats(fx->a);
  assert_int_equal(s.peak_allocated, 5 * MIB);
  assert_int_equal(s.peak_reserved, 6 * MIB);
  tb_allocator_free(fx->a, b);
  tb_allocator_free(fx->a, c);
}

static void test_device_alignment_above_min_block(void **state) {
  (void)state;
  fake_dev dev;
  fake_init(&dev, 64 * MIB);
  dev.alignment = 4096;
  tb_allocator *a = NULL;
  TB_ASSERT_OK(tb_allocator_create(&fake_ops, &dev, "fake:0", &a));
  tb_block *x = alloc_ok(a, 1000), *y = alloc_ok(a, 4097), *z = alloc_ok(a, 1);
  assert_int_equal(x->size, 4096);
  assert_int_equal(y->offset, 4096);
  assert_int_equal(y->size, 8192);
  assert_int_equal(z->offset, 12288);
  ASSERT_STATS(a, 16384, 5098, 2 * MIB, 3, 0, 1, 0);
  tb_allocator_free(a, x);
  tb_allocator_free(a, y);
  tb_allocator_free(a, z);
  tb_allocator_destroy(a);
  assert_int_equal(dev.used, 0);
  pthread_mutex_destroy(&dev.lock);
}

static void test_zero_size_block(void **state) {
  fixture *fx = *state;
  tb_block *z = NULL;
  TB_ASSERT_OK(tb_allocator_alloc(fx->a, 0, &z));
  assert_non_null(z);
  assert_null(z->mem.handle);
  assert_int_equal(z->mem.size, 0);
  assert_int_equal(z->size, 0);
  assert_int_equal(z->requested, 0);
  tb_block *z2 = alloc_ok(fx->a, 0);
  assert_ptr_not_equal(z, z2);
  ASSERT_STATS(fx->a, 0, 0, 0, 2, 0, 0, 0);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 2);
  assert_int_equal(fx->dev.alloc_calls, 0);
  tb_allocator_free(fx->a, z);
  tb_allocator_free(fx->a, z2);
  ASSERT_STATS(fx->a, 0, 0, 0, 2, 2, 0, 0);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 0);
}

static void test_driver_error_passes_through(void **state) {
  fixture *fx = *state;
  fx->dev.fail_with = TB_ERR_DRIVER;
  tb_block *b = (tb_block *)0x1;
  assert_int_equal(tb_allocator_alloc(fx->a, 4096, &b), TB_ERR_DRIVER);
  assert_null(b);
  assert_string_equal(tb_last_error(), "fake:0: cuMemAlloc failed with CUDA_ERROR_UNKNOWN (999)");
  tb_memory_stats s = fake_stats(fx->a);
  assert_int_equal(s.num_oom_retries, 0);
  assert_int_equal(fx->dev.alloc_calls, 1);
  ASSERT_STATS(fx->a, 0, 0, 0, 0, 0, 0, 0);
  fx->dev.fail_with = TB_OK;
  b = alloc_ok(fx->a, 4096);
  ASSERT_STATS(fx->a, 4096, 4096, 2 * MIB, 1, 0, 1, 0);
  tb_allocator_free(fx->a, b);
}

static void test_sizes_that_overflow(void **state) {
  fixture *fx = *state;
  tb_block *b = NULL;
  assert_int_equal(tb_allocator_alloc(fx->a, SIZE_MAX, &b), TB_ERR_OUT_OF_MEMORY);
  assert_null(b);
  TB_ASSERT_CONTAINS(tb_last_error(), "fake:0: cannot allocate 18446744073709551615 bytes");
  /* Rounds to a 512 multiple fine but not to the 2 MiB segment granularity. */
  size_t n = SIZE_MAX - 1023;
  assert_int_equal(tb_allocator_alloc(fx->a, n, &b), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "18446744073709550592 bytes");
  assert_int_equal(fx->dev.alloc_calls, 0);
  ASSERT_STATS(fx->a, 0, 0, 0, 0, 0, 0, 0);
  assert_int_equal(fake_stats(fx->a).num_oom_retries, 0);
}

static void test_bad_arguments(void **state) {
  fixture *fx = *state;
  tb_allocator *a = (tb_allocator *)0x1;
  assert_int_equal(tb_allocator_create(NULL, NULL, "x", &a), TB_ERR_INVALID_ARGUMENT);
  assert_null(a);
  TB_ASSERT_CONTAINS(tb_last_error(), "no alloc/free");
  tb_backend_ops no_alloc = fake_ops;
  no_alloc.alloc = NULL;
  assert_int_equal(tb_allocator_create(&no_alloc, &fx->dev, "x", &a), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_allocator_create(&fake_ops, &fx->dev, "x", NULL), TB_ERR_INVALID_ARGUMENT);
  fake_dev odd;
  fake_init(&odd, MIB);
  odd.alignment = 384;
  assert_int_equal(tb_allocator_create(&fake_ops, &odd, "odd:0", &a), TB_ERR_INTERNAL);
  TB_ASSERT_CONTAINS(tb_last_error(), "odd:0: the backend reports an alignment of 384 bytes");
  pthread_mutex_destroy(&odd.lock);

  tb_block *b = NULL;
  assert_int_equal(tb_allocator_alloc(NULL, 10, &b), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_allocator_alloc(fx->a, 10, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_allocator_set_fraction(NULL, 0.5, 0), TB_ERR_INVALID_ARGUMENT);
  const double bad[] = {0.0, -0.5, 1.5, NAN, INFINITY};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(tb_allocator_set_fraction(fx->a, bad[i], 0), TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(tb_last_error(), "give a value in (0, 1]");
  }
  assert_int_equal(fake_stats(fx->a).limit, 0);

  /* NULLs are no-ops. */
  tb_allocator_free(fx->a, NULL);
  tb_allocator_free(NULL, NULL);
  tb_allocator_empty_cache(NULL);
  tb_allocator_reset_peak(NULL);
  tb_allocator_stats(fx->a, NULL);
  tb_allocator_stats(NULL, NULL);
  tb_allocator_destroy(NULL);
  assert_int_equal(tb_allocator_live_blocks(NULL), 0);

  /* A double free and a block from another allocator are ignored. */
  b = alloc_ok(fx->a, 1000);
  tb_block *keep = alloc_ok(fx->a, 1000);
  tb_allocator_free(fx->a, b);
  tb_allocator_free(fx->a, b);
  ASSERT_STATS(fx->a, 1024, 1000, 2 * MIB, 2, 1, 1, 0);
  fake_dev other_dev;
  fake_init(&other_dev, 8 * MIB);
  tb_allocator *other = NULL;
  TB_ASSERT_OK(tb_allocator_create(&fake_ops, &other_dev, "fake:1", &other));
  tb_block *foreign = alloc_ok(other, 100);
  tb_allocator_free(fx->a, foreign);
  ASSERT_STATS(fx->a, 1024, 1000, 2 * MIB, 2, 1, 1, 0);
  ASSERT_STATS(other, 512, 100, 2 * MIB, 1, 0, 1, 0);
  tb_allocator_free(other, foreign);
  tb_allocator_destroy(other);
  assert_int_equal(other_dev.used, 0);
  pthread_mutex_destroy(&other_dev.lock);

  /* A caller with an older, shorter stats struct gets the leading fields and nothing past them. */
  struct {
    tb_memory_stats head;
  } wide;
  memset(&wide, 0xCD, sizeof wide);
  wide.head.size = offsetof(tb_memory_stats, reserved);
  tb_allocator_stats(fx->a, &wide.head);
  assert_int_equal(wide.head.size, offsetof(tb_memory_stats, reserved));
  assert_int_equal(wide.head.allocated, 1024);
  assert_int_equal(wide.head.requested, 1000);
  assert_int_equal(wide.head.reserved, 0xCDCDCDCDCDCDCDCDull);
  /* size 0 writes nothing. */
  tb_memory_stats zero;
  memset(&zero, 0, sizeof zero);
  tb_allocator_stats(fx->a, &zero);
  assert_int_equal(zero.allocated, 0);
  tb_allocator_free(fx->a, keep);
}

static void test_memory_info_unsupported(void **state) {
  fixture *fx = *state;
  fx->dev.memory_info_ok = false;
  tb_memory_stats s = fake_stats(fx->a);
  assert_false(s.device_free_known);
  assert_false(s.device_total_known);
  assert_int_equal(s.device_free, 0);
  assert_int_equal(s.device_total, 0);
  fake_dev bare;
  fake_init(&bare, 8 * MIB);
  tb_backend_ops minimal = {.kind = TB_BACKEND_CUDA, .alloc = fake_alloc, .free = fake_free};
  tb_allocator *a = NULL;
  TB_ASSERT_OK(tb_allocator_create(&minimal, &bare, NULL, &a));
  tb_block *b = alloc_ok(a, 1);
  assert_int_equal(b->size, 512); /* no alignment function: the 512-byte minimum */
  s = fake_stats(a);
  assert_false(s.device_total_known);
  tb_allocator_free(a, b);
  tb_allocator_destroy(a);
  assert_int_equal(bare.used, 0);
  pthread_mutex_destroy(&bare.lock);
}

/* Holds nest (a run's hold around a capture's): a block freed inside the inner hold stays in it, one freed after
 * the inner hold ended goes to the outer again, and only the releases give them back to the cache. */
static void test_nested_holds(void **state) {
  fixture *fx = *state;
  tb_block *a = alloc_ok(fx->a, 1000), *b = alloc_ok(fx->a, 1000), *c = alloc_ok(fx->a, 1000);
  tb_block_hold outer = {0}, inner = {0};
  tb_allocator_hold_begin(fx->a, &outer);
  tb_allocator_free(fx->a, a);
  tb_allocator_hold_begin(fx->a, &inner);
  tb_allocator_free(fx->a, b);
  tb_allocator_hold_end(fx->a);
  tb_allocator_free(fx->a, c);
  tb_allocator_hold_end(fx->a);
  assert_int_equal(outer.count, 2);
  assert_ptr_equal(outer.blocks[0], a);
  assert_ptr_equal(outer.blocks[1], c);
  assert_int_equal(inner.count, 1);
  assert_ptr_equal(inner.blocks[0], b);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 3); /* held blocks stay allocated */
  tb_allocator_hold_release(fx->a, &inner);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 2);
  tb_allocator_hold_release(fx->a, &outer);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 0);
  assert_int_equal(outer.count, 0);
  tb_block *d = alloc_ok(fx->a, 1000); /* no hold open any more: a free goes to the cache at once */
  tb_allocator_free(fx->a, d);
  assert_int_equal(tb_allocator_live_blocks(fx->a), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_alloc_free_reuse, setup, teardown),
      cmocka_unit_test_setup_teardown(test_split_small_and_large, setup, teardown),
      cmocka_unit_test(test_merge_every_order),
      cmocka_unit_test_setup_teardown(test_merge_large_segment, setup, teardown),
      cmocka_unit_test_setup_teardown(test_empty_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_peak_and_reset, setup, teardown),
      cmocka_unit_test(test_device_alignment_above_min_block),
      cmocka_unit_test_setup_teardown(test_zero_size_block, setup, teardown),
      cmocka_unit_test_setup_teardown(test_driver_error_passes_through, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sizes_that_overflow, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
      cmocka_unit_test_setup_teardown(test_memory_info_unsupported, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nested_holds, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
