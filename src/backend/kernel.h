/* Internal: the kernel contract every backend shares (CPU, OpenCL, Vulkan, and the next ones). A kernel
 * computes one node: it gets the node's typed parameters (what ops/ parsed from its attributes once, at
 * prepare: the struct named by the op's definition, e.g. tb_conv_params), its inputs as tensors and its
 * outputs already allocated with the shapes inference found, or NULL where inference could not know the
 * shape, in which case the kernel calls tb_kernel_output to make it.
 *
 * Levels are named (tb_kernel_level): the reference kernels (plain C written for clarity and exactness) run
 * at O0 and O1 and are the fallback; faster fp32 kernels register under the same op at TB_KERNEL_FAST with
 * the CPU features they need; reduced-precision ones at TB_KERNEL_REDUCED. The CPU backend's find_kernel
 * picks the best one the CPU has (backend/cpu/kernels/kernel.h); a device backend's finds its own (its
 * kernels are fp32 and register at TB_KERNEL_REFERENCE: they run at every level). model/ reaches kernels
 * only through tb_backend_ops.find_kernel. Kernels never abort: bad data is a status with a message
 * naming the node. */
#ifndef TB_BACKEND_KERNEL_H
#define TB_BACKEND_KERNEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensor.h>
#include "ir/ir.h"

/* Which kernels a prepared model may run; a kernel is eligible at every level from its own up. */
typedef enum tb_kernel_level {
  TB_KERNEL_REFERENCE = 0, /* exact, portable: O0 and O1, and the fallback at every level */
  TB_KERNEL_FAST = 2,      /* fp32, the CPU's vector units and threads: O2 and up */
  TB_KERNEL_REDUCED = 3,   /* reduced precision (bf16) with fp32 accumulation: O3, or O2 asked for bf16 */
} tb_kernel_level;

/* The precision a device backend's kernels may compute in: the prepare options resolved whatever the CPU has
 * (model/levels.h, tb_opt_device_precision). FP32 up to O2 with precision auto, or fp32 asked; BF16 at O3 with
 * auto, or bf16 asked at O2 and O3; FP16, FP8 and TF32 only when asked (at O2 and O3). A kernel without a
 * reduced-precision form ignores it and computes in its inputs' dtype; one with such forms registers an entry per
 * precision (accepts() reading the query's device_precision, its own prepare, tb_kernel.precision naming it). */
typedef enum tb_device_precision {
  TB_DEVICE_FP32 = 0,
  TB_DEVICE_TF32, /* fp32 data, products on TF32 tensor cores (10-bit mantissa inputs, fp32 accumulation) */
  TB_DEVICE_BF16, /* products with bf16 inputs, fp32 accumulation and fp32 outputs */
  TB_DEVICE_FP16, /* the same with fp16 inputs */
  TB_DEVICE_FP8,  /* products with fp8 e4m3 inputs and per-tensor scales, fp32 accumulation and outputs */
} tb_device_precision;

/* What a backend's find_kernel is asked: one node's operator, typed parameters and input types. */
typedef struct tb_kernel_query {
  const char *domain;       /* "" for ONNX */
  const char *op_type;
  int opset;                /* the model's opset for that domain */
  const void *params;       /* the node's parsed parameters (tb_op_def.parse); NULL for an op without */
  size_t n_inputs;
  const tb_value_type *const *in; /* from inference: a dtype is always known, a shape may not be; NULL
                                     for an omitted optional input */
  size_t n_outputs;
  tb_kernel_level level;
  uint64_t cpu_features;    /* TB_FEATURE_BIT set of the CPU the kernel would run on */
  const char *name;         /* the node's name, for messages ("" when the model gives none) */
  tb_device_precision device_precision; /* what a device kernel may compute in (FP32 unless the options ask) */
} tb_kernel_query;

typedef struct tb_kernel_ctx tb_kernel_ctx;

/* Run a subgraph (If branch, Loop/Scan body): inputs bind to the subgraph's inputs in order, outer-scope
 * values resolve through the calling context; outputs receive new tensors the caller destroys. */
