/* Models: load an ONNX model, prepare it for a backend at an optimization level, run it.
 *
 *   tb_model_load      the file is read once and checked field by field; weights stay in the mapped file
 *   tb_model_prepare   the level's passes, shapes bound, each node placed on the backend or on the CPU
 *                      where the backend lacks the op (copies inserted), a memory plan; the result says
 *                      what was done (the seeds' OptimizationResult)
 *   tb_prepared_run    inputs in, outputs out, as tensors; memory reused across runs
 *
 * A prepared model keeps a reference to its model and backend; both may be destroyed by the caller
 * before it. A prepared model is used by one thread at a time. */
#ifndef TENSORBRIDGE_MODEL_H
#define TENSORBRIDGE_MODEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend.h"
#include "dtype.h"
#include "export.h"
#include "policy.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_model tb_model;
typedef struct tb_prepared tb_prepared;

/* ---- Loading ------------------------------------------------------------------------------------ */

/* Load an ONNX file. External data files are resolved relative to the model's folder and may not leave
 * it. A malformed, truncated or hostile file is TB_ERR_MODEL with the field or node and the reason. */
TB_API tb_status tb_model_load(const char *path, tb_model **out_model);
/* Load from memory (copied when needed; external data relative to base_dir, NULL to refuse it). */
TB_API tb_status tb_model_load_memory(const void *data, size_t size, const char *base_dir, tb_model **out_model);
TB_API void tb_model_destroy(tb_model *model);

/* A graph input or output as the model declares it. dims[i] is -1 when unknown; dim_names[i] is the
 * symbolic name ("batch") or "" (strings owned by the model). */
typedef struct tb_model_io {
  size_t size; /* sizeof(tb_model_io), set by the caller */
  const char *name;
  tb_dtype dtype;
  size_t ndim;
  int64_t dims[TB_MAX_DIMS];
  const char *dim_names[TB_MAX_DIMS];
  bool has_shape; /* false when the model declares no shape at all */
} tb_model_io;

TB_API size_t tb_model_input_count(const tb_model *model);
TB_API size_t tb_model_output_count(const tb_model *model);
TB_API tb_status tb_model_input(const tb_model *model, size_t i, tb_model_io *out);
TB_API tb_status tb_model_output(const tb_model *model, size_t i, tb_model_io *out);
/* Facts about the model: "producer", "producer_version", "ir_version", "opset" (default domain),
 * "nodes", "initializers", "weight_bytes", "graph_name". NULL for an unknown key. Owned by the model. */
TB_API const char *tb_model_property(const tb_model *model, const char *key);
/* SHA-256 of the model file's bytes as 64 hex digits (owned by the model). */
TB_API const char *tb_model_sha256(const tb_model *model);

/* ---- Preparing ---------------------------------------------------------------------------------- */

typedef enum tb_precision {
  TB_PRECISION_AUTO = 0, /* what the level picks: fp32 up to O2, reduced precision at O3 where the device has units */
  TB_PRECISION_FP32,
  TB_PRECISION_BF16,
  TB_PRECISION_FP16,
  TB_PRECISION_FP8,
  /* Added in 0.5: fp32 data whose matrix products may run on TF32 tensor cores (CUDA; 10-bit mantissa inputs, fp32
   * accumulation); the CPU and the other backends compute fp32. Never chosen by auto. */
  TB_PRECISION_TF32
} tb_precision;

/* auto|fp32|bf16|fp16|fp8|tf32 (case-insensitive); another name is TB_ERR_NOT_FOUND with a sentence naming it and
 * listing the valid ones. */
TB_API tb_status tb_precision_parse(const char *name, tb_precision *out);
TB_API const char *tb_precision_name(tb_precision precision);

/* How the CPU's fast convolutions (O2 fp32 on AVX-512, O3 bf16 on AVX512-BF16; other paths have only the
 * implicit GEMM and, in auto, the tap GEMM) compute a node whose weights fit more than one method. Winograd
 * F(2x2, 3x3) takes 3x3 stride-1 convolutions with enough tiles, the tap GEMM (auto only) dilated ones whose
 * taps mostly read padding, the direct convolution most other non-depthwise, non-1x1 ones; the implicit
 * GEMM takes everything. The profiler shows the method each convolution runs. */
