/* The memory calls of a backend handle: stats, empty_cache, peak reset, the memory fraction,
 * synchronize, scopes (the seeds' context manager), and the stats as JSON (keys in docs/tensors.md
 * and docs/json.md). Each call takes the handle's lock so tb_backend_set_device cannot swap the
 * device underneath it. */
#include <stddef.h>
#include <string.h>
#include <tensorbridge/backend.h>
#include "backend/allocator.h"
#include "backend/backend_impl.h"
#include "core/error.h"
#include "json/json_util.h"

#define NEED_BACKEND(fn, b) \
  if (!(b)) return tb_error(TB_ERR_INVALID_ARGUMENT, fn ": backend must not be NULL")

/* The struct's first version is the smallest a caller may pass; later, larger versions are filled as
 * far as this library knows them. */
#define STATS_MIN_SIZE sizeof(tb_memory_stats)

tb_status tb_backend_memory_stats(tb_backend *backend, tb_memory_stats *out_stats) {
  NEED_BACKEND("tb_backend_memory_stats", backend);
  if (!out_stats) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_memory_stats: out_stats must not be NULL");
  size_t size = out_stats->size;
  if (size < STATS_MIN_SIZE)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_backend_memory_stats: out_stats->size is %zu; set it to sizeof(tb_memory_stats) (%zu)", size,
                    sizeof(tb_memory_stats));
  tb_memory_stats stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  pthread_mutex_lock(&backend->lock);
  tb_allocator_stats(backend->allocator, &stats);
  pthread_mutex_unlock(&backend->lock);
  /* A caller built against an older, smaller struct gets the fields it knows. */
  size_t n = size < sizeof stats ? size : sizeof stats;
  memcpy((char *)out_stats + sizeof(size_t), (const char *)&stats + sizeof(size_t), n - sizeof(size_t));
  out_stats->size = size;
  return TB_OK;
}

tb_status tb_backend_empty_cache(tb_backend *backend) {
  NEED_BACKEND("tb_backend_empty_cache", backend);
  pthread_mutex_lock(&backend->lock);
  tb_allocator_empty_cache(backend->allocator);
  pthread_mutex_unlock(&backend->lock);
  return TB_OK;
}

tb_status tb_backend_reset_peak_memory(tb_backend *backend) {
  NEED_BACKEND("tb_backend_reset_peak_memory", backend);
  pthread_mutex_lock(&backend->lock);
  tb_allocator_reset_peak(backend->allocator);
  pthread_mutex_unlock(&backend->lock);
  return TB_OK;
}

tb_status tb_backend_set_memory_fraction(tb_backend *backend, double fraction) {
  NEED_BACKEND("tb_backend_set_memory_fraction", backend);
  if (!(fraction > 0.0 && fraction <= 1.0))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_backend_set_memory_fraction: fraction %g for %s must be in (0, 1] (1 removes the limit)",
                    fraction, backend->device->device);
  uint64_t fallback_total = backend->device->memory_total_known ? backend->device->memory_total : 0;
  pthread_mutex_lock(&backend->lock);
  tb_status st = tb_allocator_set_fraction(backend->allocator, fraction, fallback_total);
  pthread_mutex_unlock(&backend->lock);
  return st;
}

tb_status tb_backend_synchronize(tb_backend *backend) {
  NEED_BACKEND("tb_backend_synchronize", backend);
  pthread_mutex_lock(&backend->lock);
  tb_status st = backend->ops->synchronize(backend->state);
  pthread_mutex_unlock(&backend->lock);
  return st;
}

tb_status tb_backend_scope_begin(tb_backend *backend) {
  NEED_BACKEND("tb_backend_scope_begin", backend);
  pthread_mutex_lock(&backend->lock);
  backend->scope_depth++;
  pthread_mutex_unlock(&backend->lock);
  return TB_OK;
}

/* Ending the outermost scope synchronizes and then releases the cache, even when synchronizing fails
 * (its status is returned). */
tb_status tb_backend_scope_end(tb_backend *backend) {
  NEED_BACKEND("tb_backend_scope_end", backend);
  pthread_mutex_lock(&backend->lock);
  tb_status st = TB_OK;
  if (backend->scope_depth == 0) {
    st = tb_error(TB_ERR_INVALID_ARGUMENT,
                  "tb_backend_scope_end: no scope is open on %s; call tb_backend_scope_begin first",
                  backend->device->device);
  } else if (--backend->scope_depth == 0) {
    st = backend->ops->synchronize(backend->state);
    tb_allocator_empty_cache(backend->allocator);
  }
  pthread_mutex_unlock(&backend->lock);
  return st;
}

static bool add_bytes(cJSON *o, const char *key, uint64_t v) { return cJSON_AddNumberToObject(o, key, (double)v) != NULL; }
static bool add_bytes_or_null(cJSON *o, const char *key, bool known, uint64_t v) {
  return known ? add_bytes(o, key, v) : cJSON_AddNullToObject(o, key) != NULL;
}

tb_status tb_memory_stats_to_json(const tb_memory_stats *s, char **out_json) {
  if (!s || !out_json)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_memory_stats_to_json: stats and out_json must not be NULL");
  *out_json = NULL;
  if (s->size < sizeof *s)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_memory_stats_to_json: stats->size is %zu; set it to sizeof(tb_memory_stats) (%zu)", s->size,
                    sizeof *s);
  cJSON *o = cJSON_CreateObject();
  bool ok = o && add_bytes(o, "allocated_bytes", s->allocated) && add_bytes(o, "requested_bytes", s->requested) &&
            add_bytes(o, "reserved_bytes", s->reserved) && add_bytes(o, "peak_allocated_bytes", s->peak_allocated) &&
            add_bytes(o, "peak_reserved_bytes", s->peak_reserved) && add_bytes(o, "num_allocs", s->num_allocs) &&
            add_bytes(o, "num_frees", s->num_frees) && add_bytes(o, "num_device_allocs", s->num_device_allocs) &&
            add_bytes(o, "num_device_frees", s->num_device_frees) &&
            add_bytes(o, "num_oom_retries", s->num_oom_retries) &&
            add_bytes_or_null(o, "limit_bytes", s->limit != 0, s->limit) &&
            add_bytes_or_null(o, "device_free_bytes", s->device_free_known, s->device_free) &&
            add_bytes_or_null(o, "device_total_bytes", s->device_total_known, s->device_total);
  return tb_json_finish(o, ok, out_json, "tb_memory_stats_to_json");
}
