/* Internal: the backend request read once, before any device list: where it comes from (the API
 * argument, which the CLI's --backend fills; TB_BACKEND; the default "auto"), the name it gives and the
 * backend and device index that name means. Discovery's probe mask, selection and doctor all use this
 * one value; the errors for a name that means nothing are made by tb_request_resolve (select.h), after
 * the name was looked for among the listed device strings. */
#ifndef TB_SELECT_REQUEST_H
#define TB_SELECT_REQUEST_H
#include <stdbool.h>
#include <stdint.h>
#include <tensorbridge/policy.h>

#define TB_REQUEST_NAME_MAX 96

typedef struct tb_request_spec {
  tb_request_source origin;       /* where `given` comes from */
  tb_request_source source;       /* the same, except a blank TB_BACKEND, which reads as the default */
  const char *given;              /* the text as given: the argument, TB_BACKEND's value, or "auto" */
  const char *text;               /* `given`, or "auto" for a blank TB_BACKEND */
  bool fits;                      /* the trimmed text fits `name` */
  char name[TB_REQUEST_NAME_MAX]; /* the text without surrounding white space */
  bool names_backend;             /* the part of `name` before ':' is a backend, an alias or auto */
  bool is_auto;
  tb_backend_kind kind;           /* when names_backend and not auto */
  const char *index;              /* the text after the first ':' of `name` (in `name`), NULL without one */
} tb_request_spec;

/* Read `request` (NULL: TB_BACKEND, else "auto"). Never fails: what the name means is checked when it is
 * resolved against a device list. A TB_BACKEND of white space only reads as unset. `spec` must not move
 * while `index` is used (it points into `name`). */
void tb_request_parse(const char *request, tb_request_spec *spec);

/* The backends discovery must probe for `spec`: only the named one ("cpu", "cuda:1"), so creating a CPU
 * backend does not start the OpenCL and Vulkan drivers; 0 (all) for auto and for a name that is not a
 * backend (a device string such as "pci:...", or an error tb_select reports). */
uint32_t tb_request_probe_mask(const tb_request_spec *spec);

/* "argument", "TB_BACKEND", "default": the source as selections and messages name it. */
const char *tb_request_source_name(tb_request_source source);

/* tb_select for a request parsed already (tb_backend_create parses it once for discovery and selection). */
tb_status tb_select_spec(const tb_device_list *list, const tb_request_spec *spec, tb_selection **out_selection);

#endif
