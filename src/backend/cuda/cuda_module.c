/* The CUDA backend's module of embedded kernels: the target and cache key of the device, the on-disk
 * cache entry (read, checked, written), compiling on a miss and loading with cuModuleLoadData (see
 * cuda_module.h). */
#include "backend/cuda/cuda_module.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/cuda_compile.h"
#include "core/disk_cache.h"
#include "core/env.h"
#include "core/error.h"
#include "core/sha256.h"

#define CACHE_KIND "cuda"
#define MAGIC "TBCUMOD1"
#define SOURCE_NAME "tb_kernels.cu"
enum { HEADER_BYTES = 32 };

static _Atomic(unsigned long) n_compiles, n_ptx, n_hits, n_rejected, n_writes;
static _Atomic(const char *) test_source;

void tb_cuda_module_test_source(const char *source) { atomic_store(&test_source, source); }

void tb_cuda_module_stats_get(tb_cuda_module_stats *out) {
  out->compiles = atomic_load(&n_compiles);
  out->ptx_compiles = atomic_load(&n_ptx);
  out->cache_hits = atomic_load(&n_hits);
  out->cache_rejected = atomic_load(&n_rejected);
  out->cache_writes = atomic_load(&n_writes);
}

static const char *source_text(size_t *len) {
  const char *s = atomic_load(&test_source);
  if (s) {
    *len = strlen(s);
    return s;
  }
  *len = tb_cuda_kernel_source_len;
  return (const char *)tb_cuda_kernel_source;
}

static uint64_t fnv1a(const void *data, size_t n) {
  const unsigned char *p = data;
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* What the device's module is built for: everything the key covers. */
typedef struct module_plan {
  tb_nvrtc_api nvrtc;
  tb_cuda_target target;
  int driver_version;
  const char *source;
  size_t source_len;
  char key[64];
} module_plan;

static tb_status driver_failed(const cuda_state *s, const char *call, const char *what, tb_cu_result r) {
  char name[64];
  tb_cuda_api_error_name(&s->api, r, name, sizeof name);
  return tb_error(r == 2 ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER, "%s: %s%s failed with %d %s; %s", s->base.label, call,
                  what, r, name, tb_cuda_error_fix(r));
}

static tb_status have_symbols(const cuda_state *s) {
  const char *missing = !s->api.cuModuleLoadData      ? "cuModuleLoadData"
                        : !s->api.cuModuleGetFunction ? "cuModuleGetFunction"
                        : !s->api.cuModuleUnload      ? "cuModuleUnload"
                        : !s->api.cuLaunchKernel      ? "cuLaunchKernel"
                                                      : NULL;
  if (!missing) return TB_OK;
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: the loaded libcuda does not export %s, which running kernels needs; update the NVIDIA driver "
                  "(or point TB_CUDA_LIB at a current libcuda.so.1)",
                  s->base.label, missing);
}

static void make_key(module_plan *p) {
  char head[256];
  int n = snprintf(head, sizeof head, "arch=%d code=%d kind=%d nvrtc=%d.%d driver=%d", p->target.arch,
                   p->target.code_arch, (int)p->target.kind, p->nvrtc.major, p->nvrtc.minor, p->driver_version);
  tb_sha256 h;
  tb_sha256_init(&h);
  tb_sha256_update(&h, head, (size_t)n + 1);
  tb_sha256_update(&h, p->target.option, strlen(p->target.option) + 1);
  for (int i = 0; i < tb_cuda_compile_option_count; i++)
    tb_sha256_update(&h, tb_cuda_compile_options[i], strlen(tb_cuda_compile_options[i]) + 1);
  tb_sha256_update(&h, p->source, p->source_len);
  uint8_t digest[32];
  tb_sha256_final(&h, digest);
  snprintf(p->key, sizeof p->key, "sm_%d-%02x%02x%02x%02x%02x%02x%02x%02x.bin", p->target.arch, digest[0], digest[1],
           digest[2], digest[3], digest[4], digest[5], digest[6], digest[7]);
}