typedef tb_status (*tb_subgraph_fn)(tb_kernel_ctx *ctx, const tb_graph *body, size_t n_inputs, tb_tensor *const *inputs,
                                    size_t n_outputs, tb_tensor **outputs);

struct tb_kernel_ctx {
  /* The executor's own (tb_kernel_error's label, tb_kernel_set_method, tb_kernel_constant_consumed): a
   * kernel reads params, op_type, opset, name and the bit sets below, never these; the include_layers
   * test fails on a backend file that does. */
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
  const void *params;          /* the node's typed parameters (tb_op_def.parse); NULL for an op without */
  const char *domain;          /* "" for ONNX */
  const char *op_type;
  int opset;                   /* the model's opset for the node's domain */
  const tb_value_type *const *in_types; /* n_inputs types from inference (NULL entries: omitted inputs) */
  int conv_algo;               /* a tb_conv_algo (tensorbridge/model.h) the prepare options resolved: the methods the
                                * CPU's fast convolutions may use; 0 (TB_CONV_ALGO_DEFAULT) counts as auto */
  uint64_t omitted_outputs;    /* bit i: output i is omitted ("" in the node's list), so the kernel need not
                                  make it (0: every output wanted; bits from 64 on are not tracked) */
  uint64_t constant_inputs;    /* bit i: input i is a model constant (an initializer or a folded value, not a
                                  graph input), so prepare() may pack it once (bits from 64 on: not constant) */
  const char *name;            /* the node's name, for messages ("" when the model gives none) */
};

/* Whether input i is a model constant (tb_kernel_ctx.constant_inputs) and present. */
static inline bool tb_kernel_input_constant(const tb_kernel_ctx *ctx, size_t i) {
  return i < ctx->n_inputs && i < 64 && ctx->inputs && ctx->inputs[i] && ((ctx->constant_inputs >> i) & 1u);
}
/* The constant_inputs bits of node n of graph g. */
uint64_t tb_kernel_constant_inputs(const tb_graph *g, const tb_node *n);
/* "node 'name' (Op)", or "node (Op)" for a node without a name, in buf; returns buf. */
const char *tb_kernel_label(const char *name, const char *op_type, char *buf, size_t cap);

/* Whether the node wants output i (tb_kernel_ctx.omitted_outputs). */
static inline bool tb_kernel_has_output(const tb_kernel_ctx *ctx, size_t i) {
  return i < ctx->n_outputs && (i >= 64 || !((ctx->omitted_outputs >> i) & 1u));
}
/* The omitted_outputs bits of node n. */
uint64_t tb_kernel_omitted_outputs(const tb_node *n);

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
/* For a device kernel's prepare(): the precision this node computes in when it is not its entry's tb_kernel.precision
 * (static storage: "bf16"; NULL: fp32), and why, a sentence starting with it ("bf16: precision fp8 needs compute
 * capability 8.9 or newer; cuda:0 is 8.0"; copied); the prepare result's node_precisions and precision_choices
 * show them. Only inside the executor's prepare(); nothing happens elsewhere. */
void tb_kernel_set_precision(tb_kernel_ctx *ctx, const char *precision, const char *why);
/* For a device kernel's prepare(): the node converts input `input` (fp32, not a constant) to `dtype` (bf16 or fp16)
 * before every run, so a producer that can write that copy in its own epilogue may take the conversion over
 * (tb_kernel_reduced_inputs at run). Only inside the executor's prepare(); nothing happens elsewhere. */
void tb_kernel_reads_reduced(tb_kernel_ctx *ctx, size_t input, tb_dtype dtype);
/* For a device kernel's prepare(): the node's kernel can write output `output` (fp32) in bf16 or fp16 too, in the
 * same launch (tb_kernel_reduced_outputs at run). Only inside the executor's prepare(). */
