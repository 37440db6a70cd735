/* The caching allocator's pools: the sorted index of free blocks (best fit by binary search), splitting
 * a block, merging a freed block with its free neighbours, and returning fully free segments to the
 * device. Called with the allocator's mutex held (see allocator_internal.h). */
#include <stdlib.h>
#include <string.h>
#include "backend/allocator_internal.h"

/* Order of the free index: size, then segment creation order, then offset. Unique per block. */
static int block_key_cmp(size_t size, uint64_t serial, size_t offset, const tb_alloc_block *b) {
  if (size != b->pub.size) return size < b->pub.size ? -1 : 1;
  if (serial != b->segment->serial) return serial < b->segment->serial ? -1 : 1;
  if (offset != b->pub.offset) return offset < b->pub.offset ? -1 : 1;
  return 0;
}

/* First position whose block is not below the key. */
static size_t lower_bound(const tb_free_index *ix, size_t size, uint64_t serial, size_t offset) {
  size_t lo = 0, hi = ix->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (block_key_cmp(size, serial, offset, ix->items[mid]) > 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static void index_insert(tb_allocator *a, tb_alloc_block *b) {
  tb_free_index *ix = &a->pools[b->segment->pool];
  size_t at = lower_bound(ix, b->pub.size, b->segment->serial, b->pub.offset);
  memmove(ix->items + at + 1, ix->items + at, (ix->count - at) * sizeof *ix->items);
  ix->items[at] = b;
  ix->count++;
}

static void index_remove_at(tb_free_index *ix, size_t at) {
  memmove(ix->items + at, ix->items + at + 1, (ix->count - at - 1) * sizeof *ix->items);
  ix->count--;
}

static void index_remove(tb_allocator *a, tb_alloc_block *b) {
  tb_free_index *ix = &a->pools[b->segment->pool];
  size_t at = lower_bound(ix, b->pub.size, b->segment->serial, b->pub.offset);
  if (at < ix->count && ix->items[at] == b) index_remove_at(ix, at);
}

bool tb_pool_reserve(tb_allocator *a, int pool, size_t extra, size_t records) {
  tb_free_index *ix = &a->pools[pool];
  size_t need = ix->blocks + extra;
  if (need > ix->capacity) {
    size_t cap = ix->capacity ? ix->capacity : 16;
    while (cap < need) cap *= 2;
    tb_alloc_block **items = realloc(ix->items, cap * sizeof *items);
    if (!items) return false;
    ix->items = items;
    ix->capacity = cap;
  }
  size_t have = 0;
  for (tb_alloc_block *s = a->spares; s && have < records; s = s->next) have++;
  for (; have < records; have++) {
    tb_alloc_block *b = calloc(1, sizeof *b);
    if (!b) return false;
    tb_pool_retire_record(a, b);
  }
  return true;
}

tb_alloc_block *tb_pool_take_record(tb_allocator *a) {
  tb_alloc_block *b = a->spares;
  if (!b) return NULL;
  a->spares = b->next;
  memset(b, 0, sizeof *b);
  b->owner = a;
  return b;
}

void tb_pool_retire_record(tb_allocator *a, tb_alloc_block *b) {
  memset(b, 0, sizeof *b);
  b->state = TB_BLOCK_RETIRED;
  b->next = a->spares;
  a->spares = b;
}

tb_alloc_block *tb_pool_best_fit(tb_allocator *a, int pool, size_t size) {
  tb_free_index *ix = &a->pools[pool];
  size_t at = lower_bound(ix, size, 0, 0);
  if (at == ix->count) return NULL;
  tb_alloc_block *b = ix->items[at];
  index_remove_at(ix, at);
  return b;
}

void tb_pool_split(tb_allocator *a, tb_alloc_block *b, size_t size) {
  if (b->pub.size - size < a->align) return;
  tb_alloc_block *rest = tb_pool_take_record(a);
  if (!rest) return; /* cannot happen after tb_pool_reserve; keeping the block whole is still correct */
  rest->segment = b->segment;
  rest->pub.mem = b->pub.mem;
  rest->pub.offset = b->pub.offset + size;
  rest->pub.size = b->pub.size - size;
  rest->state = TB_BLOCK_CACHED;
  rest->prev = b;
  rest->next = b->next;
  if (b->next) b->next->prev = rest;
  b->next = rest;
  b->pub.size = size;
  a->pools[b->segment->pool].blocks++;
  index_insert(a, rest);
}

/* Fold `right` (cached, already out of the index) into its left neighbour `left`. */
static void absorb(tb_allocator *a, tb_alloc_block *left, tb_alloc_block *right) {
  left->pub.size += right->pub.size;
  left->next = right->next;
  if (right->next) right->next->prev = left;
  a->pools[left->segment->pool].blocks--;
  tb_pool_retire_record(a, right);
}

void tb_pool_release_block(tb_allocator *a, tb_alloc_block *b) {
  b->state = TB_BLOCK_CACHED;
  b->pub.requested = 0;
  tb_alloc_block *prev = b->prev, *next = b->next;
  if (prev && prev->state == TB_BLOCK_CACHED) {
    index_remove(a, prev);
    absorb(a, prev, b);
    b = prev;
  }
  if (next && next->state == TB_BLOCK_CACHED) {
    index_remove(a, next);
    absorb(a, b, next);
  }
  index_insert(a, b);
}

tb_alloc_block *tb_pool_add_segment(tb_allocator *a, int pool, tb_devmem mem, size_t size, tb_alloc_segment *seg) {
  memset(seg, 0, sizeof *seg);
  seg->mem = mem;
  seg->size = size;
  seg->serial = ++a->next_serial;
  seg->pool = pool;
  seg->next = a->segments;
  if (a->segments) a->segments->prev = seg;
  a->segments = seg;
  tb_alloc_block *b = tb_pool_take_record(a);
  b->segment = seg;
  b->pub.mem = mem;
  b->pub.offset = 0;
  b->pub.size = size;
  b->state = TB_BLOCK_LIVE;
  seg->first = b;
  a->pools[pool].blocks++;
  a->stats.reserved += size;
  a->stats.num_device_allocs++;
  if (a->stats.reserved > a->stats.peak_reserved) a->stats.peak_reserved = a->stats.reserved;
  return b;
}

static void unlink_segment(tb_allocator *a, tb_alloc_segment *seg) {
  if (seg->prev) seg->prev->next = seg->next;
  else a->segments = seg->next;
  if (seg->next) seg->next->prev = seg->prev;
}

size_t tb_pool_release_free_segments(tb_allocator *a) {
  size_t released = 0;
  tb_alloc_segment *seg = a->segments;
  while (seg) {
    tb_alloc_segment *next = seg->next;
    tb_alloc_block *only = seg->first;
    if (only->state == TB_BLOCK_CACHED && !only->next) {
      index_remove(a, only);
      a->pools[seg->pool].blocks--;
      tb_pool_retire_record(a, only);
      unlink_segment(a, seg);
      a->ops->free(a->state, seg->mem);
      a->stats.reserved -= seg->size;
      a->stats.num_device_frees++;
      free(seg);
      released++;
    }
    seg = next;
  }
  return released;
}

void tb_pool_release_all(tb_allocator *a) {
  while (a->segments) {
    tb_alloc_segment *seg = a->segments;
    a->segments = seg->next;
    for (tb_alloc_block *b = seg->first; b;) {
      tb_alloc_block *next = b->next;
      free(b);
      b = next;
    }
    a->ops->free(a->state, seg->mem);
    free(seg);
  }
  for (tb_alloc_block *b = a->zero_blocks; b;) {
    tb_alloc_block *next = b->next;
    free(b);
    b = next;
  }
  for (tb_alloc_block *b = a->spares; b;) {
    tb_alloc_block *next = b->next;
    free(b);
    b = next;
  }
  a->zero_blocks = a->spares = NULL;
  for (int p = 0; p < TB_POOL_COUNT; p++) {
    free(a->pools[p].items);
    memset(&a->pools[p], 0, sizeof a->pools[p]);
  }
}