/* NVRTC, the compute capability, the driver version, the target and the key. */
static tb_status make_plan(cuda_state *s, module_plan *p) {
  memset(p, 0, sizeof *p);
  int major = 0, minor = 0;
  tb_cu_result r = s->api.cuDeviceGetAttribute(&major, TB_CU_ATTR_COMPUTE_MAJOR, s->device);
  if (r == TB_CUDA_SUCCESS) r = s->api.cuDeviceGetAttribute(&minor, TB_CU_ATTR_COMPUTE_MINOR, s->device);
  if (r != TB_CUDA_SUCCESS) return driver_failed(s, "cuDeviceGetAttribute", " (compute capability)", r);
  if ((r = s->api.cuDriverGetVersion(&p->driver_version)) != TB_CUDA_SUCCESS)
    return driver_failed(s, "cuDriverGetVersion", "", r);
  tb_status st = tb_nvrtc_open(&p->nvrtc, s->base.label);
  if (st == TB_OK) st = tb_cuda_target_for(&p->nvrtc, s->base.label, major, minor, &p->target);
  if (st != TB_OK) return st;
  p->source = source_text(&p->source_len);
  make_key(p);
  return TB_OK;
}

tb_status tb_cuda_module_cache_key(cuda_state *s, char *buf, size_t cap) {
  module_plan p;
  tb_status st = make_plan(s, &p);
  if (st == TB_OK) snprintf(buf, cap, "%s", p.key);
  return st;
}

/* cuModuleLoadData with the backend's context current. */
static tb_cu_result load_image(cuda_state *s, const void *image, tb_cu_module *module) {
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return r;
  *module = NULL;
  r = s->api.cuModuleLoadData(module, image);
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  return r;
}

/* Why an entry is unusable, or NULL when it passes the check. */
static const char *entry_problem(const unsigned char *data, size_t size, const module_plan *p) {
  if (size <= HEADER_BYTES || memcmp(data, MAGIC, 8) != 0) return "not a TensorBridge CUDA module entry";
  if (get_u64(data + 8) != (uint64_t)p->target.kind) return "an image of another kind";
  uint64_t n = get_u64(data + 16);
  if (n != size - HEADER_BYTES) return "truncated or grown";
  if (get_u64(data + 24) != fnv1a(data + HEADER_BYTES, (size_t)n)) return "its checksum does not match";
  if (p->target.kind == TB_CUDA_IMAGE_PTX && data[size - 1] != '\0') return "PTX without its end";
  return NULL;
}

static void reject(cuda_state *s, const module_plan *p, const char *why) {
  char dir[4096] = "";
  tb_disk_cache_dir(CACHE_KIND, dir, sizeof dir);
  atomic_fetch_add(&n_rejected, 1);
  tb_log(TB_LOG_WARN, "%s: the cached CUDA module %s/%s is unusable (%s); compiling the kernels again", s->base.label, dir,
         p->key, why);
}

/* The module from the cache entry, or NULL (a miss; an unusable entry is counted and logged). */
static tb_cu_module load_cached(cuda_state *s, const module_plan *p) {
  void *data = NULL;
  size_t size = 0;
  if (tb_disk_cache_read(CACHE_KIND, p->key, &data, &size) != TB_OK) return NULL;
  tb_cu_module module = NULL;
  const char *problem = entry_problem(data, size, p);
  if (problem) {
    reject(s, p, problem);
  } else {
    tb_cu_result r = load_image(s, (const unsigned char *)data + HEADER_BYTES, &module);
    if (r != TB_CUDA_SUCCESS) {
      char name[64], why[128];
      tb_cuda_api_error_name(&s->api, r, name, sizeof name);
      snprintf(why, sizeof why, "cuModuleLoadData refused it with %d %s", r, name);
      reject(s, p, why);
      module = NULL;
    } else {
      atomic_fetch_add(&n_hits, 1);
    }
  }
  free(data);
  return module;
}

static void store(cuda_state *s, const module_plan *p, const tb_cuda_image *image) {
  unsigned char *entry = malloc(HEADER_BYTES + image->size);
  if (!entry) return;
  memcpy(entry, MAGIC, 8);
  put_u64(entry + 8, (uint64_t)image->kind);
  put_u64(entry + 16, image->size);
  put_u64(entry + 24, fnv1a(image->data, image->size));
  memcpy(entry + HEADER_BYTES, image->data, image->size);
  if (tb_disk_cache_write(CACHE_KIND, p->key, entry, HEADER_BYTES + image->size) == TB_OK)
    atomic_fetch_add(&n_writes, 1);
  else
    tb_log(TB_LOG_INFO, "%s: CUDA module not cached: %s", s->base.label, tb_last_error());
  free(entry);
}

