/* Internal: the backend vtable and the backend handle.
 *
 * Each backend (src/backend/<name>/) implements tb_backend_ops over its driver API: open a device, raw
 * allocations, blocking copies between host and device and within the device, synchronize, and the
 * driver's view of free/total memory. Everything above it (the caching allocator, tensors, DLPack, stats)
 * is written once, over this table. A raw allocation is a tb_devmem; the caching allocator hands out
 * (devmem, offset) pairs inside them, so every copy takes an offset. */
#ifndef TB_BACKEND_IMPL_H
#define TB_BACKEND_IMPL_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/backend.h>
#include <tensorbridge/device.h>

typedef struct tb_allocator tb_allocator;
struct tb_graph;
struct tb_node;
struct tb_value_type;
struct tb_kernel;
struct tb_kernel_query;

/* A raw device allocation as the driver returned it. */
typedef struct tb_devmem {
  void *handle; /* CPU: the host pointer; OpenCL: cl_mem; Vulkan: the backend's allocation record;
                   CUDA: CUdeviceptr (as an integer in the pointer); HIP / Level Zero: the device pointer */
  size_t size;  /* bytes */
} tb_devmem;

typedef struct tb_backend_ops {
  tb_backend_kind kind;
  /* Open the device: create what the API needs (context, queue, command pool). *state is private to
   * the backend. Errors name the device and the driver's code. */
  tb_status (*open)(const tb_device_info *device, void **state);
  /* Release everything open() made. Called with no raw allocation left. */
  void (*close)(void *state);
  /* Smallest alignment (bytes, a power of two) for an offset inside a raw allocation. */
  size_t (*alignment)(void *state);
  /* A raw allocation of `bytes` (> 0). TB_ERR_OUT_OF_MEMORY when the device is full: the caching
   * allocator then releases its cache and retries once. */
  tb_status (*alloc)(void *state, size_t bytes, tb_devmem *out);
  void (*free)(void *state, tb_devmem mem);
  /* Blocking copies; offsets and sizes are in bytes and lie within the allocations. */
  tb_status (*write)(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes);
  tb_status (*read)(void *state, tb_devmem src, size_t src_offset, void *dst, size_t bytes);
  tb_status (*copy)(void *state, tb_devmem dst, size_t dst_offset, tb_devmem src, size_t src_offset, size_t bytes);
  /* Fill `bytes` with a repeated pattern of 1, 2, 4 or 8 bytes. NULL: done through a host buffer. */
  tb_status (*fill)(void *state, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size, size_t bytes);
  /* Wait for all work queued on the device. */
  tb_status (*synchronize)(void *state);
  /* Free and total device memory as the driver reports them. TB_ERR_UNSUPPORTED when free is unknown;
   * *total_bytes is then still used when the backend set it non-zero (OpenCL knows only the total). */
  tb_status (*memory_info)(void *state, uint64_t *free_bytes, uint64_t *total_bytes);
  /* The host address of a raw allocation when the host can use it directly (CPU backend). NULL (the
   * field) for a backend whose memory the host cannot address. */
  void *(*host_pointer)(void *state, tb_devmem mem);
  /* Events, each optional. event_create NULL: the host implementation in event.c (record synchronizes
   * and takes a time stamp), exact for backends whose copies all block. A native event is the backend's
   * opaque pointer; with event_create set, all but event_elapsed_ms must be. event_query sets *done
   * without blocking. event_elapsed_ms NULL, or *measured false: host time stamps taken when each event
   * was first seen complete (with event_elapsed_ms NULL, event.c looks once right after recording).
   * Errors name the device, the call and the driver's code. */
  tb_status (*event_create)(void *state, void **out_event);
  tb_status (*event_record)(void *state, void *event);
  tb_status (*event_synchronize)(void *state, void *event);
  tb_status (*event_query)(void *state, void *event, bool *done);
  tb_status (*event_elapsed_ms)(void *state, void *start, void *end, double *ms, bool *measured);
  void (*event_destroy)(void *state, void *event);
  /* Model execution, optional: the backend's kernel for the query (one node's op, typed parameters,
   * input types and kernel level; backend/kernel.h), or NULL when it has none (on a device the node then
   * runs on the CPU). NULL (the field): the backend runs no kernels; every node runs on the CPU. The CPU
   * backend's is tb_cpu_kernel_find. */
  const struct tb_kernel *(*find_kernel)(void *state, const struct tb_kernel_query *q);
  /* Foreign device memory (a DLPack import), optional: check with the driver that [address, address +
   * bytes) lies in one allocation of this backend's device that its calls can use (`managed`: memory the
   * producer said is managed/unified, which the driver must confirm) and describe it as a tb_devmem. The
   * backend never frees it: the storage that wraps it has no allocator block. NULL (the field): the backend
   * cannot wrap memory it did not allocate. Errors name the device, the pointer and what differs. */
  tb_status (*wrap_foreign)(void *state, uintptr_t address, size_t bytes, bool managed, tb_devmem *out);
  /* Streams and captured work (src/backend/cuda/cuda_stream.c, cuda_graph.c), optional: NULL where the backend has
   * none (every backend but CUDA today; each stream op then is a no-op for the callers in model/). A stream is the
   * backend's in-order queue, opaque. stream_bind makes the calling thread's work on this backend (kernel launches,
   * copies, fills, event records) go to `stream` until bound again (NULL: the backend's own queue) and returns what
   * was bound before. Copies with the host stay blocking for the host memory; copies and fills within the device
   * are ordered on the bound stream (and waited for when none is bound). stream_synchronize waits for one stream.
   * capture_begin records the bound stream's work instead of running it; a copy with the host or a synchronize
   * meanwhile is refused with TB_ERR_UNSUPPORTED and a sentence saying what could not be captured. capture_end
   * stops: with keep false it discards the work; else it makes an executable graph in *graph, or updates the
   * executable graph already in *graph in place when the work has the same shape (*updated true), else replaces
   * it. graph_launch enqueues a graph on the bound stream; graph_destroy frees one. Errors name the device, the
   * call and the driver's code. */
  tb_status (*stream_create)(void *state, void **out_stream);
  void (*stream_destroy)(void *state, void *stream);
  tb_status (*stream_synchronize)(void *state, void *stream);
  void *(*stream_bind)(void *state, void *stream);
  tb_status (*capture_begin)(void *state);
  tb_status (*capture_end)(void *state, bool keep, void **graph, bool *updated);
  tb_status (*graph_launch)(void *state, void *graph);
  void (*graph_destroy)(void *state, void *graph);
} tb_backend_ops;

/* The ops of a backend kind, or NULL when this build has no memory support for it (the caller reports
 * TB_ERR_UNSUPPORTED naming the backend). Defined in backend_registry.c. */
const tb_backend_ops *tb_backend_ops_for(tb_backend_kind kind);

/* The ops of each backend, each in src/backend/<name>/. */
extern const tb_backend_ops tb_cpu_ops;
extern const tb_backend_ops tb_opencl_ops;
extern const tb_backend_ops tb_vulkan_ops;
extern const tb_backend_ops tb_cuda_ops;
extern const tb_backend_ops tb_hip_ops;
extern const tb_backend_ops tb_level_zero_ops;

struct tb_backend {
  tb_device_list *list;         /* owns *device */
  const tb_device_info *device;
  const tb_backend_ops *ops;
  void *state;                  /* ops' private state; NULL until opened */
  tb_allocator *allocator;      /* the caching allocator over ops */
  pthread_mutex_t lock;         /* guards scope_depth and device changes */
  int scope_depth;
};

#endif
