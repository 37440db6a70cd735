/* The device's memory plan: the values the device itself computes (side TB_EXEC_DEVICE) laid out in one arena, a
 * single block of the device backend's caching allocator held by the executor, with the same lifetimes and offsets
 * rule as the CPU's plan (plan.c). A planned device output is a view of the arena made on first use and kept while
 * the plan holds, so a run allocates nothing on the device for its intermediate values, the device's peak is the
 * planned bytes, and the addresses kernels get are the same from run to run. Made with the CPU's plan (exec.c
 * plan_from); a device too full for the arena keeps the per-value blocks (slower to allocate, still correct). */
#include <stdlib.h>
#include <string.h>
#include "backend/tensor/tensor_impl.h"
#include "model/exec_impl.h"

void tb_exec_device_plan_drop(tb_exec *e) {
  for (size_t v = 0; e->darena_views && v < e->g->n_values; v++) {
    tb_tensor_destroy(e->darena_views[v]);
    e->darena_views[v] = NULL;
  }
  free(e->darena_views);
  e->darena_views = NULL;
  tb_tensor_destroy(e->darena);
  e->darena = NULL;
  tb_plan_free(&e->dplan);
}

void tb_exec_device_plan(tb_exec *e, const tb_value_type *types) {
  tb_exec_device_plan_drop(e);
  const tb_graph *g = e->g;
  tb_backend *device = e->n_sides ? e->sides[0].backend : NULL;
  if (!device || !e->placement) return;
  uint64_t *bytes = calloc(g->n_values ? g->n_values : 1, sizeof *bytes);
  bool any = false;
  for (size_t v = 0; bytes && v < g->n_values; v++) {
    int producer = g->values[v].producer;
    if (producer >= 0 && e->placement[producer].side == TB_EXEC_DEVICE) bytes[v] = tb_plan_value_bytes(&types[v]);
    any |= bytes[v] > 0;
  }
  bool ok = bytes && any && tb_plan_build(g, bytes, &e->dplan) == TB_OK && e->dplan.arena_bytes > 0;
  free(bytes);
  if (ok) {
    int64_t size = (int64_t)e->dplan.arena_bytes;
    e->darena_views = calloc(g->n_values ? g->n_values : 1, sizeof *e->darena_views);
    ok = e->darena_views && tb_tensor_create(device, TB_DTYPE_U8, 1, &size, &e->darena) == TB_OK;
  }
  if (!ok) tb_exec_device_plan_drop(e); /* per-value blocks instead */
}

uint64_t tb_exec_device_planned_bytes(const tb_exec *e) { return e->darena ? e->dplan.arena_bytes : 0; }

tb_status tb_exec_device_view(tb_exec *e, int v, const tb_value_type *t, const int64_t *shape, tb_tensor **out) {
  *out = NULL;
  if (!e->planned || !e->darena || e->dplan.offset[v] < 0 || !e->plan_types) return TB_OK;
  const tb_value_type *planned = &e->plan_types[v];
  if (planned->dtype != t->dtype || planned->ndim != t->ndim || !planned->has_shape) return TB_OK;
  for (size_t d = 0; d < t->ndim; d++)
    if (planned->dims[d].value != shape[d]) return TB_OK;
  if (!e->darena_views[v]) {
    size_t es = tb_dtype_size(t->dtype);
    int64_t numel, strides[TB_MAX_DIMS];
    tb_status st = tb_shape_check("device plan", t->ndim, shape, es, &numel, strides);
    if (st == TB_OK)
      st = tb_tensor_wrap(e->darena->storage, t->dtype, t->ndim, shape, strides, e->dplan.offset[v] / (int64_t)es,
                          &e->darena_views[v]);
    if (st != TB_OK) return st;
  }
  *out = e->darena_views[v];
  return TB_OK;
}

bool tb_exec_is_device_view(const tb_exec *e, int v, const tb_tensor *t) {
  return v >= 0 && e->darena_views && t == e->darena_views[v];
}
