/* The graph IR's builder: models and graphs, the value name index, values, nodes, arena strings, constant
 * tensors, and a deep copy of a graph (preparation rewrites a copy, never the loaded model). */
#include "ir/ir.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- The name index: open addressing, value name -> value index ------------------------------------ */

typedef struct name_index {
  int *slots; /* value index or -1 */
  size_t cap; /* power of two */
  size_t count;
} name_index;

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool index_put(name_index *ix, const tb_value *values, int value);

static bool index_grow(name_index *ix, const tb_value *values, size_t n_values) {
  size_t cap = ix->cap ? ix->cap * 2 : 64;
  int *slots = malloc(cap * sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < cap; i++) slots[i] = -1;
  free(ix->slots);
  ix->slots = slots;
  ix->cap = cap;
  ix->count = 0;
  for (size_t v = 0; v < n_values; v++) index_put(ix, values, (int)v);
  return true;
}

static bool index_put(name_index *ix, const tb_value *values, int value) {
  size_t mask = ix->cap - 1;
  for (size_t i = name_hash(values[value].name) & mask;; i = (i + 1) & mask) {
    if (ix->slots[i] < 0) {
      ix->slots[i] = value;
      ix->count++;
      return true;
    }
    if (strcmp(values[ix->slots[i]].name, values[value].name) == 0) return true; /* first one wins */
  }
}

static int index_get(const name_index *ix, const tb_value *values, const char *name) {
  if (!ix || !ix->cap) return -1;
  size_t mask = ix->cap - 1;
  for (size_t i = name_hash(name) & mask; ix->slots[i] >= 0; i = (i + 1) & mask)
    if (strcmp(values[ix->slots[i]].name, name) == 0) return ix->slots[i];
  return -1;
}

bool tb_graph_reindex(tb_graph *g) {
  name_index *ix = g->name_index;
  if (!ix) {
    ix = calloc(1, sizeof *ix);
    if (!ix) return false;
    g->name_index = ix;
  }
  size_t cap = 64;
  while (cap < g->n_values * 2 + 2) cap *= 2;
  free(ix->slots);
  ix->slots = NULL;
  ix->cap = cap / 2;
  return index_grow(ix, g->values, g->n_values);
}

/* ---- Models ------------------------------------------------------------------------------------- */

tb_ir_model *tb_ir_model_new(void) { return calloc(1, sizeof(tb_ir_model)); }

void tb_ir_model_destroy(tb_ir_model *m) {
  if (!m) return;
  tb_graph_destroy(m->graph);
  for (size_t i = 0; i < m->n_owned; i++) free(m->owned[i]);
  free(m->owned);
  free(m->symbols);
  if (m->mapping) munmap(m->mapping, m->file_size);
  free(m->dir);
  tb_arena_free(&m->arena);
  free(m);
}

bool tb_ir_model_own(tb_ir_model *m, void *block) {
  if (m->n_owned == m->cap_owned) {
    size_t cap = m->cap_owned ? m->cap_owned * 2 : 16;
    void **owned = realloc(m->owned, cap * sizeof *owned);
    if (!owned) {
      free(block);
      return false;
    }
    m->owned = owned;
    m->cap_owned = cap;
  }
  m->owned[m->n_owned++] = block;
  return true;
}

int tb_ir_model_symbol(tb_ir_model *m, const char *name) {
  for (size_t i = 0; i < m->n_symbols; i++)
    if (strcmp(m->symbols[i], name) == 0) return (int)i;
  if (m->n_symbols == m->cap_symbols) {
    size_t cap = m->cap_symbols ? m->cap_symbols * 2 : 8;
    const char **symbols = realloc(m->symbols, cap * sizeof *symbols);
    if (!symbols) return -1;
    m->symbols = symbols;
    m->cap_symbols = cap;
  }
  const char *copy = tb_arena_strdup(&m->arena, name);
  if (m->arena.failed) return -1;
  m->symbols[m->n_symbols] = copy;
  return (int)m->n_symbols++;
}

int64_t tb_ir_model_opset(const tb_ir_model *m, const char *domain) {
  if (!m) return 0;
  if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
  for (size_t i = 0; i < m->n_opsets; i++) {
    const char *d = m->opsets[i].domain ? m->opsets[i].domain : "";
    if (strcmp(d, "ai.onnx") == 0) d = "";
    if (strcmp(d, domain) == 0) return m->opsets[i].version;
  }
  return 0;
}

