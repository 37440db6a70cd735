/* Helpers for the O1 pass tests (tests/unit/test_pass_*.c): attributes on builder nodes, a graph made
 * ready as prepare makes it (sorted, checked, inferred), one pass run the way the pass manager runs it,
 * the node op types in order, and running a graph with the executor on random inputs to compare the
 * graph before the pass with the graph after it. */
#ifndef TB_TEST_PASS_TEST_H
#define TB_TEST_PASS_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/params.h"
#include "model/engine.h"
#include "model/passes/pass.h"
#include "model/passes/pass_util.h"
#include "test_ir_util.h"

static inline tb_attr *pt_attr(tb_graph *g, int node, const char *name, tb_attr_type type) {
  tb_node *n = &g->nodes[node];
  tb_attr *attrs = tb_graph_alloc(g, (n->n_attrs + 1) * sizeof *attrs);
  assert_non_null(attrs);
  if (n->n_attrs) memcpy(attrs, n->attrs, n->n_attrs * sizeof *attrs);
  tb_attr *a = &attrs[n->n_attrs];
  memset(a, 0, sizeof *a);
  a->name = tb_graph_strdup(g, name);
  a->type = type;
  n->attrs = attrs;
  n->n_attrs++;
  return a;
}
static inline void pt_attr_int(tb_graph *g, int node, const char *name, int64_t v) { pt_attr(g, node, name, TB_ATTR_INT)->i = v; }
static inline void pt_attr_float(tb_graph *g, int node, const char *name, float v) { pt_attr(g, node, name, TB_ATTR_FLOAT)->f = v; }
static inline void pt_attr_string(tb_graph *g, int node, const char *name, const char *s) {
  tb_attr *a = pt_attr(g, node, name, TB_ATTR_STRING);
  a->s = tb_graph_strdup(g, s);
  a->s_len = strlen(s);
}
static inline void pt_attr_ints(tb_graph *g, int node, const char *name, size_t count, const int64_t *v) {
  tb_attr *a = pt_attr(g, node, name, TB_ATTR_INTS);
  int64_t *copy = tb_graph_alloc(g, count * sizeof *copy);
  memcpy(copy, v, count * sizeof *copy);
  a->ints = copy;
  a->count = count;
}

/* Deterministic values in [lo, hi). */
static inline float pt_rand(uint32_t *state, float lo, float hi) {
  *state = *state * 1664525u + 1013904223u;
  return lo + (hi - lo) * (float)(*state >> 8) / 16777216.0f;
}

/* An f32 constant of this shape filled with pt_rand values in [lo, hi). */
static inline int pt_const_rand(tb_graph *g, const char *name, size_t ndim, const int64_t *dims, uint32_t seed, float lo,
                                float hi) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= dims[i];
  float *data = malloc((size_t)(n ? n : 1) * sizeof *data);
  for (int64_t i = 0; i < n; i++) data[i] = pt_rand(&seed, lo, hi);
  int v = tbt_const_f32(g, name, ndim, dims, data);
  free(data);
  return v;
}

static inline int pt_const_scalar(tb_graph *g, const char *name, float x) { return tbt_const_f32(g, name, 0, NULL, &x); }

/* Sort, check and infer as prepare does; asserts success. */
static inline void pt_ready(tb_graph *g) {
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
}

/* The pass named `name` from the ordered list. */
static inline const tb_pass *pt_pass(const char *name) {
  for (size_t i = 0; i < tb_pass_count(); i++)
    if (strcmp(tb_pass_at(i)->name, name) == 0) return tb_pass_at(i);
  fail_msg("no pass named %s", name);
  return NULL;
}

/* Run one pass as the pass manager does (then compact, sort, check, infer); returns its stats. */
static inline tb_pass_stats pt_run_pass(tb_graph *g, const char *name) {
  tb_pass_stats st;
  memset(&st, 0, sizeof st);
  TB_ASSERT_OK(pt_pass(name)->run(g, &st));
  tb_graph_compact(g);
  pt_ready(g);
  printf("  %s: %s\n", name, st.summary);
  return st;
}

/* "Conv,Relu": the op types of the live nodes in order (domain-prefixed for non-ONNX: "tb::FusedConv"). */
static inline const char *pt_ops(const tb_graph *g, char *buf, size_t cap) {
  buf[0] = '\0';
  size_t len = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *n = &g->nodes[i];
    if (n->dead) continue;
    int w = snprintf(buf + len, cap - len, "%s%s%s%s", len ? "," : "", n->domain[0] ? n->domain : "",
                     n->domain[0] ? "::" : "", n->op_type);
    if (w < 0 || (size_t)w >= cap - len) break;
    len += (size_t)w;
  }
  return buf;
}

/* Assert g's op types and print them under a label (the before/after picture in the test's output). */
static inline void pt_assert_ops(const tb_graph *g, const char *label, const char *want) {
  char buf[1024];
  pt_ops(g, buf, sizeof buf);
  printf("  %-7s %s\n", label, buf);
  assert_string_equal(buf, want);
}

