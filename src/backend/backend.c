/* The backend handle: one device chosen through tb_select, with the device list that owns its
 * description kept alive inside the handle; and the seeds' conveniences (list available backends,
 * detect the best, is-available), each running discovery. */
#include <stdio.h>
#include <stdlib.h>
#include <tensorbridge/backend.h>
#include <tensorbridge/policy.h>
#include "core/error.h"

struct tb_backend {
  tb_device_list *list;         /* owns *device */
  const tb_device_info *device;
};

tb_status tb_backend_create(const char *request, tb_backend **out_backend) {
  if (!out_backend) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_create: out_backend must not be NULL");
  *out_backend = NULL;
  tb_device_list *list = NULL;
  tb_status st = tb_discover(NULL, &list);
  if (st != TB_OK) return st;
  tb_selection *sel = NULL;
  st = tb_select(list, request, &sel);
  if (st != TB_OK) {
    tb_device_list_destroy(list);
    return st;
  }
  tb_backend *b = calloc(1, sizeof *b);
  if (!b) {
    tb_selection_destroy(sel);
    tb_device_list_destroy(list);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_backend_create: out of host memory");
  }
  b->list = list;
  b->device = tb_selection_device(sel);
  tb_selection_destroy(sel);
  *out_backend = b;
  return TB_OK;
}

tb_status tb_backend_create_kind(tb_backend_kind kind, int index, tb_backend **out_backend) {
  if (!out_backend) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_create_kind: out_backend must not be NULL");
  *out_backend = NULL;
  if ((unsigned)kind >= TB_BACKEND_COUNT)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_create_kind: kind %d is not a tb_backend_kind value", (int)kind);
  if (index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_create_kind: index %d must be >= 0 (0 is the first %s device)",
                    index, tb_backend_name(kind));
  char request[32];
  snprintf(request, sizeof request, "%s:%d", tb_backend_name(kind), index);
  return tb_backend_create(request, out_backend);
}

void tb_backend_destroy(tb_backend *backend) {
  if (!backend) return;
  tb_device_list_destroy(backend->list);
  free(backend);
}

const tb_device_info *tb_backend_device(const tb_backend *backend) { return backend ? backend->device : NULL; }

tb_backend_kind tb_backend_kind_of(const tb_backend *backend) {
  return backend ? backend->device->backend : TB_BACKEND_COUNT;
}

/* Append kind to kinds[0..*n) unless present. */
static void add_kind(tb_backend_kind *kinds, size_t *n, tb_backend_kind kind) {
  for (size_t i = 0; i < *n; i++)
    if (kinds[i] == kind) return;
  kinds[(*n)++] = kind;
}

/* Available backends in the order `auto` ranks their best device; backends whose usable devices are
 * all passed over by `auto` (other routes to ranked hardware, CPU implementations) follow in the
 * default order. */
static tb_status available_in_order(const tb_device_list *list, tb_backend_kind *kinds, size_t *n) {
  static const tb_backend_kind default_order[TB_BACKEND_COUNT] = {TB_BACKEND_CUDA, TB_BACKEND_ROCM,   TB_BACKEND_XPU,
                                                                  TB_BACKEND_TPU,  TB_BACKEND_VULKAN, TB_BACKEND_OPENCL,
                                                                  TB_BACKEND_CPU};
  *n = 0;
  tb_selection *sel = NULL;
  if (tb_select(list, "auto", &sel) == TB_OK) {
    for (size_t i = 0; i < tb_selection_candidate_count(sel); i++) {
      const tb_candidate *c = tb_selection_candidate(sel, i);
      if (c->rank > 0) add_kind(kinds, n, c->device->backend);
    }
    tb_selection_destroy(sel);
  }
  for (int k = 0; k < TB_BACKEND_COUNT; k++)
    if (tb_device_list_report(list, default_order[k])->available) add_kind(kinds, n, default_order[k]);
  return TB_OK;
}

tb_status tb_backend_list_available(tb_backend_kind *out_kinds, size_t capacity, size_t *out_count) {
  if (!out_count || (!out_kinds && capacity))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_backend_list_available: out_count must not be NULL, nor out_kinds when capacity > 0");
  *out_count = 0;
  tb_device_list *list = NULL;
  tb_status st = tb_discover(NULL, &list);
  if (st != TB_OK) return st;
  tb_backend_kind kinds[TB_BACKEND_COUNT];
  size_t n = 0;
  available_in_order(list, kinds, &n);
  tb_device_list_destroy(list);
  *out_count = n;
  if (capacity < n)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_backend_list_available: capacity %zu is too small for %zu available backends; pass "
                    "TB_BACKEND_COUNT",
                    capacity, n);
  for (size_t i = 0; i < n; i++) out_kinds[i] = kinds[i];
  return TB_OK;
}

tb_status tb_backend_detect_best(tb_backend_kind *out_kind) {
  if (!out_kind) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_detect_best: out_kind must not be NULL");
  tb_device_list *list = NULL;
  tb_status st = tb_discover(NULL, &list);
  if (st != TB_OK) return st;
  tb_selection *sel = NULL;
  st = tb_select(list, "auto", &sel);
  if (st == TB_OK) *out_kind = tb_selection_device(sel)->backend;
  tb_selection_destroy(sel);
  tb_device_list_destroy(list);
  return st;
}

bool tb_backend_is_available(tb_backend_kind kind) {
  if ((unsigned)kind >= TB_BACKEND_COUNT) return false;
  tb_discover_options options = {.size = sizeof options, .backends = 1u << kind};
  tb_device_list *list = NULL;
  if (tb_discover(&options, &list) != TB_OK) return false;
  bool available = tb_device_list_report(list, kind)->available;
  tb_device_list_destroy(list);
  return available;
}
