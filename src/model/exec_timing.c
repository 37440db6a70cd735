/* The profiler's device time per node: on a backend with a device timer (CUDA events), events recorded on the
 * model's stream just before and after a node's launches give the GPU's own time for the node, not the host's
 * time to enqueue it plus the wait. Elsewhere the executor waits for the device after the node and takes the host's
 * time (exec.c). */
#include "backend/backend_impl.h"
#include "model/exec_impl.h"

static bool has_timer(const tb_backend *b) { return b && b->ops->event_create && b->ops->event_elapsed_ms; }

void tb_exec_timer_free(tb_exec *e) {
  for (int i = 0; i < 2; i++) {
    tb_event_destroy(e->timer[i]);
    e->timer[i] = NULL;
  }
  e->timer_backend = NULL;
}

bool tb_exec_timer_start(tb_exec *e, int side) {
  tb_backend *b = tb_exec_side_backend(e, side);
  if (!has_timer(b)) return false;
  if (e->timer_backend != b) {
    tb_exec_timer_free(e);
    if (tb_event_create(b, &e->timer[0]) != TB_OK || tb_event_create(b, &e->timer[1]) != TB_OK) {
      tb_exec_timer_free(e);
      return false;
    }
    e->timer_backend = b;
  }
  return tb_event_record(e->timer[0]) == TB_OK;
}

tb_status tb_exec_timer_stop(tb_exec *e, double *ms) {
  tb_status st = tb_event_record(e->timer[1]);
  if (st == TB_OK) st = tb_event_synchronize(e->timer[1]);
  if (st == TB_OK) st = tb_event_elapsed_ms(e->timer[0], e->timer[1], ms);
  return st;
}
