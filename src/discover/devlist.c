/* The device list: storage for discovered devices and per-backend reports, and its public accessors. */
#include "discover/devlist.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"

tb_device_list *tb_devlist_new(void) {
  tb_device_list *list = calloc(1, sizeof *list);
  if (!list) return NULL;
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    tb_backend_report *r = &list->reports[k].report;
    r->size = sizeof *r;
    r->backend = (tb_backend_kind)k;
    r->summary = "";
    r->fix = "";
  }
  return list;
}

static tb_device_info *add_device(tb_device_list *list, tb_backend_kind backend) {
  if (list->count == list->cap) {
    size_t ncap = list->cap ? list->cap * 2 : 8;
    tb_device_info **grown = realloc(list->devices, ncap * sizeof *grown);
    if (!grown) goto oom;
    list->devices = grown;
    size_t *caps = realloc(list->property_caps, ncap * sizeof *caps);
    if (!caps) goto oom;
    list->property_caps = caps;
    list->cap = ncap;
  }
  tb_device_info *d = calloc(1, sizeof *d);
  if (!d) goto oom;
  d->size = sizeof *d;
  d->backend = backend;
  d->device = d->name = d->vendor = d->architecture = d->arch_id = d->memory_type = "";
  d->driver_version = d->pci_bus_id = d->uuid = d->reason = d->fix = d->capability_source = d->routes = "";
  d->physical_id = (int)list->count;
  list->property_caps[list->count] = 0;
  list->devices[list->count++] = d;
  return d;
oom:
  list->arena.failed = true;
  return NULL;
}

tb_device_info *tb_devlist_add(tb_device_list *list, tb_backend_kind backend) {
  int index = 0;
  for (size_t i = 0; i < list->count; i++)
    if (list->devices[i]->backend == backend && list->devices[i]->index >= 0) index++;
  tb_device_info *d = add_device(list, backend);
  if (!d) return NULL;
  d->index = index;
  d->device = tb_arena_printf(&list->arena, "%s:%d", tb_backend_name(backend), index);
  return d;
}

tb_device_info *tb_devlist_add_unindexed(tb_device_list *list, tb_backend_kind backend, const char *pci_bus_id) {
  tb_device_info *d = add_device(list, backend);
  if (!d) return NULL;
  d->index = -1;
  d->pci_bus_id = tb_arena_strdup(&list->arena, pci_bus_id);
  d->device = tb_arena_printf(&list->arena, "pci:%s", pci_bus_id ? pci_bus_id : "?");
  return d;
}

void tb_dev_set(tb_device_list *list, const char **field, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  *field = tb_arena_vprintf(&list->arena, fmt, ap);
  va_end(ap);
}

static size_t device_slot(const tb_device_list *list, const tb_device_info *dev) {
  for (size_t i = 0; i < list->count; i++)
    if (list->devices[i] == dev) return i;
  return list->count;
}

void tb_dev_prop(tb_device_list *list, tb_device_info *dev, const char *key, const char *fmt, ...) {
  if (!dev) return;
  va_list ap;
  va_start(ap, fmt);
  const char *value = tb_arena_vprintf(&list->arena, fmt, ap);
  va_end(ap);
  tb_property *props = (tb_property *)dev->properties;
  for (size_t i = 0; i < dev->property_count; i++) {
    if (strcmp(props[i].key, key) == 0) {
      props[i].value = value;
      return;
    }
  }
  size_t slot = device_slot(list, dev);
  if (slot == list->count) return;
  size_t cap = list->property_caps[slot];
  if (dev->property_count == cap) {
    size_t ncap = cap ? cap * 2 : 8;
    tb_property *grown = realloc(props, ncap * sizeof *grown);
    if (!grown) {
      list->arena.failed = true;
      return;
    }
    props = grown;
    list->property_caps[slot] = ncap;
  }
  props[dev->property_count].key = tb_arena_strdup(&list->arena, key);
  props[dev->property_count].value = value;
  dev->property_count++;
  dev->properties = props;
}

void tb_dev_unusable(tb_device_list *list, tb_device_info *dev, const char *fix, const char *reason_fmt, ...) {
  if (!dev) return;
  va_list ap;
  va_start(ap, reason_fmt);
  dev->reason = tb_arena_vprintf(&list->arena, reason_fmt, ap);
  va_end(ap);
  dev->fix = tb_arena_strdup(&list->arena, fix);
  dev->usable = false;
}

