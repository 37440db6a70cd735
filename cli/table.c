/* Column-aligned text tables (see table.h). */
#include "table.h"
#include <stdlib.h>
#include <string.h>

typedef struct line {
  char **cells; /* `columns` cells for a row, NULL for a note */
  char *note;
} line;

struct tbc_table {
  size_t columns;
  size_t *widths;
  line *lines; /* lines[0] is the header */
  size_t count, cap;
};

static char *copy(const char *s) {
  if (!s) s = "-";
  size_t n = strlen(s) + 1;
  char *c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

static void free_line(line *l, size_t columns) {
  if (l->cells)
    for (size_t c = 0; c < columns; c++) free(l->cells[c]);
  free(l->cells);
  free(l->note);
}

static line *push(tbc_table *t) {
  if (t->count == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    line *grown = realloc(t->lines, cap * sizeof *grown);
    if (!grown) return NULL;
    t->lines = grown;
    t->cap = cap;
  }
  line *l = &t->lines[t->count];
  memset(l, 0, sizeof *l);
  return l;
}

bool tbc_table_row(tbc_table *t, const char *const *cells) {
  line *l = push(t);
  if (!l) return false;
  l->cells = calloc(t->columns, sizeof *l->cells);
  if (!l->cells) return false;
  bool ok = true;
  for (size_t c = 0; c < t->columns; c++) {
    l->cells[c] = copy(cells[c]);
    if (!l->cells[c]) ok = false;
  }
  if (!ok) {
    free_line(l, t->columns);
    return false;
  }
  for (size_t c = 0; c < t->columns; c++) {
    size_t w = strlen(l->cells[c]);
    if (w > t->widths[c]) t->widths[c] = w;
  }
  t->count++;
  return true;
}

bool tbc_table_note(tbc_table *t, const char *text) {
  line *l = push(t);
  if (!l) return false;
  l->note = copy(text);
  if (!l->note) return false;
  t->count++;
  return true;
}

tbc_table *tbc_table_new(size_t columns, const char *const *headers) {
  tbc_table *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->columns = columns;
  t->widths = calloc(columns ? columns : 1, sizeof *t->widths);
  if (!t->widths || !tbc_table_row(t, headers)) {
    tbc_table_free(t);
    return NULL;
  }
  return t;
}

void tbc_table_free(tbc_table *t) {
  if (!t) return;
  for (size_t i = 0; i < t->count; i++) free_line(&t->lines[i], t->columns);
  free(t->lines);
  free(t->widths);
  free(t);
}

void tbc_table_print(const tbc_table *t, FILE *out) {
  for (size_t i = 0; i < t->count; i++) {
    const line *l = &t->lines[i];
    if (l->note) {
      fprintf(out, "%s\n", l->note);
      continue;
    }
    for (size_t c = 0; c < t->columns; c++) {
      bool last = c + 1 == t->columns;
      if (last)
        fprintf(out, "%s\n", l->cells[c]);
      else
        fprintf(out, "%-*s  ", (int)t->widths[c], l->cells[c]);
    }
  }
}
