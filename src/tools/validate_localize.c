/* Localisation: when a configuration fails, run the reference and the target again with the executor's
 * node hook (src/model/engine.h) and name the first node, in the target's execution order, one of whose
 * outputs leaves the configuration's tolerance against the reference's value of the same name. Values are
 * matched by name because passes keep the names of the values they do not remove; a target value the
 * reference does not have (made by a fusion) is skipped, and so is one whose shape differs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "model/prepared.h"
#include "tools/validate_impl.h"

/* The reference's values, by the reference graph's value index, as f64. */
typedef struct ref_values {
  const tb_graph *g;
  double **data;
  tb_value_type *types;
  tb_status st;
} ref_values;

static double *as_f64(const tb_tensor *t, tb_status *st) {
  int64_t n = tb_tensor_numel(t);
  void *host = tb_tbv_host_copy(t);
  double *d = host ? malloc((size_t)(n ? n : 1) * sizeof *d) : NULL;
  if (!d) {
    free(host);
    *st = host ? tb_error(TB_ERR_OUT_OF_MEMORY, "localisation: out of memory for %lld values", (long long)n) : TB_ERR_IO;
    return NULL;
  }
  *st = tb_convert(tb_tensor_dtype(t), host, TB_DTYPE_F64, d, (size_t)n, false);
  free(host);
  if (*st != TB_OK) {
    free(d);
    return NULL;
  }
  return d;
}

static void keep_reference(void *ctx, const tb_graph *g, const tb_node *n, tb_tensor *const *outputs) {
  ref_values *rv = ctx;
  for (size_t o = 0; o < n->n_outputs && rv->st == TB_OK; o++) {
    int v = n->outputs[o];
    if (v < 0 || !outputs[o] || rv->data[v]) continue;
    tb_value_type_of(outputs[o], &rv->types[v]);
    rv->data[v] = as_f64(outputs[o], &rv->st);
  }
  (void)g;
}

/* The target's walk: the first failing output, with its metrics. */
typedef struct target_walk {
  const ref_values *ref;
  double rtol, atol;
  size_t step;       /* the position of the node being reported */
  bool found;
  size_t found_step;
  const tb_node *node;
  const char *value;
  tb_output_metrics m;
  size_t compared;
  tb_status st;
} target_walk;

static int ref_index(const tb_graph *g, const char *name) {
  for (size_t v = 0; v < g->n_values; v++)
    if (strcmp(g->values[v].name, name) == 0) return (int)v;
  return -1;
}

static bool same_shape(const tb_value_type *a, const tb_value_type *b) {
  if (a->ndim != b->ndim) return false;
  for (size_t d = 0; d < a->ndim; d++)
    if (a->dims[d].value != b->dims[d].value) return false;
  return true;
}

static void compare_target(void *ctx, const tb_graph *g, const tb_node *n, tb_tensor *const *outputs) {
  target_walk *w = ctx;
  size_t step = w->step++;
  for (size_t o = 0; o < n->n_outputs && !w->found && w->st == TB_OK; o++) {
    int v = n->outputs[o];
    if (v < 0 || !outputs[o]) continue;
    int rv = ref_index(w->ref->g, g->values[v].name);
    if (rv < 0 || !w->ref->data[rv]) continue;
    tb_value_type t;
    tb_value_type_of(outputs[o], &t);
    if (!same_shape(&t, &w->ref->types[rv])) continue;
    double *got = as_f64(outputs[o], &w->st);
    if (!got) return;
    tb_output_metrics m = {.size = sizeof m};
    w->st = tb_tbv_compare_host(TB_DTYPE_F64, got, w->ref->data[rv], tb_tensor_numel(outputs[o]), w->rtol, w->atol, &m);
    free(got);
    w->compared++;
    if (w->st == TB_OK && !m.passed) {
      w->found = true;
      w->node = n;
      w->value = g->values[v].name;
      w->m = m;
      w->found_step = step;
    }
  }
}

static void free_ref(ref_values *rv) {
  for (size_t v = 0; rv->data && v < rv->g->n_values; v++) free(rv->data[v]);
  free(rv->data);
  free(rv->types);
}

static void destroy_outputs(tb_tensor **t, size_t n) {
  for (size_t i = 0; i < n; i++) tb_tensor_destroy(t[i]);
  free(t);
}

static tb_status run_hooked(tb_prepared *p, tb_exec_node_fn fn, void *ctx, size_t n_inputs, const char *const *names,
                            tb_tensor *const *inputs) {
  size_t n_out = tb_model_output_count(p->model);
  tb_tensor **outs = calloc(n_out ? n_out : 1, sizeof *outs);
  if (!outs) return tb_error(TB_ERR_OUT_OF_MEMORY, "localisation: out of memory");
  tb_exec_set_node_hook(p->exec, fn, ctx);
  tb_status st = tb_prepared_run(p, n_inputs, names, inputs, n_out, NULL, outs);
  tb_exec_set_node_hook(p->exec, NULL, NULL);
  destroy_outputs(outs, st == TB_OK ? n_out : 0);
  return st;
}

tb_status tb_tbv_localize(tb_validation_report *r, tbv_config *cfg, tb_prepared *reference, tb_prepared *target,
                       size_t n_inputs, const char *const *names, tb_tensor *const *inputs) {
  tb_validation_config *c = &cfg->info;
  ref_values rv = {.g = reference->graph};
  rv.data = calloc(rv.g->n_values ? rv.g->n_values : 1, sizeof *rv.data);
  rv.types = calloc(rv.g->n_values ? rv.g->n_values : 1, sizeof *rv.types);
  if (!rv.data || !rv.types) {
    free_ref(&rv);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "localisation: out of memory");
  }
  tb_status st = run_hooked(reference, keep_reference, &rv, n_inputs, names, inputs);
  if (st == TB_OK) st = rv.st;
  target_walk w = {.ref = &rv, .rtol = c->tolerance.rtol, .atol = c->tolerance.atol};
  if (st == TB_OK) st = run_hooked(target, compare_target, &w, n_inputs, names, inputs);
  if (st == TB_OK) st = w.st;
  free_ref(&rv);
  if (st != TB_OK) {
    c->localize_note = tb_arena_printf(&r->arena, "localisation could not run: %s", tb_last_error());
    return st == TB_ERR_OUT_OF_MEMORY ? st : TB_OK;
  }
  if (!w.found) {
    c->localize_note = tb_arena_printf(&r->arena,
                                       "every one of the %zu intermediate values matched by name is within the tolerance; "
                                       "the divergence is in values the passes renamed or in the final copies",
                                       w.compared);
    return TB_OK;
  }
  char label[200];
  c->localized = true;
  c->node_name = tb_arena_strdup(&r->arena, w.node->name);
  c->node_op = tb_arena_strdup(&r->arena, w.node->op_type);
  c->node_index = w.found_step;
  c->node_output = tb_arena_strdup(&r->arena, w.value);
  c->node_max_abs_error = w.m.max_abs_error;
  c->node_max_rel_error = w.m.max_rel_error;
  c->node_cosine = w.m.cosine;
  c->node_mismatches = w.m.mismatches;
  c->node_numel = w.m.numel;
  c->localize_note = tb_arena_printf(&r->arena, "first diverging node: %s, output '%s', after %zu matching values",
                                     tb_node_label(target->graph, w.node, label, sizeof label), w.value, w.compared);
  return TB_OK;
}