typedef enum tb_conv_algo {
  TB_CONV_ALGO_DEFAULT = 0, /* the environment's choice: TB_CONV_WINOGRAD / TB_CONV_DIRECT "off" rule out that
                             * method (README), both unset is auto */
  TB_CONV_ALGO_AUTO,        /* Winograd where it fits, else a GEMM per kernel tap for dilated convolutions whose
                             * taps mostly read padding, else the direct convolution where it fits, else the
                             * implicit GEMM */
  TB_CONV_ALGO_WINOGRAD,    /* Winograd where it fits, else the implicit GEMM */
  TB_CONV_ALGO_DIRECT,      /* the direct convolution where it fits, else the implicit GEMM */
  TB_CONV_ALGO_GEMM         /* the implicit GEMM only */
} tb_conv_algo;

TB_API tb_status tb_conv_algo_parse(const char *name, tb_conv_algo *out); /* default|auto|winograd|direct|gemm */
TB_API const char *tb_conv_algo_name(tb_conv_algo algo);

/* Inter-op parallelism (tb_prepare_options.inter_op): independent branches of a CPU graph (lanes of nodes that
 * read nothing another lane writes) running at the same time, each lane on one of the threads, where their nodes
 * are too small for the kernels to use the threads themselves (docs/engine.md, "Inter-op parallelism"). Results
 * are the same, bit for bit, as one node after another. */
typedef enum tb_inter_op {
  TB_INTER_OP_DEFAULT = 0, /* the environment's choice: TB_INTER_OP (auto|on|off; unset is auto) */
  TB_INTER_OP_AUTO,        /* where the cost rule takes the branches (small nodes, two lanes worth a thread) */
  TB_INTER_OP_OFF,         /* never: one node after another, each on all the threads */
  TB_INTER_OP_ON           /* wherever the graph splits into independent lanes, whatever their size */
} tb_inter_op;

TB_API tb_status tb_inter_op_parse(const char *name, tb_inter_op *out); /* default|auto|off|on */

typedef struct tb_prepare_options {
  size_t size;                 /* sizeof(tb_prepare_options) */
  tb_opt_level level;          /* TB_LEVEL_O2 is the default a zeroed struct does NOT give: set it */
  tb_precision precision;
  size_t dim_count;            /* symbolic dimensions bound now ("batch" = 1); others bind at run time */
  const char *const *dim_names;
  const int64_t *dim_values;
  int threads;                 /* 0: the backend's default */
  /* Added in 0.2 (a struct whose size ends before here is still accepted, with the fields below zero).
   * true: a node whose device kernel cannot be built (a compiler error from the driver, out of device
   * memory) goes on to another route to the same hardware, else the CPU, and its reason says why; false
   * (the default): tb_model_prepare fails with that error. Nodes the device has no kernel for always go
   * on to the other routes, then the CPU. */
  bool cpu_fallback;
  /* Added in 0.3 (a struct whose size ends before here gets TB_CONV_ALGO_DEFAULT). */
  tb_conv_algo conv_algo;
  /* Added in 0.4 (a struct whose size ends before here gets false). true: every node must run on the
   * device, or on another route to the same hardware (Vulkan or OpenCL for a GPU whose native backend lacks
   * the kernel; docs/engine.md); if any node would fall back to the CPU, tb_model_prepare fails with
   * TB_ERR_UNSUPPORTED and a sentence naming those nodes, their ops and why. Checked with the types known at
   * prepare. No effect when the backend is the CPU. */
  bool device_only;
  /* Added in 0.5 (a struct whose size ends before here gets TB_INTER_OP_DEFAULT). Whether independent branches of
   * the graph's CPU nodes run at the same time (tb_inter_op). First of the 0.5 fields: a 0.4 struct's size (56 on
   * LP64, its padding included) ends before it, so no byte of a 0.4 caller's padding is read as a new field. */
  tb_inter_op inter_op;
  /* Added in 0.5 (a struct whose size ends before here gets false). true: never capture the run as a device graph
   * (CUDA graphs: docs/cuda.md "Graph replay"); every run launches its kernels one by one. The environment's
   * TB_GRAPH_CAPTURE=off does the same for every model. */
  bool no_graph_capture;
} tb_prepare_options;

