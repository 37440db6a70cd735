/* The per-thread list of checks device kernels leave for the run's host synchronisations, and the gates that let a
 * synchronisation skip them with one read (run_checks.h). */
#include "backend/run_checks.h"
#include <stdio.h>
#include <stdlib.h>
#include "core/error.h"

/* What a pass knows of a gate: not read yet, read clear, read set, or unreadable (its checks run as if set). */
enum { GATE_UNREAD, GATE_CLEAR, GATE_SET, GATE_UNREADABLE };

struct tb_run_check {
  const void *key;
  tb_run_check_fn fn;   /* a check's; NULL for a gate */
  tb_run_gate_fn gate_fn; /* a gate's; NULL for a check */
  tb_run_check *gate;   /* the gate a check is behind, or NULL */
  int pass;             /* a gate's state in the pass running now (GATE_*): scratch of tb_run_checks_run */
  void *data;
  void (*free_data)(void *);
  tb_run_check *next;
};

static _Thread_local tb_run_check *head, *tail;
static _Thread_local size_t made;

static tb_status add(tb_run_check c) {
  tb_run_check *n = malloc(sizeof *n);
  if (!n) {
    if (c.free_data) c.free_data(c.data);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory for a check at the end of the run");
  }
  *n = c;
  if (tail) tail->next = n;
  else head = n;
  tail = n;
  if (c.fn) made++;
  return TB_OK;
}

static tb_run_check *find(const void *key) {
  for (tb_run_check *c = head; key && c; c = c->next)
    if (c->key == key) return c;
  return NULL;
}

tb_status tb_run_checks_add(const void *key, tb_run_check_fn fn, void *data, void (*free_data)(void *)) {
  return add((tb_run_check){.key = key, .fn = fn, .data = data, .free_data = free_data});
}

tb_status tb_run_checks_add_gate(const void *key, tb_run_gate_fn fn, void *data, void (*free_data)(void *)) {
  return add((tb_run_check){.key = key, .gate_fn = fn, .data = data, .free_data = free_data});
}

tb_status tb_run_checks_add_behind(const void *key, const void *gate, tb_run_check_fn fn, void *data, void (*free_data)(void *)) {
  tb_run_check *g = find(gate);
  return add((tb_run_check){.key = key, .fn = fn, .gate = g && g->gate_fn ? g : NULL, .data = data, .free_data = free_data});
}

void *tb_run_checks_find(const void *key) {
  tb_run_check *c = find(key);
  return c ? c->data : NULL;
}

tb_run_check *tb_run_checks_take(void) {
  tb_run_check *list = head;
  head = tail = NULL;
  return list;
}

/* What the pass has found so far: the first failure that counts (its status and sentence, and whether it found bad
 * input), and whether something could not read the device after a failed run. */
typedef struct pass {
  tb_status prior, first;
  bool first_found, looked_away;
  char first_sentence[TB_ERROR_CAP];
} pass;

/* A check's (or a gate's) failure st: the pass's answer when it is the first that counts (any failure in a good run,
 * bad input found after a failed one), or the first bad input found after a first failure that found none (a gate's
 * or a check's read failing in a good run: bad input found is the cause, run_checks.h); else after a failed run it
 * could not look. */
static void failed(pass *p, tb_status st, bool found) {
  if (p->first != TB_OK && (p->first_found || !found)) return;
  if (p->prior == TB_OK || found) {
    p->first = st;
    p->first_found = found;
    snprintf(p->first_sentence, sizeof p->first_sentence, "%s", tb_last_error());
  } else {
    p->looked_away = true;
  }
}

/* Whether the checks behind gate g run in this pass: its one read, at the first check behind it (a gate that cannot
 * be read hides nothing). */
static bool gate_open(tb_run_check *g, pass *p) {
  if (g->pass == GATE_UNREAD) {
    bool set = false;
    tb_status st = g->gate_fn(g->data, false, &set);
    g->pass = st != TB_OK ? GATE_UNREADABLE : set ? GATE_SET : GATE_CLEAR;
    if (st != TB_OK) failed(p, st, false);
  }
  return g->pass != GATE_CLEAR;
}

tb_status tb_run_checks_run(const tb_run_check *list, tb_status prior) {
  char sentence[TB_ERROR_CAP] = "";
  if (prior != TB_OK) snprintf(sentence, sizeof sentence, "%s", tb_last_error());
  pass p = {.prior = prior, .first = TB_OK};
  /* the pass's state of each gate lives in the gate (one thread runs a list at a time: the run's, or its graph's) */
  for (tb_run_check *c = (tb_run_check *)list; c; c = c->next) c->pass = GATE_UNREAD;
  for (const tb_run_check *c = list; c; c = c->next) {
    if (!c->fn) continue; /* a gate: read at the first check behind it */
    /* every check runs, also after the first failure: each resets its flag (else the next run reports this run's
     * index), only the pass's first failure that counts keeps its sentence */
    if (c->gate && !gate_open(c->gate, &p)) continue;
    bool found = false;
    tb_status st = c->fn(c->data, &found);
    if (st != TB_OK) failed(&p, st, found);
  }
  for (tb_run_check *c = (tb_run_check *)list; c; c = c->next)
    if (c->gate_fn && c->pass == GATE_SET) {
      tb_status st = c->gate_fn(c->data, true, NULL);
      if (st != TB_OK) failed(&p, st, false);
    }
  if (p.first != TB_OK) return tb_error(p.first, "%s", p.first_sentence);
  /* no check found bad input: the run's own failure stands, with its sentence */
  return p.looked_away ? tb_error(prior, "%s", sentence) : prior;
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
