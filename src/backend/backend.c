/* The backend handle: one device chosen through tb_select, with the device list that owns its
 * description kept inside the handle, the device opened through its backend's ops and a caching
 * allocator over them; moving the handle to another device; reference counting for tensor storage;
 * and the seeds' conveniences (list available backends, detect the best, is-available), each running
 * discovery. The memory calls are in backend_memory.c. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/backend.h>
#include <tensorbridge/policy.h>
#include "backend/allocator.h"
#include "backend/backend_impl.h"
#include "backend/backend_refs.h"
#include "core/error.h"
#include "select/request.h"

/* The handle as allocated: the shared struct first, then the counts only this file touches. */
typedef struct backend_box {
  struct tb_backend b;
  atomic_size_t refs;     /* the caller's reference + one per storage */
  atomic_size_t tensors;  /* live tensors, views included */
  atomic_size_t storages; /* live storages (a DLPack export keeps one alive) */
} backend_box;

static backend_box *box_of(const tb_backend *b) { return (backend_box *)(uintptr_t)b; }

/* Open `device` through its kind's ops and make an allocator over it. */
static tb_status open_device(const tb_device_info *device, const tb_backend_ops **out_ops, void **out_state,
                             tb_allocator **out_allocator) {
  const tb_backend_ops *ops = tb_backend_ops_for(device->backend);
  if (!ops)
    return tb_error(TB_ERR_UNSUPPORTED,
                    "memory and execution on %s are not implemented in this build (device %s); use another "
                    "backend, such as cpu",
                    tb_backend_name(device->backend), device->device);
  void *state = NULL;
  tb_status st = ops->open(device, &state);
  if (st != TB_OK) return st;
  tb_allocator *allocator = NULL;
  st = tb_allocator_create(ops, state, device->device, &allocator);
  if (st != TB_OK) {
    ops->close(state);
    return st;
  }
  *out_ops = ops;
  *out_state = state;
  *out_allocator = allocator;
  return TB_OK;
}

static void close_device(const tb_backend_ops *ops, void *state, tb_allocator *allocator) {
  tb_allocator_destroy(allocator);
  if (ops) ops->close(state);
}

