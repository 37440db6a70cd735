/* Internal: the one strided, broadcasting element walk every elementwise CPU kernel uses.
 *
 * Operand 0 is the output; its shape is the iteration space. Each other operand is broadcast to it with
 * numpy's rules (shapes right-aligned; a dim of 1, or a missing leading dim, repeats). Operands may be
 * strided views (strides in elements, >= 0). The walk merges dims it can, then calls `loop` once per
 * innermost row with each operand's address and byte step, so a loop body is a plain 1-D for loop. */
#ifndef TB_CPU_KERNELS_ELEMENTWISE_BROADCAST_H
#define TB_CPU_KERNELS_ELEMENTWISE_BROADCAST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensor.h>

enum { TB_BCAST_MAX_OPERANDS = 4 }; /* the output and up to three inputs (Where, Clip) */

typedef struct tb_bcast_operand {
  char *data;             /* element 0 */
  size_t elem_size;
  size_t ndim;
  const int64_t *shape;
  const int64_t *strides; /* elements; NULL for packed row-major */
} tb_bcast_operand;

/* One row: p[k] is operand k's first element, step[k] its byte step, n the row length. */
typedef void (*tb_bcast_loop)(char *const *p, const int64_t *step, int64_t n, const void *params);

/* The numpy broadcast of n shapes into out_shape (TB_MAX_DIMS entries); false when they do not
 * broadcast (two dims differ and neither is 1) or a rank exceeds TB_MAX_DIMS. */
bool tb_bcast_shape(size_t n, const size_t *ndims, const int64_t *const *shapes, size_t *out_ndim, int64_t *out_shape);

/* Walk every element of ops[0]; false (nothing done) when an input does not broadcast to ops[0]'s shape
 * or n_ops is out of range. An empty output does nothing and returns true. */
bool tb_bcast_walk(const tb_bcast_operand *ops, size_t n_ops, tb_bcast_loop loop, const void *params);

#endif