static tb_status compile_and_load(cuda_state *s, const module_plan *p, tb_cu_module *out) {
  tb_cuda_image image;
  tb_status st = tb_cuda_compile(&p->nvrtc, s->base.label, SOURCE_NAME, p->source, p->source_len, &p->target, &image);
  if (st != TB_OK) return st;
  atomic_fetch_add(&n_compiles, 1);
  if (image.kind == TB_CUDA_IMAGE_PTX) atomic_fetch_add(&n_ptx, 1);
  tb_cu_result r = load_image(s, image.data, out);
  if (r != TB_CUDA_SUCCESS) {
    char name[64];
    tb_cuda_api_error_name(&s->api, r, name, sizeof name);
    st = tb_error(r == 2 ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER,
                  "%s: cuModuleLoadData of the kernels NVRTC %d.%d compiled for sm_%d (%s of %zu bytes, %s) failed with "
                  "%d %s; the driver supports CUDA %d.%d: %s",
                  s->base.label, p->nvrtc.major, p->nvrtc.minor, p->target.arch,
                  image.kind == TB_CUDA_IMAGE_CUBIN ? "a cubin" : "PTX", image.size, p->target.option, r, name,
                  p->driver_version / 1000, p->driver_version % 1000 / 10,
                  p->driver_version / 1000 * 100 + p->driver_version % 1000 / 10 < p->nvrtc.major * 100 + p->nvrtc.minor
                      ? "update the NVIDIA driver, which is older than NVRTC, or point TB_NVRTC_LIB at an NVRTC no "
                        "newer than the driver"
                      : tb_cuda_error_fix(r));
    *out = NULL;
  } else {
    store(s, p, &image);
  }
  free(image.data);
  return st;
}

static tb_status make_module(cuda_state *s) {
  tb_status st = have_symbols(s);
  module_plan *p = st == TB_OK ? malloc(sizeof *p) : NULL;
  if (st == TB_OK && !p) st = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory loading the CUDA kernels", s->base.label);
  if (st == TB_OK) st = make_plan(s, p);
  if (st == TB_OK) {
    s->module = load_cached(s, p);
    if (!s->module) st = compile_and_load(s, p, &s->module);
  }
  free(p);
  return st;
}

tb_status tb_cuda_module_get(cuda_state *s, tb_cu_module *out) {
  pthread_mutex_lock(&s->module_lock);
  tb_status st = s->module ? TB_OK : make_module(s);
  *out = s->module;
  pthread_mutex_unlock(&s->module_lock);
  return st;
}

tb_status tb_cuda_module_function(cuda_state *s, const char *name, tb_cu_function *out) {
  *out = NULL;
  if (!name || !name[0]) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a CUDA kernel needs a name", s->base.label);
  tb_cu_module module = NULL;
  tb_status st = tb_cuda_module_get(s, &module);
  if (st != TB_OK) return st;
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return driver_failed(s, "cuCtxPushCurrent_v2", "", r);
  r = s->api.cuModuleGetFunction(out, module, name);
  tb_cu_context popped = NULL;
  s->api.cuCtxPopCurrent_v2(&popped);
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  *out = NULL;
  if (r == 500) /* CUDA_ERROR_NOT_FOUND */
    return tb_error(TB_ERR_NOT_FOUND, "%s: the CUDA kernels have no function '%s' (cuModuleGetFunction returned 500 "
                    "CUDA_ERROR_NOT_FOUND); use one of the names in src/backend/cuda/kernels/", s->base.label, name);
  char what[160];
  snprintf(what, sizeof what, " of '%s'", name);
  return driver_failed(s, "cuModuleGetFunction", what, r);
}

void tb_cuda_module_release(cuda_state *s) {
  if (!s->module) return;
  if (s->api.cuCtxPushCurrent_v2(s->ctx) == TB_CUDA_SUCCESS) {
    s->api.cuModuleUnload(s->module);
    tb_cu_context popped = NULL;
    s->api.cuCtxPopCurrent_v2(&popped);
  }
  s->module = NULL;
}
