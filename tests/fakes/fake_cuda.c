/* A fake libcuda for tests: exports the CUDA driver API calls the NVIDIA probe uses, with the real C
 * ABI (CUresult and CUdevice are int, CUuuid is 16 bytes), and behaves as the environment says at
 * call time:
 *   FAKE_CUDA_MODE     ok (default) | stub (every call returns 34, as the toolkit's stub does) |
 *                      no_device (cuInit returns 100) | init_error (cuInit returns FAKE_CUDA_INIT_CODE,
 *                      default 999) | bad_attr (device 0 reports compute capability 1000.0 and -5 SMs) |
 *                      attr_error (every attribute of device 0 fails with 1)
 *   FAKE_CUDA_DEVICES  h100x8 (default) | laptop (see fake_nvidia_gpus.h)
 *   FAKE_CUDA_COUNT    list only the first N devices, as CUDA_VISIBLE_DEVICES would
 *   FAKE_CUDA_INIT_LOG a file to which every cuInit call appends a line, so that tests (and the `tb`
 *                      processes they start) can count them
 * Memory (primary contexts, streams, allocations, copies, fills; see fake_devmem.h) for the CUDA backend:
 *   FAKE_CUDA_MEM_CAPACITY  bytes per device (default 1G; K/M/G suffixes): cuMemAlloc_v2 beyond it
 *                           returns 2 CUDA_ERROR_OUT_OF_MEMORY, cuMemGetInfo_v2 reports it as the total
 *   FAKE_CUDA_FAIL          ctx (cuDevicePrimaryCtxRetain) | stream (cuStreamCreate) | alloc (cuMemAlloc_v2)
 *                           | copy (every cuMemcpy*) | fill (every cuMemsetD*) | sync (cuCtxSynchronize and
 *                           cuStreamSynchronize) | info (cuMemGetInfo_v2) fail with FAKE_CUDA_FAIL_CODE
 *                           (default 700 CUDA_ERROR_ILLEGAL_ADDRESS)
 * Events (cuEvent*): an event completes when recorded; cuEventElapsedTime gives 0.25 ms per record made
 * between the two events' records. FAKE_CUDA_EVENT=not_ready_once makes the first cuEventQuery after
 * each record answer 600 CUDA_ERROR_NOT_READY; FAKE_CUDA_FAIL=record makes cuEventRecord fail with
 * FAKE_CUDA_FAIL_CODE. fake_cuda_event_calls("cuEventQuery") counts the calls, fake_cuda_live_events().
 * Another library's memory: cuMemAllocManaged marks its allocation managed; cuPointerGetAttribute answers
 * MEMORY_TYPE (device), IS_MANAGED, DEVICE_ORDINAL, RANGE_START_ADDR and RANGE_SIZE for pointers inside an
 * allocation and 1 CUDA_ERROR_INVALID_VALUE for any other; fake_cuda_alloc_on(device, bytes, managed) makes
 * such an allocation for a test, as PyTorch would.
 * Modules (cuModuleLoadData, cuModuleGetFunction, cuModuleUnload, cuLaunchKernel) take the images of the
 * fake NVRTC (fake_nvrtc.c): "FAKE-CUBIN sm_XY" loads only on a device of compute capability X.Y (else 209
 * CUDA_ERROR_NO_BINARY_FOR_GPU), "FAKE-PTX compute_XY" on X.Y and newer (else 218 CUDA_ERROR_INVALID_PTX),
 * anything else is 200 CUDA_ERROR_INVALID_IMAGE; its "entry <name>" lines are the functions. A launch
 * checks its arguments (a live function, grid and block sizes, the stream's context) and is counted and
 * recorded (fake_cuda_launch.h: name, grid, block, argument bytes), never run: the fake computes no values.
 * For the embedded kernels it knows the parameter lists from the names (unary tb_cu_<op>_f32, binary _flat
 * and _broadcast, _rows and _cols, tb_cu_cnn_*: six pointers and a descriptor listing what each reaches, tb_cu_resize_taps:
 * its two tables from the entry count; the GEMM kernels
 * from fake_cuda_gemm.h; the tb_cu_dm_ and tb_cu_ew_ kernels' one list each with its descriptor) and checks that every tensor argument lies inside one live allocation
 * large enough for the elements the kernel would touch (for _broadcast, from the descriptor's dims and
 * strides); a pointer that does not is 700 CUDA_ERROR_ILLEGAL_ADDRESS at the launch (the real driver would
 * report it at the next synchronisation). FAKE_CUDA_FAIL=launch fails every launch with FAKE_CUDA_FAIL_CODE,
 * FAKE_CUDA_LAUNCH_FAIL_AT=N only the Nth since fake_cuda_launch_reset (a failure in the middle of a run).
 * FAKE_CUDA_EMULATE=<path of tests/cuda_emu's module> runs each launch of a known kernel there instead: the
 * kernels' own CUDA source built as host C++ over an emulated grid, on the fake's device memory, so the
 * values are the kernels' (the launch then returns after the kernel has run; a module that does not load
 * is 999 at the launch).
 * FAKE_CUDA_FAIL=module makes cuModuleLoadData fail with FAKE_CUDA_FAIL_CODE; FAKE_CUDA_CC="9.0"
 * overrides every device's compute capability; FAKE_CUDA_DRIVER_VERSION the driver version (default 12040).
 * fake_cuda_module_loads(), fake_cuda_live_modules() and fake_cuda_launches() count.
 * Every memory call needs a current context (cuCtxPushCurrent_v2 of a retained primary context), as the
 * real driver does; without one it returns 201 CUDA_ERROR_INVALID_CONTEXT. The fake_cuda_* functions at the
 * end let tests read the counts. Streams, stream-ordered copies and fills, pinned memory, capture and graphs, and
 * the call log: fake_cuda_exec.h, included at the end. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_cuda_launch.h"
#include "fake_cuda_gemm.h"
#include "fake_cuda_rnn.h"
#include "fake_cuda_quant.h"
#include "fake_devmem.h"
#include "fake_nvidia_gpus.h"
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_CUDA", "fake_cuda")

typedef int CUresult;
typedef int CUdevice;
typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

enum {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_INITIALIZED = 3,
  STUB_LIBRARY = 34,
  NO_DEVICE = 100,
  INVALID_DEVICE = 101,
  INVALID_CONTEXT = 201,
  ILLEGAL_ADDRESS = 700,
  UNKNOWN = 999,
};

static int initialized;

static int mode_is(const char *mode) {
  const char *m = getenv("FAKE_CUDA_MODE");
  return strcmp(m && *m ? m : "ok", mode) == 0;
}

static int device_count(void) {
  int n;
  fake_gpus(&n);
  const char *limit = getenv("FAKE_CUDA_COUNT");
  if (limit && *limit) {
    int k = atoi(limit);
    if (k >= 0 && k < n) n = k;
  }
  return n;
}

/* The state every call but cuInit checks first. */
static CUresult ready(void) {
  if (mode_is("stub")) return STUB_LIBRARY;
  return initialized ? SUCCESS : NOT_INITIALIZED;
}

