/* The routes to a prepared model's device through other backends (routes.h): found by one discovery of
 * every accelerator backend, matched by discovery's physical_id (equal PCI bus id or UUID), opened one by
 * one when a node first needs them. */
#include "model/routes.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"

enum { MAX_ROUTES = 8, MAX_DECLARED = 4 };

typedef struct route {
  const tb_device_info *info; /* in routes->list */
  tb_backend *backend;        /* opened on first use */
  bool tried;                 /* opening was tried */
  char *why_not;              /* when it could not be opened */
  char identity[160];
} route;

struct tb_routes {
  tb_backend *device;
  bool discovered;
  tb_device_list *list;
  route items[MAX_ROUTES];
  size_t count;
};

static char declared[MAX_DECLARED][2][32];
static size_t n_declared;

void tb_routes_test_declare_same(const char *a, const char *b) {
  if (!a || !b) {
    n_declared = 0;
    return;
  }
  if (n_declared == MAX_DECLARED) return;
  snprintf(declared[n_declared][0], sizeof declared[0][0], "%s", a);
  snprintf(declared[n_declared][1], sizeof declared[0][1], "%s", b);
  n_declared++;
}

static bool declared_same(const char *a, const char *b) {
  for (size_t i = 0; i < n_declared; i++)
    if ((strcmp(declared[i][0], a) == 0 && strcmp(declared[i][1], b) == 0) ||
        (strcmp(declared[i][0], b) == 0 && strcmp(declared[i][1], a) == 0))
      return true;
  return false;
}

static bool declared_with(const char *device) {
  for (size_t i = 0; i < n_declared; i++)
    if (strcmp(declared[i][0], device) == 0 || strcmp(declared[i][1], device) == 0) return true;
  return false;
}

static bool is_route(const tb_device_info *device, const tb_device_info *c) {
  if (c == device || c->backend == device->backend || c->backend == TB_BACKEND_CPU || c->index < 0 || !c->usable) return false;
  if (declared_same(device->device, c->device)) return true;
  return c->physical_id == device->physical_id && c->type != TB_DEVICE_CPU;
}

size_t tb_routes_match(const tb_device_list *list, const char *device, const tb_device_info **out, size_t cap) {
  const tb_device_info *self = NULL;
  if (!list || !device || tb_device_list_find(list, device, &self) != TB_OK || !self) {
    return 0;
  }
  size_t n = 0;
  /* tb_backend_kind's order is the preference: the native backends, then Vulkan, then OpenCL */
  for (int kind = TB_BACKEND_CPU + 1; kind < TB_BACKEND_COUNT; kind++)
    for (size_t i = 0; i < tb_device_list_count(list); i++) {
      const tb_device_info *c = tb_device_list_get(list, i);
      if (c->backend != (tb_backend_kind)kind || !is_route(self, c)) continue;
      if (n < cap) out[n] = c;
      n++;
    }
  return n;
}

tb_routes *tb_routes_create(tb_backend *device) {
  tb_routes *r = calloc(1, sizeof *r);
  if (r) r->device = device;
  return r;
}

void tb_routes_destroy(tb_routes *r) {
  if (!r) return;
  for (size_t i = 0; i < r->count; i++) {
    tb_backend_destroy(r->items[i].backend);
    free(r->items[i].why_not);
  }
  tb_device_list_destroy(r->list);
  free(r);
}

static void describe_identity(const tb_device_info *self, route *rt, const char *noun) {
  const tb_device_info *c = rt->info;
  if (declared_same(self->device, c->device))
    snprintf(rt->identity, sizeof rt->identity, "declared the same device as %s by the test hook", self->device);
  else if (self->pci_bus_id[0] && strcmp(self->pci_bus_id, c->pci_bus_id) == 0)
    snprintf(rt->identity, sizeof rt->identity, "the same %s (PCI %s)", noun, c->pci_bus_id);
  else
    snprintf(rt->identity, sizeof rt->identity, "the same %s (UUID %s)", noun, c->uuid);
}

/* One discovery of every backend but the CPU; the routes of the device's entry in it. A discovery that
 * fails leaves no routes: the nodes then run on the CPU, and their reason says no route was found. A CPU
 * implementation of Vulkan or OpenCL has no route (none is looked for). */
static void discover(tb_routes *r) {
  r->discovered = true;
  const tb_device_info *self_then = tb_backend_device(r->device);
  if (self_then && self_then->type == TB_DEVICE_CPU && !declared_with(self_then->device))
    return; /* lavapipe, PoCL: the CPU itself, reached through another API; no GPU to find a route to */
  tb_discover_options o = {.size = sizeof o, .backends = ((1u << TB_BACKEND_COUNT) - 1u) & ~(1u << TB_BACKEND_CPU)};
  if (!self_then || tb_discover(&o, &r->list) != TB_OK) {
    return;
  }
  const tb_device_info *found[MAX_ROUTES];
  size_t n = tb_routes_match(r->list, self_then->device, found, MAX_ROUTES);
  const tb_device_info *self = NULL;
  (void)tb_device_list_find(r->list, self_then->device, &self);
  for (size_t i = 0; i < n && i < MAX_ROUTES; i++) {
    r->items[i].info = found[i];
    describe_identity(self, &r->items[i], tb_routes_noun(r));
  }
  r->count = n < MAX_ROUTES ? n : MAX_ROUTES;
}

size_t tb_routes_count(tb_routes *r) {
  if (r && !r->discovered) discover(r);
  return r ? r->count : 0;
}

const char *tb_routes_device(const tb_routes *r, size_t i) { return i < r->count ? r->items[i].info->device : ""; }
const char *tb_routes_identity(const tb_routes *r, size_t i) { return i < r->count ? r->items[i].identity : ""; }

const char *tb_routes_noun(const tb_routes *r) {
  const tb_device_info *d = r ? tb_backend_device(r->device) : NULL;
  if (!d) return "device";
  switch (d->type) {
    case TB_DEVICE_DISCRETE_GPU:
    case TB_DEVICE_INTEGRATED_GPU:
    case TB_DEVICE_VIRTUAL_GPU: return "GPU";
    case TB_DEVICE_TPU: return "TPU";
    default: return "device";
  }
}

tb_backend *tb_routes_backend(tb_routes *r, size_t i, const char **why_not) {
  *why_not = NULL;
  if (i >= tb_routes_count(r)) return NULL;
  route *rt = &r->items[i];
  if (!rt->tried) {
    rt->tried = true;
    if (tb_backend_create(rt->info->device, &rt->backend) != TB_OK) {
      char buf[600];
      snprintf(buf, sizeof buf, "%s could not be opened: %s", rt->info->device, tb_last_error());
      rt->why_not = strdup(buf);
      rt->backend = NULL;
    }
  }
  if (!rt->backend) *why_not = rt->why_not ? rt->why_not : "it could not be opened";
  return rt->backend;
}
