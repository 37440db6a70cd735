/* The CUDA backend's native events: cuEventCreate (default flags, so they time), recorded on the
 * stream this thread has bound (a prepared model's, cuda_stream.c) or the backend's own, waited on, polled (CUDA_ERROR_NOT_READY is "not yet"), timed with
 * cuEventElapsedTime, each call inside the backend's primary context. The symbols are optional in the
 * shared table: a libcuda without them fails here, naming the one missing. */
#include <stdio.h>
#include "backend/cuda/cuda_state.h"
#include "core/error.h"

#define CUDA_ERROR_NOT_READY 600

static tb_status failed(const cuda_state *s, const char *call, tb_cu_result r) {
  char name[64];
  tb_cuda_api_error_name(&s->api, r, name, sizeof name);
  return tb_error(TB_ERR_DRIVER, "%s: %s failed with %d %s", s->base.label, call, r, name);
}

/* Run one call with the backend's context current. */
#define IN_CONTEXT(s, expr, r)                                 \
  do {                                                               \
    tb_cu_result pushed = (s)->api.cuCtxPushCurrent_v2((s)->ctx);    \
    if (pushed != TB_CUDA_SUCCESS) return failed(s, "cuCtxPushCurrent_v2", pushed); \
    (r) = (expr);                                                    \
    tb_cu_context popped = NULL;                                     \
    (s)->api.cuCtxPopCurrent_v2(&popped);                            \
  } while (0)

static tb_status have_symbols(const cuda_state *s) {
  const char *missing = !s->api.cuEventCreate        ? "cuEventCreate"
                        : !s->api.cuEventRecord      ? "cuEventRecord"
                        : !s->api.cuEventSynchronize ? "cuEventSynchronize"
                        : !s->api.cuEventQuery       ? "cuEventQuery"
                        : !s->api.cuEventElapsedTime ? "cuEventElapsedTime"
                        : !s->api.cuEventDestroy_v2  ? "cuEventDestroy_v2"
                                                     : NULL;
  if (!missing) return TB_OK;
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: the loaded libcuda does not export %s, which events need; update the NVIDIA driver (or point "
                  "TB_CUDA_LIB at a current libcuda.so.1)",
                  s->base.label, missing);
}

tb_status tb_cuda_event_create(void *state, void **out_event) {
  cuda_state *s = state;
  tb_status st = have_symbols(s);
  if (st != TB_OK) return st;
  tb_cu_event event = NULL;
  tb_cu_result r;
  IN_CONTEXT(s, s->api.cuEventCreate(&event, 0), r);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuEventCreate", r);
  *out_event = event;
  return TB_OK;
}

tb_status tb_cuda_event_record(void *state, void *event) {
  cuda_state *s = state;
  tb_cu_result r;
  IN_CONTEXT(s, s->api.cuEventRecord(event, tb_cuda_stream_of(s)), r);
  return r == TB_CUDA_SUCCESS ? TB_OK : failed(s, "cuEventRecord", r);
}

tb_status tb_cuda_event_synchronize(void *state, void *event) {
  cuda_state *s = state;
  tb_cu_result r;
  IN_CONTEXT(s, s->api.cuEventSynchronize(event), r);
  return r == TB_CUDA_SUCCESS ? TB_OK : failed(s, "cuEventSynchronize", r);
}

tb_status tb_cuda_event_query(void *state, void *event, bool *done) {
  cuda_state *s = state;
  tb_cu_result r;
  IN_CONTEXT(s, s->api.cuEventQuery(event), r);
  *done = r == TB_CUDA_SUCCESS;
  return r == TB_CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY ? TB_OK : failed(s, "cuEventQuery", r);
}

tb_status tb_cuda_event_elapsed_ms(void *state, void *start, void *end, double *ms, bool *measured) {
  cuda_state *s = state;
  float f = 0.0f;
  tb_cu_result r;
  IN_CONTEXT(s, s->api.cuEventElapsedTime(&f, start, end), r);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuEventElapsedTime", r);
  *ms = f;
  *measured = true;
  return TB_OK;
}

void tb_cuda_event_destroy(void *state, void *event) {
  cuda_state *s = state;
  if (s->api.cuCtxPushCurrent_v2(s->ctx) != TB_CUDA_SUCCESS) return;
  s->api.cuEventDestroy_v2(event);
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
}
