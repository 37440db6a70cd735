/* Reading a backend request once: its source (argument, TB_BACKEND, default), its name without white
 * space, and the backend (or alias, or auto) and device index the name gives. */
#include "select/request.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "core/env.h"
#include "core/names.h"

const char *tb_request_source_name(tb_request_source source) {
  switch (source) {
    case TB_REQUEST_ARGUMENT: return "argument";
    case TB_REQUEST_ENVIRONMENT: return "TB_BACKEND";
    case TB_REQUEST_DEFAULT: return "default";
  }
  return "?";
}

/* Copy `text` without surrounding white space into buf; false when it does not fit. */
static bool trim_copy(const char *text, char *buf, size_t cap) {
  while (isspace((unsigned char)*text)) text++;
  size_t len = strlen(text);
  while (len > 0 && isspace((unsigned char)text[len - 1])) len--;
  if (len >= cap) return false;
  memcpy(buf, text, len);
  buf[len] = '\0';
  return true;
}

/* The backend part of spec->name: the text before ':' when there is one. */
static void parse_backend(tb_request_spec *spec) {
  char backend[TB_REQUEST_NAME_MAX];
  size_t len = strcspn(spec->name, ":");
  memcpy(backend, spec->name, len);
  backend[len] = '\0';
  spec->index = spec->name[len] == ':' ? spec->name + len + 1 : NULL;
  spec->names_backend = tb_backend_lookup(backend, &spec->kind, &spec->is_auto);
}

void tb_request_parse(const char *request, tb_request_spec *spec) {
  memset(spec, 0, sizeof *spec);
  spec->origin = TB_REQUEST_ARGUMENT;
  spec->given = request;
  if (!request) {
    spec->given = tb_env("TB_BACKEND");
    spec->origin = spec->given ? TB_REQUEST_ENVIRONMENT : TB_REQUEST_DEFAULT;
    if (!spec->given) spec->given = "auto";
  }
  spec->source = spec->origin;
  spec->text = spec->given;
  spec->fits = trim_copy(spec->given, spec->name, sizeof spec->name);
  if (!spec->fits) return;
  if (!spec->name[0] && spec->origin == TB_REQUEST_ENVIRONMENT) { /* white space only: as if unset */
    spec->source = TB_REQUEST_DEFAULT;
    spec->text = "auto";
    snprintf(spec->name, sizeof spec->name, "auto");
  }
  if (spec->name[0]) parse_backend(spec);
}

tb_request_source tb_request_effective(const char *request, const char **out_text) {
  tb_request_spec spec;
  tb_request_parse(request, &spec);
  if (out_text) *out_text = spec.given;
  return spec.origin;
}

uint32_t tb_request_probe_mask(const tb_request_spec *spec) {
  return spec->names_backend && !spec->is_auto ? 1u << spec->kind : 0;
}
