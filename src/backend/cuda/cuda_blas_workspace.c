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
 * directly, not the caching allocator, so the allocator's statistics do not count them. A block that cannot be had
 * (out of memory) is asked for once more after the caching allocator released its cache (its own free-cache-and-
 * retry-once rule, docs/memory.md); a block that still cannot be had leaves the product without a workspace
 * (cuBLASLt then picks among algorithms that need none), with a warning once per device (cuda_gemm.c). The failure is
 * remembered for the stream (a record without a block): the stream's later products get the same answer without
 * asking the driver under the device-wide lock again, until one asks for more than the size that failed (then it is
 * tried again); a new stream (a newly prepared model) tries again.
 *
 * The records are keyed by the raw CUDA stream handle, so a stream's are released (tb_cuda_stream_destroy) after its
 * work finished and before the stream is destroyed: the driver may give the same handle to the next stream made. */
#include <stdio.h>
#include <stdlib.h>
#include "backend/allocator.h"
#include "backend/cuda/cuda_state.h"
#include "backend/devmem_ops.h"
#include "core/env.h"
#include "core/error.h"

enum { RECOMMENDED_HOPPER = 32u << 20, RECOMMENDED_BEFORE = 4u << 20, CU_OUT_OF_MEMORY = 2 };

typedef struct tb_cuda_workspace {
  struct tb_cuda_workspace *next;
  tb_cu_stream stream;
  tb_cu_deviceptr ptr; /* 0: none: the allocation of `bytes` failed with `failure` (the stream's remembered failure) */
  size_t bytes;
  tb_cu_result failure;
  bool current; /* false: an older, smaller block, kept until the stream goes */
} tb_cuda_workspace;

size_t tb_cuda_workspace_recommended(int cc_major) { return cc_major >= 9 ? RECOMMENDED_HOPPER : RECOMMENDED_BEFORE; }

/* The device's compute capability (0.0 when it cannot be read: the size before Hopper). */
static void capability_of(cuda_state *s, int *major, int *minor) {
  if (s->api.cuDeviceGetAttribute(major, TB_CU_ATTR_COMPUTE_MAJOR, s->device) != TB_CUDA_SUCCESS) *major = 0;
  if (s->api.cuDeviceGetAttribute(minor, TB_CU_ATTR_COMPUTE_MINOR, s->device) != TB_CUDA_SUCCESS) *minor = 0;
}

static tb_cuda_workspace *current_of(cuda_state *s, tb_cu_stream stream) {
  for (tb_cuda_workspace *w = s->workspaces; w; w = w->next)
    if (w->stream == stream && w->current) return w;
  return NULL;
}

static tb_cuda_workspace *failure_of(cuda_state *s, tb_cu_stream stream) {
  for (tb_cuda_workspace *w = s->workspaces; w; w = w->next)
    if (w->stream == stream && !w->ptr) return w;
  return NULL;
}

/* The sentence of a failed allocation of `bytes` (remembered: the stream's earlier one). */
static tb_status alloc_failed(cuda_state *s, size_t bytes, tb_cu_result r, bool remembered) {
  int major = 0, minor = 0;
  capability_of(s, &major, &minor);
  char what[160], then[200];
  snprintf(what, sizeof what, "of %.1f MiB for cuBLASLt's workspace (compute capability %d.%d)",
           (double)bytes / (1024.0 * 1024.0), major, minor);
  snprintf(then, sizeof then, "%s; free device memory or prepare fewer models on the device",
           remembered ? " (this stream's earlier attempt, not retried)" : "");
  return tb_devmem_call_failed(&s->base, "cuMemAlloc_v2", what, r, then);
}

/* One allocation of `want` bytes in the device's context: the driver's answer; a failed push is its own sentence
 * (*pushed false). */
static tb_cu_result alloc_once(cuda_state *s, size_t want, tb_cu_deviceptr *ptr, bool *pushed) {
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  *pushed = r == TB_CUDA_SUCCESS;
  if (!*pushed) return r;
  r = s->api.cuMemAlloc_v2(ptr, want);
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  if (r != TB_CUDA_SUCCESS) *ptr = 0;
  return r;
}

