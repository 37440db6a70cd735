/* The caching allocator: size classes, the allocation path with its out-of-memory handling (release the
 * cache, retry once, then fail with the sizes), the memory-fraction limit, stats, and the leak report at
 * destroy. The block bookkeeping (best fit, split, merge) is in allocator_pool.c. docs/memory.md has the
 * design. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/allocator_internal.h"
#include "core/env.h"
#include "core/error.h"

#define MIB ((size_t)1 << 20)

/* `x` rounded up to a multiple of the power of two `to`; false on overflow. */
static bool round_up(size_t x, size_t to, size_t *out) {
  if (x > SIZE_MAX - (to - 1)) return false;
  *out = (x + to - 1) & ~(to - 1);
  return true;
}

static bool is_pow2(size_t x) { return x && !(x & (x - 1)); }

/* "1.50 GiB", "512.00 MiB", "300 bytes". */
static const char *human(uint64_t bytes, char *buf, size_t size) {
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    snprintf(buf, size, "%" PRIu64 " bytes", bytes);
    return buf;
  }
  double v = (double)bytes / 1024.0;
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    u++;
  }
  snprintf(buf, size, "%.2f %s", v, units[u]);
  return buf;
}

tb_status tb_allocator_create(const tb_backend_ops *ops, void *state, const char *label, tb_allocator **out) {
  if (!out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_allocator_create: out is NULL");
  *out = NULL;
  if (!ops || !ops->alloc || !ops->free)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_allocator_create: the backend ops%s have no alloc/free functions",
                    ops ? "" : " (NULL)");
  const char *name = label && *label ? label : "device";
  size_t device_align = ops->alignment ? ops->alignment(state) : 1;
  if (!is_pow2(device_align))
    return tb_error(TB_ERR_INTERNAL, "%s: the backend reports an alignment of %zu bytes, not a power of two", name,
                    device_align);
  tb_allocator *a = calloc(1, sizeof *a);
  if (!a) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory creating the allocator", name);
  if (pthread_mutex_init(&a->lock, NULL) != 0) {
    free(a);
    return tb_error(TB_ERR_INTERNAL, "%s: could not create the allocator's mutex", name);
  }
  a->ops = ops;
  a->state = state;
  snprintf(a->label, sizeof a->label, "%s", name);
  a->align = device_align > TB_ALLOC_MIN_BLOCK ? device_align : TB_ALLOC_MIN_BLOCK;
  a->small_segment = TB_ALLOC_SMALL_SEGMENT > a->align ? TB_ALLOC_SMALL_SEGMENT : a->align;
  a->large_round = TB_ALLOC_LARGE_ROUND > a->align ? TB_ALLOC_LARGE_ROUND : a->align;
  a->fraction = 1.0;
  a->stats.size = sizeof a->stats;
  *out = a;
  return TB_OK;
}

void tb_allocator_destroy(tb_allocator *a) {
  if (!a) return;
  pthread_mutex_lock(&a->lock);
  if (a->live_blocks) {
    char buf[32];
    tb_log(TB_LOG_WARN,
           "%s: %zu blocks (%s, %" PRIu64 " bytes) were still allocated when the allocator was destroyed; "
           "they leaked and are released now",
           a->label, a->live_blocks, human(a->stats.allocated, buf, sizeof buf), a->stats.allocated);
  }
  tb_pool_release_all(a);
  pthread_mutex_unlock(&a->lock);
  pthread_mutex_destroy(&a->lock);
  free(a);
}

/* Fill the driver's free/total, leaving the known flags false when it cannot say. */
static void query_device(tb_allocator *a, tb_memory_stats *s) {
  s->device_free = s->device_total = 0;
  s->device_free_known = s->device_total_known = false;
  uint64_t free_bytes = 0, total_bytes = 0;
  if (!a->ops->memory_info) return;
  tb_status st = a->ops->memory_info(a->state, &free_bytes, &total_bytes);
  if (st == TB_OK) {
    s->device_free = free_bytes;
    s->device_free_known = true;
  }
  /* TB_ERR_UNSUPPORTED with a total: the driver knows the size but not what is free (OpenCL). */
  if ((st == TB_OK || st == TB_ERR_UNSUPPORTED) && total_bytes) {
    s->device_total = total_bytes;
    s->device_total_known = true;
  }
}

static tb_status oom_error(tb_allocator *a, size_t bytes, bool over_limit) {
  /* The backend's own sentence (e.g. a per-allocation maximum) is kept at the end of ours. */
  char device_said[512] = "";
  if (!over_limit && tb_last_error()[0]) snprintf(device_said, sizeof device_said, " (the device said: %s)", tb_last_error());
  tb_memory_stats s = a->stats;
  query_device(a, &s);
  char want[32], alloc[32], resv[32], dev[64], lim[32], limit_text[128] = "";
  if (s.device_free_known) {
    char f[32];
    snprintf(dev, sizeof dev, "%s free on the device", human(s.device_free, f, sizeof f));
  } else {
    snprintf(dev, sizeof dev, "free device memory unknown");
  }
  if (s.limit)
    snprintf(limit_text, sizeof limit_text, " (%slimit %s from memory fraction %g)",
             over_limit ? "over the " : "", human(s.limit, lim, sizeof lim), a->fraction);
  return tb_error(TB_ERR_OUT_OF_MEMORY,
                  "%s: out of memory allocating %s (%zu bytes): %s allocated, %s reserved, %s%s; free tensors, "
                  "call tb_backend_empty_cache, %sor lower the batch size%s",
                  a->label, human(bytes, want, sizeof want), bytes, human(s.allocated, alloc, sizeof alloc),
                  human(s.reserved, resv, sizeof resv), dev, limit_text,
                  over_limit ? "raise the limit with tb_backend_set_memory_fraction, " : "", device_said);
}

