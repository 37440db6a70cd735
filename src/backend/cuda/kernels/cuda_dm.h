/* Internal: the host side of the tb_cu_dm_* kernels (kernels/70_data.cu): their descriptor (the C mirror of
 * tb_dm), one launch call for all of them, and what the data, index, logic and norm families share beside
 * backend/kernel_shape.h (outputs sized by the op's inference, strides): device-to-device copies, the kernel
 * name for an element size, and indices read back to be checked as the CPU kernels check them. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_DM_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_DM_H
#include <stddef.h>
#include <stdint.h>
#include "backend/cuda/kernels/cuda_launch.h"
#include "backend/kernel_shape.h"
#include "ops/op.h"

/* The kernels' tb_dm, byte for byte (432 bytes, checked by _Static_assert in cuda_dm.c). */
typedef struct tb_cuda_dm {
  int32_t rank, mode;
  int64_t dims[TB_MAX_DIMS];
  int64_t st[4][TB_MAX_DIMS]; /* per operand a, b, c, y */
  int64_t off[4];
  int64_t bytes[4];           /* filled by tb_cuda_dm_go from the tensors */
  int64_t p[4];
  uint64_t value;
} tb_cuda_dm;

/* How a tb_cu_dm_ kernel is spread: over n elements, over n 32 x 32 tiles (the transpose: 256 threads per
 * tile), one block per row (p[0] rows of p[1] columns: LayerNorm), a warp per item (n x 32 threads) or a
 * 256-thread block per item (Einsum's sums). */
typedef enum tb_cuda_dm_grid {
  TB_CUDA_DM_ELEMENTS,
  TB_CUDA_DM_TILES,
  TB_CUDA_DM_ROWS,
  TB_CUDA_DM_WARPS,
  TB_CUDA_DM_BLOCKS
} tb_cuda_dm_grid;

/* Launch kernel (a static string) with operands a, b, c (NULL: none) and y over n. */
tb_status tb_cuda_dm_go(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *a, const tb_tensor *b, const tb_tensor *c,
                        tb_tensor *y, int64_t n, tb_cuda_dm *d, tb_cuda_dm_grid grid);
/* names[0..3]: a kernel's _b1, _b2, _b4, _b8 forms; the one for dtype's size, or NULL for another size. */
const char *tb_cuda_dm_sized(const char *const names[4], tb_dtype dtype);
/* Whether a tb_cu_dm_ kernel moves this dtype (1, 2, 4 or 8 bytes). */
bool tb_cuda_dm_movable(tb_dtype dtype);
/* For the kernels' accepts(): a type known to be int32 or int64 (indices), or of a dtype the kernels move. */
static inline bool tb_cuda_dm_index_type(const tb_value_type *t) {
  return t && t->has_dtype && (t->dtype == TB_DTYPE_I64 || t->dtype == TB_DTYPE_I32);
}
static inline bool tb_cuda_dm_data_type(const tb_value_type *t) { return t && t->has_dtype && tb_cuda_dm_movable(t->dtype); }

/* dst[dst_off + idx . dst_st] = src[src_off + idx . src_st] for every idx of shape (ndim <= 8), with
 * tb_cu_dm_copy_* (strides may be 0 or negative). */
tb_status tb_cuda_dm_strided_copy(tb_kernel_ctx *ctx, const tb_tensor *src, int64_t src_off, const int64_t *src_st, tb_tensor *dst,
                                  int64_t dst_off, const int64_t *dst_st, size_t ndim, const int64_t *shape);
/* y = x byte for byte (same byte count, any shapes) with the device's copy; nothing when they alias. */
tb_status tb_cuda_copy_bytes(tb_kernel_ctx *ctx, tb_tensor *y, const tb_tensor *x);
/* The int32 / int64 indices tensor read back to the host, each checked against dim (in [-dim, dim)),
 * else TB_ERR_INVALID_ARGUMENT naming the index, its position, the axis and the dim in the CPU kernels' sentence. */
tb_status tb_cuda_check_indices(tb_kernel_ctx *ctx, const tb_tensor *idx, int64_t dim, size_t axis);
/* Indices checked by the device (cuda_index_flag.c): *flag, the node's int32 on the device (made and zeroed by
 * tb_cuda_index_prepare, the node's prepare), for the kernel to set on an index outside [-dim, dim); the run's next
 * host synchronisation reads it and names the first bad index of the node's last call. The _nd form: rows of k
 * indices, column j against dims[j] (named as axis first_axis + j). */
tb_status tb_cuda_index_flag(tb_kernel_ctx *ctx, tb_tensor *idx, int64_t dim, size_t axis, tb_tensor **flag);
tb_status tb_cuda_index_flag_nd(tb_kernel_ctx *ctx, tb_tensor *idx, size_t k, const int64_t *dims, size_t first_axis, tb_tensor **flag);
/* The prepare and release of a node whose kernel calls tb_cuda_index_flag: the shared state, and the node's flag. */
typedef struct tb_cuda_flag tb_cuda_flag;
/* A node's flag for a state other than tb_cuda_index_prepare's (made and zeroed on the model's stream), its release. */
tb_status tb_cuda_flag_make(tb_kernel_ctx *ctx, tb_cuda_flag **out);
void tb_cuda_flag_release(tb_cuda_flag *f);
/* A recurrent node's sequence_lens (int32 or int64) checked by the device against 0..seq into f's flag; the check names
 * the first bad length in the CPU reference's sentence (TB_ERR_MODEL). */
tb_status tb_cuda_lens_flag(tb_kernel_ctx *ctx, tb_cuda_flag *f, tb_tensor *lens, int64_t seq, tb_tensor **flag);
tb_status tb_cuda_index_prepare(tb_kernel_ctx *ctx, void **state);
void tb_cuda_index_release(void *state);
/* A tb_kernel entry of an ONNX op whose kernel checks its indices on the device. */
#define TB_CUDA_INDEX_KERNEL(name, accepts, run) \
  {"", name, TB_KERNEL_REFERENCE, 0, accepts, run, tb_cuda_index_prepare, tb_cuda_index_release, NULL}
/* Per-position dims for ScatterND's and GatherND's k indexed data dims: index column j checked against dims[j],
 * named as axis first_axis + j. */
tb_status tb_cuda_check_nd_indices(tb_kernel_ctx *ctx, const tb_tensor *idx, size_t k, const int64_t *dims, size_t first_axis);
/* An axis made non-negative for rank, or TB_ERR_MODEL naming it. */
tb_status tb_cuda_axis(tb_kernel_ctx *ctx, int64_t axis, size_t rank, size_t *out);

#endif
