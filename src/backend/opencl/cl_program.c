/* Building the kernels' program per device, with program binaries cached on disk (see cl_program.h).
 * A cache entry is "TBCLBIN1", the binary's size and its FNV-1a 64 checksum (little-endian u64 each),
 * then the binary; anything else is rejected and rebuilt. */
#include "backend/opencl/cl_program.h"
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/disk_cache.h"
#include "core/env.h"
#include "core/error.h"
#include "runtime/opencl_query.h"

extern const unsigned char tb_cl_kernel_source[];
extern const size_t tb_cl_kernel_source_len;

#define CACHE_KIND "opencl"
#define MAGIC "TBCLBIN1"
enum { HEADER_BYTES = 24, LOG_EXCERPT = 480 };

static _Atomic(unsigned long) n_builds, n_hits, n_rejected, n_writes;
static _Atomic(const char *) test_source;

void tb_cl_program_test_source(const char *source) { atomic_store(&test_source, source); }

void tb_cl_program_stats_get(tb_cl_program_stats *out) {
  out->source_builds = atomic_load(&n_builds);
  out->cache_hits = atomic_load(&n_hits);
  out->cache_rejected = atomic_load(&n_rejected);
  out->cache_writes = atomic_load(&n_writes);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
#define FNV_START 14695981039346656037ull

static const char *source_text(size_t *len) {
  const char *s = atomic_load(&test_source);
  if (s) {
    *len = strlen(s);
    return s;
  }
  *len = tb_cl_kernel_source_len;
  return (const char *)tb_cl_kernel_source;
}

int tb_cl_program_tile(const tb_cl_device *dev) {
  return dev->max_work_group == 0 || dev->max_work_group >= 256 ? 16 : dev->max_work_group >= 64 ? 8 : 4;
}

static void build_options(const tb_cl_device *dev, char *buf, size_t cap) {
  bool cl12 = dev->version_major > 1 || (dev->version_major == 1 && dev->version_minor >= 2);
  snprintf(buf, cap, "%s-DTB_TS=%d%s", cl12 ? "-cl-std=CL1.2 " : "", tb_cl_program_tile(dev), dev->fp16 ? " -DTB_HAS_FP16" : "");
}

void tb_cl_program_cache_key(const tb_cl_device *dev, char *buf, size_t cap) {
  size_t len = 0;
  const char *src = source_text(&len);
  char options[128];
  build_options(dev, options, sizeof options);
  uint64_t h = FNV_START;
  h = fnv1a(h, dev->device_name, strlen(dev->device_name) + 1);
  h = fnv1a(h, dev->driver_version, strlen(dev->driver_version) + 1);
  h = fnv1a(h, options, strlen(options) + 1);
  uint64_t src_hash = fnv1a(FNV_START, src, len);
  h = fnv1a(h, &src_hash, sizeof src_hash);
  char name[48];
  size_t n = 0;
  for (const char *c = dev->device_name; *c && n + 1 < sizeof name; c++) {
    bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
    if (plain || n == 0 || name[n - 1] != '_') name[n++] = plain ? *c : '_';
  }
  name[n] = '\0';
  snprintf(buf, cap, "%s-%016llx.bin", n ? name : "device", (unsigned long long)h);
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* The start of the build log, newlines flattened, into buf. */
static void build_log(const tb_cl_device *dev, tb_cl_program prog, char *buf, size_t cap) {
  buf[0] = '\0';
  size_t size = 0;
  if (dev->rt.cl.clGetProgramBuildInfo(prog, dev->id, TB_CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != TB_CL_SUCCESS || size == 0)
    return;
  char *log = malloc(size + 1);
  if (!log) return;
  if (dev->rt.cl.clGetProgramBuildInfo(prog, dev->id, TB_CL_PROGRAM_BUILD_LOG, size, log, NULL) == TB_CL_SUCCESS) {
    log[size] = '\0';
    size_t o = 0;
    for (const char *c = log; *c && o + 1 < cap; c++) {
      char ch = (*c == '\n' || *c == '\r' || *c == '\t') ? ' ' : *c;
      if (ch == ' ' && o > 0 && buf[o - 1] == ' ') continue;
      buf[o++] = ch;
    }
    buf[o] = '\0';
  }
  free(log);
}

static tb_status build_from_source(tb_cl_device *dev, const char *who, const char *options, tb_cl_program *out) {
  size_t len = 0;
  const char *src = source_text(&len);
  tb_cl_int err = TB_CL_SUCCESS;
  tb_cl_program prog = dev->rt.cl.clCreateProgramWithSource(dev->context, 1, &src, &len, &err);
  if (!prog || err != TB_CL_SUCCESS) {
    char detail[160];
    snprintf(detail, sizeof detail, "kernels for %s, %zu bytes of OpenCL C", who, len);
    return tb_cl_fail(dev, "clCreateProgramWithSource", detail, err != TB_CL_SUCCESS ? err : TB_CL_INVALID_VALUE);
  }
  err = dev->rt.cl.clBuildProgram(prog, 1, &dev->id, options, NULL, NULL);
  atomic_fetch_add(&n_builds, 1);
  if (err != TB_CL_SUCCESS) {
    char log[LOG_EXCERPT], code[96];
    build_log(dev, prog, log, sizeof log);
    tb_cl_exec_code_text(err, code, sizeof code);
    dev->rt.cl.clReleaseProgram(prog);
    return tb_error(TB_ERR_DRIVER, "%s: building the OpenCL kernels for %s failed: clBuildProgram (options '%s') returned %s; "
                    "build log: %s; update the OpenCL driver, or run on another backend (the CPU runs every op)",
                    dev->label, who, options, code, log[0] ? log : "(empty)");
  }
  *out = prog;
  return TB_OK;
}

/* The binary of a built program, as a cache entry (header + bytes) in a malloc'd buffer. */
static bool program_entry(const tb_cl_device *dev, tb_cl_program prog, unsigned char **entry, size_t *entry_size) {
  size_t size = 0;
  if (dev->rt.cl.clGetProgramInfo(prog, TB_CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != TB_CL_SUCCESS || size == 0)
    return false;
  unsigned char *buf = malloc(HEADER_BYTES + size);
  if (!buf) return false;
  unsigned char *bin = buf + HEADER_BYTES;
  if (dev->rt.cl.clGetProgramInfo(prog, TB_CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != TB_CL_SUCCESS) {
    free(buf);
    return false;
  }
  memcpy(buf, MAGIC, 8);
  put_u64(buf + 8, size);
  put_u64(buf + 16, fnv1a(FNV_START, bin, size));
  *entry = buf;
  *entry_size = HEADER_BYTES + size;
  return true;
}

static bool entry_valid(const unsigned char *data, size_t size) {
  if (size <= HEADER_BYTES || memcmp(data, MAGIC, 8) != 0) return false;
  uint64_t n = get_u64(data + 8);
  return n == size - HEADER_BYTES && get_u64(data + 16) == fnv1a(FNV_START, data + HEADER_BYTES, n);
}

/* A program from the cached binary, or NULL (a miss; a bad entry is counted and logged). */
static tb_cl_program load_cached(tb_cl_device *dev, const char *key, const char *options) {
  void *data = NULL;
  size_t size = 0;
  if (tb_disk_cache_read(CACHE_KIND, key, &data, &size) != TB_OK) return NULL;
  tb_cl_program prog = NULL;
  if (entry_valid(data, size)) {
    const unsigned char *bin = (const unsigned char *)data + HEADER_BYTES;
    size_t bin_size = size - HEADER_BYTES;
    tb_cl_int status = TB_CL_SUCCESS, err = TB_CL_SUCCESS;
    prog = dev->rt.cl.clCreateProgramWithBinary(dev->context, 1, &dev->id, &bin_size, &bin, &status, &err);
    if (prog && (err != TB_CL_SUCCESS || status != TB_CL_SUCCESS ||
                 dev->rt.cl.clBuildProgram(prog, 1, &dev->id, options, NULL, NULL) != TB_CL_SUCCESS)) {
      dev->rt.cl.clReleaseProgram(prog);
      prog = NULL;
    }
  }
  free(data);
  if (prog) {
    atomic_fetch_add(&n_hits, 1);
  } else {
    atomic_fetch_add(&n_rejected, 1);
    tb_log(TB_LOG_WARN, "%s: the cached OpenCL program %s is corrupt or was refused by the driver; rebuilding it", dev->label, key);
  }
  return prog;
}

static void store(tb_cl_device *dev, const char *key, tb_cl_program prog) {
  unsigned char *entry = NULL;
  size_t size = 0;
  if (!program_entry(dev, prog, &entry, &size)) return;
  if (tb_disk_cache_write(CACHE_KIND, key, entry, size) == TB_OK) atomic_fetch_add(&n_writes, 1);
  else tb_log(TB_LOG_INFO, "%s: OpenCL program not cached: %s", dev->label, tb_last_error());
  free(entry);
}

static tb_status make_program(tb_cl_device *dev, const char *who) {
  if (!dev->rt.cl.clCreateProgramWithSource || !dev->rt.cl.clBuildProgram || !dev->rt.cl.clCreateKernel ||
      !dev->rt.cl.clSetKernelArg || !dev->rt.cl.clEnqueueNDRangeKernel || !dev->rt.cl.clReleaseProgram ||
      !dev->rt.cl.clReleaseKernel || !dev->rt.cl.clGetProgramBuildInfo || !dev->rt.cl.clGetProgramInfo ||
      !dev->rt.cl.clCreateProgramWithBinary)
    return tb_error(TB_ERR_UNAVAILABLE, "%s: %s does not export the OpenCL program and kernel calls (clBuildProgram, "
                    "clCreateKernel, ...), so %s cannot run on the device; install a complete ICD loader "
                    "(ocl-icd-libopencl1)", dev->label, dev->rt.path, who);
  char options[128], key[128];
  build_options(dev, options, sizeof options);
  tb_cl_program_cache_key(dev, key, sizeof key);
  tb_cl_program prog = load_cached(dev, key, options);
  if (prog) {
    dev->program = prog;
    return TB_OK;
  }
  tb_status s = build_from_source(dev, who, options, &prog);
  if (s != TB_OK) return s;
  store(dev, key, prog);
  dev->program = prog;
  return TB_OK;
}

tb_status tb_cl_program_get(tb_cl_device *dev, const char *who, tb_cl_program *out) {
  pthread_mutex_lock(&dev->program_lock);
  tb_status s = dev->program ? TB_OK : make_program(dev, who);
  *out = dev->program;
  pthread_mutex_unlock(&dev->program_lock);
  return s;
}

tb_status tb_cl_kernel_create(tb_cl_device *dev, const char *who, const char *name, tb_cl_kernel *out) {
  *out = NULL;
  tb_cl_program prog = NULL;
  tb_status s = tb_cl_program_get(dev, who, &prog);
  if (s != TB_OK) return s;
  tb_cl_int err = TB_CL_SUCCESS;
  tb_cl_kernel k = dev->rt.cl.clCreateKernel(prog, name, &err);
  if (!k || err != TB_CL_SUCCESS) {
    char detail[160];
    snprintf(detail, sizeof detail, "kernel %s for %s", name, who);
    return tb_cl_fail(dev, "clCreateKernel", detail, err != TB_CL_SUCCESS ? err : TB_CL_INVALID_VALUE);
  }
  *out = k;
  return TB_OK;
}

void tb_cl_program_release(tb_cl_device *dev) {
  if (dev->program && dev->rt.cl.clReleaseProgram) dev->rt.cl.clReleaseProgram(dev->program);
  dev->program = NULL;
}
