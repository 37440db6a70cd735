/* The CUDA backend's streams: one per prepared model (made by model/ through the ops' stream_create), bound to the
 * calling thread while it runs that model (stream_bind), so its kernel launches, copies, fills and event records
 * go to it and never to the legacy default stream. The binding is per thread and per backend, so two threads
 * running two models on one backend each keep their own stream. Streams are created non-blocking when libcuda has
 * the stream-ordered calls (they then do not wait for the legacy default stream, which nothing here uses). A model's
 * stream also carries its run slot (tb_cuda_run_slot_of): what the model's kernels share across its runs (the run-wide
 * word of the device's checks, kernels/cuda_index_flag.c), released with the stream. */
#include <stdio.h>
#include <stdlib.h>
#include "backend/cuda/cuda_state.h"
#include "backend/devmem_ops.h"
#include "core/error.h"

/* This thread's binding: which backend's state, and its stream; and the backend whose bound stream it captures
 * (cuda_graph.c), with what the capture had to refuse. */
typedef struct model_stream {
  tb_cu_stream stream;
  tb_cuda_run_slot slot;
} model_stream;

static __thread const cuda_state *bound_state;
static __thread model_stream *bound_stream;
static __thread const cuda_state *capturing_state;
static __thread char refused[256];

bool tb_cuda_capturing(const cuda_state *s) { return capturing_state == s; }

void tb_cuda_capture_mark(const cuda_state *s, bool on) {
  capturing_state = on ? s : NULL;
  refused[0] = '\0';
}

void tb_cuda_capture_refuse(const cuda_state *s, const char *what) {
  if (capturing_state == s && !refused[0]) snprintf(refused, sizeof refused, "%s", what);
}

const char *tb_cuda_capture_refused(void) { return refused; }

tb_cu_stream tb_cuda_stream_of(const cuda_state *s) { return bound_state == s && bound_stream ? bound_stream->stream : s->stream; }

tb_cu_stream tb_cuda_stream_handle_of(const cuda_state *s, void *stream) {
  return stream ? ((model_stream *)stream)->stream : s->stream;
}

tb_cuda_run_slot *tb_cuda_run_slot_of(const cuda_state *s) { return bound_state == s && bound_stream ? &bound_stream->slot : NULL; }

void *tb_cuda_stream_bind(void *state, void *stream) {
  const cuda_state *s = state;
  void *before = bound_state == s ? bound_stream : NULL;
  bound_state = stream ? s : NULL;
  bound_stream = stream;
  return before;
}

static tb_status failed(const cuda_state *s, const char *call, tb_cu_result r) {
  return tb_devmem_call_failed(&s->base, call, "", r, "");
}

tb_status tb_cuda_stream_create(void *state, void **out_stream) {
  cuda_state *s = state;
  *out_stream = NULL;
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuCtxPushCurrent_v2", r);
  model_stream *m = calloc(1, sizeof *m);
  r = m ? s->api.cuStreamCreate(&m->stream, s->async ? TB_CU_STREAM_NON_BLOCKING : 0) : TB_CUDA_SUCCESS;
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  if (!m) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for a model's stream", s->base.label);
  if (r != TB_CUDA_SUCCESS) {
    free(m);
    return failed(s, "cuStreamCreate", r);
  }
  *out_stream = m;
  return TB_OK;
}

void tb_cuda_stream_destroy(void *state, void *stream) {
  cuda_state *s = state;
  model_stream *m = stream;
  if (!m) return;
  if (bound_state == s && bound_stream == m) tb_cuda_stream_bind(state, NULL);
  bool pushed = s->api.cuCtxPushCurrent_v2(s->ctx) == TB_CUDA_SUCCESS;
  if (pushed) s->api.cuStreamSynchronize(m->stream); /* its work may still read memory the caller frees next */
  /* cuBLASLt's workspace, now that nothing on the stream runs, and before the stream goes: the records are keyed by
   * the handle, which the driver may give to the next stream made (another thread's) */
  tb_cuda_workspace_release(s, m->stream, false);
  if (pushed) {
    s->api.cuStreamDestroy_v2(m->stream);
    tb_cu_context popped = NULL;
    s->api.cuCtxPopCurrent_v2(&popped);
  }
  if (m->slot.release) m->slot.release(m->slot.data);
  free(m);
}

tb_status tb_cuda_stream_synchronize(void *state, void *stream) {
  cuda_state *s = state;
  tb_cu_stream which = stream ? tb_cuda_stream_handle_of(s, stream) : tb_cuda_stream_of(s);
  if (tb_cuda_capturing(s)) {
    tb_cuda_capture_refuse(s, "a wait for the stream (the host needs a result in the middle of the run)");
    return tb_error(TB_ERR_UNSUPPORTED, "%s: a wait for the stream in the middle of a captured run cannot be captured",
                    s->base.label);
  }
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuCtxPushCurrent_v2", r);
  r = s->api.cuStreamSynchronize(which);
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  return r == TB_CUDA_SUCCESS ? TB_OK : failed(s, "cuStreamSynchronize", r);
}
