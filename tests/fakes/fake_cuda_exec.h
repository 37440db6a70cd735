/* fake_cuda's execution calls, included once at the end of fake_cuda.c (they use its heap, contexts, streams and
 * launch records): stream-ordered copies and fills (cuMemcpy*Async_v2, cuMemsetD*Async), pinned host memory
 * (cuMemHostAlloc, cuMemFreeHost), stream capture and CUDA graphs (cuStreamBeginCapture_v2, cuStreamEndCapture,
 * cuGraphInstantiateWithFlags, cuGraphExecUpdate_v2, cuGraphLaunch, cuGraphExecDestroy, cuGraphDestroy), and the
 * call log tests read to check which calls were made and in what order.
 *
 * Work on a stream runs at once (the fake has no device queue), except on a stream being captured: kernels,
 * copies and fills are recorded into the capture's graph instead, and run when an executable graph made from it
 * is launched (kernels on the emulator under FAKE_CUDA_EMULATE, with their memory checked again at that moment,
 * so a graph whose memory was freed meanwhile gets 700 CUDA_ERROR_ILLEGAL_ADDRESS). A synchronous copy or fill
 * (the legacy default stream), a stream or context synchronize, or an event record on the capturing stream while
 * a capture is open returns 900 CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates it: cuStreamEndCapture then
 * returns 901 CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, as the driver does. cuGraphExecUpdate_v2 succeeds when the
 * new graph has the same nodes (kinds, kernels, copy directions) and takes its parameters; else 910
 * CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE.
 * FAKE_CUDA_FAIL=host_alloc | capture (cuStreamBeginCapture_v2) | end_capture | instantiate | update |
 * graph_launch fails that call with FAKE_CUDA_FAIL_CODE. Counts: fake_cuda_calls(name) since
 * fake_cuda_call_log_reset, fake_cuda_call_log() (one line per call, in order), fake_cuda_legacy_stream_uses()
 * (synchronous copies and fills, and launches or async calls given the NULL stream), fake_cuda_live_graphs(),
 * fake_cuda_live_pinned(), fake_cuda_pinned_copies() (async copies whose host side is pinned memory),
 * fake_cuda_dtoh_bytes() (the bytes of every asynchronous copy to the host so far). */
#ifndef FAKE_CUDA_EXEC_H
#define FAKE_CUDA_EXEC_H

enum { OP_KERNEL, OP_COPY, OP_FILL };
enum { CAPTURE_UNSUPPORTED = 900, CAPTURE_INVALIDATED = 901, EXEC_UPDATE_FAILURE = 910 };

typedef struct fake_op {
  int kind;
  const fake_function *fn;  /* OP_KERNEL */
  fake_launch launch;       /* OP_KERNEL: the recorded arguments */
  int direction;            /* OP_COPY: 1 HtoD, 2 DtoH, 3 DtoD */
  uint64_t dst, src;        /* OP_COPY: device pointers, or host addresses as integers */
  size_t bytes;             /* OP_COPY, OP_FILL (bytes = width * count) */
  unsigned value, width;    /* OP_FILL */
} fake_op;

struct fake_graph {
  fake_context *ctx;
  int count, cap;
  fake_op *ops;
};

static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;
static char call_log[1 << 16];
static size_t call_log_len;
static unsigned long long legacy_uses, pinned_copies, dtoh_bytes;
static int live_graphs, live_pinned;

/* Pinned allocations: the host ranges cuMemHostAlloc handed out. */
typedef struct fake_pinned {
  unsigned char *p;
  size_t size;
  struct fake_pinned *next;
} fake_pinned;
static fake_pinned *pinned;

static void log_call(const char *name) {
  pthread_mutex_lock(&exec_lock);
  size_t n = strlen(name);
  if (call_log_len + n + 2 < sizeof call_log) {
    memcpy(call_log + call_log_len, name, n);
    call_log_len += n;
    call_log[call_log_len++] = '\n';
    call_log[call_log_len] = '\0';
  }
  pthread_mutex_unlock(&exec_lock);
}

static void count_legacy(void) { __atomic_add_fetch(&legacy_uses, 1, __ATOMIC_RELAXED); }

/* Whether a capture is open on any stream of the current context: what a synchronous call then breaks. */
static fake_stream *open_capture(void) {
  fake_stream *found = NULL;
  pthread_mutex_lock(&exec_lock);
  for (fake_stream *s = capturing_streams; s && !found; s = s->next_capturing)
    if (s->ctx == current()) found = s;
  pthread_mutex_unlock(&exec_lock);
  return found;
}

static CUresult invalidate(fake_stream *s) {
  s->invalidated = 1;
  return CAPTURE_UNSUPPORTED;
}