static const fake_gpu *gpu(CUdevice dev) {
  int n;
  const fake_gpu *all = fake_gpus(&n);
  return dev >= 0 && dev < device_count() ? &all[dev] : NULL;
}

static void log_init(void) {
  const char *path = getenv("FAKE_CUDA_INIT_LOG");
  FILE *f = path && *path ? fopen(path, "a") : NULL;
  if (!f) return;
  fputs("cuInit\n", f);
  fclose(f);
}

static CUresult init_result(unsigned int flags) {
  if (flags != 0) return INVALID_VALUE;
  if (mode_is("stub")) return STUB_LIBRARY;
  if (mode_is("no_device")) return NO_DEVICE;
  if (mode_is("init_error")) {
    const char *code = getenv("FAKE_CUDA_INIT_CODE");
    return code && *code ? atoi(code) : UNKNOWN;
  }
  return SUCCESS;
}

/* One store: a cuInit on one thread never makes another thread's calls fail for a moment (a backend
 * opening on one thread while another closes its stream). */
CUresult cuInit(unsigned int flags) {
  log_init();
  CUresult r = init_result(flags);
  initialized = r == SUCCESS;
  return r;
}

CUresult cuDriverGetVersion(int *version) {
  if (mode_is("stub")) return STUB_LIBRARY;
  if (!version) return INVALID_VALUE;
  const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");
  *version = v && *v ? atoi(v) : 12040;
  return SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!count) return INVALID_VALUE;
  *count = device_count();
  return SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!device) return INVALID_VALUE;
  if (!gpu(ordinal)) return INVALID_DEVICE;
  *device = ordinal;
  return SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!name || len <= 0) return INVALID_VALUE;
  snprintf(name, (size_t)len, "%s", g->name);
  return SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!bytes) return INVALID_VALUE;
  *bytes = (size_t)g->memory_total;
  return SUCCESS;
}

/* FAKE_CUDA_CC="major.minor": the compute capability every device reports instead of its own. */
static int cc_override(int part, int own) {
  const char *cc = getenv("FAKE_CUDA_CC");
  int major, minor;
  if (!cc || sscanf(cc, "%d.%d", &major, &minor) != 2) return own;
  return part == 0 ? major : minor;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!value) return INVALID_VALUE;
  if (dev == 0 && mode_is("attr_error")) return INVALID_VALUE;
  int bad = dev == 0 && mode_is("bad_attr");
  switch (attribute) {
    case 13: *value = g->clock_khz; break;
    case 16: *value = bad ? -5 : g->sm_count; break;
    case 18: *value = g->integrated; break;
    case 36: *value = g->memory_clock_khz; break;
    case 37: *value = g->bus_width_bits; break;
    case 38: *value = g->l2_bytes; break;
    case 75: *value = bad ? 1000 : cc_override(0, g->cc_major); break;
    case 76: *value = cc_override(1, g->cc_minor); break;
    default: return INVALID_VALUE;
  }
  return SUCCESS;
}

static CUresult get_uuid(CUuuid *uuid, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!uuid) return INVALID_VALUE;
  memcpy(uuid->bytes, g->uuid, sizeof uuid->bytes);
  return SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }

CUresult cuDeviceGetPCIBusId(char *bus_id, int len, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  const fake_gpu *g = gpu(dev);
  if (!g) return INVALID_DEVICE;
  if (!bus_id || len < 13) return INVALID_VALUE;
  snprintf(bus_id, (size_t)len, "%s", g->bus_id);
  return SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  if (mode_is("stub")) return STUB_LIBRARY;
  if (!name) return INVALID_VALUE;
  switch (error) {
    case SUCCESS: *name = "CUDA_SUCCESS"; break;
    case INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; break;
    case OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case 46: *name = "CUDA_ERROR_DEVICE_UNAVAILABLE"; break;
    case INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case ILLEGAL_ADDRESS: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
    case UNKNOWN: *name = "CUDA_ERROR_UNKNOWN"; break;
    case 600: *name = "CUDA_ERROR_NOT_READY"; break;
    case 200: *name = "CUDA_ERROR_INVALID_IMAGE"; break;
    case 209: *name = "CUDA_ERROR_NO_BINARY_FOR_GPU"; break;
    case 218: *name = "CUDA_ERROR_INVALID_PTX"; break;
    case 222: *name = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"; break;
    case 500: *name = "CUDA_ERROR_NOT_FOUND"; break;
    default: *name = NULL; return INVALID_VALUE;
  }
  return SUCCESS;
}