void tb_report_check(tb_device_list *list, tb_backend_kind backend, bool ok, const char *what, const char *detail_fmt, ...) {
  tb_report_builder *b = &list->reports[backend];
  b->probed = true;
  if (b->report.check_count == b->check_cap) {
    size_t ncap = b->check_cap ? b->check_cap * 2 : 8;
    tb_check *grown = realloc(b->checks, ncap * sizeof *grown);
    if (!grown) {
      list->arena.failed = true;
      return;
    }
    b->checks = grown;
    b->check_cap = ncap;
    b->report.checks = grown;
  }
  va_list ap;
  va_start(ap, detail_fmt);
  tb_check *c = &b->checks[b->report.check_count++];
  c->what = tb_arena_strdup(&list->arena, what);
  c->ok = ok;
  c->detail = tb_arena_vprintf(&list->arena, detail_fmt, ap);
  va_end(ap);
}

void tb_report_set(tb_device_list *list, tb_backend_kind backend, const char *fix, const char *summary_fmt, ...) {
  tb_report_builder *b = &list->reports[backend];
  b->probed = true;
  va_list ap;
  va_start(ap, summary_fmt);
  b->report.summary = tb_arena_vprintf(&list->arena, summary_fmt, ap);
  va_end(ap);
  b->report.fix = tb_arena_strdup(&list->arena, fix);
}

/* A UUID reduced to lowercase hex digits ("GPU-8C0F-..." and "8c0f..." compare equal). */
static void uuid_key(const char *uuid, char *out, size_t cap) {
  size_t n = 0;
  if (strncmp(uuid, "GPU-", 4) == 0 || strncmp(uuid, "MIG-", 4) == 0) uuid += 4;
  for (; *uuid && n + 1 < cap; uuid++) {
    char c = *uuid;
    if (c >= 'A' && c <= 'F') c = (char)(c - 'A' + 'a');
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) out[n++] = c;
  }
  out[n] = '\0';
}

/* Give devices that are one piece of hardware (same PCI bus id, or same UUID) one physical_id. */
static void merge_physical(tb_device_list *list) {
  for (size_t i = 0; i < list->count; i++) {
    tb_device_info *a = list->devices[i];
    char ka[64];
    uuid_key(a->uuid, ka, sizeof ka);
    for (size_t j = 0; j < i; j++) {
      const tb_device_info *b = list->devices[j];
      if (a->backend == b->backend && a->index >= 0 && b->index >= 0) continue;
      char kb[64];
      uuid_key(b->uuid, kb, sizeof kb);
      bool same_bus = a->pci_bus_id[0] && strcmp(a->pci_bus_id, b->pci_bus_id) == 0;
      bool same_uuid = strlen(ka) >= 16 && strcmp(ka, kb) == 0;
      if (same_bus || same_uuid) {
        a->physical_id = b->physical_id;
        break;
      }
    }
  }
}

/* Fill `routes` of every device that shares its physical_id with others. */
static void link_routes(tb_device_list *list) {
  for (size_t i = 0; i < list->count; i++) {
    tb_device_info *d = list->devices[i];
    char buf[512] = "";
    size_t used = 0;
    for (size_t j = 0; j < list->count; j++) {
      const tb_device_info *o = list->devices[j];
      if (j == i || o->physical_id != d->physical_id) continue;
      int n = snprintf(buf + used, sizeof buf - used, "%s%s", used ? "," : "", o->device);
      if (n > 0 && (size_t)n < sizeof buf - used) used += (size_t)n;
    }
    d->routes = tb_arena_strdup(&list->arena, buf);
  }
}

void tb_devlist_adopt(tb_device_list *list, tb_device_list *part) {
  if (part->arena.failed || list->part_count == TB_BACKEND_COUNT) list->arena.failed = true;
  if (list->part_count == TB_BACKEND_COUNT) {
    tb_device_list_destroy(part);
    return;
  }
  list->parts[list->part_count++] = part;
  size_t need = list->count + part->count;
  if (need > list->cap) {
    tb_device_info **grown = realloc(list->devices, need * sizeof *grown);
    if (grown) list->devices = grown;
    size_t *caps = grown ? realloc(list->property_caps, need * sizeof *caps) : NULL;
    if (caps) list->property_caps = caps;
    if (!grown || !caps) {
      list->arena.failed = true;
      return; /* the part's devices stay its own and are freed with it */
    }
    list->cap = need;
  }
  for (size_t i = 0; i < part->count; i++) {
    tb_device_info *d = part->devices[i];
    d->physical_id = (int)list->count;
    list->property_caps[list->count] = part->property_caps[i];
    list->devices[list->count++] = d;
  }
  part->count = 0;
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    if (!part->reports[k].probed) continue;
    free(list->reports[k].checks);
    list->reports[k] = part->reports[k];
    part->reports[k].checks = NULL;
  }
}

