/* Reading Scan's attributes (see scan_attrs.h). */
#include "ops/control/scan_attrs.h"
#include <string.h>
#include "core/error.h"

static tb_status read_list(const tb_graph *g, const tb_node *n, const char *name, size_t want, bool directions,
                           const int64_t **out) {
  size_t count = 0;
  tb_status st = tb_attr_ints(g, n, name, out, &count);
  if (st != TB_OK) return st;
  char label[160];
  if (*out && count != want)
    return tb_error(TB_ERR_MODEL, "%s: attribute '%s' has %zu entries, expected %zu",
                    tb_node_label(g, n, label, sizeof label), name, count, want);
  for (size_t i = 0; directions && *out && i < count; i++)
    if ((*out)[i] != 0 && (*out)[i] != 1)
      return tb_error(TB_ERR_MODEL, "%s: '%s'[%zu] is %lld, expected 0 (forward) or 1 (reverse)",
                      tb_node_label(g, n, label, sizeof label), name, i, (long long)(*out)[i]);
  return TB_OK;
}

tb_status tb_scan_attrs_read(const tb_graph *g, const tb_node *n, size_t n_inputs, tb_scan_attrs *out) {
  memset(out, 0, sizeof *out);
  char label[160];
  tb_graph *body = NULL;
  int64_t m = 0;
  tb_status st = tb_attr_graph(g, n, "body", &body);
  if (st == TB_OK) st = tb_attr_int(g, n, "num_scan_inputs", 0, &m);
  if (st != TB_OK) return st;
  if (!body) return tb_error(TB_ERR_MODEL, "%s: the graph attribute 'body' is missing", tb_node_label(g, n, label, sizeof label));
  if (m <= 0 || (uint64_t)m > n_inputs)
    return tb_error(TB_ERR_MODEL, "%s: num_scan_inputs is %lld, expected 1 to the %zu inputs",
                    tb_node_label(g, n, label, sizeof label), (long long)m, n_inputs);
  out->body = body;
  out->n_scan_in = (size_t)m;
  out->n_state = n_inputs - out->n_scan_in;
  if (body->n_inputs != n_inputs)
    return tb_error(TB_ERR_MODEL, "%s: the body takes %zu inputs, expected %zu (%zu states, %zu scan inputs)",
                    tb_node_label(g, n, label, sizeof label), body->n_inputs, n_inputs, out->n_state, out->n_scan_in);
  if (body->n_outputs < out->n_state)
    return tb_error(TB_ERR_MODEL, "%s: the body returns %zu outputs, fewer than its %zu states",
                    tb_node_label(g, n, label, sizeof label), body->n_outputs, out->n_state);
  out->n_scan_out = body->n_outputs - out->n_state;
  if ((st = read_list(g, n, "scan_input_axes", out->n_scan_in, false, &out->in_axes)) != TB_OK) return st;
  if ((st = read_list(g, n, "scan_input_directions", out->n_scan_in, true, &out->in_dirs)) != TB_OK) return st;
  if ((st = read_list(g, n, "scan_output_axes", out->n_scan_out, false, &out->out_axes)) != TB_OK) return st;
  return read_list(g, n, "scan_output_directions", out->n_scan_out, true, &out->out_dirs);
}
