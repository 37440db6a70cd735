/* Internal: Einsum's equation, parsed for the ranks of its inputs — shared by its infer function and its
 * kernel. Labels are letters (ids 0-51) and the axes an ellipsis stands for (ids 52 and up, right-aligned
 * across the inputs like numpy broadcasting). */
#ifndef TB_OPS_NN_EINSUM_PARSE_H
#define TB_OPS_NN_EINSUM_PARSE_H
#include "ir/ir.h"

#define NN_EINSUM_MAX_INPUTS 16
#define NN_EINSUM_LETTERS 52
#define NN_EINSUM_LABELS (NN_EINSUM_LETTERS + TB_MAX_DIMS)

typedef struct nn_einsum {
  size_t n_inputs;
  size_t rank[NN_EINSUM_MAX_INPUTS];
  int label[NN_EINSUM_MAX_INPUTS][TB_MAX_DIMS]; /* the label of each axis of each input */
  size_t out_rank;
  int out_label[TB_MAX_DIMS];
  size_t ell_rank;                              /* axes the ellipsis stands for (the most of any input) */
  bool used[NN_EINSUM_LABELS];
} nn_einsum;

/* Parse `equation` for inputs of these ranks: implicit output (no "->": the ellipsis axes, then the
 * letters used once, in ASCII order) or explicit. TB_ERR_MODEL naming the equation and the problem (not
 * the node: callers name it) for a malformed equation, a term whose letter count does not match its input's rank, or an output letter
 * not used by any input or listed twice. */
tb_status tb_nn_einsum_parse(const char *equation, size_t n_inputs, const size_t *ranks, nn_einsum *out);
/* The size of every label from the input dims (dims[i] has rank[i] entries; -1 unknown): equal for a
 * letter, numpy-broadcast for an ellipsis axis (size 1 stretches). sizes[l] -1 when unknown. Conflicts
 * are TB_ERR_MODEL naming the label and both sizes. */
tb_status tb_nn_einsum_sizes(const nn_einsum *e, const int64_t *const *dims, int64_t *sizes);

#endif
