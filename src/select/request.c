/* Selection requests against a device list: the parsed request (request_parse.c) resolved to auto, a
 * backend or one listed device, and the errors for names that do not exist or cannot be used. */
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "discover/devlist.h"
#include "select/select.h"

#define TB_REQUEST_VALID_NAMES                                                                       \
  "auto, cpu, cuda (nvidia), rocm (amd, hip), xpu (intel, level_zero), tpu (xla), vulkan, opencl, " \
  "or one device such as cuda:0"

const char *tb_backend_display_name(tb_backend_kind kind) {
  static const char *const names[TB_BACKEND_COUNT] = {"CPU", "CUDA", "ROCm", "Intel XPU (Level Zero)",
                                                      "TPU", "Vulkan", "OpenCL"};
  return (unsigned)kind < TB_BACKEND_COUNT ? names[kind] : "?";
}

const char *tb_request_quote(const tb_request *req, tb_arena *arena) {
  if (strcmp(req->source, "TB_BACKEND") == 0) return tb_arena_printf(arena, "TB_BACKEND=%s", req->text);
  return tb_arena_printf(arena, "request '%s'", req->text);
}

static tb_status not_a_backend(const tb_request *req) {
  if (strcmp(req->source, "TB_BACKEND") == 0)
    return tb_error(TB_ERR_NOT_FOUND, "TB_BACKEND=%.100s is not a backend; valid names are " TB_REQUEST_VALID_NAMES,
                    req->text);
  return tb_error(TB_ERR_NOT_FOUND, "'%.100s' is not a backend; valid names are " TB_REQUEST_VALID_NAMES, req->text);
}

static const char *where(const tb_request *req) {
  return strcmp(req->source, "TB_BACKEND") == 0 ? "TB_BACKEND=" : "request ";
}

/* The device strings of one backend, "cuda:0, cuda:1", for "no such device" messages. */
static void list_devices(const tb_device_list *list, tb_backend_kind kind, char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend != kind || d->index < 0) continue;
    int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", d->device);
    if (n < 0 || (size_t)n >= cap - used) break;
    used += (size_t)n;
  }
}

static tb_status find_indexed(const tb_device_list *list, const tb_request *req, const char *index_text, tb_request *out) {
  size_t digits = strspn(index_text, "0123456789");
  if (digits == 0 || digits > 9 || index_text[digits] != '\0')
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s%.100s: the index after ':' must be a number >= 0, as in %s:0; valid names are " TB_REQUEST_VALID_NAMES,
                    where(req), req->text, tb_backend_name(out->kind));
  int index = 0;
  for (size_t i = 0; i < digits; i++) index = index * 10 + (index_text[i] - '0');
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend == out->kind && d->index == index) {
      out->device = d;
      return TB_OK;
    }
  }
  char have[256];
  list_devices(list, out->kind, have, sizeof have);
  if (!have[0]) return tb_request_unavailable(list, out); /* the backend has no devices: say why */
  return tb_error(TB_ERR_NOT_FOUND, "%s%.100s: no device %s:%d; %s has only %s; run `tb devices` to list them",
                  where(req), req->text, tb_backend_name(out->kind), index, tb_backend_name(out->kind), have);
}

tb_status tb_request_resolve(const tb_device_list *list, const tb_request_spec *spec, tb_arena *arena, tb_request *out) {
  memset(out, 0, sizeof *out);
  out->source = tb_request_source_name(spec->source);
  out->text = tb_arena_strdup(arena, spec->text);
  if (!spec->fits) return not_a_backend(out);
  if (!spec->name[0])
    return tb_error(TB_ERR_INVALID_ARGUMENT, "an empty backend request; valid names are " TB_REQUEST_VALID_NAMES);
  /* A device string exactly as listed ("cuda:0", "pci:0000:3b:00.0"). */
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (strcmp(d->device, spec->name) == 0) {
      out->kind = d->backend;
      out->device = d;
      return TB_OK;
    }
  }
  if (!spec->names_backend) return not_a_backend(out);
  out->kind = spec->kind;
  out->is_auto = spec->is_auto;
  if (!spec->index) return TB_OK;
  if (out->is_auto)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s%.100s: auto takes no device index; valid names are " TB_REQUEST_VALID_NAMES,
                    where(out), out->text);
  return find_indexed(list, out, spec->index, out);
}

/* The most useful sentence for why `kind` has nothing usable: a device's reason, else the report. */
static tb_status backend_unavailable(const tb_device_list *list, const tb_request *req, const char *quote) {
  const tb_backend_report *report = tb_device_list_report(list, req->kind);
  const tb_device_info *first = NULL;
  size_t unusable = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend != req->kind) continue;
    unusable++;
    if (!first && d->reason[0]) first = d;
  }
  const char *reason = first ? first->reason : report->summary;
  const char *fix = first && first->fix[0] ? first->fix : report->fix;
  if (!first && strcmp(report->summary, "not probed") == 0) reason = "it was not probed (discovery left it out)";
  else if (!reason[0]) reason = unusable ? "no device is usable" : "no device was found";
  char more[64] = "";
  if (first && unusable > 1) snprintf(more, sizeof more, " (and %zu more unusable device%s)", unusable - 1, unusable > 2 ? "s" : "");
  return tb_error(TB_ERR_UNAVAILABLE, "%s requested, but %s is unavailable: %s%s; %s%s", quote,
                  tb_backend_display_name(req->kind), reason, more, fix[0] ? "fix: " : "run `tb doctor` for what was tried",
                  fix);
}

tb_status tb_request_unavailable(const tb_device_list *list, const tb_request *req) {
  tb_arena scratch = {0};
  const char *quote = tb_request_quote(req, &scratch);
  tb_status status;
  if (req->device) {
    const tb_device_info *d = req->device;
    const char *reason = d->reason[0] ? d->reason : d->index < 0 ? "no runtime reaches it" : "it is marked unusable";
    status = tb_error(TB_ERR_UNAVAILABLE, "%s requested, but %s (%s) is not usable: %s; %s%s", quote, d->device,
                      d->name[0] ? d->name : tb_backend_display_name(d->backend), reason,
                      d->fix[0] ? "fix: " : "run `tb doctor` for what was tried", d->fix);
  } else {
    status = backend_unavailable(list, req, quote);
  }
  tb_arena_free(&scratch);
  return status;
}
