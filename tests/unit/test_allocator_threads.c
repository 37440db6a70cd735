/* The caching allocator under contention: 4 threads x 10k random allocations and frees of mixed sizes over
 * the fake device. Each live block is filled with a tag of its own and checked before it is freed, so two
 * live blocks that overlap are caught; afterwards every counter must balance. A second run uses a device
 * too small for the load, so the out-of-memory path (release, retry) runs concurrently too. */
#include <stdio.h>
#include "test_allocator_fake.h"
#include "test_util.h"

#define THREADS 4
#define SLOTS 32
#define CHUNK 512

typedef struct worker {
  tb_allocator *a;
  int id;
  int ops;
  uint64_t rng;
  size_t allocs, frees, ooms;
  char error[256]; /* the first failure; cmocka asserts are not thread-safe */
} worker;

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static size_t random_size(uint64_t *rng) {
  uint64_t r = next_rand(rng);
  unsigned pick = (unsigned)(r % 100);
  uint64_t v = next_rand(rng);
  if (pick < 88) return 1 + v % (16 * KIB);
  if (pick < 98) return 16 * KIB + v % MIB;
  return MIB + v % (4 * MIB);
}

static uint64_t *words_of(const tb_block *b) { return (uint64_t *)((char *)b->mem.handle + b->offset); }

/* Small blocks get the tag in every word, larger ones at the start of every 512-byte chunk: blocks are
 * 512-aligned, so any overlap covers a whole chunk of both. */
static void tag_block(const tb_block *b, uint64_t tag) {
  uint64_t *w = words_of(b);
  size_t step = b->size <= 16 * KIB ? 1 : CHUNK / sizeof *w;
  for (size_t i = 0; i < b->size / sizeof *w; i += step) w[i] = tag;
}

static bool check_block(const tb_block *b, uint64_t tag) {
  const uint64_t *w = words_of(b);
  size_t step = b->size <= 16 * KIB ? 1 : CHUNK / sizeof *w;
  for (size_t i = 0; i < b->size / sizeof *w; i += step)
    if (w[i] != tag) return false;
  return true;
}

static void *run_worker(void *arg) {
  worker *wk = arg;
  tb_block *slot[SLOTS] = {0};
  uint64_t tags[SLOTS] = {0};
  for (int op = 0; op < wk->ops && !wk->error[0]; op++) {
    int i = (int)(next_rand(&wk->rng) % SLOTS);
    if (slot[i]) {
      if (!check_block(slot[i], tags[i]))
        snprintf(wk->error, sizeof wk->error, "thread %d op %d: block of %zu bytes at offset %zu was overwritten",
                 wk->id, op, slot[i]->size, slot[i]->offset);
      tb_allocator_free(wk->a, slot[i]);
      slot[i] = NULL;
      wk->frees++;
      continue;
    }
    size_t bytes = random_size(&wk->rng);
    tb_block *b = NULL;
    tb_status st = tb_allocator_alloc(wk->a, bytes, &b);
    if (st == TB_ERR_OUT_OF_MEMORY) {
      wk->ooms++;
      continue;
    }
    if (st != TB_OK) {
      snprintf(wk->error, sizeof wk->error, "thread %d op %d: alloc %zu -> %s: %s", wk->id, op, bytes,
               tb_status_str(st), tb_last_error());
      break;
    }
    if (b->offset % CHUNK || b->size < bytes || b->size % CHUNK || b->offset + b->size > b->mem.size ||
        b->requested != bytes)
      snprintf(wk->error, sizeof wk->error, "thread %d: bad block offset %zu size %zu requested %zu in %zu", wk->id,
               b->offset, b->size, b->requested, b->mem.size);
    wk->allocs++;
    tags[i] = ((uint64_t)(wk->id + 1) << 56) | ((uint64_t)i << 40) | (uint64_t)op;
    tag_block(b, tags[i]);
    slot[i] = b;
  }
  for (int i = 0; i < SLOTS; i++) {
    if (!slot[i]) continue;
    if (!wk->error[0] && !check_block(slot[i], tags[i]))
      snprintf(wk->error, sizeof wk->error, "thread %d: block in slot %d was overwritten", wk->id, i);
    tb_allocator_free(wk->a, slot[i]);
    wk->frees++;
  }
  return NULL;
}

static void stress(size_t capacity, int ops, bool expect_ooms) {
  fake_dev dev;
  fake_init(&dev, capacity);
  tb_allocator *a = NULL;
  TB_ASSERT_OK(tb_allocator_create(&fake_ops, &dev, "fake:0", &a));
  worker wk[THREADS];
  pthread_t th[THREADS];
  memset(wk, 0, sizeof wk);
  for (int t = 0; t < THREADS; t++) {
    wk[t].a = a;
    wk[t].id = t;
    wk[t].ops = ops;
    wk[t].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1);
    assert_int_equal(pthread_create(&th[t], NULL, run_worker, &wk[t]), 0);
  }
  size_t allocs = 0, frees = 0, ooms = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(th[t], NULL);
    if (wk[t].error[0]) fail_msg("%s", wk[t].error);
    allocs += wk[t].allocs;
    frees += wk[t].frees;
    ooms += wk[t].ooms;
  }
  assert_int_equal(allocs, frees);
  assert_true(allocs > (size_t)ops); /* about half of the operations allocate */
  if (expect_ooms) assert_true(ooms > 0);
  else assert_int_equal(ooms, 0);

  tb_memory_stats s = fake_stats(a);
  print_message("%zu allocations, %zu out of memory, %llu cache releases, %llu device allocations, peak reserved "
                "%llu bytes\n", allocs, ooms, (unsigned long long)s.num_oom_retries,
                (unsigned long long)s.num_device_allocs, (unsigned long long)s.peak_reserved);
  assert_int_equal(s.allocated, 0);
  assert_int_equal(s.requested, 0);
  assert_int_equal(s.num_allocs, allocs);
  assert_int_equal(s.num_frees, frees);
  assert_int_equal(s.reserved, dev.used); /* the sum of the segments the device holds for us */
  assert_int_equal(s.num_device_allocs, dev.allocs);
  assert_int_equal(s.num_device_frees, dev.frees);
  assert_true(s.peak_reserved <= capacity);
  assert_true(s.peak_allocated <= s.peak_reserved);
  assert_int_equal(tb_allocator_live_blocks(a), 0);
  if (expect_ooms) assert_true(s.num_oom_retries > 0);

  tb_allocator_empty_cache(a);
  s = fake_stats(a);
  assert_int_equal(s.reserved, 0);
  assert_int_equal(dev.used, 0);
  assert_int_equal(dev.allocs, dev.frees);
  tb_allocator_destroy(a);
  pthread_mutex_destroy(&dev.lock);
}

static void test_four_threads_random(void **state) {
  (void)state;
  stress(4 * GIB, 10000, false);
}

static void test_four_threads_tight_device(void **state) {
  (void)state;
  stress(12 * MIB, 5000, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_four_threads_random),
      cmocka_unit_test(test_four_threads_tight_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
