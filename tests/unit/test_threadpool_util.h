/* Shared by the thread-pool tests (test_threadpool.c, test_threadpool_partition.c): a task function that counts
 * how often each task index ran and how many chunks (calls) there were, with chunks outside [0, n) counted. */
#ifndef TB_TEST_THREADPOOL_UTIL_H
#define TB_TEST_THREADPOOL_UTIL_H
#include <stdatomic.h>
#include <stddef.h>

typedef struct counts {
  atomic_int *hits; /* n entries */
  atomic_int calls;
  size_t n;
  atomic_int out_of_range; /* chunks empty or past n */
} counts;

static inline void count_range(void *arg, size_t begin, size_t end) {
  counts *c = arg;
  atomic_fetch_add(&c->calls, 1);
  if (begin >= end || end > c->n) atomic_fetch_add(&c->out_of_range, 1);
  for (size_t i = begin; i < end && i < c->n; i++) atomic_fetch_add(&c->hits[i], 1);
}

#endif
