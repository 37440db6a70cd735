/* Internal: the typed parameters of the nn family's operators (convolutions, pools, Gemm, softmax,
 * normalizations, reductions, quantization, Einsum). Each op's parse function reads and checks the node's
 * attributes once, at prepare, into one of these flat structs; its infer function and every backend's
 * kernels read the struct, never an attribute. Values that depend on input shapes (the pads auto_pad
 * resolves, a negative axis) stay in attribute form here and are resolved with the shapes by the helpers in
 * window.h and reduce.h. Errors name the node, the attribute, the value and what it must be. */
#ifndef TB_OPS_NN_NN_PARAMS_H
#define TB_OPS_NN_NN_PARAMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensor.h>
#include "ir/ir.h"

typedef enum tb_auto_pad {
  TB_AUTO_PAD_NOTSET,
  TB_AUTO_PAD_VALID,
  TB_AUTO_PAD_SAME_UPPER,
  TB_AUTO_PAD_SAME_LOWER
} tb_auto_pad;

/* The sliding window of Conv, ConvTranspose and the pools as the attributes give it. A list's count is 0
 * when the attribute is absent (then every entry takes its default: stride and dilation 1, pad 0); a given
 * list's length is checked against the spatial rank when the shapes are known (tb_nn_window_init). */
typedef struct tb_window_params {
  size_t n_kernel, n_strides, n_dilations, n_pads;
  int64_t kernel[TB_MAX_DIMS];    /* kernel_shape, each >= 1 */
  int64_t strides[TB_MAX_DIMS];   /* each >= 1 */
  int64_t dilations[TB_MAX_DIMS]; /* each >= 1 */
  int64_t pads[2 * TB_MAX_DIMS];  /* begins then ends, each >= 0; zeros when auto_pad is not NOTSET */
  tb_auto_pad auto_pad;
  bool ceil_mode;                 /* pools only */
} tb_window_params;

/* Conv, ConvTranspose, ConvInteger, QLinearConv. */
typedef struct tb_conv_params {
  tb_window_params win;
  int64_t group;                        /* >= 1 */
  size_t n_output_padding;              /* ConvTranspose: 0 when absent */
  int64_t output_padding[TB_MAX_DIMS];  /* each >= 0 */
  size_t n_output_shape;                /* ConvTranspose: 0 when absent; spatial rank, or rank (N, C first) */
  int64_t output_shape[TB_MAX_DIMS + 2];
} tb_conv_params;

typedef enum tb_pool_kind { TB_POOL_MAX, TB_POOL_AVERAGE, TB_POOL_LP } tb_pool_kind;

/* MaxPool, AveragePool, LpPool and GlobalAveragePool / GlobalMaxPool / GlobalLpPool. */
typedef struct tb_pool_params {
  tb_window_params win;   /* unused by the global pools (their window is the whole input) */
  tb_pool_kind kind;
  bool global;
  bool count_include_pad; /* AveragePool */
  int64_t storage_order;  /* MaxPool's Indices: 0 row-major, 1 column-major over the spatial axes */
  int64_t p;              /* LpPool and GlobalLpPool: the norm's order, >= 1 (default 2) */
  bool indices;           /* MaxPool: the node has the Indices output */
} tb_pool_params;

/* Gemm: Y = alpha * A' * B' + beta * C. */
typedef struct tb_gemm_params {
  bool trans_a, trans_b;
  float alpha, beta;
} tb_gemm_params;

typedef enum tb_softmax_kind { TB_SOFTMAX, TB_LOG_SOFTMAX, TB_HARDMAX } tb_softmax_kind;

/* Softmax, LogSoftmax, Hardmax. */
typedef struct tb_softmax_params {
  tb_softmax_kind kind;
  int64_t axis;  /* as written (negative from the end); default 1 before opset 13, -1 from 13 */
  bool flatten;  /* before opset 13: the input is [prod(dims[:axis]), prod(dims[axis:])], rows normalised */
} tb_softmax_params;

typedef enum tb_norm_kind { TB_NORM_BATCH, TB_NORM_INSTANCE, TB_NORM_LAYER } tb_norm_kind;

