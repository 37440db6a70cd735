/* The per-thread list of checks device kernels leave for the run's host synchronisations (run_checks.h). */
#include "backend/run_checks.h"
#include <stdio.h>
#include <stdlib.h>
#include "core/error.h"

struct tb_run_check {
  const void *key;
  tb_run_check_fn fn;
  void *data;
  void (*free_data)(void *);
  tb_run_check *next;
};

static _Thread_local tb_run_check *head, *tail;
static _Thread_local size_t made;

tb_status tb_run_checks_add(const void *key, tb_run_check_fn fn, void *data, void (*free_data)(void *)) {
  tb_run_check *c = malloc(sizeof *c);
  if (!c) {
    if (free_data) free_data(data);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory for a check at the end of the run");
  }
  *c = (tb_run_check){key, fn, data, free_data, NULL};
  if (tail) tail->next = c;
  else head = c;
  tail = c;
  made++;
  return TB_OK;
}

void *tb_run_checks_find(const void *key) {
  for (tb_run_check *c = head; key && c; c = c->next)
    if (c->key == key) return c->data;
  return NULL;
}

tb_run_check *tb_run_checks_take(void) {
  tb_run_check *list = head;
  head = tail = NULL;
  return list;
}

tb_status tb_run_checks_run(const tb_run_check *list, tb_status prior) {
  char sentence[TB_ERROR_CAP] = "";
  if (prior != TB_OK) snprintf(sentence, sizeof sentence, "%s", tb_last_error());
  bool looked_away = false; /* a check could not read the device after a failed run: later checks still look */
  for (const tb_run_check *c = list; c; c = c->next) {
    bool found = false;
    tb_status st = c->fn(c->data, &found);
    if (st == TB_OK) continue;
    if (prior == TB_OK || found) return st;
    looked_away = true;
  }
  /* no check found bad input: the run's own failure stands, with its sentence */
  return looked_away ? tb_error(prior, "%s", sentence) : prior;
}

tb_status tb_run_checks_now(void) { return tb_run_checks_run(head, TB_OK); }

void tb_run_checks_free(tb_run_check *list) {
  while (list) {
    tb_run_check *next = list->next;
    if (list->free_data) list->free_data(list->data);
    free(list);
    list = next;
  }
}

size_t tb_run_checks_made(void) { return made; }
