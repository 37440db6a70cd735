/* Backends: a handle on one device through one API. This backends carry the device and its
 * description; memory and execution are added behind the same handle. */
#ifndef TENSORBRIDGE_BACKEND_H
#define TENSORBRIDGE_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "device.h"
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_backend tb_backend;

/* Create a backend from a request as tb_select takes it ("auto", "cuda", "cuda:1", "cpu", NULL for
 * TB_BACKEND or auto). Runs discovery itself and keeps the device list inside the handle. Fails as
 * tb_discover or tb_select fails; *out_backend is NULL then. */
TB_API tb_status tb_backend_create(const char *request, tb_backend **out_backend);
/* Create a backend on device `index` of `kind` (0 for the first): the same as the request
 * "<kind>:<index>". A kind out of range or a negative index is TB_ERR_INVALID_ARGUMENT. */
TB_API tb_status tb_backend_create_kind(tb_backend_kind kind, int index, tb_backend **out_backend);
/* Frees the handle and the device info it owns. NULL is allowed. */
TB_API void tb_backend_destroy(tb_backend *backend);

/* The device this backend runs on; owned by the backend, valid until tb_backend_destroy. NULL for NULL. */
TB_API const tb_device_info *tb_backend_device(const tb_backend *backend);
/* The backend's kind; TB_BACKEND_COUNT for NULL. */
TB_API tb_backend_kind tb_backend_kind_of(const tb_backend *backend);

/* The seeds' conveniences, each running discovery. */
/* Backends with at least one usable device, in the order `auto` ranks their best device (backends
 * auto passes over, such as a CPU-only Vulkan driver, follow in the default order). A capacity of
 * TB_BACKEND_COUNT is always enough; a smaller one that does not fit is TB_ERR_INVALID_ARGUMENT with
 * *out_count set to the number needed. out_kinds may be NULL when capacity is 0. */
TB_API tb_status tb_backend_list_available(tb_backend_kind *out_kinds, size_t capacity, size_t *out_count);
/* The backend `auto` picks (TB_BACKEND is not consulted; tb_backend_create(NULL) does consult it).
 * TB_ERR_UNAVAILABLE when nothing is usable. */
TB_API tb_status tb_backend_detect_best(tb_backend_kind *out_kind);
/* true when the backend has a usable device. A probe that fails counts as unavailable. */
TB_API bool tb_backend_is_available(tb_backend_kind kind);

/* ---- Memory ---------------------------------------------------------------------------------
 * Every backend allocates through a caching allocator: freed blocks are kept for reuse until
 * tb_backend_empty_cache(). All sizes are bytes. */

typedef struct tb_memory_stats {
  size_t size;                 /* sizeof(tb_memory_stats), set by the caller */
  uint64_t allocated;          /* bytes in blocks handed out and not freed (rounded to size classes) */
  uint64_t requested;          /* bytes asked for by those blocks */
  uint64_t reserved;           /* bytes held from the device: allocated + cached */
  uint64_t peak_allocated;     /* highest `allocated` since creation or tb_backend_reset_peak_memory */
  uint64_t peak_reserved;
  uint64_t num_allocs;         /* blocks handed out */
  uint64_t num_frees;
  uint64_t num_device_allocs;  /* calls to the driver's allocation function */
  uint64_t num_device_frees;
  uint64_t num_oom_retries;    /* times the cache was released to satisfy a request */
  uint64_t limit;              /* reserved-bytes limit from the memory fraction; 0 = none */
  uint64_t device_free;        /* as the driver reports it */
  uint64_t device_total;
  bool device_free_known;
  bool device_total_known;
} tb_memory_stats;

TB_API tb_status tb_backend_memory_stats(tb_backend *backend, tb_memory_stats *out_stats);
/* Return fully free cached memory to the device. */
TB_API tb_status tb_backend_empty_cache(tb_backend *backend);
TB_API tb_status tb_backend_reset_peak_memory(tb_backend *backend);
/* Cap the memory this backend holds at fraction * device total, fraction in (0, 1]. */
TB_API tb_status tb_backend_set_memory_fraction(tb_backend *backend, double fraction);
/* Wait until all work queued on the device has finished. */
TB_API tb_status tb_backend_synchronize(tb_backend *backend);
/* Move the backend to device `index` of the same kind. Fails (TB_ERR_INVALID_ARGUMENT, naming the count)
 * while tensors made on it are alive. */
TB_API tb_status tb_backend_set_device(tb_backend *backend, int index);

/* A scoped use of a backend (the seeds' context manager): scopes nest; when the outermost ends, the
 * backend synchronizes and releases its cache. */
TB_API tb_status tb_backend_scope_begin(tb_backend *backend);
TB_API tb_status tb_backend_scope_end(tb_backend *backend);

/* JSON of the stats (keys in docs/json.md); free with tb_free. */
TB_API tb_status tb_memory_stats_to_json(const tb_memory_stats *stats, char **out_json);

/* ---- Events ---------------------------------------------------------------------------------
 * A marker in the backend's stream of work, for waiting on part of it and timing it. Native events
 * where the driver has them (CUDA, HIP, Level Zero, OpenCL); elsewhere (CPU, Vulkan, whose copies all
 * block) recording synchronizes the backend and takes a CLOCK_MONOTONIC time stamp, which is exact there.
 * An event holds a reference on its backend, like a tensor: destroying the backend handle first is safe,
 * and tb_backend_set_device refuses while events are alive. */

typedef struct tb_event tb_event;

/* A new event on `backend`, not yet recorded. */
TB_API tb_status tb_event_create(tb_backend *backend, tb_event **out_event);
/* Marks the point after all work queued on the backend so far. Recording again moves the mark. */
TB_API tb_status tb_event_record(tb_event *event);
/* Waits until that point is reached. An event never recorded is TB_ERR_INVALID_ARGUMENT. */
TB_API tb_status tb_event_synchronize(tb_event *event);
/* *out_done: whether that point has been reached. Never blocks. An event never recorded is
 * TB_ERR_INVALID_ARGUMENT. */
TB_API tb_status tb_event_query(tb_event *event, bool *out_done);
/* Milliseconds from `start` to `end`, both recorded and completed (after tb_event_synchronize or a
 * tb_event_query that said done), on the same backend handle; otherwise TB_ERR_INVALID_ARGUMENT naming
 * the problem. The driver's timer where it has one, else host time stamps (docs/tensors.md, Events). */
TB_API tb_status tb_event_elapsed_ms(const tb_event *start, const tb_event *end, double *out_ms);
/* Frees the event and drops its backend reference. NULL is allowed. */
TB_API void tb_event_destroy(tb_event *event);

#ifdef __cplusplus
}
#endif
#endif