/* Random f32 inputs for every graph input of g (its static shape), seeded. */
static inline void pt_inputs(tb_backend *cpu, const tb_graph *g, uint32_t seed, tb_tensor **inputs) {
  for (size_t i = 0; i < g->n_inputs; i++) {
    const tb_value_type *t = &g->values[g->inputs[i]].type;
    int64_t dims[TB_MAX_DIMS];
    for (size_t d = 0; d < t->ndim; d++) dims[d] = t->dims[d].value;
    TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, t->ndim, dims, &inputs[i]));
    float *p = tb_tensor_host_data(inputs[i]);
    for (int64_t k = 0; k < tb_tensor_numel(inputs[i]); k++) p[k] = pt_rand(&seed, -2.0f, 2.0f);
  }
}

/* Run g with the executor at level 0 on inputs; outputs receive new tensors. */
static inline void pt_exec(tb_backend *cpu, const tb_graph *g, tb_tensor *const *inputs, tb_tensor **outputs) {
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, 0, 0, 1, &e));
  TB_ASSERT_OK(tb_exec_run(e, inputs, outputs));
  tb_exec_destroy(e);
}

/* Outputs of both graphs on the same random inputs agree: bit for bit when rel is 0, else within rel
 * relative (plus 1e-6 absolute near zero). Returns the largest relative difference seen. */
static inline double pt_compare(const tb_graph *before, const tb_graph *after, uint32_t seed, double rel) {
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  assert_int_equal(before->n_inputs, after->n_inputs);
  assert_int_equal(before->n_outputs, after->n_outputs);
  tb_tensor *in[8] = {NULL}, *out_a[8] = {NULL}, *out_b[8] = {NULL};
  pt_inputs(cpu, before, seed, in);
  pt_exec(cpu, before, in, out_a);
  pt_exec(cpu, after, in, out_b);
  double worst = 0.0;
  for (size_t o = 0; o < before->n_outputs; o++) {
    assert_string_equal(before->values[before->outputs[o]].name, after->values[after->outputs[o]].name);
    assert_int_equal(tb_tensor_numel(out_a[o]), tb_tensor_numel(out_b[o]));
    assert_int_equal(tb_tensor_ndim(out_a[o]), tb_tensor_ndim(out_b[o]));
    assert_int_equal(tb_tensor_dtype(out_a[o]), TB_DTYPE_F32);
    const float *a = tb_tensor_host_data(out_a[o]), *b = tb_tensor_host_data(out_b[o]);
    for (int64_t k = 0; k < tb_tensor_numel(out_a[o]); k++) {
      double diff = fabs((double)a[k] - (double)b[k]), scale = fmax(fabs((double)a[k]), fabs((double)b[k]));
      double r = scale > 0 ? diff / scale : 0.0;
      if (scale > 1e-3 && r > worst) worst = r;
      if (rel == 0.0 && memcmp(&a[k], &b[k], sizeof(float)) != 0)
        fail_msg("output %zu element %lld: %.9g before, %.9g after (expected bit-identical)", o, (long long)k, a[k], b[k]);
      if (rel > 0.0 && diff > rel * scale + 1e-6)
        fail_msg("output %zu element %lld: %.9g before, %.9g after (over %g relative)", o, (long long)k, a[k], b[k], rel);
    }
    assert_true(tb_tensor_numel(out_a[o]) > 0);
  }
  for (size_t i = 0; i < before->n_inputs; i++) tb_tensor_destroy(in[i]);
  for (size_t o = 0; o < before->n_outputs; o++) {
    tb_tensor_destroy(out_a[o]);
    tb_tensor_destroy(out_b[o]);
  }
  tb_backend_destroy(cpu);
  printf("  outputs equal (largest relative difference %.3g)\n", worst);
  return worst;
}

/* Two copies of the same graph: build(m->graph) run on two models. */
typedef struct pt_pair {
  tb_ir_model *ma, *mb;
  tb_graph *before, *after;
} pt_pair;

/* build(g) on a fresh model's main graph, made ready; *m receives the model (free with tb_ir_model_destroy). */
static inline tb_graph *pt_ready_graph(int64_t opset, void (*build)(tb_graph *g), tb_ir_model **m) {
  *m = tbt_ir_model(opset);
  tb_graph *g = tb_graph_new(*m, NULL, "g");
  assert_non_null(g);
  build(g);
  pt_ready(g);
  return g;
}

static inline pt_pair pt_build(int64_t opset, void (*build)(tb_graph *g)) {
  pt_pair p;
  p.before = pt_ready_graph(opset, build, &p.ma);
  p.after = pt_ready_graph(opset, build, &p.mb);
  return p;
}

static inline void pt_free(pt_pair *p) {
  tb_ir_model_destroy(p->ma);
  tb_ir_model_destroy(p->mb);
}

enum { PT_NO_COMPARE = 0 }; /* a seed for pt_assert_kept: outputs not compared */

/* The pass leaves the graph built by `build` alone: it reports no change, the op types stay `ops`, and
 * (unless seed is PT_NO_COMPARE) the outputs on random inputs from seed stay bit-identical. */
static inline void pt_assert_kept(int64_t opset, void (*build)(tb_graph *g), const char *pass, const char *ops, uint32_t seed) {
  pt_pair p = pt_build(opset, build);
  tb_pass_stats st = pt_run_pass(p.after, pass);
  pt_assert_ops(p.after, "after:", ops);
  assert_int_equal(st.changed, 0);
  if (seed != PT_NO_COMPARE) pt_compare(p.before, p.after, seed, 0.0);
  pt_free(&p);
}

#endif