/* What preparation did. Owned by the prepared model. */
typedef struct tb_prepare_result {
  size_t size;
  bool success;
  tb_opt_level level;
  tb_precision precision;
  size_t pass_count;
  const char *const *passes;       /* passes applied, in order, each "name: what it changed" */
  size_t warning_count;
  const char *const *warnings;
  size_t nodes_before;
  size_t nodes_after;
  size_t fused_nodes;              /* nodes folded into another by fusion passes */
  size_t cpu_fallback_nodes;       /* nodes placed on the CPU because neither the backend nor another route
                                      to its hardware runs them */
  size_t copies_inserted;          /* host<->device copies added by placement, per run */
  const char *const *fallback_ops; /* "op_type (node name): reason", cpu_fallback_nodes entries */
  uint64_t weight_bytes;
  uint64_t planned_peak_activation_bytes; /* 0 when shapes are only known at run time */
  double prepare_ms;
  /* Added in 0.2. */
  size_t device_nodes;             /* nodes the device backend itself runs (0 on the CPU backend) */
  const char *const *copies;       /* "value 'x': cpu -> opencl (for Relu 'r1')", copies_inserted entries */
  size_t reduced_precision_nodes;  /* nodes whose kernel computes in a reduced precision */
  const char *const *node_precisions; /* "MatMul (name): bf16", reduced_precision_nodes entries */
  /* Added in 0.4: routes to the same hardware, and where every node runs. */
  size_t route_nodes;              /* nodes run on another route to the device's hardware (the device backend
                                      has no kernel for them, or could not build it) */
  const char *const *routed_ops;   /* "GridSample (g): no cuda kernel for GridSample with inputs (float32,
                                      float32); ran on vulkan:0, the same GPU (PCI 0000:1a:00.0)", route_nodes
                                      entries */
  size_t node_count;               /* entries of the three arrays below: every node, in execution order */
  const char *const *node_labels;  /* "Relu (r1)", "Relu (#3)" for a node without a name */
  const char *const *node_devices; /* where it runs: "cuda:0", "vulkan:0", "cpu:0" */
  const char *const *node_reasons; /* why it runs there when that is not the backend's device ("" when it is; a
                                      node on the CPU backend: "") */
  /* Added in 0.4 too. When bf16 is asked for (precision bf16, or auto at O3), per CPU node the precision it runs in
   * and why: "MatMul (name): bf16: 1.8x faster than fp32 on this shape (trial: 0.23 vs 0.41 ms)", "Conv (c1):
   * fp32: bf16 1.8x slower on this shape (trial: 0.41 vs 0.23 ms)", "Relu (r): fp32: no bf16 kernel", "...: fp32:
   * the CPU has no bf16 instructions (AVX512-BF16)"; precision_choice_count entries (0 otherwise). On a device
   * backend asked for a reduced precision (bf16, fp16, tf32, fp8), the same per node on the device: "Conv (c1):
   * bf16: the precision asked for, accumulated in fp32 with fp32 outputs", "MatMul (m): bf16: precision fp8 needs
   * a GPU of compute capability 8.9 or newer ...; this product runs in bf16 on the device ...", "Conv (c2): fp32:
   * TF32 convolutions run only through cuDNN's TF32 engines and cuDNN is not in use on cuda:0 ...", "Relu (r):
   * fp32: no fp16 kernel on cuda:0". */
  size_t precision_choice_count;
  const char *const *precision_choices;
  /* Added in 0.5: graph replay on a device (CUDA graphs). graph_capture: the first run with a set of input shapes is
   * captured as one graph and the runs after it with the same shapes replay it (one launch); graph_capture_why says
   * why not when false ("node 'mm' (MatMul) runs on cpu:0 ...", "turned off (TB_GRAPH_CAPTURE=off)"), "" when true.
   * A capture that fails at run time for a reason found only then turns it off and tb_prepared_graph_capture says
   * why. */
  bool graph_capture;
  const char *graph_capture_why;
} tb_prepare_result;

/* options NULL: O2, auto precision. On failure *out_prepared is NULL and *out_result (when not NULL)
 * is NULL too; tb_last_error() names the node and the reason. */
TB_API tb_status tb_model_prepare(tb_model *model, tb_backend *backend, const tb_prepare_options *options,
                                  tb_prepared **out_prepared, const tb_prepare_result **out_result);
TB_API void tb_prepared_destroy(tb_prepared *prepared);
TB_API const tb_prepare_result *tb_prepared_result(const tb_prepared *prepared);
TB_API tb_status tb_prepare_result_to_json(const tb_prepare_result *result, char **out_json);

