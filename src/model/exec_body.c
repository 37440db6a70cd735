/* The types of a subgraph's values (an If branch, a Loop or Scan body) known before it runs: its inputs' from the
 * call, an outer value's from the calling graph, the rest improved by inference over the body in order. The
 * fast-kernel check of prepare reads them, and so does the placement of a body on a device (exec_place.c,
 * docs/cuda.md "Control flow"). */
#include <stdlib.h>
#include "model/exec_impl.h"

tb_value_type *tb_exec_body_types(const tb_graph *body, const tb_value_type *outer_types, size_t n_inputs,
                                  tb_tensor *const *inputs) {
  tb_value_type *t = calloc(body->n_values ? body->n_values : 1, sizeof *t);
  size_t cap = 1;
  for (size_t i = 0; i < body->n_nodes; i++) cap = body->nodes[i].n_inputs > cap ? body->nodes[i].n_inputs : cap;
  for (size_t i = 0; i < body->n_nodes; i++) cap = body->nodes[i].n_outputs > cap ? body->nodes[i].n_outputs : cap;
  const tb_value_type **in = calloc(cap, sizeof *in);
  const tb_ir_tensor **vals = calloc(cap, sizeof *vals);
  tb_value_type *out = calloc(cap, sizeof *out);
  if (!t || !in || !vals || !out) {
    free(t);
    t = NULL;
  }
  for (size_t v = 0; t && v < body->n_values; v++)
    t[v] = body->values[v].outer >= 0 && outer_types ? outer_types[body->values[v].outer] : body->values[v].type;
  for (size_t k = 0; t && k < n_inputs && k < body->n_inputs; k++)
    if (inputs[k]) tb_value_type_of(inputs[k], &t[body->inputs[k]]);
  for (size_t i = 0; t && i < body->n_nodes; i++) {
    const tb_node *n = &body->nodes[i];
    if (n->dead) continue;
    for (size_t k = 0; k < n->n_inputs; k++) {
      in[k] = n->inputs[k] >= 0 ? &t[n->inputs[k]] : NULL;
      vals[k] = n->inputs[k] >= 0 ? body->values[n->inputs[k]].constant : NULL;
    }
    if (tb_infer_node(body, n, in, vals, out) != TB_OK) continue; /* found again, with its sentence, at run */
    for (size_t o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0 && out[o].has_dtype && !t[n->outputs[o]].has_dtype) t[n->outputs[o]] = out[o];
  }
  free(in);
  free(vals);
  free(out);
  return t;
}