/* Called by the synchronous calls of fake_cuda.c: 0, or 900 when they would break an open capture. */
static CUresult legacy_call(void) {
  count_legacy();
  fake_stream *s = open_capture();
  return s ? invalidate(s) : SUCCESS;
}

static CUresult add_op(fake_stream *s, const fake_op *op) {
  fake_graph *g = s->capture;
  if (g->count == g->cap) {
    int cap = g->cap ? g->cap * 2 : 16;
    fake_op *grown = realloc(g->ops, (size_t)cap * sizeof *grown);
    if (!grown) return OUT_OF_MEMORY;
    g->ops = grown;
    g->cap = cap;
  }
  g->ops[g->count++] = *op;
  return SUCCESS;
}

/* cuLaunchKernel on a capturing stream: the launch joins the graph. */
static CUresult capture_launch(fake_stream *s, const fake_function *f, const fake_launch *l) {
  fake_op op = {.kind = OP_KERNEL, .fn = f, .launch = *l};
  return add_op(s, &op);
}

static int is_pinned(const void *host, size_t bytes) {
  int found = 0;
  pthread_mutex_lock(&exec_lock);
  for (fake_pinned *p = pinned; p && !found; p = p->next)
    found = (const unsigned char *)host >= p->p && (const unsigned char *)host + bytes <= p->p + p->size;
  pthread_mutex_unlock(&exec_lock);
  return found;
}

/* One copy, now. */
static CUresult do_copy(int direction, uint64_t dst, uint64_t src, size_t bytes) {
  unsigned char *d = direction == 2 ? (unsigned char *)(uintptr_t)dst : fake_resolve(&heap, dst, bytes);
  const unsigned char *from = direction == 1 ? (const unsigned char *)(uintptr_t)src : fake_resolve(&heap, src, bytes);
  if (!d || !from) return INVALID_VALUE;
  if (direction != 3 && fake_is_device_pointer(direction == 1 ? src : dst)) return INVALID_VALUE;
  memmove(d, from, bytes);
  return SUCCESS;
}

static CUresult async_call(const char *name, fake_stream *s) {
  log_call(name);
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!s) count_legacy();
  if (s && s->ctx != current()) return INVALID_VALUE;
  return SUCCESS;
}

static CUresult copy_async(const char *name, int direction, uint64_t dst, uint64_t src, size_t bytes, fake_stream *s) {
  CUresult r = async_call(name, s);
  if (r != SUCCESS) return r;
  if (failing("copy")) return fail_code();
  if (direction != 3 && is_pinned((const void *)(uintptr_t)(direction == 1 ? src : dst), bytes))
    __atomic_add_fetch(&pinned_copies, 1, __ATOMIC_RELAXED);
  if (direction == 2) __atomic_add_fetch(&dtoh_bytes, bytes, __ATOMIC_RELAXED);
  if (s && s->capture) {
    fake_op op = {.kind = OP_COPY, .direction = direction, .dst = dst, .src = src, .bytes = bytes};
    return add_op(s, &op);
  }
  return do_copy(direction, dst, src, bytes);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, fake_stream *s) {
  return copy_async("cuMemcpyHtoDAsync_v2", 1, dst, (uint64_t)(uintptr_t)src, bytes, s);
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, fake_stream *s) {
  return copy_async("cuMemcpyDtoHAsync_v2", 2, (uint64_t)(uintptr_t)dst, src, bytes, s);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes, fake_stream *s) {
  return copy_async("cuMemcpyDtoDAsync_v2", 3, dst, src, bytes, s);
}

static CUresult do_fill(uint64_t dst, unsigned value, unsigned width, size_t count) {
  if (dst % width != 0) return INVALID_VALUE;
  unsigned char *d = fake_resolve(&heap, dst, count * width);
  if (!d) return INVALID_VALUE;
  fake_fill(d, &value, width, count);
  __atomic_add_fetch(&memset_calls[width], 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

static CUresult fill_async(const char *name, uint64_t dst, unsigned value, unsigned width, size_t count, fake_stream *s) {
  CUresult r = async_call(name, s);
  if (r != SUCCESS) return r;
  if (failing("fill")) return fail_code();
  if (s && s->capture) {
    fake_op op = {.kind = OP_FILL, .dst = dst, .value = value, .width = width, .bytes = count * width};
    return add_op(s, &op);
  }
  return do_fill(dst, value, width, count);
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, fake_stream *s) { return fill_async("cuMemsetD8Async", dst, v, 1, n, s); }
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, fake_stream *s) { return fill_async("cuMemsetD16Async", dst, v, 2, n, s); }
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, fake_stream *s) { return fill_async("cuMemsetD32Async", dst, v, 4, n, s); }