void tb_devlist_finish(tb_device_list *list) {
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    tb_report_builder *b = &list->reports[k];
    size_t found = 0, usable = 0;
    for (size_t i = 0; i < list->count; i++) {
      if (list->devices[i]->backend != (tb_backend_kind)k) continue;
      found++;
      if (list->devices[i]->usable) usable++;
    }
    b->report.device_count = found;
    b->report.available = usable > 0;
    if (!b->probed) {
      b->report.summary = "not probed";
    } else if (b->report.summary[0] == '\0') {
      b->report.summary = tb_arena_printf(&list->arena, "%zu device%s found, %zu usable", found,
                                          found == 1 ? "" : "s", usable);
    }
  }
  merge_physical(list);
  link_routes(list);
}

void tb_device_list_destroy(tb_device_list *list) {
  if (!list) return;
  for (size_t i = 0; i < list->count; i++) {
    free((void *)list->devices[i]->properties);
    free(list->devices[i]);
  }
  free(list->devices);
  free(list->property_caps);
  for (int k = 0; k < TB_BACKEND_COUNT; k++) free(list->reports[k].checks);
  for (size_t i = 0; i < list->part_count; i++) tb_device_list_destroy(list->parts[i]);
  tb_arena_free(&list->arena);
  free(list);
}

size_t tb_device_list_count(const tb_device_list *list) { return list ? list->count : 0; }

const tb_device_info *tb_device_list_get(const tb_device_list *list, size_t i) {
  return (list && i < list->count) ? list->devices[i] : NULL;
}

const tb_backend_report *tb_device_list_report(const tb_device_list *list, tb_backend_kind kind) {
  if (!list || (unsigned)kind >= TB_BACKEND_COUNT) return NULL;
  return &list->reports[kind].report;
}

const char *tb_device_property(const tb_device_info *info, const char *key) {
  if (!info || !key) return NULL;
  for (size_t i = 0; i < info->property_count; i++)
    if (strcmp(info->properties[i].key, key) == 0) return info->properties[i].value;
  return NULL;
}

tb_status tb_device_list_find(const tb_device_list *list, const char *device, const tb_device_info **out_info) {
  if (!list || !device || !out_info)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_device_list_find: list, device and out_info must not be NULL");
  *out_info = NULL;
  for (size_t i = 0; i < list->count; i++) {
    if (strcmp(list->devices[i]->device, device) == 0) {
      *out_info = list->devices[i];
      return TB_OK;
    }
  }
  /* A backend name alone, or an alias with an index ("nvidia:1"). */
  char name[64];
  const char *colon = strchr(device, ':');
  size_t len = colon ? (size_t)(colon - device) : strlen(device);
  if (len >= sizeof name) return tb_error(TB_ERR_NOT_FOUND, "no device '%s'; run `tb devices` to list them", device);
  memcpy(name, device, len);
  name[len] = '\0';
  tb_backend_kind kind;
  if (tb_backend_parse(name, &kind, NULL) != TB_OK)
    return tb_error(TB_ERR_NOT_FOUND, "no device '%s': '%s' is not a backend name; run `tb devices` to list devices", device, name);
  long index = 0;
  if (colon) {
    char *end = NULL;
    index = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || index < 0)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "device '%s': the index after ':' must be a number >= 0, as in %s:0", device, name);
  }
  for (size_t i = 0; i < list->count; i++) {
    if (list->devices[i]->backend == kind && list->devices[i]->index == index) {
      *out_info = list->devices[i];
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_NOT_FOUND, "no device %s:%ld; %s has %zu device(s); run `tb devices` to list them",
                  tb_backend_name(kind), index, tb_backend_name(kind), list->reports[kind].report.device_count);
}