/* ---- Graphs ------------------------------------------------------------------------------------- */

static tb_graph *graph_create(tb_ir_model *model, tb_graph *parent, const char *name, bool is_main) {
  tb_graph *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->model = model;
  g->parent = parent;
  g->name = tb_arena_strdup(&g->arena, name);
  if (g->arena.failed || !tb_graph_reindex(g)) {
    tb_graph_destroy(g);
    return NULL;
  }
  if (is_main && model && !parent && !model->graph) model->graph = g;
  return g;
}

tb_graph *tb_graph_new(tb_ir_model *model, tb_graph *parent, const char *name) {
  return graph_create(model, parent, name, true);
}

static bool seen_before(tb_graph *const *list, size_t n, const tb_graph *g) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == g) return true;
  return false;
}

void tb_node_destroy_subgraphs(tb_node *n) {
  for (size_t a = 0; a < n->n_attrs; a++) {
    tb_attr *at = &n->attrs[a];
    if (at->type == TB_ATTR_GRAPH && at->g) {
      tb_graph_destroy(at->g);
      at->g = NULL;
    } else if (at->type == TB_ATTR_GRAPHS && at->graphs) {
      tb_graph **list = (tb_graph **)at->graphs;
      for (size_t i = 0; i < at->count; i++)
        if (list[i] && !seen_before(list, i, list[i])) tb_graph_destroy(list[i]);
      for (size_t i = 0; i < at->count; i++) list[i] = NULL;
    }
  }
}

void tb_graph_destroy(tb_graph *g) {
  if (!g) return;
  for (size_t i = 0; i < g->n_nodes; i++) tb_node_destroy_subgraphs(&g->nodes[i]);
  if (g->model && g->model->graph == g) g->model->graph = NULL;
  name_index *ix = g->name_index;
  if (ix) free(ix->slots);
  free(ix);
  free(g->values);
  free(g->nodes);
  tb_arena_free(&g->arena);
  free(g);
}

int tb_graph_find(const tb_graph *g, const char *name) {
  if (!g || !name) return -1;
  return index_get(g->name_index, g->values, name);
}

static int add_value(tb_graph *g, const char *name) {
  if (g->n_values == g->cap_values) {
    size_t cap = g->cap_values ? g->cap_values * 2 : 32;
    tb_value *values = realloc(g->values, cap * sizeof *values);
    if (!values) return -1;
    g->values = values;
    g->cap_values = cap;
  }
  const char *copy = tb_arena_strdup(&g->arena, name);
  if (g->arena.failed) return -1;
  tb_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = copy;
  v->type.kind = TB_VALUE_TENSOR;
  v->producer = -1;
  v->outer = -1;
  int index = (int)g->n_values++;
  name_index *ix = g->name_index;
  if ((ix->count + 1) * 2 > ix->cap && !index_grow(ix, g->values, g->n_values - 1)) {
    g->n_values--;
    return -1;
  }
  index_put(ix, g->values, index);
  return index;
}

int tb_graph_value(tb_graph *g, const char *name) {
  if (!g || !name) return -1;
  int found = tb_graph_find(g, name);
  return found >= 0 ? found : add_value(g, name);
}

int tb_graph_new_value(tb_graph *g, const char *hint) {
  if (!g) return -1;
  if (!hint || !*hint) hint = "tmp";
  if (tb_graph_find(g, hint) < 0) return add_value(g, hint);
  size_t len = strlen(hint) + 24;
  char *buf = malloc(len);
  if (!buf) return -1;
  int index = -1;
  for (unsigned long k = 1;; k++) {
    snprintf(buf, len, "%s_%lu", hint, k);
    if (tb_graph_find(g, buf) < 0) {
      index = add_value(g, buf);
      break;
    }
  }
  free(buf);
  return index;
}

const char *tb_graph_strdup(tb_graph *g, const char *s) { return tb_arena_strdup(&g->arena, s); }

void *tb_graph_alloc(tb_graph *g, size_t bytes) { return tb_arena_alloc(&g->arena, bytes ? bytes : 1); }

static void *graph_dup(tb_graph *g, const void *src, size_t bytes) {
  if (!src || !bytes) return NULL;
  void *p = tb_arena_alloc(&g->arena, bytes);
  if (p) memcpy(p, src, bytes);
  return p;
}

