/* The conformance runner's reports: a table per operator (node tests) and per model (model tests) with
 * the overall counts, the same as JSON, and as Markdown for docs/conformance.md and the README. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conformance.h"

const char *conf_outcome_name(conf_outcome outcome) {
  return outcome == CONF_PASSED ? "passed" : outcome == CONF_FAILED ? "failed" : "skipped";
}

typedef struct op_row {
  const char *op;
  size_t counts[3];
  size_t on_device; /* passed with every node on the device */
} op_row;

static bool device_backend(const conf_options *o) { return strncmp(o->backend, "cpu", 3) != 0; }

static size_t passed_on_device(const conf_test *tests, size_t n, bool models) {
  size_t count = 0;
  for (size_t i = 0; i < n; i++) count += tests[i].is_model == models && tests[i].outcome == CONF_PASSED && tests[i].on_device;
  return count;
}

static int cmp_row(const void *a, const void *b) {
  return strcmp(((const op_row *)a)->op, ((const op_row *)b)->op);
}

/* Rows per op of the node tests, sorted by op name; *n_rows set. Caller frees. */
static op_row *op_rows(const conf_test *tests, size_t n, size_t *n_rows) {
  op_row *rows = calloc(n ? n : 1, sizeof *rows);
  size_t r = 0;
  if (!rows) {
    *n_rows = 0;
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (tests[i].is_model) continue;
    size_t j = 0;
    while (j < r && strcmp(rows[j].op, tests[i].op) != 0) j++;
    if (j == r) rows[r++].op = tests[i].op;
    rows[j].counts[tests[i].outcome]++;
    rows[j].on_device += tests[i].outcome == CONF_PASSED && tests[i].on_device;
  }
  qsort(rows, r, sizeof *rows, cmp_row);
  *n_rows = r;
  return rows;
}

static void totals(const conf_test *tests, size_t n, bool models, size_t out[3]) {
  out[0] = out[1] = out[2] = 0;
  for (size_t i = 0; i < n; i++)
    if (tests[i].is_model == models) out[tests[i].outcome]++;
}

static void first_line(char *dst, size_t cap, const char *src) {
  size_t len = strcspn(src, "\n");
  if (len >= cap) len = cap - 1;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

void conf_report_table(const conf_options *o, const conf_test *tests, size_t n) {
  size_t n_rows;
  op_row *rows = op_rows(tests, n, &n_rows);
  size_t node[3], model[3];
  totals(tests, n, false, node);
  totals(tests, n, true, model);
  bool dev = device_backend(o);
  if (n_rows) {
    printf("%-36s %7s %7s %7s %7s%s\n", "OPERATOR", "PASSED", "FAILED", "SKIPPED", "TOTAL", dev ? "  ON DEVICE" : "");
    for (size_t i = 0; i < n_rows; i++) {
      printf("%-36s %7zu %7zu %7zu %7zu", rows[i].op, rows[i].counts[0], rows[i].counts[1], rows[i].counts[2],
             rows[i].counts[0] + rows[i].counts[1] + rows[i].counts[2]);
      if (dev) printf("  %9zu", rows[i].on_device);
      printf("\n");
    }
    printf("\n");
  }
  free(rows);
  if (model[0] + model[1] + model[2]) {
    printf("%-18s %-40s %s\n", "SUITE", "MODEL", "RESULT");
    for (size_t i = 0; i < n; i++)
      if (tests[i].is_model) printf("%-18s %-40s %s\n", tests[i].suite, tests[i].name, conf_outcome_name(tests[i].outcome));
    printf("\n");
  }
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    if (tests[i].outcome == CONF_PASSED || (tests[i].outcome == CONF_SKIPPED && !o->verbose)) continue;
    if (!any) printf("%s (%s):\n", o->verbose ? "Not passed" : "Failed", tb_opt_level_name(o->level));
    any = true;
    char line[300];
    first_line(line, sizeof line, tests[i].reason);
    printf("  %-7s %s: %s%s\n", conf_outcome_name(tests[i].outcome), tests[i].name, line,
           tests[i].expected_reason ? " [expected]" : "");
  }
  if (any) printf("\n");
  if (node[2] && !o->verbose) printf("(the reasons of the %zu skipped node tests: --verbose or --json)\n", node[2]);
  if (node[0] + node[1] + node[2] && dev)
    printf("node tests at %s on %s: %zu passed (%zu wholly on the device), %zu failed, %zu skipped of %zu, %zu operators\n",
           tb_opt_level_name(o->level), o->backend, node[0], passed_on_device(tests, n, false), node[1], node[2],
           node[0] + node[1] + node[2], n_rows);
  else if (node[0] + node[1] + node[2])
    printf("node tests at %s: %zu passed, %zu failed, %zu skipped of %zu, %zu operators\n", tb_opt_level_name(o->level),
           node[0], node[1], node[2], node[0] + node[1] + node[2], n_rows);
  if (model[0] + model[1] + model[2] && dev)
    printf("model tests at %s on %s: %zu passed (%zu wholly on the device), %zu failed, %zu skipped of %zu\n",
           tb_opt_level_name(o->level), o->backend, model[0], passed_on_device(tests, n, true), model[1], model[2],
           model[0] + model[1] + model[2]);
  else if (model[0] + model[1] + model[2])
    printf("model tests at %s: %zu passed, %zu failed, %zu skipped of %zu\n", tb_opt_level_name(o->level), model[0],
           model[1], model[2], model[0] + model[1] + model[2]);
}

