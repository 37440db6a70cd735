/* Where the executor's values live: the CPU, the device, and the routes to the device's hardware that
 * placement adopted (its "sides"). Constants are copied to a device side once and kept; other values are
 * copied when a node on another side needs them and freed with the value. A copy between two device
 * sides (a CUDA tensor for a Vulkan kernel) goes through the host: tb_tensor_copy has no peer path between
 * two backends. */
#include <stdlib.h>
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "model/exec_impl.h"

tb_backend *tb_exec_side_backend(const tb_exec *e, int side) {
  if (side == TB_EXEC_CPU) return e->cpu;
  return side > 0 && (size_t)side <= e->n_sides ? e->sides[side - 1].backend : NULL;
}

int tb_exec_side_of(const tb_exec *e, const tb_tensor *t) {
  tb_backend *b = tb_tensor_backend(t);
  if (tb_backend_kind_of(b) == TB_BACKEND_CPU) return TB_EXEC_CPU;
  for (size_t s = 1; s < e->n_sides; s++)
    if (e->sides[s].backend == b) return (int)s + 1;
  return TB_EXEC_DEVICE; /* the device, or a caller's tensor of its kind */
}

int tb_exec_add_side(tb_exec *e, tb_backend *backend) {
  for (size_t s = 0; s < e->n_sides; s++)
    if (e->sides[s].backend == backend) return (int)s + 1;
  size_t nv = e->g->n_values ? e->g->n_values : 1;
  exec_side *grown = realloc(e->sides, (e->n_sides + 1) * sizeof *grown);
  if (!grown) return -1;
  e->sides = grown;
  exec_side *s = &e->sides[e->n_sides];
  s->backend = backend;
  s->consts = calloc(nv, sizeof *s->consts);
  s->copies = calloc(nv, sizeof *s->copies);
  if (!s->consts || !s->copies) {
    free(s->consts);
    free(s->copies);
    return -1;
  }
  return (int)++e->n_sides;
}

void tb_exec_free_sides(tb_exec *e) {
  for (size_t s = 0; s < e->n_sides; s++) {
    for (size_t v = 0; v < e->g->n_values; v++) {
      tb_tensor_destroy(e->sides[s].consts[v]);
      tb_tensor_destroy(e->sides[s].copies[v]);
    }
    free(e->sides[s].consts);
    free(e->sides[s].copies);
  }
  free(e->sides);
  e->sides = NULL;
  e->n_sides = 0;
}

static tb_status copy_to(tb_backend *to, const tb_tensor *t, tb_tensor **out) {
  tb_status st = tb_tensor_create(to, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), out);
  if (st == TB_OK) st = tb_tensor_copy(*out, t);
  if (st != TB_OK) {
    tb_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

tb_status tb_exec_const_on(tb_exec *e, int v, int side, tb_tensor **out) {
  exec_side *s = &e->sides[side - 1];
  if (!s->consts[v]) {
    tb_status st = copy_to(s->backend, e->consts[v], &s->consts[v]);
    if (st != TB_OK) return st;
  }
  *out = s->consts[v];
  return TB_OK;
}

tb_status tb_exec_value_on(tb_exec *e, int v, int side, tb_tensor **out) {
  tb_tensor *t = e->vals[v];
  *out = t;
  if (!t || tb_exec_side_of(e, t) == side) return TB_OK;
  if (side != TB_EXEC_CPU && (side < 0 || (size_t)side > e->n_sides))
    return tb_error(TB_ERR_INTERNAL, "graph '%s': value '%s' is wanted on a device the executor does not have", e->g->name,
                    e->g->values[v].name);
  if (side != TB_EXEC_CPU && e->consts[v] && t == e->consts[v]) return tb_exec_const_on(e, v, side, out);
  int outer = e->g->values[v].outer;
  if (e->parent && outer >= 0 && t == e->parent->vals[outer]) {
    /* an outer value: the caller's copy, kept while the caller holds the value (a constant's for its life), so a
       loop's body does not copy its weights at every iteration */
    int parent_side = side == TB_EXEC_CPU ? TB_EXEC_CPU : tb_exec_add_side(e->parent, tb_exec_side_backend(e, side));
    if (parent_side < 0) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for a copy of '%s'", e->g->name,
                                         e->g->values[v].name);
    return tb_exec_value_on(e->parent, outer, parent_side, out);
  }
  tb_tensor **copy = side == TB_EXEC_CPU ? &e->mirror[v] : &e->sides[side - 1].copies[v];
  if (!*copy) {
    tb_status st = copy_to(tb_exec_side_backend(e, side), t, copy);
    if (st != TB_OK) return st;
  }
  *out = *copy;
  return TB_OK;
}

void tb_exec_drop_mirror(tb_exec *e, int v) {
  tb_tensor_destroy(e->mirror[v]);
  e->mirror[v] = NULL;
  for (size_t s = 0; s < e->n_sides; s++) {
    tb_tensor_destroy(e->sides[s].copies[v]);
    e->sides[s].copies[v] = NULL;
  }
}