/* ---- Memory ------------------------------------------------------------------------------------- */

typedef unsigned long long CUdeviceptr;

#define FAKE_MAX_DEVICES 16
#define FAKE_MAX_DEPTH 16

typedef struct fake_context {
  int device;
  int retains;
} fake_context;

typedef struct fake_graph fake_graph;
typedef struct fake_stream {
  fake_context *ctx;
  unsigned flags;
  fake_graph *capture;                 /* open capture (fake_cuda_exec.h), NULL when none */
  int invalidated;                     /* the open capture was broken by a call it cannot hold */
  struct fake_stream *next_capturing;
} fake_stream;

static fake_stream *capturing_streams; /* streams with an open capture; under exec_lock (fake_cuda_exec.h) */
static int nonblocking_streams;
static void log_call(const char *name);
static CUresult legacy_call(void);
static CUresult invalidate(fake_stream *s);
static void count_legacy(void);

static fake_heap heap = FAKE_HEAP_INIT;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_context contexts[FAKE_MAX_DEVICES];
static int live_streams;
static unsigned long long memset_calls[5]; /* by element width 1, 2, 4 */
static unsigned long long pointer_attribute_calls;
static __thread fake_context *ctx_stack[FAKE_MAX_DEPTH];
static __thread int ctx_depth;

static int failing(const char *what) {
  const char *f = getenv("FAKE_CUDA_FAIL");
  return f && strcmp(f, what) == 0;
}

static CUresult fail_code(void) {
  const char *code = getenv("FAKE_CUDA_FAIL_CODE");
  return code && *code ? atoi(code) : ILLEGAL_ADDRESS;
}

static uint64_t capacity(void) { return fake_capacity("FAKE_CUDA_MEM_CAPACITY", 1ull << 30); }

static fake_context *current(void) { return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL; }

/* The checks every memory call makes first: initialised, and a current context. */
static CUresult memory_ready(void) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  return current() ? SUCCESS : INVALID_CONTEXT;
}

static int valid_context(const fake_context *c) {
  for (int i = 0; i < FAKE_MAX_DEVICES; i++)
    if (c == &contexts[i]) return contexts[i].retains > 0;
  return 0;
}

CUresult cuDevicePrimaryCtxRetain(fake_context **ctx, CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!ctx) return INVALID_VALUE;
  if (!gpu(dev) || dev >= FAKE_MAX_DEVICES) return INVALID_DEVICE;
  if (failing("ctx")) return fail_code();
  pthread_mutex_lock(&ctx_lock);
  contexts[dev].device = dev;
  contexts[dev].retains++;
  pthread_mutex_unlock(&ctx_lock);
  *ctx = &contexts[dev];
  return SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!gpu(dev) || dev >= FAKE_MAX_DEVICES) return INVALID_DEVICE;
  pthread_mutex_lock(&ctx_lock);
  r = contexts[dev].retains > 0 ? SUCCESS : INVALID_CONTEXT;
  if (r == SUCCESS) contexts[dev].retains--;
  pthread_mutex_unlock(&ctx_lock);
  return r;
}

CUresult cuCtxPushCurrent_v2(fake_context *ctx) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!valid_context(ctx)) return INVALID_CONTEXT;
  if (ctx_depth >= FAKE_MAX_DEPTH) return INVALID_VALUE;
  ctx_stack[ctx_depth++] = ctx;
  return SUCCESS;
}

CUresult cuCtxPopCurrent_v2(fake_context **ctx) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (ctx_depth == 0) return INVALID_CONTEXT;
  fake_context *top = ctx_stack[--ctx_depth];
  if (ctx) *ctx = top;
  return SUCCESS;
}

CUresult cuCtxSynchronize(void) {
  log_call("cuCtxSynchronize");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if ((r = legacy_call()) != SUCCESS) return r;
  return failing("sync") ? fail_code() : SUCCESS;
}

CUresult cuStreamCreate(fake_stream **stream, unsigned int flags) {
  log_call("cuStreamCreate");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!stream || flags > 1) return INVALID_VALUE;
  if (failing("stream")) return fail_code();
  fake_stream *s = calloc(1, sizeof *s);
  if (!s) return OUT_OF_MEMORY;
  s->ctx = current();
  s->flags = flags;
  pthread_mutex_lock(&ctx_lock);
  live_streams++;
  nonblocking_streams += flags == 1;
  pthread_mutex_unlock(&ctx_lock);
  *stream = s;
  return SUCCESS;
}

CUresult cuStreamDestroy_v2(fake_stream *stream) {
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!stream || stream->capture) return INVALID_VALUE;
  pthread_mutex_lock(&ctx_lock);
  live_streams--;
  nonblocking_streams -= stream->flags == 1;
  free(stream);
  pthread_mutex_unlock(&ctx_lock);
  return SUCCESS;
}

CUresult cuStreamSynchronize(fake_stream *stream) {
  log_call("cuStreamSynchronize");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (stream && stream->capture) return invalidate(stream);
  return failing("sync") ? fail_code() : SUCCESS;
}