static cJSON *counts_json(const size_t c[3]) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "passed", (double)c[0]);
  cJSON_AddNumberToObject(j, "failed", (double)c[1]);
  cJSON_AddNumberToObject(j, "skipped", (double)c[2]);
  cJSON_AddNumberToObject(j, "total", (double)(c[0] + c[1] + c[2]));
  return j;
}

void conf_report_json(const conf_options *o, const conf_test *tests, size_t n) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "level", tb_opt_level_name(o->level));
  cJSON_AddStringToObject(root, "backend", o->backend);
  cJSON_AddStringToObject(root, "data", o->data);
  cJSON_AddNumberToObject(root, "rtol", 1e-3);
  cJSON_AddNumberToObject(root, "atol", 1e-7);
  size_t node[3], model[3];
  totals(tests, n, false, node);
  totals(tests, n, true, model);
  cJSON_AddItemToObject(root, "node", counts_json(node));
  cJSON_AddItemToObject(root, "models", counts_json(model));
  size_t n_rows;
  op_row *rows = op_rows(tests, n, &n_rows);
  cJSON *ops = cJSON_AddObjectToObject(root, "operators");
  for (size_t i = 0; i < n_rows; i++) {
    cJSON *row = counts_json(rows[i].counts);
    cJSON_AddNumberToObject(row, "passed_on_device", (double)rows[i].on_device);
    cJSON_AddItemToObject(ops, rows[i].op, row);
  }
  free(rows);
  cJSON *arr = cJSON_AddArrayToObject(root, "tests");
  for (size_t i = 0; i < n; i++) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "name", tests[i].name);
    cJSON_AddStringToObject(t, "suite", tests[i].suite);
    cJSON_AddStringToObject(t, "op", tests[i].op);
    cJSON_AddStringToObject(t, "result", conf_outcome_name(tests[i].outcome));
    if (tests[i].reason[0]) cJSON_AddStringToObject(t, "reason", tests[i].reason);
    if (tests[i].expected_reason) cJSON_AddStringToObject(t, "expected_failure", tests[i].expected_reason);
    cJSON_AddNumberToObject(t, "ms", tests[i].ms);
    cJSON_AddBoolToObject(t, "on_device", tests[i].on_device);
    cJSON_AddItemToArray(arr, t);
  }
  char *text = cJSON_Print(root);
  if (text) printf("%s\n", text);
  free(text);
  cJSON_Delete(root);
}

/* Markdown: the per-operator table and the overall counts; the expected failures with their reasons. */
void conf_report_markdown(const conf_options *o, const conf_test *tests, size_t n, const conf_expected *e) {
  size_t n_rows;
  op_row *rows = op_rows(tests, n, &n_rows);
  size_t node[3], model[3];
  totals(tests, n, false, node);
  totals(tests, n, true, model);
  const char *lvl = tb_opt_level_name(o->level);
  bool dev = device_backend(o);
  if (node[0] + node[1] + node[2])
    printf("Node tests at %s: **%zu passed**, %zu failed, %zu skipped of %zu (%zu operators).\n\n", lvl, node[0],
           node[1], node[2], node[0] + node[1] + node[2], n_rows);
  if (model[0] + model[1] + model[2])
    printf("Model tests at %s: **%zu passed**, %zu failed, %zu skipped of %zu.\n\n", lvl, model[0], model[1], model[2],
           model[0] + model[1] + model[2]);
  if (model[0] + model[1] + model[2] && dev)
    printf("Model tests that passed with every node on %s: %zu.\n\n", o->backend, passed_on_device(tests, n, true));
  if (n_rows) {
    printf("| operator | passed | failed | skipped |%s\n| --- | ---: | ---: | ---: |%s\n", dev ? " passed on the device |" : "",
           dev ? " ---: |" : "");
    for (size_t i = 0; i < n_rows; i++) {
      printf("| %s | %zu | %zu | %zu |", rows[i].op, rows[i].counts[0], rows[i].counts[1], rows[i].counts[2]);
      if (dev) printf(" %zu |", rows[i].on_device);
      printf("\n");
    }
    printf("\n");
  }
  free(rows);
  if (model[0] + model[1] + model[2]) {
    printf("| suite | model | result |\n| --- | --- | --- |\n");
    for (size_t i = 0; i < n; i++) {
      if (!tests[i].is_model) continue;
      char why[200] = "";
      if (tests[i].outcome != CONF_PASSED) {
        first_line(why, sizeof why, tests[i].reason);
        for (char *c = why; *c; c++)
          if (*c == '|') *c = '/';
      }
      printf("| %s | %s | %s%s%s |\n", tests[i].suite, tests[i].name, conf_outcome_name(tests[i].outcome),
             why[0] ? ": " : "", why);
    }
    printf("\n");
  }
  if (conf_expected_count(e)) {
    printf("| expected failure | level | reason |\n| --- | --- | --- |\n");
    for (size_t i = 0; i < conf_expected_count(e); i++) {
      const char *test, *level, *reason;
      conf_expected_entry(e, i, &test, &level, &reason);
      printf("| %s | %s | %s |\n", test, level[0] ? level : "all", reason);
    }
    printf("\n");
  }
}
