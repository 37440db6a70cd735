/* tb_select: resolve the request, rank the candidates, pick one; and the selection's accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "select/select.h"

static bool selectable(const tb_device_info *d) { return d->usable && d->index >= 0; }

/* `auto` found nothing usable: say what each backend reported. */
static tb_status nothing_usable(const tb_device_list *list, const tb_request *req) {
  char detail[768] = "";
  size_t used = 0;
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const tb_backend_report *r = tb_device_list_report(list, (tb_backend_kind)k);
    int n = snprintf(detail + used, sizeof detail - used, "%s%s: %s", used ? "; " : "", tb_backend_name((tb_backend_kind)k),
                     r->summary[0] ? r->summary : "nothing found");
    if (n < 0 || (size_t)n >= sizeof detail - used) break;
    used += (size_t)n;
  }
  return tb_error(TB_ERR_UNAVAILABLE,
                  "request '%s' (%s) found no usable device among %zu listed (%s); run `tb doctor` for what to fix",
                  req->text, req->source, tb_device_list_count(list), detail);
}

static tb_status choose(tb_selection *sel, const tb_device_list *list, const tb_request *req) {
  if (req->is_auto) {
    tb_status st = tb_rank(sel, list, true, TB_BACKEND_CPU);
    if (st != TB_OK) return st;
    return sel->ranked ? TB_OK : nothing_usable(list, req);
  }
  if (req->device && !selectable(req->device)) return tb_request_unavailable(list, req);
  tb_status st = tb_rank(sel, list, false, req->kind);
  if (st != TB_OK) return st;
  if (!sel->ranked) return tb_request_unavailable(list, req);
  if (req->device) {
    for (size_t i = 0; i < sel->ranked; i++)
      if (sel->candidates[i].device == req->device) tb_rank_choose(sel, i, "chosen: requested by name");
    if (sel->candidates[0].device != req->device)
      return tb_error(TB_ERR_INTERNAL, "tb_select: requested device %s was not among the ranked candidates",
                      req->device->device);
  }
  return TB_OK;
}

tb_status tb_select(const tb_device_list *list, const char *request, tb_selection **out_selection) {
  tb_request_spec spec;
  tb_request_parse(request, &spec);
  return tb_select_spec(list, &spec, out_selection);
}

tb_status tb_select_spec(const tb_device_list *list, const tb_request_spec *spec, tb_selection **out_selection) {
  if (!out_selection) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_select: out_selection must not be NULL");
  *out_selection = NULL;
  if (!list) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_select: list must not be NULL; get one from tb_discover()");
  tb_selection *sel = calloc(1, sizeof *sel);
  if (!sel) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_select: out of host memory");
  tb_request req;
  tb_status st = tb_request_resolve(list, spec, &sel->arena, &req);
  if (st == TB_OK) {
    sel->request = req.text;
    sel->source = req.source;
    st = choose(sel, list, &req);
  }
  if (st == TB_OK) {
    sel->device = sel->candidates[0].device;
    tb_selection_build_explanation(sel);
    if (sel->arena.failed) st = tb_error(TB_ERR_OUT_OF_MEMORY, "tb_select: out of host memory writing the explanation");
  }
  if (st != TB_OK) {
    tb_selection_destroy(sel);
    return st;
  }
  *out_selection = sel;
  return TB_OK;
}

void tb_selection_destroy(tb_selection *selection) {
  if (!selection) return;
  tb_arena_free(&selection->arena);
  free(selection);
}

const tb_device_info *tb_selection_device(const tb_selection *selection) { return selection ? selection->device : NULL; }

const char *tb_selection_source(const tb_selection *selection) { return selection ? selection->source : ""; }

const char *tb_selection_request(const tb_selection *selection) { return selection ? selection->request : ""; }

size_t tb_selection_candidate_count(const tb_selection *selection) { return selection ? selection->count : 0; }

const tb_candidate *tb_selection_candidate(const tb_selection *selection, size_t i) {
  return (selection && i < selection->count) ? &selection->candidates[i] : NULL;
}

const char *tb_selection_explain(const tb_selection *selection) { return selection ? selection->explanation : ""; }