/* cuMemAlloc_v2 calls that answered out of memory (the capacity reached): fake_cuda_alloc_out_of_memory(). */
static unsigned long long alloc_out_of_memory;
unsigned long long fake_cuda_alloc_out_of_memory(void);
unsigned long long fake_cuda_alloc_out_of_memory(void) { return __atomic_load_n(&alloc_out_of_memory, __ATOMIC_RELAXED); }

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!ptr || bytes == 0) return INVALID_VALUE;
  if (failing("alloc")) return fail_code();
  uint64_t dev = 0;
  int rc = fake_alloc(&heap, bytes, capacity(), current()->device, &dev);
  if (rc != FAKE_ALLOC_OK) {
    __atomic_add_fetch(&alloc_out_of_memory, 1, __ATOMIC_RELAXED);
    return OUT_OF_MEMORY;
  }
  *ptr = dev;
  return SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) {
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  return fake_release(&heap, ptr) == 0 ? SUCCESS : INVALID_VALUE;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes) {
  log_call("cuMemcpyHtoD_v2");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if ((r = legacy_call()) != SUCCESS) return r;
  if (failing("copy")) return fail_code();
  unsigned char *d = fake_resolve(&heap, dst, bytes);
  if (!d || !src || fake_is_device_pointer((uint64_t)(uintptr_t)src)) return INVALID_VALUE;
  memcpy(d, src, bytes);
  return SUCCESS;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  log_call("cuMemcpyDtoH_v2");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if ((r = legacy_call()) != SUCCESS) return r;
  if (failing("copy")) return fail_code();
  unsigned char *s = fake_resolve(&heap, src, bytes);
  if (!s || !dst || fake_is_device_pointer((uint64_t)(uintptr_t)dst)) return INVALID_VALUE;
  memcpy(dst, s, bytes);
  return SUCCESS;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  log_call("cuMemcpyDtoD_v2");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if ((r = legacy_call()) != SUCCESS) return r;
  if (failing("copy")) return fail_code();
  unsigned char *d = fake_resolve(&heap, dst, bytes), *s = fake_resolve(&heap, src, bytes);
  if (!d || !s) return INVALID_VALUE;
  memmove(d, s, bytes);
  return SUCCESS;
}

static CUresult memset_n(CUdeviceptr dst, const void *value, size_t width, size_t count) {
  log_call("cuMemsetD*_v2");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if ((r = legacy_call()) != SUCCESS) return r;
  if (failing("fill")) return fail_code();
  if (dst % width != 0) return INVALID_VALUE; /* the driver wants D16 / D32 targets aligned */
  unsigned char *d = fake_resolve(&heap, dst, count * width);
  if (!d) return INVALID_VALUE;
  fake_fill(d, value, width, count);
  __atomic_add_fetch(&memset_calls[width], 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t count) { return memset_n(dst, &value, 1, count); }
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t count) { return memset_n(dst, &value, 2, count); }
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count) { return memset_n(dst, &value, 4, count); }

CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned int flags) {
  CUresult r = cuMemAlloc_v2(ptr, bytes);
  if (r == SUCCESS) fake_set_managed(&heap, *ptr);
  (void)flags;
  return r;
}

/* The attributes the CUDA backend reads of a pointer another library allocated; INVALID_VALUE for a
 * pointer the fake did not hand out, as the driver answers for unregistered host memory. */
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr) {
  CUresult r = ready();
  if (r != SUCCESS) return r;
  if (!data) return INVALID_VALUE;
  __atomic_add_fetch(&pointer_attribute_calls, 1, __ATOMIC_RELAXED);
  uint64_t start = 0;
  size_t size = 0;
  int owner = -1, managed = 0;
  if (fake_find(&heap, ptr, &start, &size, &owner, &managed) != 0) return INVALID_VALUE;
  switch (attribute) {
    case 2: *(unsigned int *)data = 2; break; /* CU_MEMORYTYPE_DEVICE, for managed memory too */
    case 8: *(unsigned char *)data = (unsigned char)managed; break; /* a bool */
    case 9: *(int *)data = owner; break;
    case 11: *(CUdeviceptr *)data = start; break;
    case 12: *(size_t *)data = size; break;
    default: return INVALID_VALUE;
  }
  return SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!free_bytes || !total_bytes) return INVALID_VALUE;
  if (failing("info")) return fail_code();
  uint64_t cap = capacity(), used = fake_used(&heap, current()->device);
  *total_bytes = (size_t)cap;
  *free_bytes = (size_t)(used < cap ? cap - used : 0);
  return SUCCESS;
}

/* For tests: an allocation made as another library would (cuMemAlloc_v2 or cuMemAllocManaged in device
 * `device`'s primary context), its release, and the pointer-attribute queries made. */
unsigned long long fake_cuda_alloc_on(int device, size_t bytes, int managed);
int fake_cuda_free(unsigned long long ptr);
unsigned long long fake_cuda_pointer_attribute_calls(void);

unsigned long long fake_cuda_alloc_on(int device, size_t bytes, int managed) {
  if (!initialized) cuInit(0);
  fake_context *ctx = NULL;
  CUdeviceptr p = 0;
  if (cuDevicePrimaryCtxRetain(&ctx, device) != SUCCESS) return 0;
  if (cuCtxPushCurrent_v2(ctx) == SUCCESS) {
    if ((managed ? cuMemAllocManaged(&p, bytes, 1) : cuMemAlloc_v2(&p, bytes)) != SUCCESS) p = 0;
    cuCtxPopCurrent_v2(NULL);
  }
  cuDevicePrimaryCtxRelease(device);
  return p;
}

int fake_cuda_free(unsigned long long ptr) { return fake_release(&heap, ptr); }

unsigned long long fake_cuda_pointer_attribute_calls(void) {
  return __atomic_load_n(&pointer_attribute_calls, __ATOMIC_RELAXED);
}

/* For tests: what is live now. */
int fake_cuda_live_allocations(int device);
int fake_cuda_live_contexts(void);
int fake_cuda_live_streams(void);
int fake_cuda_context_depth(void);
unsigned long long fake_cuda_bytes_in_use(int device);
unsigned long long fake_cuda_memset_calls(int width);

int fake_cuda_live_allocations(int device) { return fake_live(&heap, device); }

