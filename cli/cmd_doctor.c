/* `tb doctor`: for each backend, whether it found hardware, everything its probe tried (libraries,
 * sysfs nodes, permissions, driver calls) with the result, and the fix; then which device `auto`
 * picks and why, what TB_BACKEND does when it is set, and the distinct things to do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "common.h"
#include "json_out.h"

static const char help[] =
    "Usage: tb doctor [--json]\n"
    "\n"
    "For each backend (cpu, cuda, rocm, xpu, tpu, vulkan, opencl): available, found but not usable,\n"
    "or missing; its summary; every check its probe made (what was tried, ok or failed, the detail:\n"
    "library names and paths, sysfs nodes, permissions, driver calls and their codes); and the fix.\n"
    "Then the verdict: the device `auto` picks and why, what TB_BACKEND picks when it is set, and a\n"
    "'To do' list with each distinct fix once, after what it is about (a backend, or TB_BACKEND).\n"
    "\n"
    "Options:\n"
    "  --json      print the same as JSON (keys in docs/json.md)\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit codes: 0 at least one device (the CPU, in practice) is usable, 1 discovery failed or no\n"
    "device at all is usable, 2 usage error.\n";

/* ---- the facts the report is made of --------------------------------------------------------- */

#define MAX_TODO 64

typedef struct outcome {
  tb_selection *selection; /* NULL when the request failed */
  char error[2048];        /* the library's message when it failed */
} outcome;

/* One thing to do: what it is about (a backend name, or "TB_BACKEND") and the fix. */
typedef struct todo_item {
  const char *about;
  const char *fix; /* owned by the device list, or by findings.env_pick.error */
} todo_item;

typedef struct findings {
  const tb_device_list *list;
  outcome auto_pick;
  const char *tb_backend; /* the TB_BACKEND value when set and non-empty, else NULL */
  outcome env_pick;
  todo_item todo[MAX_TODO]; /* distinct fixes, in backend order */
  size_t todo_count;
} findings;

static void add_todo(findings *f, const char *about, const char *fix) {
  if (!fix || !fix[0] || f->todo_count == MAX_TODO) return;
  for (size_t i = 0; i < f->todo_count; i++)
    if (strcmp(f->todo[i].fix, fix) == 0) return;
  f->todo[f->todo_count++] = (todo_item){about, fix};
}

static void run_select(const tb_device_list *list, const char *request, outcome *out) {
  out->selection = NULL;
  out->error[0] = '\0';
  if (tb_select(list, request, &out->selection) != TB_OK) {
    snprintf(out->error, sizeof out->error, "%s", tb_last_error());
    out->selection = NULL;
  }
}

static void gather(const tb_device_list *list, findings *f) {
  memset(f, 0, sizeof *f);
  f->list = list;
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const char *name = tb_backend_name((tb_backend_kind)k);
    const tb_backend_report *r = tb_device_list_report(list, (tb_backend_kind)k);
    if (r) add_todo(f, name, r->fix);
    for (size_t i = 0; i < tb_device_list_count(list); i++) {
      const tb_device_info *d = tb_device_list_get(list, i);
      if ((int)d->backend == k && !d->usable) add_todo(f, name, d->fix);
    }
  }
  run_select(list, "auto", &f->auto_pick);
  const char *env = NULL;
  if (tb_request_effective(NULL, &env) == TB_REQUEST_ENVIRONMENT) {
    f->tb_backend = env;
    run_select(list, NULL, &f->env_pick);
    if (!f->env_pick.selection) add_todo(f, "TB_BACKEND", f->env_pick.error);
  }
}

static void release(findings *f) {
  tb_selection_destroy(f->auto_pick.selection);
  tb_selection_destroy(f->env_pick.selection);
}

static const char *state_of(const tb_backend_report *r) {
  if (r->available) return "available";
  return r->device_count > 0 ? "found, not usable" : "missing";
}

/* The verdict of the chosen candidate, without a leading "chosen: ". */
static const char *chosen_verdict(const tb_selection *selection) {
  for (size_t i = 0; i < tb_selection_candidate_count(selection); i++) {
    const tb_candidate *c = tb_selection_candidate(selection, i);
    if (c && c->chosen && c->verdict) {
      const char *v = c->verdict;
      if (strncmp(v, "chosen: ", 8) == 0) v += 8;
      return v;
    }
  }
  return "";
}

static const char *chosen_device(const tb_selection *selection) {
  const tb_device_info *d = tb_selection_device(selection);
  return d ? d->device : "";
}

/* ---- for people ------------------------------------------------------------------------------ */

static void print_pick(const char *label, const outcome *o) {
  if (!o->selection) {
    printf("%s picks nothing: %s\n", label, o->error);
    return;
  }
  const char *why = chosen_verdict(o->selection);
  printf("%s picks %s%s%s\n", label, chosen_device(o->selection), why[0] ? ": " : "", why);
}

static void print_text(const findings *f) {
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const tb_backend_report *r = tb_device_list_report(f->list, (tb_backend_kind)k);
    if (!r) continue;
    if (k) fputc('\n', stdout);
    printf("%s: %s: %s\n", tb_backend_name((tb_backend_kind)k), state_of(r), r->summary[0] ? r->summary : "-");
    for (size_t i = 0; i < r->check_count; i++) {
      const tb_check *c = &r->checks[i];
      printf("  %-6s  %s%s%s\n", c->ok ? "ok" : "failed", c->what, c->detail[0] ? ": " : "", c->detail);
    }
    if (r->fix[0]) printf("  fix: %s\n", r->fix);
  }
  printf("\nVerdict:\n  ");
  print_pick("auto", &f->auto_pick);
  if (f->tb_backend) {
    char label[300];
    snprintf(label, sizeof label, "TB_BACKEND=%s", f->tb_backend);
    fputs("  ", stdout);
    print_pick(label, &f->env_pick);
  }
  if (f->todo_count == 0) {
    printf("\nTo do: nothing.\n");
    return;
  }
  printf("\nTo do:\n");
  for (size_t i = 0; i < f->todo_count; i++) printf("  - %s: %s\n", f->todo[i].about, f->todo[i].fix);
}

