/* The Level Zero backend's native events: each event has its own host-visible event pool of one event
 * (ZE_EVENT_POOL_FLAG_HOST_VISIBLE), is reset on the host and signalled from the backend's immediate
 * command list (zeCommandListAppendSignalEvent), waited on with zeEventHostSynchronize and polled with
 * zeEventQueryStatus (ZE_RESULT_NOT_READY is "not yet"). Level Zero's event timestamps need a
 * timestamp pool and kernel timestamps; host time stamps (event.c) are used instead. */
#include <stdint.h>
#include <stdlib.h>
#include "backend/level_zero/ze_state.h"
#include "core/error.h"

typedef struct ze_event {
  void *pool;
  void *event;
} ze_event;

static tb_status failed(const ze_state *s, const char *call, uint32_t r) {
  return tb_error(TB_ERR_DRIVER, "%s: %s failed with 0x%08x %s", s->base.label, call, r, tb_ze_result_name(r));
}

static tb_status have_symbols(const ze_state *s) {
  const char *missing = !s->api.zeEventPoolCreate                ? "zeEventPoolCreate"
                        : !s->api.zeEventPoolDestroy             ? "zeEventPoolDestroy"
                        : !s->api.zeEventCreate                  ? "zeEventCreate"
                        : !s->api.zeEventDestroy                 ? "zeEventDestroy"
                        : !s->api.zeEventHostReset               ? "zeEventHostReset"
                        : !s->api.zeEventHostSynchronize         ? "zeEventHostSynchronize"
                        : !s->api.zeEventQueryStatus             ? "zeEventQueryStatus"
                        : !s->api.zeCommandListAppendSignalEvent ? "zeCommandListAppendSignalEvent"
                                                                 : NULL;
  if (!missing) return TB_OK;
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: the loaded Level Zero loader does not export %s, which events need; install a current Level "
                  "Zero loader (libze1 / level-zero) or point TB_ZE_LIB at libze_loader.so.1",
                  s->base.label, missing);
}

tb_status tb_ze_event_create(void *state, void **out_event) {
  ze_state *s = state;
  tb_status st = have_symbols(s);
  if (st != TB_OK) return st;
  ze_event *e = calloc(1, sizeof *e);
  if (!e) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory creating an event", s->base.label);
  ze_event_pool_desc pool_desc = {.stype = ZE_STYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
  void *devices[1] = {s->device};
  uint32_t r = ZE_CALL(&s->api, zeEventPoolCreate)(s->context, &pool_desc, 1, devices, &e->pool);
  if (r != 0) {
    free(e);
    return failed(s, "zeEventPoolCreate", r);
  }
  ze_event_desc desc = {.stype = ZE_STYPE_EVENT_DESC, .index = 0, .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                        .wait = ZE_EVENT_SCOPE_FLAG_HOST};
  r = ZE_CALL(&s->api, zeEventCreate)(e->pool, &desc, &e->event);
  if (r != 0) {
    ZE_CALL(&s->api, zeEventPoolDestroy)(e->pool);
    free(e);
    return failed(s, "zeEventCreate", r);
  }
  *out_event = e;
  return TB_OK;
}

/* Reset, then signal after everything appended to the command list so far. */
tb_status tb_ze_event_record(void *state, void *event) {
  ze_state *s = state;
  ze_event *e = event;
  uint32_t r = ZE_CALL(&s->api, zeEventHostReset)(e->event);
  if (r != 0) return failed(s, "zeEventHostReset", r);
  pthread_mutex_lock(&s->lock);
  r = ZE_CALL(&s->api, zeCommandListAppendSignalEvent)(s->list, e->event);
  pthread_mutex_unlock(&s->lock);
  return r == 0 ? TB_OK : failed(s, "zeCommandListAppendSignalEvent", r);
}

tb_status tb_ze_event_synchronize(void *state, void *event) {
  ze_state *s = state;
  uint32_t r = ZE_CALL(&s->api, zeEventHostSynchronize)(((ze_event *)event)->event, UINT64_MAX);
  return r == 0 ? TB_OK : failed(s, "zeEventHostSynchronize", r);
}

tb_status tb_ze_event_query(void *state, void *event, bool *done) {
  ze_state *s = state;
  uint32_t r = ZE_CALL(&s->api, zeEventQueryStatus)(((ze_event *)event)->event);
  *done = r == 0;
  return r == 0 || r == ZE_RESULT_NOT_READY ? TB_OK : failed(s, "zeEventQueryStatus", r);
}

void tb_ze_event_destroy(void *state, void *event) {
  ze_state *s = state;
  ze_event *e = event;
  ZE_CALL(&s->api, zeEventDestroy)(e->event);
  ZE_CALL(&s->api, zeEventPoolDestroy)(e->pool);
  free(e);
}