/* A copy of `src` whose strings and arrays live in g's arena; tensors and graphs are shared (moved). */
static bool copy_attr(tb_graph *g, tb_attr *dst, const tb_attr *src) {
  *dst = *src;
  dst->name = tb_arena_strdup(&g->arena, src->name);
  if (src->s) {
    char *s = tb_arena_alloc(&g->arena, src->s_len + 1);
    if (!s) return false;
    memcpy(s, src->s, src->s_len);
    s[src->s_len] = '\0';
    dst->s = s;
  }
  if (src->count) {
    if (src->floats && !(dst->floats = graph_dup(g, src->floats, src->count * sizeof(float)))) return false;
    if (src->ints && !(dst->ints = graph_dup(g, src->ints, src->count * sizeof(int64_t)))) return false;
    if (src->tensors && !(dst->tensors = graph_dup(g, src->tensors, src->count * sizeof(tb_ir_tensor *)))) return false;
    if (src->graphs && !(dst->graphs = graph_dup(g, src->graphs, src->count * sizeof(tb_graph *)))) return false;
    if (src->strings) {
      const char **strings = tb_arena_alloc(&g->arena, src->count * sizeof *strings);
      if (!strings) return false;
      for (size_t i = 0; i < src->count; i++) strings[i] = tb_arena_strdup(&g->arena, src->strings[i]);
      dst->strings = strings;
    }
  }
  return !g->arena.failed;
}

int tb_graph_add_node(tb_graph *g, const char *name, const char *op_type, const char *domain, const int *inputs,
                      size_t n_inputs, const int *outputs, size_t n_outputs, const tb_attr *attrs, size_t n_attrs) {
  if (!g || !op_type) return -1;
  if (g->n_nodes == g->cap_nodes) {
    size_t cap = g->cap_nodes ? g->cap_nodes * 2 : 32;
    tb_node *nodes = realloc(g->nodes, cap * sizeof *nodes);
    if (!nodes) return -1;
    g->nodes = nodes;
    g->cap_nodes = cap;
  }
  if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
  tb_node n = {0};
  n.name = tb_arena_strdup(&g->arena, name);
  n.op_type = tb_arena_strdup(&g->arena, op_type);
  n.domain = tb_arena_strdup(&g->arena, domain);
  n.opset = (int)tb_ir_model_opset(g->model, domain);
  n.inputs = tb_arena_alloc(&g->arena, (n_inputs ? n_inputs : 1) * sizeof(int));
  n.outputs = tb_arena_alloc(&g->arena, (n_outputs ? n_outputs : 1) * sizeof(int));
  n.attrs = tb_arena_alloc(&g->arena, (n_attrs ? n_attrs : 1) * sizeof(tb_attr));
  if (!n.inputs || !n.outputs || !n.attrs) return -1;
  if (n_inputs) memcpy(n.inputs, inputs, n_inputs * sizeof(int));
  if (n_outputs) memcpy(n.outputs, outputs, n_outputs * sizeof(int));
  for (size_t i = 0; i < n_attrs; i++)
    if (!copy_attr(g, &n.attrs[i], &attrs[i])) return -1;
  n.n_inputs = n_inputs;
  n.n_outputs = n_outputs;
  n.n_attrs = n_attrs;
  if (g->arena.failed) return -1;
  int index = (int)g->n_nodes;
  for (size_t i = 0; i < n_outputs; i++)
    if (outputs[i] >= 0 && (size_t)outputs[i] < g->n_values && g->values[outputs[i]].producer < 0)
      g->values[outputs[i]].producer = index;
  g->nodes[g->n_nodes++] = n;
  return index;
}

tb_ir_tensor *tb_graph_new_tensor(tb_graph *g, const char *name, tb_dtype dtype, size_t ndim, const int64_t *dims,
                                  void **data) {
  if (!g || ndim > TB_MAX_DIMS || tb_dtype_size(dtype) == 0) return NULL;
  size_t numel = 1;
  for (size_t i = 0; i < ndim; i++) {
    if (dims[i] < 0) return NULL;
    if (dims[i] && numel > SIZE_MAX / (size_t)dims[i]) return NULL;
    numel *= (size_t)dims[i];
  }
  size_t elem = tb_dtype_size(dtype);
  if (numel > SIZE_MAX / elem - 64) return NULL;
  tb_ir_tensor *t = tb_arena_alloc(&g->arena, sizeof *t);
  void *bytes = tb_arena_alloc(&g->arena, numel * elem + 1);
  if (!t || !bytes) return NULL;
  memset(t, 0, sizeof *t);
  t->name = tb_arena_strdup(&g->arena, name);
  t->dtype = dtype;
  t->ndim = ndim;
  for (size_t i = 0; i < ndim; i++) t->dims[i] = dims[i];
  t->data = bytes;
  t->nbytes = numel * elem;
  if (data) *data = bytes;
  return t;
}