CUresult cuMemHostAlloc(void **host, size_t bytes, unsigned int flags) {
  log_call("cuMemHostAlloc");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!host || bytes == 0 || flags > 7) return INVALID_VALUE;
  if (failing("host_alloc")) return fail_code();
  fake_pinned *p = calloc(1, sizeof *p);
  unsigned char *mem = malloc(bytes);
  if (!p || !mem) {
    free(p);
    free(mem);
    return OUT_OF_MEMORY;
  }
  p->p = mem;
  p->size = bytes;
  pthread_mutex_lock(&exec_lock);
  p->next = pinned;
  pinned = p;
  live_pinned++;
  pthread_mutex_unlock(&exec_lock);
  *host = mem;
  return SUCCESS;
}

CUresult cuMemFreeHost(void *host) {
  log_call("cuMemFreeHost");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  pthread_mutex_lock(&exec_lock);
  for (fake_pinned **p = &pinned; *p; p = &(*p)->next) {
    if ((*p)->p != host) continue;
    fake_pinned *gone = *p;
    *p = gone->next;
    live_pinned--;
    pthread_mutex_unlock(&exec_lock);
    free(gone->p);
    free(gone);
    return SUCCESS;
  }
  pthread_mutex_unlock(&exec_lock);
  return INVALID_VALUE;
}

/* ---- Capture and graphs ------------------------------------------------------------------------- */

static fake_graph *graph_new(void) {
  fake_graph *g = calloc(1, sizeof *g);
  if (g) g->ctx = current();
  return g;
}

static void graph_free(fake_graph *g) {
  if (!g) return;
  free(g->ops);
  free(g);
}

CUresult cuStreamBeginCapture_v2(fake_stream *s, int mode) {
  log_call("cuStreamBeginCapture_v2");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!s) return CAPTURE_UNSUPPORTED; /* the legacy default stream cannot be captured */
  if (s->ctx != current() || mode < 0 || mode > 2 || s->capture) return INVALID_VALUE;
  if (failing("capture")) return fail_code();
  if (!(s->capture = graph_new())) return OUT_OF_MEMORY;
  s->invalidated = 0;
  pthread_mutex_lock(&exec_lock);
  s->next_capturing = capturing_streams;
  capturing_streams = s;
  pthread_mutex_unlock(&exec_lock);
  return SUCCESS;
}

static void stop_capturing(fake_stream *s) {
  pthread_mutex_lock(&exec_lock);
  for (fake_stream **p = &capturing_streams; *p; p = &(*p)->next_capturing)
    if (*p == s) {
      *p = s->next_capturing;
      break;
    }
  pthread_mutex_unlock(&exec_lock);
}

CUresult cuStreamEndCapture(fake_stream *s, fake_graph **graph) {
  log_call("cuStreamEndCapture");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!s || !graph) return INVALID_VALUE;
  if (!s->capture) return 401; /* CUDA_ERROR_ILLEGAL_STATE */
  fake_graph *g = s->capture;
  s->capture = NULL;
  stop_capturing(s);
  *graph = NULL;
  if (s->invalidated || failing("end_capture")) {
    graph_free(g);
    return s->invalidated ? CAPTURE_INVALIDATED : fail_code();
  }
  __atomic_add_fetch(&live_graphs, 1, __ATOMIC_RELAXED);
  *graph = g;
  return SUCCESS;
}

/* An executable graph is a copy of the graph's nodes. */
CUresult cuGraphInstantiateWithFlags(fake_graph **exec, fake_graph *graph, unsigned long long flags) {
  log_call("cuGraphInstantiateWithFlags");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!exec || !graph || flags) return INVALID_VALUE;
  if (failing("instantiate")) return fail_code();
  fake_graph *e = graph_new();
  if (!e) return OUT_OF_MEMORY;
  e->ops = malloc((size_t)(graph->count ? graph->count : 1) * sizeof *e->ops);
  if (!e->ops) {
    free(e);
    return OUT_OF_MEMORY;
  }
  if (graph->count) memcpy(e->ops, graph->ops, (size_t)graph->count * sizeof *e->ops);
  e->count = e->cap = graph->count;
  __atomic_add_fetch(&live_graphs, 1, __ATOMIC_RELAXED);
  *exec = e;
  return SUCCESS;
}

typedef struct fake_update_info {
  int result;
  void *error_node, *error_from_node;
} fake_update_info;

static int same_topology(const fake_graph *a, const fake_graph *b) {
  if (a->count != b->count) return 0;
  for (int i = 0; i < a->count; i++) {
    const fake_op *x = &a->ops[i], *y = &b->ops[i];
    if (x->kind != y->kind || (x->kind == OP_KERNEL && x->fn != y->fn) || (x->kind == OP_COPY && x->direction != y->direction))
      return 0;
  }
  return 1;
}