/* ---- Running ------------------------------------------------------------------------------------ */

/* Run once. inputs[i] is the value of the graph input named input_names[i] (every graph input without a
 * default must be given; tensors on any backend, copied when needed). outputs[i] receives a new tensor on
 * the prepared backend for the output named output_names[i], or for the i-th graph output when
 * output_names is NULL (then n_outputs must equal tb_model_output_count). The caller destroys outputs.
 * Wrong names, dtypes or shapes are TB_ERR_INVALID_ARGUMENT naming the input, the expected and the given. */
TB_API tb_status tb_prepared_run(tb_prepared *prepared, size_t n_inputs, const char *const *input_names,
                                 tb_tensor *const *inputs, size_t n_outputs, const char *const *output_names,
                                 tb_tensor **outputs);

/* The device time of the last successful run, in milliseconds, from events the run records on the device's stream at
 * its start (before the inputs are copied in) and end (after the outputs are made): what the GPU spent, without the
 * host's time around it. TB_ERR_UNSUPPORTED on a backend without a device timer (the CPU, Vulkan, OpenCL today),
 * TB_ERR_INVALID_ARGUMENT before a run. */
TB_API tb_status tb_prepared_device_ms(const tb_prepared *prepared, double *out_ms);
/* Whether runs are captured and replayed as a device graph now (it starts as tb_prepare_result.graph_capture and is
 * turned off by a capture that failed for a reason known only at run time); *out_why (may be NULL) the reason when
 * not, "" when yes; valid while the prepared model lives. */
TB_API bool tb_prepared_graph_capture(const tb_prepared *prepared, const char **out_why);

/* ---- Profiling ---------------------------------------------------------------------------------- */

/* Time per node, to see where a model's time goes. While profiling is on, each node's kernel is timed
 * (device nodes are waited for after each one, so their time is theirs, and runs are slower than
 * without). Turning it on (again) clears the counts. */
typedef struct tb_node_profile {
  const char *name;      /* the node's name ("" when it has none) */
  const char *op_type;   /* with the domain for non-ONNX ops: "tb.FusedConv" */
  const char *placement; /* "cpu", or the name of the backend that ran it: the device's ("cuda", "opencl"), or a
                            route's to the same hardware ("vulkan") */
  const char *kernel;    /* which kernel: "reference", "fast fp32 (avx512f)", "bf16 (avx512bf16)", "device" (with
                            the route a device kernel chose: "device, cuBLASLt", "device, own tiled GEMM") */
  uint64_t runs;          /* a Loop or Scan body's nodes: once per iteration */
  double total_ms;        /* the node's own time: a node with subgraphs (If, Loop, Scan) leaves out its
                             subgraphs' nodes, which have entries of their own */
  const char *graph;      /* where the node is: "" in the model's graph; in a subgraph, the path of the
                             nodes and graph attributes that hold it ("cond/then_branch", "loop/body") */
} tb_node_profile;

TB_API tb_status tb_prepared_set_profiling(tb_prepared *prepared, bool on);
/* One entry per node of the prepared graph, in execution order, each node with subgraphs followed by
 * their nodes (a branch that has not run yet: kernel "not run yet", runs 0); valid until the next run, the next
 * tb_prepared_set_profiling or tb_prepared_destroy. TB_ERR_INVALID_ARGUMENT when profiling is off. */
TB_API tb_status tb_prepared_profile(tb_prepared *prepared, size_t *count, const tb_node_profile **entries);

/* ---- .npy files ---------------------------------------------------------------------------------- */

/* Read a NumPy .npy file (version 1-3, little-endian, C or Fortran order; numpy dtypes f8 f4 f2 i8 i4 i2 i1
 * u1 b1; bf16 as ml_dtypes' '<V2' or our one-field structured dtype [('bf16','<u2')], fp8 only as our
 * [('fp8_e4m3fn','|u1')] / [('fp8_e5m2','|u1')] since a bare '|V1' does not say which; docs/npy.md) into a new
 * tensor on `backend`. A malformed file is TB_ERR_IO / TB_ERR_INVALID_ARGUMENT naming the field. */
TB_API tb_status tb_npy_load(const char *path, tb_backend *backend, tb_tensor **out_tensor);
TB_API tb_status tb_npy_save(const char *path, const tb_tensor *tensor);

#ifdef __cplusplus
}
#endif
#endif
