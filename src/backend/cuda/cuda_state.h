/* Internal: the CUDA backend's open state, shared by its memory ops (cuda_memory.c), its events
 * (cuda_event.c), its kernels' module (cuda_module.c) and their launches (cuda_launch.c), the streams a thread
 * binds (cuda_stream.c), the pinned staging of host copies (cuda_staging.c) and captured graphs (cuda_graph.c). */
#ifndef TB_BACKEND_CUDA_STATE_H
#define TB_BACKEND_CUDA_STATE_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend_impl.h"
#include "backend/devmem_ops.h"
#include "runtime/nvidia_cuda_api.h"

typedef struct cuda_state {
  tb_devmem_state base; /* first: the shared ops' table and the label, "cuda:0" */
  tb_cuda_api api;
  void *lib;
  tb_cu_device device;
  tb_cu_context ctx;
  tb_cu_stream stream;
  pthread_mutex_t module_lock; /* guards module: loaded on first use (cuda_module.c), unloaded at close */
  tb_cu_module module;
  int sm_count; /* multiprocessors (attribute 16), read at open: sizes the launch grids (cuda_launch.c) */
  pthread_mutex_t dnn_lock; /* guards dnn and dnn_tried: cuDNN's handle, opened on the first convolution
                               (kernels/cuda_conv_dnn.c), destroyed at close */
  struct tb_cuda_dnn *dnn;  /* NULL: cuDNN absent or unusable (convolutions run on the own kernels) */
  bool dnn_tried;
  bool async;   /* libcuda has the stream-ordered calls (TB_CUDA_EXEC_SYMBOLS): copies and fills go on streams, the
                   backend's own stream does not sync with the legacy default stream; else the blocking calls */
  bool staging_on; /* host copies go through pinned staging buffers (TB_CUDA_STAGING is not off) */
  struct tb_cuda_staging *staging; /* made on the first staged copy (cuda_staging.c), freed at close */
  pthread_mutex_t workspace_lock;  /* guards workspaces */
  struct tb_cuda_workspace *workspaces; /* cuBLASLt's workspace per stream (cuda_blas_workspace.c): made at the stream's
                                           first product, freed with the stream or at close */
} cuda_state;

/* The stream this thread's work on s goes to: the one bound with stream_bind (a prepared model's), else the
 * backend's own (cuda_stream.c). */
tb_cu_stream tb_cuda_stream_of(const cuda_state *s);
/* The CUDA stream of a model's stream handle (tb_cuda_stream_create's; NULL: the device's own stream). */
tb_cu_stream tb_cuda_stream_handle_of(const cuda_state *s, void *stream);
/* What a prepared model's kernels share across its runs, kept with its stream: data (NULL until a kernel sets it),
 * released with release(data) when the stream goes. */
typedef struct tb_cuda_run_slot {
  void *data;
  void (*release)(void *data);
} tb_cuda_run_slot;
/* The run slot of the model's stream this thread has bound on s; NULL when none is bound (the backend's own). */
tb_cuda_run_slot *tb_cuda_run_slot_of(const cuda_state *s);
/* Whether this thread is capturing s's bound stream into a graph (cuda_stream.c; cuda_graph.c opens captures). */
bool tb_cuda_capturing(const cuda_state *s);
/* The stream and graph ops of tb_backend_ops (cuda_stream.c, cuda_graph.c). */
tb_status tb_cuda_stream_create(void *state, void **out_stream);
void tb_cuda_stream_destroy(void *state, void *stream);
tb_status tb_cuda_stream_synchronize(void *state, void *stream);
void *tb_cuda_stream_bind(void *state, void *stream);
tb_status tb_cuda_capture_begin(void *state);
tb_status tb_cuda_capture_end(void *state, bool keep, void **graph, bool *updated);
tb_status tb_cuda_graph_launch(void *state, void *graph);
void tb_cuda_graph_destroy(void *state, void *graph);
/* The capture state of this thread (cuda_stream.c): opened and closed by cuda_graph.c (mark), refused by the memory
 * ops (a copy with the host, a synchronize: what, for capture_end's sentence), and what was refused ("" if nothing). */
void tb_cuda_capture_mark(const cuda_state *s, bool on);
void tb_cuda_capture_refuse(const cuda_state *s, const char *what);
const char *tb_cuda_capture_refused(void);

/* A copy between host memory and the device on `stream` (cuda_staging.c): through the backend's pinned staging
 * buffers (two, reused across copies and runs, so the host's copy into one overlaps the DMA of the other), or
 * directly when staging is off or its buffers cannot be had. The host memory may be reused when it returns; a
 * write is waited for only when `wait` (no model stream bound), a read always. */
tb_status tb_cuda_copy_host(cuda_state *s, bool to_device, tb_cu_deviceptr device, void *host, size_t bytes,
                            tb_cu_stream stream, bool wait, size_t offset);
void tb_cuda_staging_free(cuda_state *s);
/* For tests: the staging buffers made so far on s (0, or 2 once made) and the copies that went through them. */
int tb_cuda_staging_buffers(const cuda_state *s);
unsigned long long tb_cuda_staged_copies(const cuda_state *s);

/* cuBLASLt's workspace for the products enqueued on `stream` (cuda_blas_workspace.c): at least at_least bytes and
 * NVIDIA's recommended size for the device (tb_cuda_workspace_recommended), made at the stream's first call and grown on
 * demand; the address stays valid until the stream is destroyed. One per stream: work on one stream is ordered, two
 * streams' is not. cache: the backend's caching allocator, emptied before the one retry of an allocation out of
 * memory (NULL: no retry). An allocation failure is its status and sentence (the caller may go without), remembered
 * for the stream: asked again for no more than the size that failed, the stream gets the same answer without a new
 * attempt. */
tb_status tb_cuda_workspace_get(cuda_state *s, tb_allocator *cache, tb_cu_stream stream, size_t at_least,
                                tb_cu_deviceptr *ptr, size_t *bytes);
/* Free the workspaces of `stream` (its work finished; before the stream is destroyed), or every one when `all` (the
 * backend closing). When the context cannot be made current the records go and the blocks stay (a warning once). */
void tb_cuda_workspace_release(cuda_state *s, tb_cu_stream stream, bool all);
/* NVIDIA's recommended cuBLASLt workspace for a compute capability major: 32 MiB from 9 (Hopper) on, else 4 MiB. */
size_t tb_cuda_workspace_recommended(int cc_major);
/* For tests: the blocks `stream` holds (the current one and those it outgrew), their bytes in *bytes. */
size_t tb_cuda_workspace_blocks(cuda_state *s, tb_cu_stream stream, size_t *bytes);

/* Native events on the backend's stream (cuda_event.c); the ops' event_* entries. */
tb_status tb_cuda_event_create(void *state, void **out_event);
tb_status tb_cuda_event_record(void *state, void *event);
tb_status tb_cuda_event_synchronize(void *state, void *event);
tb_status tb_cuda_event_query(void *state, void *event, bool *done);
tb_status tb_cuda_event_elapsed_ms(void *state, void *start, void *end, double *ms, bool *measured);
void tb_cuda_event_destroy(void *state, void *event);

/* Device memory another library allocated, checked with the driver's pointer attributes (cuda_foreign.c);
 * the vendor table's check_foreign. */
tb_status tb_cuda_check_foreign(void *state, uintptr_t address, size_t bytes, bool managed);

#endif
