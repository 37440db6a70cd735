/* A fake device for the caching allocator's tests: tb_backend_ops over host memory with a capacity (so it
 * runs out like a GPU), counters of alloc/free calls, a configurable alignment (256 by default), a
 * memory_info that reports the capacity (or is unsupported), and an injectable driver error. */
#ifndef TEST_ALLOCATOR_FAKE_H
#define TEST_ALLOCATOR_FAKE_H
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "backend/allocator.h"
#include "core/error.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

typedef struct fake_dev {
  pthread_mutex_t lock;
  size_t capacity;
  size_t used;           /* bytes currently held by the allocator */
  size_t alignment;
  size_t alloc_calls;    /* every call, failed ones included */
  size_t allocs;         /* successful calls */
  size_t frees;
  bool memory_info_ok;
  tb_status fail_with;   /* TB_OK, or the status alloc returns (with a driver-like message) */
} fake_dev;

static inline void fake_init(fake_dev *f, size_t capacity) {
  memset(f, 0, sizeof *f);
  pthread_mutex_init(&f->lock, NULL);
  f->capacity = capacity;
  f->alignment = 256;
  f->memory_info_ok = true;
}

static inline size_t fake_alignment(void *state) { return ((fake_dev *)state)->alignment; }

static inline tb_status fake_alloc(void *state, size_t bytes, tb_devmem *out) {
  fake_dev *f = state;
  pthread_mutex_lock(&f->lock);
  f->alloc_calls++;
  tb_status st = TB_OK;
  if (f->fail_with != TB_OK) {
    st = tb_error(f->fail_with, "fake:0: cuMemAlloc failed with CUDA_ERROR_UNKNOWN (999)");
  } else if (bytes > f->capacity - f->used) {
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "fake:0: cuMemAlloc of %zu bytes: CUDA_ERROR_OUT_OF_MEMORY (2)", bytes);
  } else {
    size_t align = f->alignment > sizeof(void *) ? f->alignment : sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, align, bytes) != 0) {
      st = tb_error(TB_ERR_OUT_OF_MEMORY, "fake:0: host out of memory");
    } else {
      out->handle = p;
      out->size = bytes;
      f->used += bytes;
      f->allocs++;
    }
  }
  pthread_mutex_unlock(&f->lock);
  return st;
}

static inline void fake_free(void *state, tb_devmem mem) {
  fake_dev *f = state;
  pthread_mutex_lock(&f->lock);
  f->used -= mem.size;
  f->frees++;
  free(mem.handle);
  pthread_mutex_unlock(&f->lock);
}

static inline tb_status fake_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  fake_dev *f = state;
  if (!f->memory_info_ok) return tb_error(TB_ERR_UNSUPPORTED, "fake:0: no memory info");
  pthread_mutex_lock(&f->lock);
  *free_bytes = f->capacity - f->used;
  *total_bytes = f->capacity;
  pthread_mutex_unlock(&f->lock);
  return TB_OK;
}

static inline void *fake_host_pointer(void *state, tb_devmem mem) {
  (void)state;
  return mem.handle;
}

static const tb_backend_ops fake_ops = {
    .kind = TB_BACKEND_CUDA,
    .alignment = fake_alignment,
    .alloc = fake_alloc,
    .free = fake_free,
    .memory_info = fake_memory_info,
    .host_pointer = fake_host_pointer,
};

static inline tb_memory_stats fake_stats(tb_allocator *a) {
  tb_memory_stats s;
  memset(&s, 0xAB, sizeof s);
  s.size = sizeof s;
  tb_allocator_stats(a, &s);
  return s;
}

/* Assert the allocator's byte and call counters in one line. */
#define ASSERT_STATS(a, alloc_, req_, resv_, nallocs_, nfrees_, ndev_, ndevfree_)      \
  do {                                                                                \
    tb_memory_stats s_ = fake_stats(a);                                               \
    assert_int_equal(s_.allocated, (alloc_));                                         \
    assert_int_equal(s_.requested, (req_));                                           \
    assert_int_equal(s_.reserved, (resv_));                                           \
    assert_int_equal(s_.num_allocs, (nallocs_));                                      \
    assert_int_equal(s_.num_frees, (nfrees_));                                        \
    assert_int_equal(s_.num_device_allocs, (ndev_));                                  \
    assert_int_equal(s_.num_device_frees, (ndevfree_));                               \
  } while (0)

#endif
