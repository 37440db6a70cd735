/* Events on a backend handle (tb_event_*): argument rules, the backend reference, and the host
 * implementation used when the backend's ops have no native events (record = synchronize, then a
 * CLOCK_MONOTONIC time stamp). Native events go through the ops' event_* entries; for backends without a
 * device timer (no event_elapsed_ms) the host time stamp is taken when the event is first seen complete. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <tensorbridge/backend.h>
#include "backend/backend_impl.h"
#include "backend/backend_refs.h"
#include "core/error.h"

/* The fields below `backend` change under the backend's lock, so one event may be used from several
 * threads. */
struct tb_event {
  tb_backend *backend;  /* holds a reference (tb_backend_storage_acquire with 0 bytes) */
  void *native;         /* the backend's event; NULL for a host event */
  bool recorded;
  bool completed;       /* seen complete since the last record */
  double host_ms;       /* CLOCK_MONOTONIC in ms when seen complete */
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *label_of(const tb_event *e) { return e->backend->device->device; }

static void mark_completed(tb_event *e) {
  if (e->completed) return;
  e->completed = true;
  e->host_ms = now_ms();
}

tb_status tb_event_create(tb_backend *backend, tb_event **out_event) {
  if (!out_event) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_event_create: out_event must not be NULL");
  *out_event = NULL;
  if (!backend) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_event_create: backend must not be NULL");
  tb_event *e = calloc(1, sizeof *e);
  if (!e) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_event_create: out of host memory");
  tb_block *none = NULL;
  tb_status st = tb_backend_storage_acquire(backend, 0, &none);
  if (st != TB_OK) {
    free(e);
    return st;
  }
  e->backend = backend;
  if (backend->ops->event_create) {
    pthread_mutex_lock(&backend->lock);
    st = backend->ops->event_create(backend->state, &e->native);
    pthread_mutex_unlock(&backend->lock);
    if (st != TB_OK) {
      tb_backend_storage_release(backend, NULL);
      free(e);
      return st;
    }
  }
  *out_event = e;
  return TB_OK;
}

/* Native events timed on the host are looked at once right after recording: when the backend's work
 * so far has all finished (its copies block), the time stamp is the moment of recording, exact as for a
 * host event; otherwise it is taken when the event is first seen complete. */
tb_status tb_event_record(tb_event *event) {
  if (!event) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_event_record: event must not be NULL");
  tb_backend *b = event->backend;
  bool done = !event->native;
  pthread_mutex_lock(&b->lock);
  tb_status st = event->native ? b->ops->event_record(b->state, event->native) : b->ops->synchronize(b->state);
  if (st == TB_OK && event->native && !b->ops->event_elapsed_ms) st = b->ops->event_query(b->state, event->native, &done);
  event->recorded = st == TB_OK;
  event->completed = false;
  if (st == TB_OK && done) mark_completed(event);
  pthread_mutex_unlock(&b->lock);
  return st;
}

static tb_status never_recorded(const tb_event *e, const char *fn) {
  return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: the event on %s was never recorded; call tb_event_record first", fn,
                  label_of(e));
}

tb_status tb_event_synchronize(tb_event *event) {
  if (!event) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_event_synchronize: event must not be NULL");
  tb_backend *b = event->backend;
  pthread_mutex_lock(&b->lock);
  tb_status st = event->recorded ? TB_OK : never_recorded(event, "tb_event_synchronize");
  if (st == TB_OK && !event->completed) {
    st = b->ops->event_synchronize(b->state, event->native);
    if (st == TB_OK) mark_completed(event);
  }
  pthread_mutex_unlock(&b->lock);
  return st;
}

/* Whether the event was recorded and is complete, asking the driver when it is recorded and not yet seen
 * complete. */
static tb_status poll(tb_event *event, bool *recorded, bool *done) {
  tb_backend *b = event->backend;
  pthread_mutex_lock(&b->lock);
  *recorded = event->recorded;
  *done = event->recorded && event->completed;
  tb_status st = TB_OK;
  if (*recorded && !*done) {
    st = b->ops->event_query(b->state, event->native, done);
    if (st == TB_OK && *done) mark_completed(event);
  }
  pthread_mutex_unlock(&b->lock);
  return st;
}

tb_status tb_event_query(tb_event *event, bool *out_done) {
  if (!event || !out_done)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_event_query: %s must not be NULL", event ? "out_done" : "event");
  *out_done = false;
  bool recorded = false;
  tb_status st = poll(event, &recorded, out_done);
  if (st == TB_OK && !recorded) return never_recorded(event, "tb_event_query");
  return st;
}

/* Both recorded and complete, or an error saying which is not. */
static tb_status need_complete(tb_event *e, const char *which) {
  bool recorded = false, done = false;
  tb_status st = poll(e, &recorded, &done);
  if (st != TB_OK) return st;
  if (!recorded)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_event_elapsed_ms: the %s event on %s was never recorded; record both events, then synchronize "
                    "the end event",
                    which, label_of(e));
  if (!done)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_event_elapsed_ms: the %s event on %s has not completed yet; call tb_event_synchronize on it "
                    "first",
                    which, label_of(e));
  return TB_OK;
}

tb_status tb_event_elapsed_ms(const tb_event *start, const tb_event *end, double *out_ms) {
  if (!start || !end || !out_ms)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_event_elapsed_ms: %s must not be NULL",
                    !start ? "start" : !end ? "end" : "out_ms");
  *out_ms = 0.0;
  if (start->backend != end->backend)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_event_elapsed_ms: the start event is on %s and the end event on %s, different backend handles; "
                    "time events of one backend",
                    label_of(start), label_of(end));
  /* Polling updates the completion state of the events, not what they mark. */
  tb_event *s = (tb_event *)(uintptr_t)start, *e = (tb_event *)(uintptr_t)end;
  tb_status st = need_complete(s, "start");
  if (st == TB_OK) st = need_complete(e, "end");
  if (st != TB_OK) return st;
  tb_backend *b = s->backend;
  bool measured = false;
  pthread_mutex_lock(&b->lock);
  if (s->native && b->ops->event_elapsed_ms) st = b->ops->event_elapsed_ms(b->state, s->native, e->native, out_ms, &measured);
  if (st == TB_OK && !measured) *out_ms = e->host_ms - s->host_ms;
  pthread_mutex_unlock(&b->lock);
  return st;
}

void tb_event_destroy(tb_event *event) {
  if (!event) return;
  tb_backend *b = event->backend;
  if (event->native) {
    pthread_mutex_lock(&b->lock);
    b->ops->event_destroy(b->state, event->native);
    pthread_mutex_unlock(&b->lock);
  }
  tb_backend_storage_release(b, NULL);
  free(event);
}
