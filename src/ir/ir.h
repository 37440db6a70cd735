/* Internal: the graph IR every part of the model engine shares — the ONNX reader fills it, the ops infer
 * types and shapes on it, the passes rewrite it, the planner and the executor run it.
 *
 * A graph owns its values, nodes and every string and array reachable from them (in its arena). Values
 * and nodes are referred to by index. Constant data (initializers, Constant attributes) points into the
 * mapped model file when the bytes can be used as they are, or into memory the graph owns. */
#ifndef TB_IR_IR_H
#define TB_IR_IR_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/dtype.h>
#include <tensorbridge/status.h>
#include <tensorbridge/tensor.h>
#include "core/arena.h"

typedef struct tb_graph tb_graph;

/* A constant tensor. data is packed little-endian row-major, nbytes = numel * dtype size. */
typedef struct tb_ir_tensor {
  const char *name;
  tb_dtype dtype;
  size_t ndim;
  int64_t dims[TB_MAX_DIMS];
  const void *data;  /* into the mapped file, or graph-owned memory */
  size_t nbytes;
} tb_ir_tensor;

/* Attribute types, numbered as in onnx.proto's AttributeProto.AttributeType. */
typedef enum tb_attr_type {
  TB_ATTR_UNDEFINED = 0,
  TB_ATTR_FLOAT = 1,
  TB_ATTR_INT = 2,
  TB_ATTR_STRING = 3,
  TB_ATTR_TENSOR = 4,
  TB_ATTR_GRAPH = 5,
  TB_ATTR_FLOATS = 6,
  TB_ATTR_INTS = 7,
  TB_ATTR_STRINGS = 8,
  TB_ATTR_TENSORS = 9,
  TB_ATTR_GRAPHS = 10,
  TB_ATTR_SPARSE_TENSOR = 11,
  TB_ATTR_SPARSE_TENSORS = 12,
  TB_ATTR_TYPE_PROTO = 13,
  TB_ATTR_TYPE_PROTOS = 14
} tb_attr_type;

typedef struct tb_attr {
  const char *name;
  tb_attr_type type;
  float f;
  int64_t i;
  const char *s;        /* NUL-terminated copy; s_len bytes (strings may hold NULs) */
  size_t s_len;
  tb_ir_tensor *t;
  tb_graph *g;
  size_t count;         /* for the list types */
  const float *floats;
  const int64_t *ints;
  const char *const *strings;
  tb_ir_tensor *const *tensors;
  tb_graph *const *graphs;
} tb_attr;

/* One dimension: a known size, or unknown with an optional symbol ("batch"). */
typedef struct tb_dim {
  int64_t value;  /* >= 0 when known, -1 when not */
  int symbol;     /* index into the model's symbol table, or -1 */
} tb_dim;

typedef enum tb_value_kind {
  TB_VALUE_TENSOR = 0,
  TB_VALUE_SEQUENCE,  /* sequence of tensors: not supported by the executor yet */
  TB_VALUE_OPTIONAL,
  TB_VALUE_MAP,
  TB_VALUE_OTHER
} tb_value_kind;

/* What is known about a value before running: dtype and shape, each possibly unknown. */
typedef struct tb_value_type {
  tb_value_kind kind;
  bool has_dtype;
  tb_dtype dtype;
  bool has_shape;       /* rank known */
  size_t ndim;
  tb_dim dims[TB_MAX_DIMS];
} tb_value_type;

typedef struct tb_value {
  const char *name;
  tb_value_type type;
  int producer;             /* node index, or -1 (graph input, initializer, outer-scope value) */
  const tb_ir_tensor *constant; /* initializer, Constant output or folded value; NULL when computed */
  bool is_initializer;
  bool is_input;            /* a graph input (an initializer that is also an input is a default value) */
  bool is_output;
  int outer;                /* for a subgraph: the value index in the parent graph it captures, else -1 */
} tb_value;

typedef struct tb_op_def tb_op_def;

