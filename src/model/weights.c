/* The file-backed ranges of loaded models (a small process-wide list under a lock), dropping whole pages
 * of them or of the executor's own copies with madvise(MADV_DONTNEED), and the counters that say how much
 * was let go (model/weights.h). */
#include "model/weights.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct file_range {
  const void *owner;
  uintptr_t begin, end;
} file_range;

static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static file_range *ranges;
static size_t n_ranges, cap_ranges;

static atomic_uint_least64_t file_dropped, copy_dropped, copy_restored, released;

void tb_weights_stats_get(tb_weights_stats *out) {
  out->file_bytes_dropped = atomic_load(&file_dropped);
  out->copy_bytes_dropped = atomic_load(&copy_dropped);
  out->copy_bytes_restored = atomic_load(&copy_restored);
  out->constants_released = atomic_load(&released);
}

void tb_weights_note_restored(size_t n) { atomic_fetch_add(&copy_restored, n); }
void tb_weights_note_released(void) { atomic_fetch_add(&released, 1); }

bool tb_weights_register(const void *owner, const void *addr, size_t size) {
  if (!addr || !size) return true;
  pthread_mutex_lock(&ranges_lock);
  bool ok = true;
  if (n_ranges == cap_ranges) {
    size_t cap = cap_ranges ? cap_ranges * 2 : 8;
    file_range *grown = realloc(ranges, cap * sizeof *grown);
    if (grown) {
      ranges = grown;
      cap_ranges = cap;
    } else {
      ok = false;
    }
  }
  if (ok) ranges[n_ranges++] = (file_range){owner, (uintptr_t)addr, (uintptr_t)addr + size};
  pthread_mutex_unlock(&ranges_lock);
  return ok;
}

void tb_weights_unregister(const void *owner) {
  pthread_mutex_lock(&ranges_lock);
  size_t kept = 0;
  for (size_t i = 0; i < n_ranges; i++)
    if (ranges[i].owner != owner) ranges[kept++] = ranges[i];
  n_ranges = kept;
  if (!n_ranges) {
    free(ranges);
    ranges = NULL;
    cap_ranges = 0;
  }
  pthread_mutex_unlock(&ranges_lock);
}

bool tb_weights_file_backed(const void *p, size_t n) {
  uintptr_t b = (uintptr_t)p, e = b + n;
  bool inside = false;
  pthread_mutex_lock(&ranges_lock);
  for (size_t i = 0; i < n_ranges && !inside; i++) inside = b >= ranges[i].begin && e <= ranges[i].end && e >= b;
  pthread_mutex_unlock(&ranges_lock);
  return inside;
}

/* madvise the whole pages inside [b, e); the bytes it covered. */
static size_t drop_pages(uintptr_t b, uintptr_t e) {
  long page = sysconf(_SC_PAGESIZE);
  if (page <= 0 || e <= b) return 0;
  uintptr_t mask = (uintptr_t)page - 1;
  uintptr_t first = (b + mask) & ~mask, last = e & ~mask;
  if (last <= first) return 0;
  if (madvise((void *)first, last - first, MADV_DONTNEED) != 0) return 0;
  return last - first;
}

size_t tb_weights_drop_file(const void *p, size_t n) {
  if (!p || !n || !tb_weights_file_backed(p, n)) return 0;
  size_t dropped = drop_pages((uintptr_t)p, (uintptr_t)p + n);
  atomic_fetch_add(&file_dropped, dropped);
  return dropped;
}

size_t tb_weights_drop_owner(const void *owner) {
  size_t dropped = 0;
  pthread_mutex_lock(&ranges_lock);
  for (size_t i = 0; i < n_ranges; i++)
    if (ranges[i].owner == owner) dropped += drop_pages(ranges[i].begin, ranges[i].end);
  pthread_mutex_unlock(&ranges_lock);
  atomic_fetch_add(&file_dropped, dropped);
  return dropped;
}

size_t tb_weights_drop_copy(void *p, size_t n) {
  if (!p || !n) return 0;
  size_t dropped = drop_pages((uintptr_t)p, (uintptr_t)p + n);
  atomic_fetch_add(&copy_dropped, dropped);
  return dropped;
}