void tb_kernel_writes_reduced(tb_kernel_ctx *ctx, size_t output);
/* What the executor decided at prepare for the node a context runs (0 outside the executor, or nothing fused): bit i
 * of the inputs: input i's producer also writes it in the dtype this node said it converts it to (the backend hands
 * that copy over); bit i of the outputs: write output i in *dtype (bf16 or fp16) too, beside the fp32 output. */
uint64_t tb_kernel_reduced_inputs(const tb_kernel_ctx *ctx);
uint64_t tb_kernel_reduced_outputs(const tb_kernel_ctx *ctx, tb_dtype *dtype);
/* Who may hand a copy over, for the backend's table: for a producer (input SIZE_MAX) its own identity, for a consumer
 * that of input `input`'s paired producer (bit `input` of tb_kernel_reduced_inputs), and in *run the number of the
 * executor's current run (unique in the process). A consumer may use a copy only when its publisher and run are
 * these (else it converts for itself). False outside the executor's run or when nothing is paired. A node reads at
 * most one reduced dtype (the first tb_kernel_reads_reduced said). */
bool tb_kernel_reduced_source(const tb_kernel_ctx *ctx, size_t input, const void **publisher, uint64_t *run);
/* Advance a multi-index over shape (row-major); false after the last one. */
bool tb_kernel_next_index(size_t ndim, const int64_t *shape, int64_t *idx);
/* "node 'x' (Op): ..." as an error with this status. */
tb_status tb_kernel_error(const tb_kernel_ctx *ctx, tb_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A kernel for one op. A device kernel's run() gets tensors on ctx->backend (the device), except the
 * inputs the op reads as values (bits of its definition's value_inputs, e.g. Reshape's shape), which are
 * CPU tensors; ctx->pool is NULL; it only enqueues work on the device's in-order queue: the backend's
 * read/write/copy ops see its results. */
typedef struct tb_kernel {
  const char *domain;       /* "" for ONNX */
  const char *name;         /* op_type */
  tb_kernel_level level;
  uint64_t cpu_features;    /* TB_FEATURE_BIT set the kernel needs (0 for portable C and device kernels) */
  /* Optional: false when this kernel cannot take this query's input types/parameters (the next one is
   * tried). A shape may be unknown: then accept or refuse on the dtype and parameters; run() must still
   * check the shapes it gets. */
  bool (*accepts)(const tb_kernel_query *q);
  tb_status (*run)(tb_kernel_ctx *ctx);
  /* Optional, with release: build per-node state once, e.g. weights packed for the micro-kernel or a
   * device pipeline. The executor calls it when it chooses this kernel for a node: at tb_model_prepare
   * when the node's input types are known then, with ctx->inputs holding only the node's constant inputs
   * (NULL for the others; their types are in ctx->in_types), else before the node's first run with every
   * input. The state may depend only on parameters, constant inputs and input types; run() gets it in
   * ctx->state. ctx->outputs is NULL during prepare. A failure is a status with a message naming the node. */
  tb_status (*prepare)(tb_kernel_ctx *ctx, void **state);
  void (*release)(void *state);
  /* NULL: computes in the dtype of its inputs. Else the reduced precision it computes in ("bf16"), which
   * tb_prepare_result lists per node. */
  const char *precision;
} tb_kernel;

/* The query for node n with these input types (params from n), at `level` on a CPU with
 * `cpu_features`. */
tb_kernel_query tb_kernel_query_for(const tb_node *n, const tb_value_type *const *in,
                                    tb_kernel_level level, uint64_t cpu_features);
/* The query for the node a kernel runs (for a kernel that hands the node to another one, e.g. a fast
 * kernel falling back to the reference): ctx's op and parameters with these input types. */
tb_kernel_query tb_kernel_ctx_query(const tb_kernel_ctx *ctx, const tb_value_type *const *in, tb_kernel_level level,
                                    uint64_t cpu_features);
/* Whether k may answer q: same op, level at most q's, features present, accepts() (when set) says yes. */
bool tb_kernel_matches(const tb_kernel *k, const tb_kernel_query *q);
/* The contract's name for a level ("reference", "fast", "reduced"). */
const char *tb_kernel_level_name(tb_kernel_level level);

#endif
