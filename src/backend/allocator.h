/* Internal: the caching allocator, one per backend, over tb_backend_ops.
 *
 * Raw allocations ("segments") come from ops->alloc; blocks are carved out of them. Requests are rounded
 * to size classes; small requests share small segments, large ones get segments of their own rounded up;
 * a freed block merges with free neighbours in its segment and stays cached until empty_cache releases
 * fully free segments to the device. Thread-safe. On TB_ERR_OUT_OF_MEMORY (from the device or from the
 * memory-fraction limit) it releases the cache and retries once, then fails with a message giving the
 * size asked for and the allocated, reserved and free bytes. docs/memory.md ("The caching allocator") has the
 * design; allocator.c and allocator_pool.c implement it. */
#ifndef TB_BACKEND_ALLOCATOR_H
#define TB_BACKEND_ALLOCATOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/backend.h>
#include "backend/backend_impl.h"

/* Size classes. Every block size and offset is a multiple of max(TB_ALLOC_MIN_BLOCK, ops->alignment).
 * Requests up to TB_ALLOC_SMALL_MAX bytes (after rounding) share TB_ALLOC_SMALL_SEGMENT-byte segments;
 * larger ones get a segment of their own rounded up to TB_ALLOC_LARGE_ROUND bytes, which later large
 * requests may split. A free block is split when the rest is at least one minimum block. */
#define TB_ALLOC_MIN_BLOCK ((size_t)512)
#define TB_ALLOC_SMALL_MAX ((size_t)1 << 20)
#define TB_ALLOC_SMALL_SEGMENT ((size_t)2 << 20)
#define TB_ALLOC_LARGE_ROUND ((size_t)2 << 20)

/* A block handed out: bytes [offset, offset + size) of the raw allocation `mem`. */
typedef struct tb_block {
  tb_devmem mem;
  size_t offset;
  size_t size;      /* the rounded size the block occupies */
  size_t requested; /* the size asked for */
} tb_block;

/* `label` names the device in messages ("cuda:0"). ops needs alloc and free; alignment, memory_info
 * may be NULL. alloc and free are called with the allocator's mutex held, one call at a time. */
tb_status tb_allocator_create(const tb_backend_ops *ops, void *state, const char *label, tb_allocator **out);
/* Releases every segment; blocks still handed out are released too (and counted as leaked in the log). */
void tb_allocator_destroy(tb_allocator *a);

/* bytes == 0 gives a valid zero-size block (mem.handle NULL, size 0, no device call) that must be freed
 * like any other. A size that overflows when rounded is TB_ERR_OUT_OF_MEMORY naming it. The block stays
 * owned by the allocator; the pointer is valid until tb_allocator_free. */
tb_status tb_allocator_alloc(tb_allocator *a, size_t bytes, tb_block **out);
/* NULL is allowed. A block from another allocator or freed twice is logged as an error and ignored (the
 * check reads the allocator's own records, so it is safe, but a record reused by a later allocation
 * cannot be told apart: do not rely on it). */
void tb_allocator_free(tb_allocator *a, tb_block *block);
/* Release fully free cached segments to the device. */
void tb_allocator_empty_cache(tb_allocator *a);
/* Fill stats (the caller sets stats->size; a smaller size from an older caller gets the leading fields);
 * asks ops->memory_info for the driver's free/total, known flags false when it does not return TB_OK. */
void tb_allocator_stats(tb_allocator *a, tb_memory_stats *stats);
void tb_allocator_reset_peak(tb_allocator *a);
/* Limit reserved bytes to fraction * total (total from the driver, or `fallback_total` when unknown).
 * fraction in (0, 1] (else TB_ERR_INVALID_ARGUMENT); 1 removes the limit; TB_ERR_UNSUPPORTED when the total
 * is unknown and fallback_total is 0. The limit applies to new segments; cached memory above it is not
 * released until the next out-of-memory retry or empty_cache. */
tb_status tb_allocator_set_fraction(tb_allocator *a, double fraction, uint64_t fallback_total);
/* Freed blocks held back (the memory a captured device graph reads and writes, src/model/replay.c): between
 * tb_allocator_hold_begin and tb_allocator_hold_end on one thread, the blocks that thread frees to `a` stay
 * allocated and are appended to `hold` instead of going to the cache, so nothing else is given them while the
 * graph may run; tb_allocator_hold_release frees them (and empties `hold`). A block that cannot be appended (host
 * out of memory) is freed as usual and hold->failed is set: the caller must not keep the graph. Holds nest: a
 * hold begun inside another (a capture inside a run's hold, src/model/run.c) takes the frees until it ends, then
 * the outer one takes them again. */
typedef struct tb_block_hold {
  tb_block **blocks;
  size_t count, cap;
  bool failed;
  struct tb_block_hold *outer;        /* the hold this thread had open before this one (restored at its end) */
  const struct tb_allocator *outer_owner;
} tb_block_hold;
void tb_allocator_hold_begin(tb_allocator *a, tb_block_hold *hold);
void tb_allocator_hold_end(tb_allocator *a);
void tb_allocator_hold_release(tb_allocator *a, tb_block_hold *hold);
/* Number of blocks handed out and not freed. */
size_t tb_allocator_live_blocks(tb_allocator *a);

#endif