/* One raw allocation of `size` bytes, refused as out of memory when it would take reserved over the limit. */
static tb_status device_alloc(tb_allocator *a, size_t size, tb_devmem *mem, bool *over_limit) {
  *over_limit = a->stats.limit && (a->stats.reserved > a->stats.limit || size > a->stats.limit - a->stats.reserved);
  if (*over_limit)
    return tb_error(TB_ERR_OUT_OF_MEMORY,
                    "%s: %zu bytes more would take reserved memory (%llu bytes) over the limit of %llu bytes; free "
                    "tensors or raise the limit with tb_backend_set_memory_fraction",
                    a->label, size, (unsigned long long)a->stats.reserved, (unsigned long long)a->stats.limit);
  memset(mem, 0, sizeof *mem);
  return a->ops->alloc(a->state, size, mem);
}

/* A new segment of `size` bytes for a request of `bytes`: on out of memory, release the cache and retry once. */
static tb_status new_segment(tb_allocator *a, int pool, size_t size, size_t bytes, tb_alloc_block **out) {
  tb_alloc_segment *seg = malloc(sizeof *seg);
  if (!seg) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the allocator's records", a->label);
  tb_devmem mem;
  bool over_limit = false;
  tb_status st = device_alloc(a, size, &mem, &over_limit);
  if (st == TB_ERR_OUT_OF_MEMORY) {
    tb_pool_release_free_segments(a);
    a->stats.num_oom_retries++;
    st = device_alloc(a, size, &mem, &over_limit);
  }
  if (st != TB_OK) {
    free(seg);
    if (st == TB_ERR_OUT_OF_MEMORY) return oom_error(a, bytes, over_limit);
    return st; /* the backend's own error and message */
  }
  if (mem.size == 0) mem.size = size;
  *out = tb_pool_add_segment(a, pool, mem, size, seg);
  return TB_OK;
}

static tb_status alloc_zero(tb_allocator *a, tb_block **out) {
  if (!tb_pool_reserve(a, TB_POOL_SMALL, 0, 1))
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the allocator's records", a->label);
  tb_alloc_block *b = tb_pool_take_record(a);
  b->state = TB_BLOCK_LIVE;
  b->next = a->zero_blocks;
  if (a->zero_blocks) a->zero_blocks->prev = b;
  a->zero_blocks = b;
  *out = &b->pub;
  return TB_OK;
}

static tb_status alloc_locked(tb_allocator *a, size_t bytes, tb_block **out) {
  if (bytes == 0) return alloc_zero(a, out);
  size_t rounded, seg_size = 0;
  if (!round_up(bytes, a->align, &rounded))
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes: the size does not fit the address space",
                    a->label, bytes);
  int pool = rounded <= TB_ALLOC_SMALL_MAX ? TB_POOL_SMALL : TB_POOL_LARGE;
  if (pool == TB_POOL_SMALL) seg_size = a->small_segment;
  else if (!round_up(rounded, a->large_round, &seg_size))
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes: the size does not fit the address space",
                    a->label, bytes);
  if (!tb_pool_reserve(a, pool, 2, 2))
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the allocator's records", a->label);
  tb_alloc_block *b = tb_pool_best_fit(a, pool, rounded);
  if (!b) {
    tb_status st = new_segment(a, pool, seg_size, bytes, &b);
    if (st != TB_OK) return st;
  }
  tb_pool_split(a, b, rounded);
  b->state = TB_BLOCK_LIVE;
  b->pub.requested = bytes;
  a->stats.allocated += b->pub.size;
  a->stats.requested += bytes;
  if (a->stats.allocated > a->stats.peak_allocated) a->stats.peak_allocated = a->stats.allocated;
  *out = &b->pub;
  return TB_OK;
}

