/* Internal: what an ONNX operator means, independent of any backend — its inputs and outputs, its
 * attributes and their checks, and how the types and shapes of its outputs follow from its inputs. One
 * definition per operator, in src/ops/<family>/<op>.c; kernels live in the backends.
 *
 * Inference runs twice: at prepare time, where some input dims or values may be unknown (then the
 * outputs' unknown parts stay unknown: dims -1, has_shape false), and at run time before each node, with
 * every input's concrete shape and, for inputs a shape depends on (Reshape's shape, Slice's starts...), its
 * value. An op whose output shape depends on data the inference cannot see leaves it unknown and its kernel
 * allocates the output (tb_kernel_output). */
#ifndef TB_OPS_OP_H
#define TB_OPS_OP_H
#include <stdbool.h>
#include <stddef.h>
#include "ir/ir.h"

typedef struct tb_infer_ctx {
  const tb_graph *graph;
  const tb_node *node;
  size_t n_inputs;
  const tb_value_type *const *in;   /* n_inputs entries; NULL for an omitted optional input */
  const tb_ir_tensor *const *value; /* the input's value when known (constant, or at run time when the op
                                       declared it needs it: see tb_op_def.value_inputs); else NULL */
  size_t n_outputs;
  tb_value_type *out;               /* n_outputs entries to fill (an omitted output's entry may be ignored) */
} tb_infer_ctx;

typedef struct tb_op_def {
  const char *domain;        /* "" for ONNX, "tb" for TensorBridge's fused ops made by passes */
  const char *name;          /* "Conv" */
  int since_version;         /* the oldest opset version this definition implements (e.g. 1 or 7) */
  int min_inputs, max_inputs;   /* max -1: variadic */
  int min_outputs, max_outputs;
  uint32_t value_inputs;     /* bit i: the output shape depends on input i's value (Reshape: bit 1) */
  /* Check attributes and input types; fill ctx->out. Errors name the node (tb_node_label) and are
   * TB_ERR_MODEL for a malformed model, TB_ERR_UNSUPPORTED for a valid feature we lack, with the reason. */
  tb_status (*infer)(tb_infer_ctx *ctx);
  /* Typed parameters (issue 14): the size of the op's params struct (0: its kernels read no attribute),
   * and parse, which fills a zeroed block of that size from the node's attributes with the same checks
   * and errors as infer (infer calls it too: one reading of the rules). Called once per node at prepare,
   * after the passes, for every graph and subgraph (model/params.c), and by constant folding. The struct
   * is flat (fixed arrays, enums); it may borrow pointers into the graph (a subgraph, a string), which
   * live as long as the graph. Kernels get it as ctx->params / q->params (backend/kernel.h). */
  size_t params_size;
  tb_status (*parse)(const tb_graph *g, const tb_node *n, void *params);
} tb_op_def;

/* The definition of (domain, name) for a model whose opset for that domain is `opset`: the entry with the
 * highest since_version <= opset. NULL when unknown. */
const tb_op_def *tb_op_find(const char *domain, const char *name, int opset);

/* Whether node n reads input k as a value (its bit of value_inputs): such inputs stay on the CPU when the
 * node runs on a device. */
static inline bool tb_node_reads_value(const tb_node *n, size_t k) {
  return n->def && k < 32 && (n->def->value_inputs >> k & 1u);
}

/* Every definition, for listing supported operators (tb ops, docs). */
size_t tb_op_count(void);
const tb_op_def *tb_op_at(size_t i);

/* Families register their definitions in arrays, each in its own file (src/ops/<family>/registry.c):
 * the table in src/ops/registry.c concatenates them. */
typedef struct tb_op_family {
  const tb_op_def *const *defs;
  size_t count;
} tb_op_family;
extern const tb_op_family tb_ops_elementwise; /* src/ops/elementwise/ */
extern const tb_op_family tb_ops_tensor;      /* src/ops/tensor/: shape and data movement */
extern const tb_op_family tb_ops_nn;          /* src/ops/nn/: conv, pool, norm, matmul, reduce, quant */
extern const tb_op_family tb_ops_rnn_control; /* src/ops/rnn/ and src/ops/control/: LSTM, GRU, If, Loop, Scan */
extern const tb_op_family tb_ops_fused;       /* src/ops/fused/: ops made by O1 passes (domain "tb") */

/* ---- Helpers for infer functions (op_util.c) ---------------------------------------------------- */

/* Numpy-style broadcast of a and b into out (unknown dims stay unknown when they cannot be decided);
 * TB_ERR_MODEL naming the node when the shapes cannot broadcast. */
tb_status tb_infer_broadcast(const tb_infer_ctx *ctx, const tb_value_type *a, const tb_value_type *b, tb_value_type *out);
/* out = in (dtype and shape). */
void tb_infer_same(const tb_value_type *in, tb_value_type *out);
/* An input that must be present and have a known dtype in `allowed` (a TB_DTYPE_BIT set; 0 = any). */
tb_status tb_infer_require(const tb_infer_ctx *ctx, size_t input, tb_dtype_set allowed);
/* The error for `fmt` about this node: "node 'x' (Op): <fmt...>" as TB_ERR_MODEL. */
tb_status tb_infer_error(const tb_infer_ctx *ctx, tb_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Normalise an axis in [-rank, rank) to [0, rank); TB_ERR_MODEL naming the attribute otherwise. */
tb_status tb_infer_axis(const tb_infer_ctx *ctx, const char *what, int64_t axis, size_t rank, size_t *out);

#endif