tb_status tb_cuda_workspace_get(cuda_state *s, tb_allocator *cache, tb_cu_stream stream, size_t at_least,
                                tb_cu_deviceptr *ptr, size_t *bytes) {
  *ptr = 0;
  *bytes = 0;
  pthread_mutex_lock(&s->workspace_lock);
  tb_cuda_workspace *w = current_of(s, stream);
  if (w && w->bytes >= at_least) {
    *ptr = w->ptr;
    *bytes = w->bytes;
    pthread_mutex_unlock(&s->workspace_lock);
    return TB_OK;
  }
  int major = 0, minor = 0;
  capability_of(s, &major, &minor);
  size_t want = tb_cuda_workspace_recommended(major);
  if (want < at_least) want = at_least;
  tb_cuda_workspace *failure = failure_of(s, stream);
  if (failure && want <= failure->bytes) { /* failed before at this size or more: not retried */
    tb_status st = alloc_failed(s, failure->bytes, failure->failure, true);
    pthread_mutex_unlock(&s->workspace_lock);
    return st;
  }
  tb_cuda_workspace *grown = calloc(1, sizeof *grown);
  if (!grown) {
    pthread_mutex_unlock(&s->workspace_lock);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for cuBLASLt's workspace record", s->base.label);
  }
  bool pushed = false;
  tb_cu_result r = alloc_once(s, want, &grown->ptr, &pushed);
  if (pushed && r == CU_OUT_OF_MEMORY && cache) { /* the caching allocator's rule: release its cache, retry once */
    tb_allocator_empty_cache(cache);
    r = alloc_once(s, want, &grown->ptr, &pushed);
  }
  if (!pushed) {
    free(grown);
    pthread_mutex_unlock(&s->workspace_lock);
    return tb_devmem_call_failed(&s->base, "cuCtxPushCurrent_v2", "before allocating cuBLASLt's workspace", r, "");
  }
  grown->stream = stream;
  grown->bytes = want;
  if (r != TB_CUDA_SUCCESS) { /* remembered for the stream (the record replaces an earlier, smaller failure) */
    tb_status st = alloc_failed(s, want, r, false);
    if (failure) {
      failure->bytes = want;
      failure->failure = r;
      free(grown);
    } else {
      grown->failure = r;
      grown->next = s->workspaces;
      s->workspaces = grown;
    }
    pthread_mutex_unlock(&s->workspace_lock);
    return st;
  }
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
  bool pushed = false, tried = false;
  size_t leaked = 0;
  tb_cu_result push = TB_CUDA_SUCCESS;
  for (tb_cuda_workspace **at = &s->workspaces; *at;) {
    tb_cuda_workspace *w = *at;
    if (!all && w->stream != stream) {
      at = &w->next;
      continue;
    }
    if (w->ptr && !tried) {
      tried = true;
      push = s->api.cuCtxPushCurrent_v2(s->ctx);
      pushed = push == TB_CUDA_SUCCESS;
    }
    if (pushed && w->ptr) s->api.cuMemFree_v2(w->ptr);
    else if (w->ptr) leaked += w->bytes; /* the context cannot be made current: the blocks stay on the device */
    *at = w->next;
    free(w);
  }
  if (pushed) {
    tb_cu_context popped = NULL;
    s->api.cuCtxPopCurrent_v2(&popped);
  }
  pthread_mutex_unlock(&s->workspace_lock);
  if (leaked) {
    char key[96], name[64];
    snprintf(key, sizeof key, "cuda-workspace-leak:%s", s->base.label);
    tb_cuda_api_error_name(&s->api, push, name, sizeof name);
    tb_warn_once(key, "%s: cuCtxPushCurrent_v2 before freeing cuBLASLt's workspace failed with %d %s: %zu bytes of "
                 "device memory stay allocated until the process ends", s->base.label, (int)push, name, leaked);
  }
}

size_t tb_cuda_workspace_blocks(cuda_state *s, tb_cu_stream stream, size_t *bytes) {
  size_t n = 0, total = 0;
  pthread_mutex_lock(&s->workspace_lock);
  for (tb_cuda_workspace *w = s->workspaces; w; w = w->next)
    if (w->stream == stream && w->ptr) n++, total += w->bytes;
  pthread_mutex_unlock(&s->workspace_lock);
  if (bytes) *bytes = total;
  return n;
}
