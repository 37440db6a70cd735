/* Host <-> device copies through pinned staging buffers. A copy from pageable host memory makes the driver stage it
 * itself, chunk by chunk and synchronously (about 8.6 GB/s at 256 MiB on an H100 host, issue 15); from
 * page-locked memory it is one DMA at the bus's rate. The backend keeps two page-locked buffers of
 * TB_CUDA_STAGING_CHUNK bytes (cuMemHostAlloc, made on the first staged copy, reused by every copy and run
 * after it, freed at close) and moves a copy through them in chunks: the host's memcpy into one buffer overlaps
 * the DMA of the other (cuMemcpy*Async on the caller's stream, an event per buffer says when it is free again).
 * TB_CUDA_STAGING=off, a libcuda without the calls, or pinned memory the driver refuses: the direct copy. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_state.h"
#include "backend/devmem_ops.h"
#include "core/env.h"
#include "core/error.h"

enum { TB_CUDA_STAGING_CHUNK = 8 << 20, TB_CUDA_STAGING_BUFFERS = 2 };

typedef struct tb_cuda_staging {
  pthread_mutex_t lock; /* one copy through the buffers at a time */
  void *buf[TB_CUDA_STAGING_BUFFERS];
  tb_cu_event done[TB_CUDA_STAGING_BUFFERS]; /* recorded after the DMA that last used each buffer */
  bool used[TB_CUDA_STAGING_BUFFERS];
  bool broken; /* the buffers could not be made: direct copies from now on */
  unsigned long long copies;
} tb_cuda_staging;

static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;

static tb_status failed(const cuda_state *s, const char *call, tb_cu_result r, size_t bytes, size_t offset) {
  char what[96];
  snprintf(what, sizeof what, "of %zu bytes at offset %zu", bytes, offset);
  return tb_devmem_call_failed(&s->base, call, what, r, "");
}

/* Called with the context current. NULL when staging is off or its buffers cannot be made (said once). */
static tb_cuda_staging *staging_of(cuda_state *s) {
  if (!s->staging_on || !s->async || !s->api.cuMemHostAlloc || !s->api.cuMemFreeHost) return NULL;
  pthread_mutex_lock(&make_lock);
  if (!s->staging) {
    tb_cuda_staging *g = calloc(1, sizeof *g);
    tb_cu_result r = g ? TB_CUDA_SUCCESS : 2;
    for (int i = 0; g && i < TB_CUDA_STAGING_BUFFERS && r == TB_CUDA_SUCCESS; i++) {
      r = s->api.cuMemHostAlloc(&g->buf[i], TB_CUDA_STAGING_CHUNK, TB_CU_MEMHOSTALLOC_PORTABLE);
      if (r == TB_CUDA_SUCCESS) r = s->api.cuEventCreate(&g->done[i], TB_CU_EVENT_DISABLE_TIMING);
    }
    if (g) pthread_mutex_init(&g->lock, NULL);
    if (r != TB_CUDA_SUCCESS && g) {
      char name[64];
      tb_cuda_api_error_name(&s->api, r, name, sizeof name);
      tb_warn_once("cuda-staging", "%s: no pinned staging buffers (cuMemHostAlloc of %d bytes failed with %d %s); host copies go "
                   "directly, at the pageable rate", s->base.label, TB_CUDA_STAGING_CHUNK, r, name);
      g->broken = true;
    }
    s->staging = g;
  }
  pthread_mutex_unlock(&make_lock);
  return s->staging && !s->staging->broken ? s->staging : NULL;
}

void tb_cuda_staging_free(cuda_state *s) {
  tb_cuda_staging *g = s->staging;
  if (!g) return;
  if (s->api.cuCtxPushCurrent_v2(s->ctx) == TB_CUDA_SUCCESS) {
    for (int i = 0; i < TB_CUDA_STAGING_BUFFERS; i++) {
      if (g->done[i]) {
        s->api.cuEventSynchronize(g->done[i]);
        s->api.cuEventDestroy_v2(g->done[i]);
      }
      if (g->buf[i]) s->api.cuMemFreeHost(g->buf[i]);
    }
    tb_cu_context popped = NULL;
    s->api.cuCtxPopCurrent_v2(&popped);
  }
  pthread_mutex_destroy(&g->lock);
  free(g);
  s->staging = NULL;
}

int tb_cuda_staging_buffers(const cuda_state *s) { return s->staging && !s->staging->broken ? TB_CUDA_STAGING_BUFFERS : 0; }
unsigned long long tb_cuda_staged_copies(const cuda_state *s) { return s->staging ? s->staging->copies : 0; }

/* Wait until buffer i's last DMA is done. */
static tb_cu_result buffer_free(cuda_state *s, tb_cuda_staging *g, int i) {
  if (!g->used[i]) return TB_CUDA_SUCCESS;
  g->used[i] = false;
  return s->api.cuEventSynchronize(g->done[i]);
}