int fake_cuda_live_contexts(void) {
  int n = 0;
  pthread_mutex_lock(&ctx_lock);
  for (int i = 0; i < FAKE_MAX_DEVICES; i++) n += contexts[i].retains;
  pthread_mutex_unlock(&ctx_lock);
  return n;
}

int fake_cuda_live_streams(void) {
  pthread_mutex_lock(&ctx_lock);
  int n = live_streams;
  pthread_mutex_unlock(&ctx_lock);
  return n;
}

int fake_cuda_context_depth(void) { return ctx_depth; }
unsigned long long fake_cuda_bytes_in_use(int device) { return fake_used(&heap, device); }
unsigned long long fake_cuda_memset_calls(int width) {
  return width == 1 || width == 2 || width == 4 ? __atomic_load_n(&memset_calls[width], __ATOMIC_RELAXED) : 0;
}

/* ---- Events ------------------------------------------------------------------------------------- */

typedef struct fake_event {
  fake_context *ctx;
  int recorded;
  int pending_not_ready; /* queries to answer NOT_READY before completing */
  unsigned long long stamp;
} fake_event;

static const char *const event_call_names[] = {"cuEventCreate", "cuEventRecord", "cuEventSynchronize",
                                               "cuEventQuery", "cuEventElapsedTime", "cuEventDestroy_v2"};
enum { EV_CREATE, EV_RECORD, EV_SYNC, EV_QUERY, EV_ELAPSED, EV_DESTROY, EV_CALLS };
static unsigned long long event_calls[EV_CALLS];
static unsigned long long event_clock;
static int live_events;

static CUresult event_call(int which) {
  __atomic_add_fetch(&event_calls[which], 1, __ATOMIC_RELAXED);
  return memory_ready();
}

CUresult cuEventCreate(fake_event **event, unsigned int flags) {
  CUresult r = event_call(EV_CREATE);
  if (r != SUCCESS) return r;
  if (!event || (flags != 0 && flags != 2)) return INVALID_VALUE; /* 2: CU_EVENT_DISABLE_TIMING */
  fake_event *e = calloc(1, sizeof *e);
  if (!e) return OUT_OF_MEMORY;
  e->ctx = current();
  __atomic_add_fetch(&live_events, 1, __ATOMIC_RELAXED);
  *event = e;
  return SUCCESS;
}