typedef struct tb_node {
  const char *name;         /* never NULL; "" when the file has none (messages then use "#index") */
  const char *op_type;
  const char *domain;       /* "" for the default ONNX domain ("ai.onnx" is normalised to "") */
  int opset;                /* the model's opset version for this node's domain */
  int *inputs;              /* value indices; -1 for an omitted optional input */
  size_t n_inputs;
  int *outputs;             /* value indices; -1 for an omitted optional output */
  size_t n_outputs;
  tb_attr *attrs;
  size_t n_attrs;
  const tb_op_def *def;     /* resolved by tb_graph_check; NULL before */
  const void *params;       /* the op's typed parameters (tb_op_def.parse), in the graph's arena; set at
                               prepare after the passes (model/params.c); NULL before and for ops without */
  bool dead;                /* removed by a pass; dropped by tb_graph_compact */
} tb_node;

struct tb_graph {
  const char *name;
  tb_value *values;
  size_t n_values, cap_values;
  tb_node *nodes;           /* in topological order after tb_graph_sort */
  size_t n_nodes, cap_nodes;
  int *inputs;              /* graph inputs (value indices), in declaration order, initializers excluded */
  size_t n_inputs;
  int *outputs;
  size_t n_outputs;
  tb_graph *parent;         /* enclosing graph of a subgraph (If/Loop/Scan body) */
  struct tb_ir_model *model;
  void *name_index;         /* value name -> index (private to ir.c) */
  tb_arena arena;
};

typedef struct tb_opset_import {
  const char *domain;
  int64_t version;
} tb_opset_import;

typedef struct tb_ir_model {
  tb_graph *graph;
  int64_t ir_version;
  const char *producer_name, *producer_version, *domain, *doc;
  tb_opset_import *opsets;
  size_t n_opsets;
  const char **symbols;     /* dim_param names; tb_dim.symbol indexes this */
  size_t n_symbols, cap_symbols;
  const void *file;         /* the mapped (or copied) model bytes */
  size_t file_size;
  void *mapping;            /* munmap on destroy when non-NULL */
  void **owned;             /* extra blocks (converted tensors, external data maps) freed on destroy */
  size_t n_owned, cap_owned;
  char *dir;                /* folder of the model file, for external data; NULL when loaded from memory */
  tb_arena arena;
} tb_ir_model;

/* ---- Building (ir.c) --------------------------------------------------------------------------- */

tb_ir_model *tb_ir_model_new(void);
void tb_ir_model_destroy(tb_ir_model *m);
/* Remember a heap block to free with the model. false on OOM (the block is freed then). */
bool tb_ir_model_own(tb_ir_model *m, void *block);
/* The symbol index of a dim_param name, added when new; -1 on OOM. */
int tb_ir_model_symbol(tb_ir_model *m, const char *name);
/* The opset version imported for a domain ("" or "ai.onnx" for the default); 0 when not imported. */
int64_t tb_ir_model_opset(const tb_ir_model *m, const char *domain);

tb_graph *tb_graph_new(tb_ir_model *model, tb_graph *parent, const char *name);
void tb_graph_destroy(tb_graph *g);  /* subgraphs in attributes are destroyed with their node's graph */

/* The index of the value with this name in g (not its parents), or -1. */
int tb_graph_find(const tb_graph *g, const char *name);
/* The index of the value with this name, adding an unknown-typed value when absent; -1 on OOM. */
int tb_graph_value(tb_graph *g, const char *name);
/* A new value with a unique name made from `hint` (for passes); -1 on OOM. */
int tb_graph_new_value(tb_graph *g, const char *hint);
/* Append a node; inputs/outputs/attrs are copied. Returns its index or -1 on OOM. */
int tb_graph_add_node(tb_graph *g, const char *name, const char *op_type, const char *domain, const int *inputs,
                      size_t n_inputs, const int *outputs, size_t n_outputs, const tb_attr *attrs, size_t n_attrs);