/* ---- as JSON --------------------------------------------------------------------------------- */

static void json_report(tbc_buf *b, const tb_backend_report *r) {
  bool first = true;
  tbc_buf_add(b, "{");
  tbc_json_key(b, &first, "backend");
  tbc_json_string(b, tb_backend_name(r->backend));
  tbc_json_key(b, &first, "available");
  tbc_buf_add(b, r->available ? "true" : "false");
  tbc_json_key(b, &first, "device_count");
  tbc_buf_addf(b, "%zu", r->device_count);
  tbc_json_key(b, &first, "summary");
  tbc_json_string(b, r->summary);
  tbc_json_key(b, &first, "fix");
  tbc_json_string(b, r->fix);
  tbc_json_key(b, &first, "checks");
  tbc_buf_add(b, "[");
  for (size_t i = 0; i < r->check_count; i++) {
    bool first_key = true;
    tbc_buf_add(b, i ? ",{" : "{");
    tbc_json_key(b, &first_key, "what");
    tbc_json_string(b, r->checks[i].what);
    tbc_json_key(b, &first_key, "ok");
    tbc_buf_add(b, r->checks[i].ok ? "true" : "false");
    tbc_json_key(b, &first_key, "detail");
    tbc_json_string(b, r->checks[i].detail);
    tbc_buf_add(b, "}");
  }
  tbc_buf_add(b, "]}");
}

/* The selection's own JSON, or null. false when the library failed to render it. */
static bool json_selection(tbc_buf *b, const tb_selection *selection) {
  if (!selection) {
    tbc_buf_add(b, "null");
    return true;
  }
  char *text = NULL;
  if (tb_selection_to_json(selection, &text) != TB_OK) return false;
  tbc_buf_add(b, text);
  tb_free(text);
  return true;
}

static int print_json(const findings *f) {
  tbc_buf b = {0};
  bool first = true, ok = true;
  tbc_buf_add(&b, "{\n");
  tbc_json_key(&b, &first, "tensorbridge_version");
  tbc_json_string(&b, tb_version());
  tbc_buf_add(&b, "\n");
  tbc_json_key(&b, &first, "backends");
  tbc_buf_add(&b, "[");
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const tb_backend_report *r = tb_device_list_report(f->list, (tb_backend_kind)k);
    if (!r) continue;
    tbc_buf_add(&b, k ? ",\n" : "\n");
    json_report(&b, r);
  }
  tbc_buf_add(&b, "]\n");
  tbc_json_key(&b, &first, "selected");
  ok = json_selection(&b, f->auto_pick.selection);
  tbc_buf_add(&b, "\n");
  tbc_json_key(&b, &first, "selected_error");
  tbc_json_string(&b, f->auto_pick.error);
  tbc_buf_add(&b, "\n");
  tbc_json_key(&b, &first, "tb_backend");
  if (f->tb_backend) {
    bool first_key = true;
    tbc_buf_add(&b, "{");
    tbc_json_key(&b, &first_key, "request");
    tbc_json_string(&b, f->tb_backend);
    tbc_json_key(&b, &first_key, "selected");
    tbc_json_string(&b, f->env_pick.selection ? chosen_device(f->env_pick.selection) : NULL);
    tbc_json_key(&b, &first_key, "error");
    tbc_json_string(&b, f->env_pick.error);
    tbc_buf_add(&b, "}");
  } else {
    tbc_buf_add(&b, "null");
  }
  tbc_buf_add(&b, "\n");
  tbc_json_key(&b, &first, "todo");
  tbc_buf_add(&b, "[");
  for (size_t i = 0; i < f->todo_count; i++) {
    bool first_key = true;
    tbc_buf_add(&b, i ? ",\n{" : "\n{");
    tbc_json_key(&b, &first_key, "about");
    tbc_json_string(&b, f->todo[i].about);
    tbc_json_key(&b, &first_key, "fix");
    tbc_json_string(&b, f->todo[i].fix);
    tbc_buf_add(&b, "}");
  }
  tbc_buf_add(&b, f->todo_count ? "\n]\n}" : "]\n}");
  int code = TBC_EXIT_OK;
  if (!ok) {
    tbc_error("%s", tb_last_error());
    code = TBC_EXIT_FAILURE;
  } else if (b.failed) {
    tbc_error("out of memory while writing JSON");
    code = TBC_EXIT_FAILURE;
  } else {
    printf("%s\n", b.data);
  }
  tbc_buf_free(&b);
  return code;
}

int tbc_cmd_doctor(int argc, char **argv) {
  bool json = false;
  const tbc_option options[] = {{"--json", &json}, {NULL, NULL}};
  tbc_args args;
  int code = tbc_parse_args("doctor", argc, argv, options, 0, &args);
  if (code != TBC_EXIT_OK) return code;
  if (args.help) {
    fputs(help, stdout);
    return TBC_EXIT_OK;
  }
  tb_device_list *list = NULL;
  code = tbc_discover(&list);
  if (code != TBC_EXIT_OK) return code;
  findings f;
  gather(list, &f);
  if (json)
    code = print_json(&f);
  else
    print_text(&f);
  if (code == TBC_EXIT_OK && !f.auto_pick.selection) code = TBC_EXIT_FAILURE;
  release(&f);
  tb_device_list_destroy(list);
  return code;
}
