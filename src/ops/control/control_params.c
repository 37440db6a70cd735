/* Parsing the control-flow operators' parameters (see control_params.h). */
#include "ops/control/control_params.h"
#include <string.h>

/* The graph attribute `name`, which must be present. */
static tb_status body_of(const tb_graph *g, const tb_node *n, const char *name, const tb_graph **out) {
  tb_graph *body = NULL;
  tb_status st = tb_attr_graph(g, n, name, &body);
  if (st != TB_OK) return st;
  if (!body) return tb_node_error(g, n, TB_ERR_MODEL, "the graph attribute '%s' is missing; give the body to run", name);
  *out = body;
  return TB_OK;
}

tb_status tb_if_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_if_params *p = params;
  tb_status st = body_of(g, n, "then_branch", &p->then_branch);
  return st == TB_OK ? body_of(g, n, "else_branch", &p->else_branch) : st;
}

tb_status tb_loop_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_loop_params *p = params;
  return body_of(g, n, "body", &p->body);
}

static tb_status read_list(const tb_graph *g, const tb_node *n, const char *name, size_t want, bool directions,
                           const int64_t **out) {
  size_t count = 0;
  tb_status st = tb_attr_ints(g, n, name, out, &count);
  if (st != TB_OK) return st;
  if (*out && count != want)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute '%s' has %zu entries, expected %zu", name, count, want);
  for (size_t i = 0; directions && *out && i < count; i++)
    if ((*out)[i] != 0 && (*out)[i] != 1)
      return tb_node_error(g, n, TB_ERR_MODEL, "'%s'[%zu] is %lld, expected 0 (forward) or 1 (reverse)", name, i,
                           (long long)(*out)[i]);
  return TB_OK;
}

/* The body and num_scan_inputs (M), M in [1, n_inputs - lead]; the state count follows. */
static tb_status scan_counts(const tb_graph *g, const tb_node *n, size_t lead, tb_scan_params *p) {
  int64_t m = 0;
  tb_status st = body_of(g, n, "body", &p->body);
  if (st == TB_OK) st = tb_attr_int(g, n, "num_scan_inputs", 0, &m);
  if (st != TB_OK) return st;
  size_t n_inputs = n->n_inputs - lead;
  if (m <= 0 || (uint64_t)m > n_inputs)
    return tb_node_error(g, n, TB_ERR_MODEL, "num_scan_inputs is %lld, expected 1 to the %zu inputs", (long long)m,
                         n_inputs);
  p->n_scan_in = (size_t)m;
  p->n_state = n_inputs - p->n_scan_in;
  if (p->body->n_inputs != n_inputs)
    return tb_node_error(g, n, TB_ERR_MODEL, "the body takes %zu inputs, expected %zu (%zu states, %zu scan inputs)",
                         p->body->n_inputs, n_inputs, p->n_state, p->n_scan_in);
  if (p->body->n_outputs < p->n_state)
    return tb_node_error(g, n, TB_ERR_MODEL, "the body returns %zu outputs, fewer than its %zu states",
                         p->body->n_outputs, p->n_state);
  p->n_scan_out = p->body->n_outputs - p->n_state;
  return TB_OK;
}

tb_status tb_scan_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_scan_params *p = params;
  tb_status st = scan_counts(g, n, 0, p);
  if (st != TB_OK) return st;
  if ((st = read_list(g, n, "scan_input_axes", p->n_scan_in, false, &p->in_axes)) != TB_OK) return st;
  if ((st = read_list(g, n, "scan_input_directions", p->n_scan_in, true, &p->in_dirs)) != TB_OK) return st;
  if ((st = read_list(g, n, "scan_output_axes", p->n_scan_out, false, &p->out_axes)) != TB_OK) return st;
  return read_list(g, n, "scan_output_directions", p->n_scan_out, true, &p->out_dirs);
}

tb_status tb_scan8_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_scan_params *p = params;
  p->batched = true;
  if (n->n_inputs < 1)
    return tb_node_error(g, n, TB_ERR_MODEL, "has no inputs; Scan-8 takes sequence_lens (may be empty) and its states");
  tb_status st = scan_counts(g, n, 1, p);
  if (st != TB_OK) return st;
  return read_list(g, n, "directions", p->n_scan_in, true, &p->in_dirs);
}