tb_status tb_backend_create(const char *request, tb_backend **out_backend) {
  if (!out_backend) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_create: out_backend must not be NULL");
  *out_backend = NULL;
  tb_request_spec spec; /* read once: the probe mask and the selection both come from it */
  tb_request_parse(request, &spec);
  tb_device_list *list = NULL;
  tb_discover_options options = {.size = sizeof options, .backends = tb_request_probe_mask(&spec)};
  tb_status st = tb_discover(&options, &list);
  if (st != TB_OK) return st;
  tb_selection *sel = NULL;
  st = tb_select_spec(list, &spec, &sel);
  if (st != TB_OK) {
    tb_device_list_destroy(list);
    return st;
  }
  const tb_device_info *device = tb_selection_device(sel);
  tb_selection_destroy(sel);
  backend_box *box = calloc(1, sizeof *box);
  if (!box) {
    tb_device_list_destroy(list);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_backend_create: out of host memory");
  }
  tb_backend *b = &box->b;
  st = open_device(device, &b->ops, &b->state, &b->allocator);
  if (st == TB_OK && pthread_mutex_init(&b->lock, NULL) != 0) {
    close_device(b->ops, b->state, b->allocator);
    st = tb_error(TB_ERR_INTERNAL, "tb_backend_create: pthread_mutex_init failed");
  }
  if (st != TB_OK) {
    free(box);
    tb_device_list_destroy(list);
    return st;
  }
  b->list = list;
  b->device = device;
  atomic_init(&box->refs, 1);
  atomic_init(&box->tensors, 0);
  atomic_init(&box->storages, 0);
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

static void backend_release(tb_backend *backend) {
  backend_box *box = box_of(backend);
  if (atomic_fetch_sub(&box->refs, 1) != 1) return;
  close_device(backend->ops, backend->state, backend->allocator);
  pthread_mutex_destroy(&backend->lock);
  tb_device_list_destroy(backend->list);
  free(box);
}

/* Tensors still alive keep the handle (and their memory) until they are destroyed. */
void tb_backend_destroy(tb_backend *backend) {
  if (backend) backend_release(backend);
}

const tb_device_info *tb_backend_device(const tb_backend *backend) { return backend ? backend->device : NULL; }

tb_backend_kind tb_backend_kind_of(const tb_backend *backend) {
  return backend ? backend->device->backend : TB_BACKEND_COUNT;
}

tb_status tb_backend_storage_acquire(tb_backend *backend, size_t bytes, tb_block **out_block) {
  backend_box *box = box_of(backend);
  *out_block = NULL;
  pthread_mutex_lock(&backend->lock);
  tb_status st = bytes ? tb_allocator_alloc(backend->allocator, bytes, out_block) : TB_OK;
  if (st == TB_OK) {
    atomic_fetch_add(&box->refs, 1);
    atomic_fetch_add(&box->storages, 1);
  }
  pthread_mutex_unlock(&backend->lock);
  return st;
}

void tb_backend_storage_release(tb_backend *backend, tb_block *block) {
  backend_box *box = box_of(backend);
  if (block) tb_allocator_free(backend->allocator, block);
  atomic_fetch_sub(&box->storages, 1);
  backend_release(backend);
}

void tb_backend_tensor_added(tb_backend *backend) { atomic_fetch_add(&box_of(backend)->tensors, 1); }
void tb_backend_tensor_removed(tb_backend *backend) { atomic_fetch_sub(&box_of(backend)->tensors, 1); }
size_t tb_backend_live_tensors(const tb_backend *backend) { return atomic_load(&box_of(backend)->tensors); }
size_t tb_backend_live_storages(const tb_backend *backend) { return atomic_load(&box_of(backend)->storages); }

tb_status tb_backend_set_device(tb_backend *backend, int index) {
  if (!backend) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_set_device: backend must not be NULL");
  tb_backend_kind kind = backend->device->backend;
  if (index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_set_device: index %d must be >= 0 (0 is the first %s device)",
                    index, tb_backend_name(kind));
  pthread_mutex_lock(&backend->lock);
  tb_status st = TB_OK;
  if (index == backend->device->index) goto out; /* already there */
  size_t tensors = tb_backend_live_tensors(backend), storages = tb_backend_live_storages(backend);
  if (tensors || storages) {
    st = tb_error(TB_ERR_INVALID_ARGUMENT,
                  "tb_backend_set_device: %zu tensor%s made on %s %s still alive (%zu storage%s, DLPack exports "
                  "included); destroy them before moving the backend to %s:%d",
                  tensors, tensors == 1 ? "" : "s", backend->device->device, tensors == 1 ? "is" : "are", storages,
                  storages == 1 ? "" : "s", tb_backend_name(kind), index);
    goto out;
  }
  char name[32];
  snprintf(name, sizeof name, "%s:%d", tb_backend_name(kind), index);
  const tb_device_info *device = NULL;
  st = tb_device_list_find(backend->list, name, &device);
  if (st != TB_OK) goto out;
  if (!device->usable) {
    st = tb_error(TB_ERR_UNAVAILABLE, "tb_backend_set_device: %s is not usable: %s", device->device, device->reason);
    goto out;
  }
  const tb_backend_ops *ops = NULL;
  void *state = NULL;
  tb_allocator *allocator = NULL;
  st = open_device(device, &ops, &state, &allocator);
  if (st != TB_OK) goto out;
  close_device(backend->ops, backend->state, backend->allocator);
  backend->device = device;
  backend->ops = ops;
  backend->state = state;
  backend->allocator = allocator;
out:
  pthread_mutex_unlock(&backend->lock);
  return st;
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