CUresult cuEventRecord(fake_event *event, fake_stream *stream) {
  log_call("cuEventRecord");
  CUresult r = event_call(EV_RECORD);
  if (r != SUCCESS) return r;
  if (!event || !stream || stream->ctx != current() || event->ctx != current()) return INVALID_VALUE;
  if (stream->capture) return invalidate(stream);
  if (failing("record")) return fail_code();
  const char *mode = getenv("FAKE_CUDA_EVENT");
  event->recorded = 1;
  event->pending_not_ready = mode && strcmp(mode, "not_ready_once") == 0;
  event->stamp = __atomic_add_fetch(&event_clock, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

CUresult cuEventSynchronize(fake_event *event) {
  CUresult r = event_call(EV_SYNC);
  if (r != SUCCESS) return r;
  if (!event) return INVALID_VALUE;
  if (failing("sync")) return fail_code();
  event->pending_not_ready = 0;
  return SUCCESS;
}

CUresult cuEventQuery(fake_event *event) {
  CUresult r = event_call(EV_QUERY);
  if (r != SUCCESS) return r;
  if (!event) return INVALID_VALUE;
  if (event->pending_not_ready) {
    event->pending_not_ready = 0;
    return 600; /* CUDA_ERROR_NOT_READY */
  }
  return SUCCESS;
}

CUresult cuEventElapsedTime(float *ms, fake_event *start, fake_event *end) {
  CUresult r = event_call(EV_ELAPSED);
  if (r != SUCCESS) return r;
  if (!ms || !start || !end) return INVALID_VALUE;
  if (!start->recorded || !end->recorded) return 400; /* CUDA_ERROR_INVALID_HANDLE */
  if (start->pending_not_ready || end->pending_not_ready) return 600;
  *ms = 0.25f * (float)((double)end->stamp - (double)start->stamp);
  return SUCCESS;
}

CUresult cuEventDestroy_v2(fake_event *event) {
  CUresult r = event_call(EV_DESTROY);
  if (r != SUCCESS) return r;
  if (!event) return INVALID_VALUE;
  free(event);
  __atomic_sub_fetch(&live_events, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

unsigned long long fake_cuda_event_calls(const char *call);
int fake_cuda_live_events(void);

unsigned long long fake_cuda_event_calls(const char *call) {
  for (int i = 0; i < EV_CALLS; i++)
    if (strcmp(call, event_call_names[i]) == 0) return __atomic_load_n(&event_calls[i], __ATOMIC_RELAXED);
  return ~0ull;
}

int fake_cuda_live_events(void) { return __atomic_load_n(&live_events, __ATOMIC_RELAXED); }

/* ---- Modules ------------------------------------------------------------------------------------ */

#define FAKE_MAX_FUNCTIONS 256

typedef struct fake_module fake_module;
typedef struct fake_function {
  fake_module *module;
  char name[128];
} fake_function;

struct fake_module {
  fake_context *ctx;
  int count;
  fake_function functions[FAKE_MAX_FUNCTIONS];
  fake_module *next;
};

static pthread_mutex_t module_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_module *modules;
static int live_modules, module_loads, launches;

static int device_arch(void) {
  const fake_gpu *g = gpu(current()->device);
  return g ? cc_override(0, g->cc_major) * 10 + cc_override(1, g->cc_minor) : 0;
}

/* 0, or the CUresult that the image's header gets on the current device. */
static CUresult check_image(const char *img) {
  int arch = 0, n = 0;
  if (sscanf(img, "FAKE-CUBIN sm_%d%n", &arch, &n) == 1 && img[n] == '\n') return arch == device_arch() ? SUCCESS : 209;
  if (sscanf(img, "FAKE-PTX compute_%d%n", &arch, &n) == 1 && img[n] == '\n') return arch <= device_arch() ? SUCCESS : 218;
  return 200;
}

CUresult cuModuleLoadData(fake_module **module, const void *image) {
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!module || !image) return INVALID_VALUE;
  if (failing("module")) return fail_code();
  const char *img = image;
  if ((r = check_image(img)) != SUCCESS) return r;
  fake_module *m = calloc(1, sizeof *m);
  if (!m) return OUT_OF_MEMORY;
  m->ctx = current();
  for (const char *line = strchr(img, '\n'); line && m->count < FAKE_MAX_FUNCTIONS; line = strchr(line, '\n')) {
    line++;
    if (strncmp(line, "entry ", 6) != 0) continue;
    size_t n = strcspn(line + 6, "\n");
    snprintf(m->functions[m->count].name, sizeof m->functions[0].name, "%.*s", (int)n, line + 6);
    m->functions[m->count++].module = m;
  }
  pthread_mutex_lock(&module_lock);
  m->next = modules;
  modules = m;
  live_modules++;
  module_loads++;
  pthread_mutex_unlock(&module_lock);
  *module = m;
  return SUCCESS;
}

/* Whether m is loaded now; under module_lock. */
static int module_live(const fake_module *m) {
  for (const fake_module *k = modules; k; k = k->next)
    if (k == m) return 1;
  return 0;
}

CUresult cuModuleGetFunction(fake_function **function, fake_module *module, const char *name) {
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!function || !name) return INVALID_VALUE;
  pthread_mutex_lock(&module_lock);
  int live = module_live(module);
  pthread_mutex_unlock(&module_lock);
  if (!live) return 400; /* CUDA_ERROR_INVALID_HANDLE */
  for (int i = 0; i < module->count; i++)
    if (strcmp(module->functions[i].name, name) == 0) {
      *function = &module->functions[i];
      return SUCCESS;
    }
  return 500; /* CUDA_ERROR_NOT_FOUND */
}

CUresult cuModuleUnload(fake_module *module) {
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  pthread_mutex_lock(&module_lock);
  for (fake_module **p = &modules; *p; p = &(*p)->next) {
    if (*p != module) continue;
    *p = module->next;
    live_modules--;
    pthread_mutex_unlock(&module_lock);
    free(module);
    return SUCCESS;
  }
  pthread_mutex_unlock(&module_lock);
  return 400;
}

/* ---- Launch records ---------------------------------------------------------------------------- */

#define FAKE_MAX_RECORDS 1024
enum { FAKE_DM_BYTES = 432, FAKE_DM_BYTES_AT = 360 };
enum { FAKE_EW_BYTES = 296 }; /* 12_math.cu's tb_ew: the bytes behind its four pointers first */
static fake_launch records[FAKE_MAX_RECORDS];
static int n_records; /* since the last fake_cuda_launch_reset; under module_lock */

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n >= k && strcmp(s + n - k, tail) == 0;
}

/* The CNN kernels (60_conv.cu, 61_pool_norm.cu): six pointers, then a descriptor whose first six words
 * are the 4-byte elements each pointer reaches. */
static int is_cnn(const char *name) { return strncmp(name, "tb_cu_cnn_", 10) == 0; }
/* The math and index kernels (12_math.cu, 31_index_reduce.cu): (a, b, y, z, n, tb_ew), like the data kernels. */
static int is_ew(const char *name) { return strncmp(name, "tb_cu_ew_", 9) == 0; }

/* The parameter sizes of an embedded kernel, by its name; 0 when the fake does not know it. */
static int kernel_params(const char *name, unsigned *sizes) {
  static const unsigned unary[] = {8, 8, 8, 4, 4}, flat[] = {8, 8, 8, 8}, broadcast[] = {8, 8, 8, 8, 200},
                        rows[] = {8, 8, 8, 8}, cols[] = {8, 8, 8, 8, 8}, dm[] = {8, 8, 8, 8, 8, FAKE_DM_BYTES},
                        ew[] = {8, 8, 8, 8, 8, FAKE_EW_BYTES};
  const unsigned *list = NULL;
  int n = 0;
  if (strncmp(name, "tb_cu_", 6) != 0) return 0;
  if (is_cnn(name)) { /* six pointers, then the 384-byte tb_cnn_desc */
    for (int i = 0; i < 6; i++) sizes[i] = 8;
    sizes[6] = 384;
    return 7;
  }
  if (strcmp(name, "tb_cu_resize_taps") == 0) { /* (taps, weights, entries, tb_resize_axes): 76_resize_taps.cu */
    static const unsigned taps[] = {8, 8, 8, 232};
    memcpy(sizes, taps, sizeof taps);
    return 4;
  }
  if ((n = fake_gemm_params(name, sizes)) > 0) return n;
  if ((n = fake_rnn_params(name, sizes)) > 0) return n;
  if ((n = fake_quant_params(name, sizes)) > 0) return n;
  if (strncmp(name, "tb_cu_dm_", 9) == 0) list = dm, n = 6; /* (a, b, c, y, n, tb_dm): 70_data.cu */
  else if (is_ew(name)) list = ew, n = 6;
  else if (ends_with(name, "_f32_broadcast")) list = broadcast, n = 5;
  else if (ends_with(name, "_f32_flat")) list = flat, n = 4;
  else if (ends_with(name, "_f32_rows")) list = rows, n = 4;
  else if (ends_with(name, "_f32_cols")) list = cols, n = 5;
  else if (ends_with(name, "_f32")) list = unary, n = 5;
  for (int i = 0; i < n; i++) sizes[i] = list[i];
  return n;
}

static long long arg_i64(const fake_launch *l, int i) {
  long long v;
  memcpy(&v, l->args + l->arg_offset[i], sizeof v);
  return v;
}

/* Whether argument i, a device pointer, has `elements` floats behind it in one live allocation. */
static int covers(const fake_launch *l, int i, long long elements) {
  unsigned long long p = (unsigned long long)arg_i64(l, i);
  if (elements <= 0) return 1;
  return fake_resolve(&heap, p, (size_t)elements * 4) != NULL;
}

/* The elements of a broadcast input reaches: 1 + sum of (dim - 1) * stride. */
static long long reach(const long long *dims, const long long *strides, int rank) {
  long long r = 1;
  for (int d = 0; d < rank; d++) r += (dims[d] - 1) * strides[d];
  return r;
}

/* The tb_cu_dm_ kernels' descriptor (70_data.cu's tb_dm): 432 bytes, the bytes behind each of the four
 * pointers at 360 (a NULL pointer has 0). */
static int covers_dm(const fake_launch *l, int bytes_at) {
  const unsigned char *dm = l->args + l->arg_offset[5];
  for (int i = 0; i < 4; i++) {
    long long bytes;
    memcpy(&bytes, dm + bytes_at + 8 * i, sizeof bytes);
    unsigned long long p = (unsigned long long)arg_i64(l, i);
    if (bytes < 0 || (bytes > 0 && fake_resolve(&heap, p, (size_t)bytes) == NULL)) return 0;
  }
  return 1;
}

/* 0, or 700 when a tensor argument of a known kernel lies outside the memory the kernel would touch. */
static CUresult check_memory(const fake_launch *l) {
  const char *name = l->name;
  if (l->n_args <= 0) return SUCCESS;
  if (fake_gemm_pointers(name)) {
    int in = fake_gemm_in_bounds(l, covers);
    return in < 0 ? INVALID_VALUE : in ? SUCCESS : ILLEGAL_ADDRESS;
  }
  if (fake_quant_pointers(name)) {
    int in = fake_quant_in_bounds(l, arg_i64, covers);
    return in < 0 ? INVALID_VALUE : in ? SUCCESS : ILLEGAL_ADDRESS;
  }
  if (fake_rnn_pointers(name)) {
    int in = fake_rnn_in_bounds(l, arg_i64, covers);
    return in < 0 ? INVALID_VALUE : in ? SUCCESS : ILLEGAL_ADDRESS;
  }
  int ok = 1;
  if (strcmp(name, "tb_cu_resize_taps") == 0) { /* 4 int64 indices and 4 float weights per entry */
    long long entries = arg_i64(l, 2);
    return entries > 0 && covers(l, 0, 8 * entries) && covers(l, 1, 4 * entries) ? SUCCESS : ILLEGAL_ADDRESS;
  }
  if (is_cnn(name)) {
    long long counts[6];
    memcpy(counts, l->args + l->arg_offset[6], sizeof counts);
    for (int i = 0; i < 6 && ok; i++) ok = counts[i] == 0 || (arg_i64(l, i) != 0 && covers(l, i, counts[i]));
  } else if (strncmp(name, "tb_cu_dm_", 9) == 0) {
    ok = covers_dm(l, FAKE_DM_BYTES_AT);
  } else if (is_ew(name)) {
    ok = covers_dm(l, 0);
  } else if (ends_with(name, "_f32_broadcast")) {
    const unsigned char *bc = l->args + l->arg_offset[4];
    int rank;
    long long dims[8], sa[8], sb[8], n = arg_i64(l, 3), count = 1;
    memcpy(&rank, bc, sizeof rank);
    if (rank < 1 || rank > 8) return INVALID_VALUE;
    memcpy(dims, bc + 8, sizeof dims);
    memcpy(sa, bc + 72, sizeof sa);
    memcpy(sb, bc + 136, sizeof sb);
    for (int d = 0; d < rank; d++) count *= dims[d];
    if (count != n) return INVALID_VALUE;
    ok = covers(l, 0, reach(dims, sa, rank)) && covers(l, 1, reach(dims, sb, rank)) && covers(l, 2, n);
  } else if (ends_with(name, "_f32_flat")) {
    long long n = arg_i64(l, 3);
    ok = covers(l, 0, n) && covers(l, 1, n) && covers(l, 2, n);
  } else if (ends_with(name, "_f32_rows")) {
    long long rows = arg_i64(l, 2), cols = arg_i64(l, 3);
    ok = covers(l, 0, rows * cols) && covers(l, 1, strstr(name, "softmax") ? rows * cols : rows);
  } else if (ends_with(name, "_f32_cols")) {
    long long outer = arg_i64(l, 2), r = arg_i64(l, 3), inner = arg_i64(l, 4);
    ok = covers(l, 0, outer * r * inner) && covers(l, 1, strstr(name, "softmax") ? outer * r * inner : outer * inner);
  } else {
    long long n = arg_i64(l, 2);
    ok = covers(l, 0, n) && covers(l, 1, n);
  }
  return ok ? SUCCESS : ILLEGAL_ADDRESS;
}

/* FAKE_CUDA_EMULATE's cuda_emu_launch, opened on first use (NULL when unset; *broken when it does not load). */
typedef int (*emu_launch_fn)(const char *name, unsigned grid, unsigned block, void **params);
static emu_launch_fn emulator(int *broken) {
  static emu_launch_fn fn;
  const char *path = getenv("FAKE_CUDA_EMULATE");
  *broken = 0;
  if (!path || !*path) return NULL;
  if (!fn) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    fn = h ? (emu_launch_fn)dlsym(h, "cuda_emu_launch") : NULL;
    if (!fn) fprintf(stderr, "fake_cuda: FAKE_CUDA_EMULATE=%s: %s\n", path, dlerror());
  }
  *broken = fn == NULL;
  return fn;
}

