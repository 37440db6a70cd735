/* The strided copy of tensor_kernel.h split over the thread pool (Transpose, Slice, Expand, DepthToSpace):
 * the leading dims index blocks, and when they are too few the next dim is cut into row ranges; each task
 * copies its blocks with tb_tk_strided_copy. Every element is written once, by one thread: the bytes are the
 * same for any thread count. Copies under COPY_PARALLEL_MIN_BYTES stay on the caller. */
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "core/threadpool.h"

enum { COPY_PARALLEL_MIN_BYTES = 1 << 18, TASKS_PER_THREAD = 4, MIN_ROWS = 16 };

typedef struct copy_job {
  unsigned char *dst;
  const unsigned char *src;
  size_t elem, ndim, outer;   /* outer: the leading dims that index blocks */
  const int64_t *shape, *strides;
  int64_t src_offset, parts, rows_per_part;
  size_t block_bytes, row_bytes; /* a block: shape[outer..]; a row: shape[outer + 1..] */
} copy_job;

static void copy_tasks(void *arg, size_t begin, size_t end) {
  const copy_job *j = arg;
  int64_t shape[TB_MAX_DIMS];
  for (size_t d = j->outer; d < j->ndim; d++) shape[d - j->outer] = j->shape[d];
  for (size_t t = begin; t < end; t++) {
    int64_t block = (int64_t)t / j->parts, part = (int64_t)t % j->parts;
    int64_t off = j->src_offset, rest = block;
    for (size_t d = j->outer; d-- > 0;) {
      off += rest % j->shape[d] * j->strides[d];
      rest /= j->shape[d];
    }
    int64_t row0 = part * j->rows_per_part, rows = j->shape[j->outer] - row0;
    if (rows > j->rows_per_part) rows = j->rows_per_part;
    if (rows <= 0) continue;
    shape[0] = rows;
    tb_tk_strided_copy(j->dst + (size_t)block * j->block_bytes + (size_t)row0 * j->row_bytes, j->src, j->elem,
                       j->ndim - j->outer, shape, j->strides + j->outer, off + row0 * j->strides[j->outer]);
  }
}

void tb_tk_strided_copy_pool(struct tb_pool *pool, unsigned char *dst, const unsigned char *src, size_t elem, size_t ndim,
                             const int64_t *shape, const int64_t *strides, int64_t src_offset) {
  int64_t numel = 1;
  for (size_t d = 0; d < ndim; d++) numel *= shape[d];
  int64_t want = (int64_t)tb_pool_threads(pool) * TASKS_PER_THREAD;
  if (want < 2 * TASKS_PER_THREAD || ndim < 2 || numel <= 0 || (uint64_t)numel * elem < COPY_PARALLEL_MIN_BYTES) {
    tb_tk_strided_copy(dst, src, elem, ndim, shape, strides, src_offset);
    return;
  }
  copy_job j = {.dst = dst, .src = src, .elem = elem, .ndim = ndim, .shape = shape, .strides = strides,
                .src_offset = src_offset};
  int64_t blocks = 1;
  while (j.outer < ndim - 2 && blocks < want) blocks *= shape[j.outer++];
  int64_t rows = shape[j.outer], most = rows / MIN_ROWS > 1 ? rows / MIN_ROWS : 1;
  j.parts = blocks >= want ? 1 : (want + blocks - 1) / blocks;
  if (j.parts > most) j.parts = most;
  j.rows_per_part = (rows + j.parts - 1) / j.parts;
  j.row_bytes = (size_t)(numel / blocks / rows) * elem;
  j.block_bytes = j.row_bytes * (size_t)rows;
  tb_pool_parallel_for(pool, (size_t)(blocks * j.parts), copy_tasks, &j);
}
