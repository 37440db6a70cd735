/* cuBLASLt's workspace on the CUDA backend: one per stream, shared by every product node of every model whose work
 * goes to that stream, kept in the device's state (cuda_state.workspaces) under its lock.
 *
 * Why per stream and not one per device: cuBLASLt writes its workspace while a product runs. Two products on one
 * stream run one after the other, so any number of nodes and models may share that stream's workspace. Products on
 * two streams (two prepared models, each with its own stream) may run at the same time; one workspace for both
 * would need each stream to wait for the other's last product (an event recorded after it and a cuStreamWaitEvent
 * before the next), which serialises the models, and cannot be recorded into a captured graph (the wait would be
 * on work outside the capture). So each stream gets its own; the device's part is the size and the lock.
 *
 * The size: NVIDIA's recommendation (cuBLAS reference, cublasSetWorkspace): 32 MiB from Hopper (compute capability
 * 9.0) on, 4 MiB before. A workspace is made at a stream's first product and grown on demand (a caller asking for
 * more gets a new block; the old one is kept, since a captured graph may still name it, and freed with the rest when
 * the stream is destroyed, tb_cuda_stream_destroy, or the backend closed). The blocks come from cuMemAlloc_v2
 * directly, not the caching allocator, so the allocator's statistics do not count them; a block that cannot be had
 * leaves the product without a workspace (cuBLASLt then picks among algorithms that need none), with a warning once
 * per device (cuda_gemm.c). */
#include <stdio.h>
#include <stdlib.h>
#include "backend/cuda/cuda_state.h"
#include "backend/devmem_ops.h"
#include "core/error.h"

enum { RECOMMENDED_HOPPER = 32u << 20, RECOMMENDED_BEFORE = 4u << 20 };

typedef struct tb_cuda_workspace {
  struct tb_cuda_workspace *next;
  tb_cu_stream stream;
  tb_cu_deviceptr ptr; /* 0: none (the allocation failed) */
  size_t bytes;
  bool current; /* false: an older, smaller block, kept until the stream goes */
} tb_cuda_workspace;

size_t tb_cuda_workspace_recommended(int cc_major) { return cc_major >= 9 ? RECOMMENDED_HOPPER : RECOMMENDED_BEFORE; }

static size_t recommended_of(cuda_state *s) {
  int major = 0;
  if (s->api.cuDeviceGetAttribute(&major, TB_CU_ATTR_COMPUTE_MAJOR, s->device) != TB_CUDA_SUCCESS) major = 0;
  return tb_cuda_workspace_recommended(major);
}

static tb_cuda_workspace *current_of(cuda_state *s, tb_cu_stream stream) {
  for (tb_cuda_workspace *w = s->workspaces; w; w = w->next)
    if (w->stream == stream && w->current) return w;
  return NULL;
}

tb_status tb_cuda_workspace_get(cuda_state *s, tb_cu_stream stream, size_t at_least, tb_cu_deviceptr *ptr, size_t *bytes) {
  *ptr = 0;
  *bytes = 0;
  pthread_mutex_lock(&s->workspace_lock);
  tb_cuda_workspace *w = current_of(s, stream);
  if (w && w->ptr && w->bytes >= at_least) {
    *ptr = w->ptr;
    *bytes = w->bytes;
    pthread_mutex_unlock(&s->workspace_lock);
    return TB_OK;
  }
  size_t want = recommended_of(s);
  if (want < at_least) want = at_least;
  tb_cuda_workspace *grown = calloc(1, sizeof *grown);
  if (!grown) {
    pthread_mutex_unlock(&s->workspace_lock);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for cuBLASLt's workspace record", s->base.label);
  }
  tb_status st = TB_OK;
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r == TB_CUDA_SUCCESS) {
    r = s->api.cuMemAlloc_v2(&grown->ptr, want);
    tb_cu_context popped = NULL;
    s->api.cuCtxPopCurrent_v2(&popped);
  }
  if (r != TB_CUDA_SUCCESS) {
    grown->ptr = 0;
    st = tb_devmem_call_failed(&s->base, "cuMemAlloc_v2", "for cuBLASLt's workspace", r, "");
  }
  if (!grown->ptr) {
    free(grown);
    pthread_mutex_unlock(&s->workspace_lock);
    return st;
  }
  grown->stream = stream;
  grown->bytes = want;
  grown->current = true;
  if (w) w->current = false; /* kept: a captured graph may name it */
  grown->next = s->workspaces;
  s->workspaces = grown;
  *ptr = grown->ptr;
  *bytes = grown->bytes;
  pthread_mutex_unlock(&s->workspace_lock);
  return TB_OK;
}

void tb_cuda_workspace_release(cuda_state *s, tb_cu_stream stream, bool all) {
  pthread_mutex_lock(&s->workspace_lock);
  bool pushed = false;
  for (tb_cuda_workspace **at = &s->workspaces; *at;) {
    tb_cuda_workspace *w = *at;
    if (!all && w->stream != stream) {
      at = &w->next;
      continue;
    }
    if (!pushed) pushed = s->api.cuCtxPushCurrent_v2(s->ctx) == TB_CUDA_SUCCESS;
    if (pushed && w->ptr) s->api.cuMemFree_v2(w->ptr);
    *at = w->next;
    free(w);
  }
  if (pushed) {
    tb_cu_context popped = NULL;
    s->api.cuCtxPopCurrent_v2(&popped);
  }
  pthread_mutex_unlock(&s->workspace_lock);
}

size_t tb_cuda_workspace_blocks(cuda_state *s, tb_cu_stream stream, size_t *bytes) {
  size_t n = 0, total = 0;
  pthread_mutex_lock(&s->workspace_lock);
  for (tb_cuda_workspace *w = s->workspaces; w; w = w->next)
    if (w->stream == stream) n++, total += w->bytes;
  pthread_mutex_unlock(&s->workspace_lock);
  if (bytes) *bytes = total;
  return n;
}