/* Copy a string / a block into the graph's arena. */
const char *tb_graph_strdup(tb_graph *g, const char *s);
void *tb_graph_alloc(tb_graph *g, size_t bytes);
/* A new constant tensor owned by the graph with room for its data (returned writable in *data). */
tb_ir_tensor *tb_graph_new_tensor(tb_graph *g, const char *name, tb_dtype dtype, size_t ndim, const int64_t *dims,
                                  void **data);

/* ---- Checking and ordering (ir_check.c) -------------------------------------------------------- */

/* Topological order (Kahn, stable: ties keep file order). A cycle is TB_ERR_MODEL naming a node in it. */
tb_status tb_graph_sort(tb_graph *g);
/* Every node: op known (tb_op_find) for its domain and opset, input/output counts in range, inputs
 * defined (graph input, initializer, an earlier node's output, or an outer-scope value for subgraphs),
 * no value produced twice. Sets node->def. Errors are TB_ERR_MODEL / TB_ERR_UNSUPPORTED naming the node
 * ("node 'conv1' (Conv): ..."). Recurses into subgraphs. */
tb_status tb_graph_check(tb_graph *g);
/* Drop dead nodes and values no live node or graph output uses (keeps graph inputs). */
void tb_graph_compact(tb_graph *g);
/* "node 'conv1' (Conv)" or "node #12 (Conv)" into buf, for messages. */
const char *tb_node_label(const tb_graph *g, const tb_node *n, char *buf, size_t cap);
/* tb_error(status, "<node label>: <message>"): the errors of inference and kernels that name their node. */
tb_status tb_node_verror(const tb_graph *g, const tb_node *n, tb_status status, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* The same with the arguments inline: what operator parameter parsers and inference report. */
tb_status tb_node_error(const tb_graph *g, const tb_node *n, tb_status status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* For a failed node (status not TB_OK): when the last error does not name the node yet (an error from a
 * shared helper such as tb_tensor_create), it becomes "<node label>: <that error>". Returns status. */
tb_status tb_node_name_error(const tb_graph *g, const tb_node *n, tb_status status);

/* ---- Attributes (ir_attr.c) -------------------------------------------------------------------- */

const tb_attr *tb_node_attr(const tb_node *n, const char *name);
/* Typed reads with a default when absent; a present attribute of another type is TB_ERR_MODEL naming
 * the node and the attribute. */
tb_status tb_attr_int(const tb_graph *g, const tb_node *n, const char *name, int64_t dflt, int64_t *out);
tb_status tb_attr_float(const tb_graph *g, const tb_node *n, const char *name, float dflt, float *out);
tb_status tb_attr_string(const tb_graph *g, const tb_node *n, const char *name, const char *dflt, const char **out);
/* Lists: *out NULL and *count 0 when absent. */
tb_status tb_attr_ints(const tb_graph *g, const tb_node *n, const char *name, const int64_t **out, size_t *count);
tb_status tb_attr_floats(const tb_graph *g, const tb_node *n, const char *name, const float **out, size_t *count);
tb_status tb_attr_graph(const tb_graph *g, const tb_node *n, const char *name, tb_graph **out);
tb_status tb_attr_tensor(const tb_graph *g, const tb_node *n, const char *name, const tb_ir_tensor **out);

/* numel of a constant; the element at flat index i converted to int64 / double (any numeric dtype). */
int64_t tb_ir_tensor_numel(const tb_ir_tensor *t);
int64_t tb_ir_tensor_int(const tb_ir_tensor *t, int64_t i);
double tb_ir_tensor_double(const tb_ir_tensor *t, int64_t i);

/* ---- Graph copy and index ---------------------------------------------------------------------------- */

/* Rebuild g's name index from its values (after values are renumbered); false on OOM. */
bool tb_graph_reindex(tb_graph *g);
/* Destroy the subgraphs held by a node's attributes (used when a dead node is dropped). */
void tb_node_destroy_subgraphs(tb_node *n);
/* A deep copy of src (values, nodes, attributes, subgraphs) with `parent` as its enclosing graph. Constant
 * data is shared with src's model, which must outlive the copy. NULL on OOM. */
tb_graph *tb_graph_clone(const tb_graph *src, tb_graph *parent);

#endif