/* ---- Deep copy ---------------------------------------------------------------------------------- */

static tb_ir_tensor *clone_tensor(tb_graph *g, const tb_ir_tensor *src) {
  if (!src) return NULL;
  tb_ir_tensor *t = tb_arena_alloc(&g->arena, sizeof *t);
  if (!t) return NULL;
  *t = *src;
  t->name = tb_arena_strdup(&g->arena, src->name);
  return t; /* data stays where it is: the model's file or memory the source model owns */
}

/* The copy's attrs share the source's graphs and tensors until here: give it its own. On failure the graphs
 * not cloned yet are NULL, so destroying the copy never touches the source. */
static bool clone_node_attrs(tb_graph *dst, tb_node *copy, const tb_node *src) {
  for (size_t a = 0; a < copy->n_attrs; a++) {
    tb_attr *at = &copy->attrs[a];
    if (at->type == TB_ATTR_GRAPH) at->g = NULL;
    if (at->type == TB_ATTR_GRAPHS && at->graphs) memset((void *)at->graphs, 0, at->count * sizeof(tb_graph *));
  }
  for (size_t a = 0; a < copy->n_attrs; a++) {
    tb_attr *at = &copy->attrs[a];
    const tb_attr *from = &src->attrs[a];
    if (at->type == TB_ATTR_GRAPH && from->g && !(at->g = tb_graph_clone(from->g, dst))) return false;
    if (at->type == TB_ATTR_GRAPHS && at->graphs) {
      tb_graph **list = (tb_graph **)at->graphs;
      for (size_t i = 0; i < at->count; i++)
        if (from->graphs[i] && !(list[i] = tb_graph_clone(from->graphs[i], dst))) return false;
    }
    if (at->t && !(at->t = clone_tensor(dst, at->t))) return false;
    if (at->tensors) {
      tb_ir_tensor **list = (tb_ir_tensor **)at->tensors;
      for (size_t i = 0; i < at->count; i++)
        if (list[i] && !(list[i] = clone_tensor(dst, list[i]))) return false;
    }
  }
  return true;
}

tb_graph *tb_graph_clone(const tb_graph *src, tb_graph *parent) {
  if (!src) return NULL;
  tb_graph *g = graph_create(src->model, parent, src->name, false);
  if (!g) return NULL;
  bool ok = true;
  for (size_t i = 0; ok && i < src->n_values; i++) {
    int v = add_value(g, src->values[i].name);
    if (v != (int)i) {
      ok = false;
      break;
    }
    const char *name = g->values[v].name;
    g->values[v] = src->values[i];
    g->values[v].name = name;
    if (src->values[i].constant && !(g->values[v].constant = clone_tensor(g, src->values[i].constant))) ok = false;
  }
  for (size_t i = 0; ok && i < src->n_nodes; i++) {
    const tb_node *n = &src->nodes[i];
    int index = tb_graph_add_node(g, n->name, n->op_type, n->domain, n->inputs, n->n_inputs, n->outputs, n->n_outputs,
                                  n->attrs, n->n_attrs);
    if (index < 0) {
      ok = false;
      break;
    }
    tb_node *copy = &g->nodes[index];
    copy->opset = n->opset;
    copy->def = n->def;
    copy->params = NULL; /* the parameters point into the source graph: parsed again for the copy */
    copy->dead = n->dead;
    if (!clone_node_attrs(g, copy, n)) ok = false;
  }
  if (ok) {
    g->inputs = graph_dup(g, src->inputs, src->n_inputs * sizeof(int));
    g->n_inputs = src->n_inputs;
    g->outputs = graph_dup(g, src->outputs, src->n_outputs * sizeof(int));
    g->n_outputs = src->n_outputs;
    ok = (!src->n_inputs || g->inputs) && (!src->n_outputs || g->outputs) && !g->arena.failed;
  }
  if (!ok) {
    tb_graph_destroy(g);
    return NULL;
  }
  return g;
}