CUresult cuGraphExecUpdate_v2(fake_graph *exec, fake_graph *graph, fake_update_info *info) {
  log_call("cuGraphExecUpdate_v2");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!exec || !graph || !info) return INVALID_VALUE;
  memset(info, 0, sizeof *info);
  if (failing("update") || !same_topology(exec, graph)) {
    info->result = 1; /* CU_GRAPH_EXEC_UPDATE_ERROR */
    return EXEC_UPDATE_FAILURE;
  }
  if (graph->count) memcpy(exec->ops, graph->ops, (size_t)graph->count * sizeof *exec->ops);
  return SUCCESS;
}

/* Run a recorded kernel: its memory checked again now, then the emulator when it is on. */
static CUresult run_kernel(const fake_op *op) {
  const fake_launch *l = &op->launch;
  pthread_mutex_lock(&module_lock);
  int live = module_live(op->fn->module);
  pthread_mutex_unlock(&module_lock);
  if (!live) return 400;
  CUresult r = check_memory(l);
  if (r != SUCCESS) return r;
  int broken = 0;
  emu_launch_fn run = l->n_args > 0 ? emulator(&broken) : NULL;
  if (broken) return UNKNOWN;
  if (!run) return SUCCESS;
  void *params[FAKE_LAUNCH_MAX_ARGS];
  for (int i = 0; i < l->n_args; i++) params[i] = (void *)(l->args + l->arg_offset[i]);
  return emulate(run, l, params);
}

CUresult cuGraphLaunch(fake_graph *exec, fake_stream *s) {
  log_call("cuGraphLaunch");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!exec || exec->ctx != current() || (s && s->ctx != current())) return INVALID_VALUE;
  if (!s) count_legacy();
  if (s && s->capture) return CAPTURE_UNSUPPORTED;
  if (failing("graph_launch")) return fail_code();
  for (int i = 0; i < exec->count && r == SUCCESS; i++) {
    const fake_op *op = &exec->ops[i];
    if (op->kind == OP_KERNEL) r = run_kernel(op);
    else if (op->kind == OP_COPY) r = do_copy(op->direction, op->dst, op->src, op->bytes);
    else r = do_fill(op->dst, op->value, op->width, op->bytes / op->width);
  }
  return r;
}

CUresult cuGraphExecDestroy(fake_graph *exec) {
  log_call("cuGraphExecDestroy");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!exec) return INVALID_VALUE;
  graph_free(exec);
  __atomic_sub_fetch(&live_graphs, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

CUresult cuGraphDestroy(fake_graph *graph) {
  log_call("cuGraphDestroy");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!graph) return INVALID_VALUE;
  graph_free(graph);
  __atomic_sub_fetch(&live_graphs, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

/* ---- For tests ---------------------------------------------------------------------------------- */

const char *fake_cuda_call_log(void);
void fake_cuda_call_log_reset(void);
int fake_cuda_calls(const char *name);
unsigned long long fake_cuda_legacy_stream_uses(void);
unsigned long long fake_cuda_pinned_copies(void);
unsigned long long fake_cuda_dtoh_bytes(void);
int fake_cuda_live_graphs(void);
int fake_cuda_live_pinned(void);
int fake_cuda_nonblocking_streams(void);

const char *fake_cuda_call_log(void) { return call_log; }

void fake_cuda_call_log_reset(void) {
  pthread_mutex_lock(&exec_lock);
  call_log_len = 0;
  call_log[0] = '\0';
  pthread_mutex_unlock(&exec_lock);
}

int fake_cuda_calls(const char *name) {
  int n = 0;
  size_t len = strlen(name);
  pthread_mutex_lock(&exec_lock);
  for (const char *line = call_log; *line;) {
    const char *end = strchr(line, '\n');
    if (!end) break;
    n += (size_t)(end - line) == len && strncmp(line, name, len) == 0;
    line = end + 1;
  }
  pthread_mutex_unlock(&exec_lock);
  return n;
}

unsigned long long fake_cuda_legacy_stream_uses(void) { return __atomic_load_n(&legacy_uses, __ATOMIC_RELAXED); }
unsigned long long fake_cuda_pinned_copies(void) { return __atomic_load_n(&pinned_copies, __ATOMIC_RELAXED); }
unsigned long long fake_cuda_dtoh_bytes(void) { return __atomic_load_n(&dtoh_bytes, __ATOMIC_RELAXED); }
int fake_cuda_live_graphs(void) { return __atomic_load_n(&live_graphs, __ATOMIC_RELAXED); }
int fake_cuda_live_pinned(void) {
  pthread_mutex_lock(&exec_lock);
  int n = live_pinned;
  pthread_mutex_unlock(&exec_lock);
  return n;
}
int fake_cuda_nonblocking_streams(void) { return __atomic_load_n(&nonblocking_streams, __ATOMIC_RELAXED); }

#endif
