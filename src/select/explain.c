/* The human-readable explanation of a selection: the decision on the first line, then one line per
 * candidate (ranked ones in rank order, then the others) with its verdict. Format in docs/selection.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "select/select.h"

static void write_explanation(FILE *f, const tb_selection *sel) {
  const tb_device_info *d = sel->device;
  fprintf(f, "selected %s", d->device);
  if (d->name[0] && d->architecture[0]) fprintf(f, " (%s, %s)", d->name, d->architecture);
  else if (d->name[0] || d->architecture[0]) fprintf(f, " (%s)", d->name[0] ? d->name : d->architecture);
  fprintf(f, " from request '%s' (%s)\n", sel->request, sel->source);
  int width = 0;
  for (size_t i = 0; i < sel->count; i++) {
    int n = (int)strlen(sel->candidates[i].device->device);
    if (n > width) width = n;
  }
  for (size_t i = 0; i < sel->count; i++) {
    const tb_candidate *c = &sel->candidates[i];
    if (c->rank > 0) fprintf(f, "  %2d. ", c->rank);
    else fputs("   -  ", f);
    fprintf(f, "%-*s  %s - %s", width, c->device->device, c->device->name[0] ? c->device->name : "(unnamed)", c->verdict);
    if (sel->outcomes[i] == TB_OUTCOME_UNUSABLE && c->device->fix[0]) fprintf(f, "; fix: %s", c->device->fix);
    fputc('\n', f);
  }
}

void tb_selection_build_explanation(tb_selection *sel) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) {
    sel->arena.failed = true;
    return;
  }
  write_explanation(f, sel);
  if (fclose(f) != 0 || !text) {
    free(text);
    sel->arena.failed = true;
    return;
  }
  sel->explanation = tb_arena_strdup(&sel->arena, text);
  free(text);
}