/* Run a recorded launch of a known kernel on the emulator, its pointer arguments (the first two, three for
 * the binary kernels) turned into the host bytes behind them. */
static CUresult emulate(emu_launch_fn run, const fake_launch *l, void **params) {
  int pointers = is_cnn(l->name) ? 6 : strncmp(l->name, "tb_cu_dm_", 9) == 0 || is_ew(l->name) ? 4 : fake_gemm_pointers(l->name);
  if (!pointers) pointers = fake_rnn_pointers(l->name);
  if (!pointers) pointers = fake_quant_pointers(l->name);
  if (!pointers) pointers = ends_with(l->name, "_f32_flat") || ends_with(l->name, "_f32_broadcast") ? 3 : 2;
  void *host[FAKE_LAUNCH_MAX_ARGS], *args[FAKE_LAUNCH_MAX_ARGS];
  for (int i = 0; i < l->n_args; i++) {
    args[i] = params[i];
    if (i < pointers) {
      host[i] = fake_resolve(&heap, (uint64_t)arg_i64(l, i), 0);
      args[i] = &host[i];
    }
  }
  return run(l->name, l->grid[0], l->block[0], args) == 0 ? SUCCESS : INVALID_VALUE;
}

static void record(fake_launch *l, const fake_function *f, const unsigned *grid, const unsigned *block, unsigned shared,
                   void **params) {
  memset(l, 0, sizeof *l);
  snprintf(l->name, sizeof l->name, "%s", f->name);
  memcpy(l->grid, grid, sizeof l->grid);
  memcpy(l->block, block, sizeof l->block);
  l->shared = shared;
  unsigned sizes[FAKE_LAUNCH_MAX_ARGS];
  int n = kernel_params(f->name, sizes);
  l->n_args = n && params ? n : -1;
  unsigned at = 0;
  for (int i = 0; i < n && params; i++) {
    unsigned align = sizes[i] >= 8 ? 8 : sizes[i];
    at = (at + align - 1) / align * align;
    l->arg_offset[i] = at;
    l->arg_size[i] = sizes[i];
    memcpy(l->args + at, params[i], sizes[i]);
    at += sizes[i];
  }
}

