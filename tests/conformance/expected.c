/* The expected-failures file of the conformance runner (tests/conformance/expected_failures.txt):
 *
 *   # comment
 *   floor <suite> <level> <minimum passed>     e.g.  floor node O0 310
 *   <test name>[@<level>] <reason>             e.g.  test_cast_STRING_to_FLOAT  strings are not a dtype
 *
 * A test listed without @level may fail at every level. Every listed test must have a reason. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conformance.h"

typedef struct conf_entry {
  char *test;
  char level[4]; /* "" or "O0".."O3" */
  char *reason;
} conf_entry;

typedef struct conf_floor {
  char suite[32];
  tb_opt_level level;
  long min_passed;
} conf_floor;

struct conf_expected {
  conf_entry *entries;
  size_t n, cap;
  conf_floor floors[32];
  size_t n_floors;
};

void conf_expected_free(conf_expected *e) {
  if (!e) return;
  for (size_t i = 0; i < e->n; i++) {
    free(e->entries[i].test);
    free(e->entries[i].reason);
  }
  free(e->entries);
  free(e);
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

static bool parse_floor(conf_expected *e, char *rest, const char *path, int line_no) {
  char suite[32], level[8];
  long n;
  char extra;
  if (sscanf(rest, "%31s %7s %ld %c", suite, level, &n, &extra) != 3 || n < 0 || e->n_floors == 32) {
    fprintf(stderr, "tb_conformance: %s:%d: a floor line is 'floor <suite> <level> <minimum passed>'\n", path, line_no);
    return false;
  }
  conf_floor *f = &e->floors[e->n_floors];
  if (tb_opt_level_parse(level, &f->level) != TB_OK) {
    fprintf(stderr, "tb_conformance: %s:%d: unknown level '%s'\n", path, line_no, level);
    return false;
  }
  snprintf(f->suite, sizeof f->suite, "%s", suite);
  f->min_passed = n;
  e->n_floors++;
  return true;
}

static bool parse_entry(conf_expected *e, char *line, const char *path, int line_no) {
  char *sp = line;
  while (*sp && !isspace((unsigned char)*sp)) sp++;
  char *reason = *sp ? trim(sp + 1) : sp;
  *sp = '\0';
  if (!*reason) {
    fprintf(stderr, "tb_conformance: %s:%d: '%s' is listed without a reason; every expected failure needs one\n",
            path, line_no, line);
    return false;
  }
  if (e->n == e->cap) {
    size_t cap = e->cap ? e->cap * 2 : 64;
    conf_entry *bigger = realloc(e->entries, cap * sizeof *bigger);
    if (!bigger) return false;
    e->entries = bigger;
    e->cap = cap;
  }
  conf_entry *en = &e->entries[e->n];
  memset(en, 0, sizeof *en);
  char *at = strchr(line, '@');
  if (at) {
    *at = '\0';
    tb_opt_level lvl;
    if (tb_opt_level_parse(at + 1, &lvl) != TB_OK) {
      fprintf(stderr, "tb_conformance: %s:%d: unknown level '%s'\n", path, line_no, at + 1);
      return false;
    }
    snprintf(en->level, sizeof en->level, "%s", tb_opt_level_name(lvl));
  }
  en->test = strdup(line);
  en->reason = strdup(reason);
  if (!en->test || !en->reason) {
    free(en->test);
    free(en->reason);
    return false;
  }
  e->n++;
  return true;
}

conf_expected *conf_expected_load(const char *path) {
  conf_expected *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  if (!path) return e;
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "tb_conformance: cannot open the expected-failures file %s\n", path);
    free(e);
    return NULL;
  }
  char buf[2048];
  int line_no = 0;
  bool ok = true;
  while (ok && fgets(buf, sizeof buf, f)) {
    line_no++;
    char *line = trim(buf);
    if (!*line || *line == '#') continue;
    if (strncmp(line, "floor", 5) == 0 && isspace((unsigned char)line[5]))
      ok = parse_floor(e, line + 5, path, line_no);
    else
      ok = parse_entry(e, line, path, line_no);
  }
  fclose(f);
  if (!ok) {
    conf_expected_free(e);
    return NULL;
  }
  return e;
}

const char *conf_expected_reason(const conf_expected *e, const char *test, tb_opt_level level) {
  if (!e) return NULL;
  const char *name = tb_opt_level_name(level);
  for (size_t i = 0; i < e->n; i++)
    if (strcmp(e->entries[i].test, test) == 0 && (!e->entries[i].level[0] || strcmp(e->entries[i].level, name) == 0))
      return e->entries[i].reason;
  return NULL;
}

long conf_expected_floor(const conf_expected *e, const char *suite, tb_opt_level level) {
  if (!e) return -1;
  for (size_t i = 0; i < e->n_floors; i++)
    if (strcmp(e->floors[i].suite, suite) == 0 && e->floors[i].level == level) return e->floors[i].min_passed;
  return -1;
}

size_t conf_expected_count(const conf_expected *e) { return e ? e->n : 0; }

void conf_expected_entry(const conf_expected *e, size_t i, const char **test, const char **level, const char **reason) {
  *test = e->entries[i].test;
  *level = e->entries[i].level;
  *reason = e->entries[i].reason;
}
