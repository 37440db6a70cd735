/* The caching allocator over the real CPU backend ops (tb_cpu_ops): blocks carved from one segment hold
 * their own data through ops->write/read, stats come from the machine's memory, a request larger than
 * the machine fails with the sizes and the next one works, and the memory fraction uses the real total. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/allocator.h"
#include "test_util.h"

#define MIB ((size_t)1 << 20)

typedef struct cpu_fixture {
  void *state;
  tb_allocator *a;
} cpu_fixture;

static int setup(void **state) {
  cpu_fixture *fx = calloc(1, sizeof *fx);
  if (!fx || tb_cpu_ops.open(NULL, &fx->state) != TB_OK) return -1;
  if (tb_allocator_create(&tb_cpu_ops, fx->state, "cpu:0", &fx->a) != TB_OK) return -1;
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  cpu_fixture *fx = *state;
  tb_allocator_destroy(fx->a);
  tb_cpu_ops.close(fx->state);
  free(fx);
  return 0;
}

static uint64_t machine_total(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return (uint64_t)pages * (uint64_t)page;
}

static void test_blocks_hold_their_data(void **state) {
  cpu_fixture *fx = *state;
  enum { N = 5 };
  const size_t sizes[N] = {1, 100, 4096, 70000, 3 * MIB};
  tb_block *blk[N];
  for (int i = 0; i < N; i++) {
    TB_ASSERT_OK(tb_allocator_alloc(fx->a, sizes[i], &blk[i]));
    unsigned char *src = malloc(sizes[i]);
    for (size_t j = 0; j < sizes[i]; j++) src[j] = (unsigned char)(i * 37 + j);
    TB_ASSERT_OK(tb_cpu_ops.write(fx->state, blk[i]->mem, blk[i]->offset, src, sizes[i]));
    free(src);
  }
  /* The four small ones share one 2 MiB segment; 3 MiB has a 4 MiB one. */
  assert_ptr_equal(blk[0]->mem.handle, blk[3]->mem.handle);
  assert_int_equal(blk[3]->offset, 512 + 512 + 4096);
  tb_memory_stats s = {.size = sizeof s};
  tb_allocator_stats(fx->a, &s);
  assert_int_equal(s.allocated, 512 + 512 + 4096 + 70144 + 3 * MIB);
  assert_int_equal(s.requested, 1 + 100 + 4096 + 70000 + 3 * MIB);
  assert_int_equal(s.reserved, 6 * MIB);
  assert_int_equal(s.num_device_allocs, 2);
  assert_true(s.device_total_known);
  assert_int_equal(s.device_total, machine_total());
  assert_true(s.device_free_known);
  assert_true(s.device_free <= s.device_total);
  for (int i = 0; i < N; i++) {
    unsigned char *dst = malloc(sizes[i]);
    TB_ASSERT_OK(tb_cpu_ops.read(fx->state, blk[i]->mem, blk[i]->offset, dst, sizes[i]));
    for (size_t j = 0; j < sizes[i]; j++)
      if (dst[j] != (unsigned char)(i * 37 + j)) fail_msg("block %d byte %zu: %u", i, j, dst[j]);
    unsigned char *host = tb_cpu_ops.host_pointer(fx->state, blk[i]->mem);
    assert_ptr_equal(host + blk[i]->offset, (unsigned char *)blk[i]->mem.handle + blk[i]->offset);
    assert_int_equal(((uintptr_t)host + blk[i]->offset) % tb_cpu_ops.alignment(fx->state), 0);
    assert_int_equal(blk[i]->offset % 512, 0);
    free(dst);
  }
  for (int i = 0; i < N; i++) tb_allocator_free(fx->a, blk[i]);
  tb_allocator_empty_cache(fx->a);
  tb_allocator_stats(fx->a, &s);
  assert_int_equal(s.reserved, 0);
  assert_int_equal(s.num_device_frees, 2);
}

static void test_larger_than_the_machine(void **state) {
  cpu_fixture *fx = *state;
  tb_block *keep = NULL, *b = NULL;
  TB_ASSERT_OK(tb_allocator_alloc(fx->a, 1000, &keep));
  size_t huge = (size_t)(machine_total() * 2);
  assert_int_equal(tb_allocator_alloc(fx->a, huge, &b), TB_ERR_OUT_OF_MEMORY);
  assert_null(b);
  char expect[96];
  snprintf(expect, sizeof expect, "cpu:0: out of memory allocating ");
  TB_ASSERT_CONTAINS(tb_last_error(), expect);
  snprintf(expect, sizeof expect, "(%zu bytes): 1.00 KiB allocated, 2.00 MiB reserved, ", huge);
  TB_ASSERT_CONTAINS(tb_last_error(), expect);
  TB_ASSERT_CONTAINS(tb_last_error(), "free on the device; free tensors, call tb_backend_empty_cache");
  tb_memory_stats s = {.size = sizeof s};
  tb_allocator_stats(fx->a, &s);
  assert_int_equal(s.num_oom_retries, 1);
  TB_ASSERT_OK(tb_allocator_alloc(fx->a, 1000, &b));
  assert_int_equal(b->offset, 1024);
  tb_allocator_free(fx->a, b);
  tb_allocator_free(fx->a, keep);
}

static void test_fraction_of_the_machine(void **state) {
  cpu_fixture *fx = *state;
  TB_ASSERT_OK(tb_allocator_set_fraction(fx->a, 0.5, 0));
  tb_memory_stats s = {.size = sizeof s};
  tb_allocator_stats(fx->a, &s);
  assert_int_equal(s.limit, machine_total() / 2);
  TB_ASSERT_OK(tb_allocator_set_fraction(fx->a, 1.0, 0));
  tb_allocator_stats(fx->a, &s);
  assert_int_equal(s.limit, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_blocks_hold_their_data, setup, teardown),
      cmocka_unit_test_setup_teardown(test_larger_than_the_machine, setup, teardown),
      cmocka_unit_test_setup_teardown(test_fraction_of_the_machine, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
