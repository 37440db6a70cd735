/* The per-thread list of checks device kernels leave for the end of the run (run_checks.h). */
#include "backend/run_checks.h"
#include <stdlib.h>
#include "core/error.h"

struct tb_run_check {
  tb_run_check_fn fn;
  void *data;
  void (*free_data)(void *);
  tb_run_check *next;
};

static _Thread_local tb_run_check *head, *tail;

tb_status tb_run_checks_add(tb_run_check_fn fn, void *data, void (*free_data)(void *)) {
  tb_run_check *c = malloc(sizeof *c);
  if (!c) {
    if (free_data) free_data(data);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory for a check at the end of the run");
  }
  *c = (tb_run_check){fn, data, free_data, NULL};
  if (tail) tail->next = c;
  else head = c;
  tail = c;
  return TB_OK;
}

tb_run_check *tb_run_checks_take(void) {
  tb_run_check *list = head;
  head = tail = NULL;
  return list;
}

tb_status tb_run_checks_run(const tb_run_check *list) {
  for (const tb_run_check *c = list; c; c = c->next) {
    tb_status st = c->fn(c->data);
    if (st != TB_OK) return st;
  }
  return TB_OK;
}

void tb_run_checks_free(tb_run_check *list) {
  while (list) {
    tb_run_check *next = list->next;
    if (list->free_data) list->free_data(list->data);
    free(list);
    list = next;
  }
}
