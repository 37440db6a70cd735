/* Internal: the host side of the tb_cu_ew_* kernels (kernels/12_math.cu, 31_index_reduce.cu): the C mirror of
 * their descriptor tb_ew, the operation numbers and switches, and one launch call for all of them. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_EW_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_EW_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/cuda/cuda_broadcast.h"
#include "backend/cuda/kernels/cuda_launch.h"

/* The kernels' tb_ew, byte for byte (296 bytes, checked by _Static_assert in cuda_ew.c). */
typedef struct tb_cuda_ew {
  int64_t bytes[4]; /* behind a, b, y and z: filled by tb_cuda_ew_go from the tensors */
  int64_t outer, len, inner, k;
  int32_t op, flags;
  double alpha, beta, gamma;
  tb_cuda_broadcast bc;
} tb_cuda_ew;

/* 12_math.cu's TB_EW_* operations and switches. */
enum {
  TB_CUDA_EW_ACOS, TB_CUDA_EW_ACOSH, TB_CUDA_EW_ASIN, TB_CUDA_EW_ASINH, TB_CUDA_EW_ATAN, TB_CUDA_EW_ATANH, TB_CUDA_EW_COS,
  TB_CUDA_EW_COSH, TB_CUDA_EW_SIN, TB_CUDA_EW_SINH, TB_CUDA_EW_TAN, TB_CUDA_EW_ROUND, TB_CUDA_EW_SIGN, TB_CUDA_EW_SOFTSIGN,
  TB_CUDA_EW_SHRINK, TB_CUDA_EW_THRESHOLDED_RELU, TB_CUDA_EW_CELU, TB_CUDA_EW_SELU, TB_CUDA_EW_HARD_SWISH, TB_CUDA_EW_SILU,
  TB_CUDA_EW_MISH, TB_CUDA_EW_ABS, TB_CUDA_EW_NEG, TB_CUDA_EW_ISNAN, TB_CUDA_EW_ISINF,
  /* 10_elementwise.cu's unary ops on float64, float16 and bfloat16 */
  TB_CUDA_EW_RELU, TB_CUDA_EW_LEAKY_RELU, TB_CUDA_EW_ELU, TB_CUDA_EW_SIGMOID, TB_CUDA_EW_HARD_SIGMOID, TB_CUDA_EW_SOFTPLUS,
  TB_CUDA_EW_TANH, TB_CUDA_EW_EXP, TB_CUDA_EW_LOG, TB_CUDA_EW_SQRT, TB_CUDA_EW_RECIPROCAL, TB_CUDA_EW_ERF, TB_CUDA_EW_FLOOR,
  TB_CUDA_EW_CEIL, TB_CUDA_EW_CLIP, TB_CUDA_EW_GELU, TB_CUDA_EW_GELU_TANH,
};
/* 12_math.cu's binary operations (tb_cu_ew_arith_*) and folds (tb_cu_ew_accumulate_*, tb_cu_ew_fold_*). */
enum { TB_CUDA_EW_ADD, TB_CUDA_EW_SUB, TB_CUDA_EW_MUL, TB_CUDA_EW_DIV, TB_CUDA_EW_POW, TB_CUDA_EW_MAX, TB_CUDA_EW_MIN, TB_CUDA_EW_PRELU };
enum { TB_CUDA_EW_F_FMOD = 1, TB_CUDA_EW_F_LEFT = 1, TB_CUDA_EW_F_FIRST = 1, TB_CUDA_EW_F_NEGATIVE = 2, TB_CUDA_EW_F_POSITIVE = 4,
       TB_CUDA_EW_F_SAME = 8, TB_CUDA_EW_F_LAST = 8 };
/* 31_index_reduce.cu's TB_IX_* switches, the longest TopK row sorted in shared memory and the longest float16 CumSum
 * row of the block scan. */
enum { TB_CUDA_IX_F_LAST = 1, TB_CUDA_IX_F_MAX = 2, TB_CUDA_IX_F_HARDMAX = 4, TB_CUDA_IX_F_EXCLUSIVE = 1, TB_CUDA_IX_F_REVERSE = 2,
       TB_CUDA_IX_F_LARGEST = 1, TB_CUDA_IX_SORT_MAX = 2048, TB_CUDA_IX_SCAN_F16_MAX = 8192 };

/* How a tb_cu_ew_ kernel is spread: over n elements, or one block per row (n rows of d->len elements). */
typedef enum tb_cuda_ew_grid { TB_CUDA_EW_ELEMENTS, TB_CUDA_EW_ROWS } tb_cuda_ew_grid;

/* Launch kernel (a static string; NULL: the dtype has no such kernel, TB_ERR_UNSUPPORTED naming the node) with
 * inputs a, b and outputs y, z (NULL: none) over n; nothing when n is 0. */
tb_status tb_cuda_ew_go(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *a, const tb_tensor *b, tb_tensor *y, tb_tensor *z,
                        int64_t n, tb_cuda_ew *d, tb_cuda_ew_grid grid);

/* The kernel of a family for dtype: names[] in the order f32, f64, i8, i16, i32, i64, u8, f16, bf16 (NULL
 * entries: none). */
enum { TB_CUDA_EW_TYPES = 9 };
const char *tb_cuda_ew_typed(const char *const names[TB_CUDA_EW_TYPES], tb_dtype dtype);

/* The unary float kernels (tb_cu_ew_math_*) and the binary ones (tb_cu_ew_arith_*: float64 and the halves; float32
 * is 10_elementwise.cu's), by dtype as above. */
extern const char *const tb_cuda_ew_math_kernels[TB_CUDA_EW_TYPES];
extern const char *const tb_cuda_ew_arith_kernels[TB_CUDA_EW_TYPES];

/* float16 or bfloat16: computed in float32 and rounded once, as the CPU's staging. */
bool tb_cuda_ew_is_half(tb_dtype dt);

#endif