static CUresult capture_launch(fake_stream *s, const fake_function *f, const fake_launch *l);

CUresult cuLaunchKernel(fake_function *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, fake_stream *stream, void **params, void **extra) {
  log_call("cuLaunchKernel");
  CUresult r = memory_ready();
  if (r != SUCCESS) return r;
  if (!stream) count_legacy();
  if (!f) return 400;
  pthread_mutex_lock(&module_lock);
  int live = module_live(f->module);
  pthread_mutex_unlock(&module_lock);
  if (!live) return 400;
  if (!gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024 || shared > 48 * 1024 ||
      (params && extra) || (stream && stream->ctx != current()) || f->module->ctx != current())
    return INVALID_VALUE;
  const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  fake_launch l;
  record(&l, f, grid, block, shared, params);
  pthread_mutex_lock(&module_lock);
  int number = n_records + 1;
  const char *at = getenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  int fail = failing("launch") || (at && *at && atoi(at) == number);
  if (!fail && (r = check_memory(&l)) == SUCCESS) {
    if (n_records < FAKE_MAX_RECORDS) records[n_records] = l;
    n_records++;
  }
  pthread_mutex_unlock(&module_lock);
  if (fail) return fail_code();
  if (r != SUCCESS) return r;
  if (stream && stream->capture) return capture_launch(stream, f, &l); /* runs when the graph is launched */
  int broken = 0;
  emu_launch_fn run = l.n_args > 0 ? emulator(&broken) : NULL;
  if (broken) return UNKNOWN;
  if (run && (r = emulate(run, &l, params)) != SUCCESS) return r;
  __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
  return SUCCESS;
}

/* For tests: forget the recorded launches (and restart FAKE_CUDA_LAUNCH_FAIL_AT's count); how many were
 * recorded since; the i-th (NULL past the end or past the 1024 kept). */
void fake_cuda_launch_reset(void);
int fake_cuda_launch_count(void);
const fake_launch *fake_cuda_launch_at(int i);
void fake_cuda_launch_reset(void) {
  pthread_mutex_lock(&module_lock);
  n_records = 0;
  pthread_mutex_unlock(&module_lock);
}
int fake_cuda_launch_count(void) {
  pthread_mutex_lock(&module_lock);
  int n = n_records;
  pthread_mutex_unlock(&module_lock);
  return n;
}
const fake_launch *fake_cuda_launch_at(int i) {
  pthread_mutex_lock(&module_lock);
  const fake_launch *l = i >= 0 && i < n_records && i < FAKE_MAX_RECORDS ? &records[i] : NULL;
  pthread_mutex_unlock(&module_lock);
  return l;
}

int fake_cuda_module_loads(void);
int fake_cuda_live_modules(void);
int fake_cuda_launches(void);
int fake_cuda_module_loads(void) {
  pthread_mutex_lock(&module_lock);
  int n = module_loads;
  pthread_mutex_unlock(&module_lock);
  return n;
}
int fake_cuda_live_modules(void) {
  pthread_mutex_lock(&module_lock);
  int n = live_modules;
  pthread_mutex_unlock(&module_lock);
  return n;
}
int fake_cuda_launches(void) { return __atomic_load_n(&launches, __ATOMIC_RELAXED); }

#include "fake_cuda_exec.h"