static tb_status staged_write(cuda_state *s, tb_cuda_staging *g, tb_cu_deviceptr device, const unsigned char *host,
                              size_t bytes, tb_cu_stream stream, bool wait, size_t offset) {
  tb_cu_result r = TB_CUDA_SUCCESS;
  const char *call = "cuMemcpyHtoDAsync_v2";
  for (size_t at = 0, k = 0; at < bytes && r == TB_CUDA_SUCCESS; at += TB_CUDA_STAGING_CHUNK, k++) {
    int i = (int)(k % TB_CUDA_STAGING_BUFFERS);
    size_t n = bytes - at < TB_CUDA_STAGING_CHUNK ? bytes - at : TB_CUDA_STAGING_CHUNK;
    if ((r = buffer_free(s, g, i)) != TB_CUDA_SUCCESS) {
      call = "cuEventSynchronize";
      break;
    }
    memcpy(g->buf[i], host + at, n);
    r = s->api.cuMemcpyHtoDAsync_v2(device + at, g->buf[i], n, stream);
    if (r == TB_CUDA_SUCCESS && (r = s->api.cuEventRecord(g->done[i], stream)) != TB_CUDA_SUCCESS) call = "cuEventRecord";
    g->used[i] = r == TB_CUDA_SUCCESS;
  }
  if (r == TB_CUDA_SUCCESS && wait && (r = s->api.cuStreamSynchronize(stream)) != TB_CUDA_SUCCESS) call = "cuStreamSynchronize";
  return r == TB_CUDA_SUCCESS ? TB_OK : failed(s, call, r, bytes, offset);
}

/* Chunk k's DMA into its buffer, and the event after it. */
static tb_cu_result read_chunk(cuda_state *s, tb_cuda_staging *g, tb_cu_deviceptr device, size_t bytes, size_t k,
                               tb_cu_stream stream) {
  int i = (int)(k % TB_CUDA_STAGING_BUFFERS);
  size_t at = k * TB_CUDA_STAGING_CHUNK, n = bytes - at < TB_CUDA_STAGING_CHUNK ? bytes - at : TB_CUDA_STAGING_CHUNK;
  tb_cu_result r = buffer_free(s, g, i);
  if (r == TB_CUDA_SUCCESS) r = s->api.cuMemcpyDtoHAsync_v2(g->buf[i], device + at, n, stream);
  if (r == TB_CUDA_SUCCESS) r = s->api.cuEventRecord(g->done[i], stream);
  g->used[i] = r == TB_CUDA_SUCCESS;
  return r;
}

static tb_status staged_read(cuda_state *s, tb_cuda_staging *g, unsigned char *host, tb_cu_deviceptr device, size_t bytes,
                             tb_cu_stream stream, size_t offset) {
  size_t chunks = (bytes + TB_CUDA_STAGING_CHUNK - 1) / TB_CUDA_STAGING_CHUNK;
  tb_cu_result r = read_chunk(s, g, device, bytes, 0, stream);
  for (size_t k = 0; k < chunks && r == TB_CUDA_SUCCESS; k++) {
    if (k + 1 < chunks && (r = read_chunk(s, g, device, bytes, k + 1, stream)) != TB_CUDA_SUCCESS) break;
    int i = (int)(k % TB_CUDA_STAGING_BUFFERS);
    if ((r = buffer_free(s, g, i)) != TB_CUDA_SUCCESS) break;
    size_t at = k * TB_CUDA_STAGING_CHUNK, n = bytes - at < TB_CUDA_STAGING_CHUNK ? bytes - at : TB_CUDA_STAGING_CHUNK;
    memcpy(host + at, g->buf[i], n);
  }
  if (r != TB_CUDA_SUCCESS)
    for (int i = 0; i < TB_CUDA_STAGING_BUFFERS; i++) g->used[i] = false; /* the stream failed: nothing to wait for */
  return r == TB_CUDA_SUCCESS ? TB_OK : failed(s, "cuMemcpyDtoHAsync_v2", r, bytes, offset);
}

tb_status tb_cuda_copy_host(cuda_state *s, bool to_device, tb_cu_deviceptr device, void *host, size_t bytes,
                            tb_cu_stream stream, bool wait, size_t offset) {
  tb_cuda_staging *g = staging_of(s);
  if (g) {
    pthread_mutex_lock(&g->lock);
    tb_status st = to_device ? staged_write(s, g, device, host, bytes, stream, wait, offset)
                             : staged_read(s, g, host, device, bytes, stream, offset);
    if (st == TB_OK) g->copies++;
    pthread_mutex_unlock(&g->lock);
    return st;
  }
  /* direct: the driver stages pageable memory itself; the stream is waited for either way */
  tb_cu_result r = to_device ? s->api.cuMemcpyHtoDAsync_v2(device, host, bytes, stream)
                             : s->api.cuMemcpyDtoHAsync_v2(host, device, bytes, stream);
  const char *call = to_device ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyDtoHAsync_v2";
  if (r == TB_CUDA_SUCCESS && (r = s->api.cuStreamSynchronize(stream)) != TB_CUDA_SUCCESS) call = "cuStreamSynchronize";
  return r == TB_CUDA_SUCCESS ? TB_OK : failed(s, call, r, bytes, offset);
}
