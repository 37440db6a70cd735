/* Internal to the caching allocator: its records (segments, blocks, the free-block index) and the pool
 * operations shared by allocator.c (the public calls, OOM handling, stats) and allocator_pool.c (best
 * fit, split, merge, segment release). Everything here runs with the allocator's mutex held. */
#ifndef TB_BACKEND_ALLOCATOR_INTERNAL_H
#define TB_BACKEND_ALLOCATOR_INTERNAL_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/allocator.h"

enum { TB_POOL_SMALL = 0, TB_POOL_LARGE = 1, TB_POOL_COUNT = 2 };

typedef enum tb_block_state {
  TB_BLOCK_RETIRED = 0x52455449u, /* record on the spare list, not part of any segment */
  TB_BLOCK_LIVE = 0x4c495645u,    /* handed out to a caller */
  TB_BLOCK_CACHED = 0x43414348u   /* free, in the pool's index */
} tb_block_state;

typedef struct tb_alloc_segment tb_alloc_segment;

typedef struct tb_alloc_block {
  tb_block pub;                       /* first member: the pointer callers hold */
  const tb_allocator *owner;
  tb_alloc_segment *segment;          /* NULL for a zero-size block */
  struct tb_alloc_block *prev, *next; /* neighbours in address order within the segment; for zero-size
                                         blocks the live zero-size list; for retired records the spares */
  tb_block_state state;
} tb_alloc_block;

struct tb_alloc_segment {
  tb_devmem mem;
  size_t size;                        /* bytes asked of the device (what `reserved` counts) */
  uint64_t serial;                    /* creation order: a stable tie-break in the free index */
  int pool;
  tb_alloc_block *first;              /* blocks tile [0, size) in address order */
  tb_alloc_segment *prev, *next;      /* the allocator's segment list */
};

/* Free blocks of one pool, sorted by (size, segment serial, offset): best fit is a binary search.
 * capacity is kept >= the number of blocks in the pool, so inserting never allocates. */
typedef struct tb_free_index {
  tb_alloc_block **items;
  size_t count;
  size_t capacity;
  size_t blocks; /* blocks of this pool's segments, live or cached */
} tb_free_index;

struct tb_allocator {
  const tb_backend_ops *ops;
  void *state;
  char label[64];
  pthread_mutex_t lock;
  size_t align;         /* every block size and offset is a multiple of this */
  size_t small_segment; /* size of the segments small blocks share */
  size_t large_round;   /* large segments are rounded up to a multiple of this */
  tb_free_index pools[TB_POOL_COUNT];
  tb_alloc_segment *segments;
  uint64_t next_serial;
  tb_alloc_block *spares;      /* retired records, reused before malloc */
  tb_alloc_block *zero_blocks; /* live zero-size blocks */
  size_t live_blocks;
  double fraction;             /* 1.0 when no limit is set */
  tb_memory_stats stats;       /* device_* fields are filled only when stats are asked for */
};

/* The free-index and record operations (allocator_pool.c). */
/* Make room for `extra` more blocks in the pool and `records` spare records; false when the host is out
 * of memory (nothing changed that matters). */
bool tb_pool_reserve(tb_allocator *a, int pool, size_t extra, size_t records);
/* A spare record (tb_pool_reserve made sure there is one). */
tb_alloc_block *tb_pool_take_record(tb_allocator *a);
void tb_pool_retire_record(tb_allocator *a, tb_alloc_block *b);
/* The smallest cached block of at least `size` bytes, removed from the index; NULL when none. */
tb_alloc_block *tb_pool_best_fit(tb_allocator *a, int pool, size_t size);
/* Cut `b` (not in the index) to `size` bytes when the rest is at least a.align; the rest is cached. */
void tb_pool_split(tb_allocator *a, tb_alloc_block *b, size_t size);
/* Mark `b` cached, merge it with cached neighbours and put the result in the index. */
void tb_pool_release_block(tb_allocator *a, tb_alloc_block *b);
/* Add a segment made of one block (live, not in the index) to the allocator; returns that block. */
tb_alloc_block *tb_pool_add_segment(tb_allocator *a, int pool, tb_devmem mem, size_t size, tb_alloc_segment *seg);
/* Return every fully free segment to the device; the number released. */
size_t tb_pool_release_free_segments(tb_allocator *a);
/* Free every segment (live blocks included) and every record; for destroy. */
void tb_pool_release_all(tb_allocator *a);

#endif
