/* Internal: the CPU backend's kernels. A kernel computes one node on host memory. The executor gives it
 * the node, its inputs as CPU tensors (tb_tensor_host_data readable), and its outputs already allocated
 * with the shapes inference found — or NULL where inference could not know the shape, in which case the
 * kernel calls tb_kernel_output to make it.
 *
 * The reference kernels (O0) are plain C, written for clarity and exactness; faster variants for O2/O3
 * register under the same op with a level and the CPU features they need, and the executor picks the best
 * one the CPU has (issue 5). Kernels never abort: bad data is a status with a message naming the node. */
#ifndef TB_CPU_KERNEL_H
#define TB_CPU_KERNEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensor.h>
#include "ir/ir.h"

typedef struct tb_kernel_ctx tb_kernel_ctx;

/* Run a subgraph (If branch, Loop/Scan body): inputs bind to the subgraph's inputs in order, outer-scope
 * values resolve through the calling context; outputs receive new tensors the caller destroys. */
typedef tb_status (*tb_subgraph_fn)(tb_kernel_ctx *ctx, const tb_graph *body, size_t n_inputs, tb_tensor *const *inputs,
                                    size_t n_outputs, tb_tensor **outputs);

struct tb_kernel_ctx {
  const tb_graph *graph;
  const tb_node *node;
  size_t n_inputs;
  tb_tensor *const *inputs;   /* NULL for omitted optional inputs */
  size_t n_outputs;
  tb_tensor **outputs;        /* preallocated, or NULL where the kernel must allocate (tb_kernel_output) */
  tb_backend *backend;        /* the CPU backend outputs are allocated on */
  tb_subgraph_fn run_subgraph;
  void *exec;                 /* the executor's state, for run_subgraph */
  int threads;
  struct tb_pool *pool;        /* the executor's thread pool (core/threadpool.h); NULL: run serially */
  void *state;                 /* what the kernel's prepare() made for this node; NULL without one */
};

/* Allocate (or check) output i with this dtype and shape; returns it. A preallocated output with another
 * shape is TB_ERR_INTERNAL. */
tb_status tb_kernel_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape,
                           tb_tensor **out);
/* For a kernel's prepare(): input `input` of ctx->node is a constant whose bytes run() will no longer read
 * (they were packed into the state), so the executor may let the original go (src/model/weights.h). Only a
 * hint: nothing happens outside prepare() or for a non-constant. */
void tb_kernel_constant_consumed(tb_kernel_ctx *ctx, size_t input);
/* For a kernel's prepare(): the method the node's state runs (a string with static storage: a
 * convolution's "winograd", "direct" or "implicit GEMM"), shown by the profiler after the kernel. Only
 * inside the executor's prepare(); nothing happens elsewhere. */
void tb_kernel_set_method(tb_kernel_ctx *ctx, const char *method);
/* Advance a multi-index over shape (row-major); false after the last one. */
bool tb_kernel_next_index(size_t ndim, const int64_t *shape, int64_t *idx);
/* "node 'x' (Op): ..." as an error with this status. */
tb_status tb_kernel_error(const tb_kernel_ctx *ctx, tb_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A kernel for one op. The device backends (OpenCL, Vulkan: src/backend/<name>/kernels/) describe their
 * kernels with the same struct, with level and cpu_features 0; their run() gets tensors on ctx->backend
 * (the device), except the inputs the op reads as values (bits of n->def->value_inputs, e.g. Reshape's
 * shape), which are CPU tensors; ctx->pool is NULL. A device kernel only enqueues work on the device's
 * in-order queue: the backend's read/write/copy ops see its results. */
typedef struct tb_cpu_kernel {
  const char *domain;       /* "" for ONNX */
  const char *name;         /* op_type */
  int level;                /* 0: reference (O0 and the fallback); 2: fast (O2 and up); 3: reduced precision */
  uint64_t cpu_features;    /* TB_FEATURE_BIT set the kernel needs (0 for portable C) */
  /* Optional: false when this kernel cannot take these input types/attributes (the next one is tried).
   * Types come from inference: a dtype is always known, a shape may not be (then accept or refuse on the
   * dtype and attributes; run() must still check the shapes it gets). */
  bool (*accepts)(const tb_graph *g, const tb_node *n, const tb_value_type *const *in);
  tb_status (*run)(tb_kernel_ctx *ctx);
  /* Optional, with release: build per-node state once, e.g. weights packed for the micro-kernel or a
   * device pipeline. The executor calls it when it chooses this kernel for a node: at tb_model_prepare
   * when the node's input types are known then, with ctx->inputs holding only the node's constant inputs
   * (NULL for the others; their types are in the graph), else before the node's first run with every
   * input. The state may depend only on attributes, constant inputs and input types; run() gets it in
   * ctx->state. ctx->outputs is NULL during prepare. A failure is a status with a message naming the node. */
  tb_status (*prepare)(tb_kernel_ctx *ctx, void **state);
  void (*release)(void *state);
  /* NULL: computes in the dtype of its inputs. Else the reduced precision it computes in ("bf16"), which
   * tb_prepare_result lists per node. */
  const char *precision;
} tb_cpu_kernel;

/* The best kernel for the node at `level` on a CPU with `features`: highest level <= level whose
 * features are present and that accepts the node; NULL when none. */
const tb_cpu_kernel *tb_cpu_kernel_find(const tb_graph *g, const tb_node *n, const tb_value_type *const *in, int level,
                                        uint64_t features);

/* Families register kernels in arrays (src/backend/cpu/kernels/<family>/registry.c), concatenated by
 * src/backend/cpu/kernels/registry.c. */
typedef struct tb_kernel_family {
  const tb_cpu_kernel *const *kernels;
  size_t count;
} tb_kernel_family;
extern const tb_kernel_family tb_kernels_elementwise;
extern const tb_kernel_family tb_kernels_tensor;
extern const tb_kernel_family tb_kernels_nn;
extern const tb_kernel_family tb_kernels_rnn_control;
extern const tb_kernel_family tb_kernels_fused;
extern const tb_kernel_family tb_kernels_fast; /* level-2 fp32 MatMul/Gemm (issue 5) */

#endif