tb_status tb_allocator_alloc(tb_allocator *a, size_t bytes, tb_block **out) {
  if (out) *out = NULL;
  if (!a || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_allocator_alloc: %s is NULL", a ? "out" : "the allocator");
  pthread_mutex_lock(&a->lock);
  tb_status st = alloc_locked(a, bytes, out);
  if (st == TB_OK) {
    a->live_blocks++;
    a->stats.num_allocs++;
  }
  pthread_mutex_unlock(&a->lock);
  return st;
}

/* The hold this thread has open (tb_allocator_hold_begin), and on which allocator. */
static __thread tb_block_hold *thread_hold;
static __thread const tb_allocator *thread_hold_owner;

void tb_allocator_hold_begin(tb_allocator *a, tb_block_hold *hold) {
  hold->outer = thread_hold;
  hold->outer_owner = thread_hold_owner;
  thread_hold = hold;
  thread_hold_owner = a;
}

void tb_allocator_hold_end(tb_allocator *a) {
  if (thread_hold_owner != a || !thread_hold) return;
  tb_block_hold *h = thread_hold;
  thread_hold = h->outer;
  thread_hold_owner = h->outer_owner;
  h->outer = NULL;
  h->outer_owner = NULL;
}

/* Keep `block` in this thread's hold; false when there is none for `a` or it cannot grow. */
static bool held(tb_allocator *a, tb_block *block) {
  tb_block_hold *h = thread_hold;
  if (!h || thread_hold_owner != a) return false;
  if (h->count == h->cap) {
    size_t cap = h->cap ? h->cap * 2 : 16;
    tb_block **grown = realloc(h->blocks, cap * sizeof *grown);
    if (!grown) {
      h->failed = true;
      return false;
    }
    h->blocks = grown;
    h->cap = cap;
  }
  h->blocks[h->count++] = block;
  return true;
}

void tb_allocator_hold_release(tb_allocator *a, tb_block_hold *hold) {
  if (!hold) return;
  for (size_t i = 0; i < hold->count; i++) tb_allocator_free(a, hold->blocks[i]);
  free(hold->blocks);
  memset(hold, 0, sizeof *hold);
}

void tb_allocator_free(tb_allocator *a, tb_block *block) {
  if (!a || !block) return;
  if (held(a, block)) return;
  tb_alloc_block *b = (tb_alloc_block *)block;
  pthread_mutex_lock(&a->lock);
  if (b->owner != a || b->state != TB_BLOCK_LIVE) {
    tb_log(TB_LOG_ERROR, "%s: tb_allocator_free of a block that is %s; ignored", a->label,
           b->owner != a ? "not from this allocator (or already freed)" : "already freed");
  } else {
    a->live_blocks--;
    a->stats.num_frees++;
    if (!b->segment) {
      if (b->prev) b->prev->next = b->next;
      else a->zero_blocks = b->next;
      if (b->next) b->next->prev = b->prev;
      tb_pool_retire_record(a, b);
    } else {
      a->stats.allocated -= b->pub.size;
      a->stats.requested -= b->pub.requested;
      tb_pool_release_block(a, b);
    }
  }
  pthread_mutex_unlock(&a->lock);
}

void tb_allocator_empty_cache(tb_allocator *a) {
  if (!a) return;
  pthread_mutex_lock(&a->lock);
  tb_pool_release_free_segments(a);
  pthread_mutex_unlock(&a->lock);
}

void tb_allocator_stats(tb_allocator *a, tb_memory_stats *stats) {
  if (!a || !stats || stats->size == 0) return;
  pthread_mutex_lock(&a->lock);
  tb_memory_stats s = a->stats;
  pthread_mutex_unlock(&a->lock);
  query_device(a, &s); /* outside the lock: the driver call may be slow */
  size_t n = stats->size < sizeof s ? stats->size : sizeof s;
  s.size = stats->size;
  memcpy(stats, &s, n);
}

void tb_allocator_reset_peak(tb_allocator *a) {
  if (!a) return;
  pthread_mutex_lock(&a->lock);
  a->stats.peak_allocated = a->stats.allocated;
  a->stats.peak_reserved = a->stats.reserved;
  pthread_mutex_unlock(&a->lock);
}

tb_status tb_allocator_set_fraction(tb_allocator *a, double fraction, uint64_t fallback_total) {
  if (!a) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_allocator_set_fraction: the allocator is NULL");
  if (!(fraction > 0.0 && fraction <= 1.0))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: memory fraction %g is out of range; give a value in (0, 1]",
                    a->label, fraction);
  uint64_t total = fallback_total;
  uint64_t free_bytes = 0, driver_total = 0;
  if (a->ops->memory_info) {
    tb_status st = a->ops->memory_info(a->state, &free_bytes, &driver_total);
    if ((st == TB_OK || st == TB_ERR_UNSUPPORTED) && driver_total) total = driver_total;
  }
  if (fraction < 1.0 && total == 0)
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: cannot set memory fraction %g: the device's total memory is unknown", a->label, fraction);
  uint64_t limit = 0;
  if (fraction < 1.0) {
    limit = (uint64_t)floor(fraction * (double)total);
    if (limit == 0)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: memory fraction %g of %" PRIu64 " bytes leaves no memory",
                      a->label, fraction, total);
  }
  pthread_mutex_lock(&a->lock);
  a->fraction = fraction;
  a->stats.limit = limit;
  pthread_mutex_unlock(&a->lock);
  return TB_OK;
}

size_t tb_allocator_live_blocks(tb_allocator *a) {
  if (!a) return 0;
  pthread_mutex_lock(&a->lock);
  size_t n = a->live_blocks;
  pthread_mutex_unlock(&a->lock);
  return n;
}