/* BatchNormalization (inference), InstanceNormalization, LayerNormalization (and tb::LayerNormalization). */
typedef struct tb_norm_params {
  tb_norm_kind kind;
  float epsilon;       /* default 1e-5 */
  int64_t axis;        /* LayerNormalization: the first normalised axis as written (default -1) */
  int64_t stash_type;  /* LayerNormalization: the onnx dtype of the statistics (1 float, 10, 11, 16) */
  bool spatial;        /* BatchNormalization before opset 9: spatial (default 1) */
  bool mean_output;    /* LayerNormalization: the node has the Mean output */
  bool inv_std_output; /* LayerNormalization: the node has the InvStdDev output */
} tb_norm_params;

/* LRN. */
typedef struct tb_lrn_params {
  float alpha, beta, bias; /* defaults 1e-4, 0.75, 1 */
  int64_t size;            /* >= 1, required */
} tb_lrn_params;

typedef enum tb_reduce_op {
  TB_REDUCE_SUM,
  TB_REDUCE_MEAN,
  TB_REDUCE_MAX,
  TB_REDUCE_MIN,
  TB_REDUCE_PROD,
  TB_REDUCE_L1,
  TB_REDUCE_L2,
  TB_REDUCE_LOG_SUM_EXP,
  TB_REDUCE_SUM_SQUARE
} tb_reduce_op;

/* The Reduce* ops. The axes come from the attribute (n_axes, axes as written) or, when axes_from_input
 * (ReduceSum from opset 13, the others from 18), from input 1 at run time: tb_nn_reduce_axes_resolve. */
typedef struct tb_reduce_params {
  tb_reduce_op op;
  bool keepdims;             /* default 1 */
  bool noop_with_empty_axes; /* default 0 */
  bool axes_from_input;
  size_t n_axes;
  int64_t axes[TB_MAX_DIMS];
} tb_reduce_params;

/* ArgMax, ArgMin. */
typedef struct tb_argreduce_params {
  bool is_max;
  int64_t axis; /* as written (default 0) */
  bool keepdims, select_last_index;
} tb_argreduce_params;

/* QuantizeLinear, DequantizeLinear. */
typedef struct tb_quant_params {
  int64_t axis;   /* as written (default 1): the axis a 1-D scale runs along */
  bool per_axis;  /* opset >= 13: a 1-D scale and zero point are allowed */
} tb_quant_params;

/* Einsum. equation borrows the node's attribute (it lives as long as the graph). */
typedef struct tb_einsum_params {
  const char *equation;
} tb_einsum_params;

/* The parse functions: fill a zeroed struct from node n's attributes (tb_op_def.parse). */
tb_status tb_conv_parse(const tb_graph *g, const tb_node *n, void *params);           /* tb_conv_params */
tb_status tb_conv_transpose_parse(const tb_graph *g, const tb_node *n, void *params); /* tb_conv_params */
tb_status tb_pool_parse(const tb_graph *g, const tb_node *n, void *params);           /* tb_pool_params */
tb_status tb_gemm_parse(const tb_graph *g, const tb_node *n, void *params);           /* tb_gemm_params */
tb_status tb_softmax_parse(const tb_graph *g, const tb_node *n, void *params);        /* tb_softmax_params */
tb_status tb_norm_parse(const tb_graph *g, const tb_node *n, void *params);           /* tb_norm_params */
tb_status tb_lrn_parse(const tb_graph *g, const tb_node *n, void *params);            /* tb_lrn_params */
tb_status tb_reduce_parse(const tb_graph *g, const tb_node *n, void *params);         /* tb_reduce_params */
tb_status tb_argreduce_parse(const tb_graph *g, const tb_node *n, void *params);      /* tb_argreduce_params */
tb_status tb_quant_parse(const tb_graph *g, const tb_node *n, void *params);          /* tb_quant_params */
tb_status tb_einsum_params_parse(const tb_graph *g, const tb_node *n, void *params);  /* tb_einsum_params */

/* The window attributes (kernel_shape, strides, dilations, pads, auto_pad; ceil_mode when with_ceil) of n
 * into w: shared by the convolution and pool parse functions. */
tb_status tb_window_parse(const tb_graph *g, const tb_node *n, bool with_ceil, tb_window_params *w);
/* An int-list attribute of at most cap values, each >= min, into out (*count 0 when absent). */
tb_status tb_nn_parse_list(const tb_graph *g, const tb_node *n, const char *name, size_t cap, int64_t min, int64_t *out,
                           size_t *count);

#endif
