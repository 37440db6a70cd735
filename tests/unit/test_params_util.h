/* Helpers for the operator parameter tests (test_params_*.c): one node with attributes in a fresh model,
 * its parse function run on a zeroed params block, and the status and message of a rejection. */
#ifndef TB_TEST_PARAMS_UTIL_H
#define TB_TEST_PARAMS_UTIL_H
#include "test_op_harness.h"

typedef tb_status (*tpp_parse_fn)(const tb_graph *g, const tb_node *n, void *params);

/* A model and its main graph holding the nodes under test (borrowed pointers in a params block, such as
 * Split's sizes or a Scan body, live until tpp_end). */
typedef struct tpp {
  tb_ir_model *model;
  tb_graph *graph;
} tpp;

static inline void tpp_begin(tpp *t) {
  t->model = tb_ir_model_new();
  assert_non_null(t->model);
  t->graph = tb_graph_new(t->model, NULL, "g");
  assert_non_null(t->graph);
}

static inline void tpp_end(tpp *t) {
  tb_graph_destroy(t->graph);
  tb_ir_model_destroy(t->model);
}

/* Node "n0" of `op` (ONNX domain) at `opset` with n_in inputs and n_out outputs and these attributes. */
static inline const tb_node *tpp_node(tpp *t, const char *op, int opset, size_t n_in, size_t n_out, const tb_attr *attrs,
                                      size_t n_attrs) {
  int ins[TOH_MAX], outs[TOH_MAX];
  char name[32];
  assert_true(n_in <= TOH_MAX && n_out <= TOH_MAX);
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = tb_graph_value(t->graph, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = tb_graph_value(t->graph, name);
  }
  int k = tb_graph_add_node(t->graph, "n0", op, "", ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(k >= 0);
  t->graph->nodes[k].opset = opset;
  return &t->graph->nodes[k];
}

/* Parse op's node (made as tpp_node makes it, in a model of its own) into `params` (size bytes, zeroed
 * first). For structs without borrowed pointers: the model is gone on return. */
static inline tb_status tpp_parse(tpp_parse_fn parse, const char *op, int opset, size_t n_in, size_t n_out,
                                  const tb_attr *attrs, size_t n_attrs, void *params, size_t size) {
  tpp t;
  tpp_begin(&t);
  memset(params, 0, size);
  tb_status st = parse(t.graph, tpp_node(&t, op, opset, n_in, n_out, attrs, n_attrs), params);
  tpp_end(&t);
  return st;
}

/* The attribute list of a call: TPP_ATTRS(TOH_INT("axis", 1), ...) and its length. */
#define TPP_ATTRS(...) ((const tb_attr[]){__VA_ARGS__}), (sizeof((const tb_attr[]){__VA_ARGS__}) / sizeof(tb_attr))
#define TPP_NO_ATTRS NULL, 0

/* parse fails with `status` and a message naming node n0 (of `op`) and containing `needle`. */
#define TPP_REJECTS(status, op, needle, call)                                      \
  do {                                                                             \
    assert_int_equal((call), (status));                                           \
    TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (" op ")");                    \
    TB_ASSERT_CONTAINS(tb_last_error(), (needle));                                 \
  } while (0)

#endif
