/* CUDA graphs of a prepared model's run: the stream bound to this thread (cuda_stream.c) captured in relaxed mode
 * (cuStreamBeginCapture_v2 / cuStreamEndCapture: kernels, copies and fills within the device become the graph's
 * nodes, nothing runs), instantiated (cuGraphInstantiateWithFlags) or, when an executable graph exists already,
 * updated in place (cuGraphExecUpdate_v2: same nodes, new parameters) and else replaced, then launched as one
 * call (cuGraphLaunch). A copy with the host or a wait during the capture cannot be part of a graph: the memory
 * ops refuse it (tb_cuda_capture_refuse), and capture_end then says what it was. */
#include <stdio.h>
#include <string.h>
#include "backend/cuda/cuda_state.h"
#include "backend/devmem_ops.h"
#include "core/error.h"

static tb_status failed(const cuda_state *s, const char *call, tb_cu_result r, const char *then) {
  return tb_devmem_call_failed(&s->base, call, "", r, then);
}

static tb_status have_symbols(const cuda_state *s) {
  if (s->async && s->api.cuStreamBeginCapture_v2 && s->api.cuStreamEndCapture && s->api.cuGraphInstantiateWithFlags &&
      s->api.cuGraphLaunch && s->api.cuGraphExecDestroy && s->api.cuGraphDestroy)
    return TB_OK;
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: the loaded libcuda lacks the CUDA graph calls (cuStreamBeginCapture_v2, cuGraphInstantiateWithFlags, "
                  "cuGraphLaunch, and the stream-ordered copies); update the NVIDIA driver to use graph replay",
                  s->base.label);
}

tb_status tb_cuda_capture_begin(void *state) {
  cuda_state *s = state;
  tb_status st = have_symbols(s);
  if (st != TB_OK) return st;
  if (tb_cuda_capturing(s)) return tb_error(TB_ERR_INTERNAL, "%s: a capture is already open on this thread", s->base.label);
  tb_cu_stream stream = tb_cuda_stream_of(s);
  if (stream == s->stream)
    return tb_error(TB_ERR_INTERNAL, "%s: capture needs a model's stream bound (stream_bind), not the backend's own", s->base.label);
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuCtxPushCurrent_v2", r, "");
  r = s->api.cuStreamBeginCapture_v2(stream, TB_CU_STREAM_CAPTURE_MODE_RELAXED);
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuStreamBeginCapture_v2", r, "");
  tb_cuda_capture_mark(s, true);
  return TB_OK;
}

/* *exec made from `graph`: updated in place when it exists and takes the new graph, else instantiated anew. */
static tb_status instantiate(cuda_state *s, tb_cu_graph graph, tb_cu_graph_exec *exec, bool *updated) {
  *updated = false;
  if (*exec && s->api.cuGraphExecUpdate_v2) {
    tb_cu_graph_exec_update_info info;
    memset(&info, 0, sizeof info);
    if (s->api.cuGraphExecUpdate_v2(*exec, graph, &info) == TB_CUDA_SUCCESS) {
      *updated = true;
      return TB_OK;
    }
  }
  tb_cu_graph_exec fresh = NULL;
  tb_cu_result r = s->api.cuGraphInstantiateWithFlags(&fresh, graph, 0);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuGraphInstantiateWithFlags", r, "");
  if (*exec) s->api.cuGraphExecDestroy(*exec);
  *exec = fresh;
  return TB_OK;
}

tb_status tb_cuda_capture_end(void *state, bool keep, void **graph, bool *updated) {
  cuda_state *s = state;
  *updated = false;
  if (!tb_cuda_capturing(s)) return tb_error(TB_ERR_INTERNAL, "%s: capture_end without capture_begin on this thread", s->base.label);
  char why[256];
  snprintf(why, sizeof why, "%s", tb_cuda_capture_refused());
  tb_cuda_capture_mark(s, false);
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) { /* still end the capture: the stream must not stay in capture mode */
    tb_cu_graph dropped = NULL;
    if (s->api.cuStreamEndCapture(tb_cuda_stream_of(s), &dropped) == TB_CUDA_SUCCESS && dropped) s->api.cuGraphDestroy(dropped);
    return failed(s, "cuCtxPushCurrent_v2", r, "");
  }
  tb_cu_graph g = NULL;
  r = s->api.cuStreamEndCapture(tb_cuda_stream_of(s), &g);
  tb_status st = TB_OK;
  if (r != TB_CUDA_SUCCESS) {
    char then[320] = "";
    if (why[0]) snprintf(then, sizeof then, " (the captured work included %s)", why);
    if (keep) st = failed(s, "cuStreamEndCapture", r, then);
  } else if (keep && why[0]) {
    st = tb_error(TB_ERR_UNSUPPORTED, "%s: the captured run included %s, which a CUDA graph cannot hold", s->base.label, why);
  } else if (keep) {
    st = instantiate(s, g, (tb_cu_graph_exec *)graph, updated);
  }
  if (g) s->api.cuGraphDestroy(g); /* the executable graph is independent of it */
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  return st;
}

tb_status tb_cuda_graph_launch(void *state, void *graph) {
  cuda_state *s = state;
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return failed(s, "cuCtxPushCurrent_v2", r, "");
  r = s->api.cuGraphLaunch(graph, tb_cuda_stream_of(s));
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  return failed(s, "cuGraphLaunch", r, "; a kernel of the replayed run failed or the device is out of memory");
}

void tb_cuda_graph_destroy(void *state, void *graph) {
  cuda_state *s = state;
  if (!graph || s->api.cuCtxPushCurrent_v2(s->ctx) != TB_CUDA_SUCCESS) return;
  s->api.cuGraphExecDestroy(graph);
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
}
