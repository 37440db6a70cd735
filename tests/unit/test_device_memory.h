/* The device-memory suite's description of one backend (test_device_memory.c runs the shared checks over
 * it; test_device_memory_cuda.h, _hip.h and _level_zero.h fill one each): the ops, the fake runtime and
 * its switches, and the statuses and sentences the backend must give. */
#ifndef TB_TEST_DEVICE_MEMORY_H
#define TB_TEST_DEVICE_MEMORY_H
#include <stddef.h>
#include <stdint.h>
#include "backend/backend_impl.h"
#include "test_util.h"

typedef struct devmem_case {
  const char *name;          /* the suite's argument: cuda, hip or level_zero */
  const tb_backend_ops *ops;
  tb_backend_kind kind;
  const char *prefix;        /* of the device names: "cuda" for cuda:0 */
  const char *fake;          /* the fake runtime: "fake_cuda" */
  const char *fail_env;      /* FAKE_<X>_FAIL: which call fails */
  const char *fail_code_env; /* FAKE_<X>_FAIL_CODE: with which code */
  const char *capacity_env;  /* FAKE_<X>_MEM_CAPACITY */
  void (*setup)(void);       /* the fakes and the fixture; sets devmem_list */
  void (*nothing_live)(void); /* after close: nothing of the backend left in the fake but allocations */
  void (*thread_is_as_it_was)(void); /* after a call: the calling thread's context/device untouched (or NULL) */
  int (*thread_state)(void); /* what a worker thread records after its calls (0 expected), or NULL */

  /* round_trip_copy_and_fill: the fake's counter of native fills by pattern width, and the expected
   * number of calls for widths 1, 2, 4 and 8 during the shared fill checks. */
  const char *fill_counter;
  unsigned long long fills[4];

  /* synchronize_and_memory_info */
  const char *info_capacity; /* FAKE_<X>_MEM_CAPACITY for it, or NULL */
  int info_device;
  uint64_t info_total, info_free;
  const char *sync_failure;
  void (*info_failure)(void *state); /* memory_info's failure and its sentence */

  /* out_of_memory_then_recovery: the sentence for 4 MiB more than an 8 MiB device holds. */
  const char *oom_failure;
  const char *oom_free; /* what it says is free, or NULL */

  /* driver_error_on_copies */
  const char *write_failure, *read_failure;
  const char *unknown_code, *copy_failure; /* a code nobody knows, and the device-to-device copy's sentence */
  const char *fill_code, *fill_pattern, *fill_failure;
  size_t fill_pattern_size, fill_offset;

  int threads_device;

  /* caching_allocator */
  int allocator_device;
  const char *allocator_capacity; /* before gpumem_through_allocator, or NULL */
  uint64_t allocator_total, allocator_free;

  /* the backend's own tests (opening, device selection, open failures) */
  const struct CMUnitTest *own;
  size_t own_count;
} devmem_case;

#endif
