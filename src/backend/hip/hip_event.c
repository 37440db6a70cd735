/* The HIP backend's native events: hipEventCreate, recorded on the null stream with the backend's device
 * current on the calling thread (put back afterwards, as the memory ops do), waited on, polled
 * (hipErrorNotReady is "not yet"), timed with hipEventElapsedTime. The symbols are optional in the shared
 * table: a runtime without them fails here, naming the one missing. */
#include <stdio.h>
#include "backend/hip/hip_state.h"
#include "core/error.h"

static tb_status failed(const hip_state *s, const char *call, int r) {
  char name[64];
  tb_hip_api_error_name(&s->api, r, name, sizeof name);
  return tb_error(TB_ERR_DRIVER, "%s: %s failed with %d %s", s->base.label, call, r, name);
}

/* Run one call with the backend's device current on this thread, then put the thread's device back. */
#define ON_DEVICE(s, expr, r)                                                         \
  do {                                                                                \
    int previous = -1;                                                                \
    if ((s)->api.hipGetDevice(&previous) != TB_HIP_SUCCESS) previous = -1;            \
    if (previous != (s)->device) {                                                    \
      int set = (s)->api.hipSetDevice((s)->device);                                   \
      if (set != TB_HIP_SUCCESS) return failed(s, "hipSetDevice", set);               \
    }                                                                                 \
    (r) = (expr);                                                                     \
    if (previous >= 0 && previous != (s)->device) (s)->api.hipSetDevice(previous);    \
  } while (0)

static tb_status have_symbols(const hip_state *s) {
  const char *missing = !s->api.hipEventCreate        ? "hipEventCreate"
                        : !s->api.hipEventRecord      ? "hipEventRecord"
                        : !s->api.hipEventSynchronize ? "hipEventSynchronize"
                        : !s->api.hipEventQuery       ? "hipEventQuery"
                        : !s->api.hipEventElapsedTime ? "hipEventElapsedTime"
                        : !s->api.hipEventDestroy     ? "hipEventDestroy"
                                                      : NULL;
  if (!missing) return TB_OK;
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: the loaded HIP runtime does not export %s, which events need; install a current ROCm HIP "
                  "runtime (or point TB_HIP_LIB at libamdhip64.so)",
                  s->base.label, missing);
}

tb_status tb_hip_event_create(void *state, void **out_event) {
  hip_state *s = state;
  tb_status st = have_symbols(s);
  if (st != TB_OK) return st;
  tb_hip_event event = NULL;
  int r;
  ON_DEVICE(s, s->api.hipEventCreate(&event), r);
  if (r != TB_HIP_SUCCESS) return failed(s, "hipEventCreate", r);
  *out_event = event;
  return TB_OK;
}

tb_status tb_hip_event_record(void *state, void *event) {
  hip_state *s = state;
  int r;
  ON_DEVICE(s, s->api.hipEventRecord(event, NULL), r);
  return r == TB_HIP_SUCCESS ? TB_OK : failed(s, "hipEventRecord", r);
}

tb_status tb_hip_event_synchronize(void *state, void *event) {
  hip_state *s = state;
  int r;
  ON_DEVICE(s, s->api.hipEventSynchronize(event), r);
  return r == TB_HIP_SUCCESS ? TB_OK : failed(s, "hipEventSynchronize", r);
}

tb_status tb_hip_event_query(void *state, void *event, bool *done) {
  hip_state *s = state;
  int r;
  ON_DEVICE(s, s->api.hipEventQuery(event), r);
  *done = r == TB_HIP_SUCCESS;
  return r == TB_HIP_SUCCESS || r == TB_HIP_ERROR_NOT_READY ? TB_OK : failed(s, "hipEventQuery", r);
}

tb_status tb_hip_event_elapsed_ms(void *state, void *start, void *end, double *ms, bool *measured) {
  hip_state *s = state;
  float f = 0.0f;
  int r;
  ON_DEVICE(s, s->api.hipEventElapsedTime(&f, start, end), r);
  if (r != TB_HIP_SUCCESS) return failed(s, "hipEventElapsedTime", r);
  *ms = f;
  *measured = true;
  return TB_OK;
}

void tb_hip_event_destroy(void *state, void *event) {
  hip_state *s = state;
  s->api.hipEventDestroy(event);
}
