/* The OpenCL backend's memory ops (tb_opencl_ops): buffers from clCreateBuffer, blocking reads and
 * writes at offsets, device-to-device copies and fills on the device's in-order queue, clFinish, and
 * the memory the driver reports. Offsets are bytes into a cl_mem (the caching allocator's blocks).
 * Buffers are counted against CL_DEVICE_GLOBAL_MEM_SIZE, because drivers that allocate on first use
 * (PoCL, NVIDIA) accept any total in clCreateBuffer. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/opencl/cl_device.h"
#include "backend/opencl/cl_event.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "runtime/opencl_query.h"

/* kernels/cl_registry.c */
const struct tb_kernel *tb_cl_find_kernel(void *state, const struct tb_kernel_query *q);

#define FILL_CHUNK ((size_t)1 << 20) /* host staging for fills when the driver has no clEnqueueFillBuffer */

static tb_status cl_open(const tb_device_info *device, void **state) {
  *state = NULL;
  tb_cl_device *dev = calloc(1, sizeof *dev);
  if (!dev) return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory opening %s", device && device->device ? device->device : "an OpenCL device");
  tb_status s = tb_cl_device_open(device, dev);
  if (s != TB_OK) {
    free(dev);
    return s;
  }
  *state = dev;
  return TB_OK;
}

static void cl_close(void *state) {
  tb_cl_device *dev = state;
  if (!dev) return;
  if (dev->queue && !atomic_load(&dev->queue_failed)) dev->rt.cl.clFinish(dev->queue);
  tb_cl_device_close(dev);
  free(dev);
}

static size_t cl_alignment(void *state) { return ((tb_cl_device *)state)->alignment; }

static tb_status alloc_failed(tb_cl_device *dev, size_t bytes, tb_cl_int err) {
  char code[96];
  tb_cl_code_text(err, code, sizeof code);
  unsigned long long max_alloc = dev->max_alloc, global = dev->global_mem;
  if (err == TB_CL_INVALID_BUFFER_SIZE || (dev->max_alloc && bytes > dev->max_alloc))
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: clCreateBuffer of %zu bytes failed with %s: the largest single allocation "
                    "is %llu bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE) of %llu bytes of global memory; allocate at most "
                    "%llu bytes at a time (split the tensor)", dev->label, bytes, code, max_alloc, global, max_alloc);
  if (err == TB_CL_MEM_OBJECT_ALLOCATION_FAILURE || err == TB_CL_OUT_OF_RESOURCES)
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: clCreateBuffer of %zu bytes failed with %s: device memory is exhausted "
                    "(%llu bytes of global memory, largest single allocation %llu bytes); free device memory "
                    "(release tensors, tb_backend_empty_cache) or use smaller tensors", dev->label, bytes, code, global, max_alloc);
  char detail[64];
  snprintf(detail, sizeof detail, "%zu bytes, CL_MEM_READ_WRITE", bytes);
  return tb_cl_fail(dev, "clCreateBuffer", detail, err);
}

/* Reserve `bytes` of the device's global memory for a new buffer, or refuse when the buffers this
 * backend holds would exceed it: OpenCL has no free-memory query, and drivers that allocate on first
 * use would otherwise accept any total and fail (or, for a CPU device, exhaust the host) later. */
static tb_status reserve(tb_cl_device *dev, size_t bytes) {
  uint64_t total = dev->global_mem, live = atomic_load(&dev->live_bytes);
  do {
    if (total && (bytes > total || live > total - bytes))
      return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: an allocation of %zu bytes does not fit: %llu bytes are already allocated "
                      "of the device's %llu bytes (CL_DEVICE_GLOBAL_MEM_SIZE); free device memory (release tensors, "
                      "tb_backend_empty_cache) or use smaller tensors", dev->label, bytes, (unsigned long long)live,
                      (unsigned long long)total);
  } while (!atomic_compare_exchange_weak(&dev->live_bytes, &live, live + bytes));
  return TB_OK;
}

/* On a device whose memory is host memory (PoCL), the buffer must fit what the process can still take: the
 * driver takes the memory only when the buffer is first used, and asserts (aborts the process) when it
 * cannot. The buffer, plus the driver's own bookkeeping then (an eighth, and 8 MiB). */
static tb_status host_room(const tb_cl_device *dev, size_t bytes) {
  uint64_t room = 0;
  double need = (double)bytes * 1.125 + (double)(8u << 20);
  if (!dev->host_memory || !tb_host_memory_room(&room) || need <= (double)room) return TB_OK;
  return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: an allocation of %zu bytes does not fit the %llu bytes of host memory this "
                  "process can still take (MemAvailable, RLIMIT_AS); this device's memory is host memory, which its driver "
                  "takes only when the buffer is first used (and aborts the process if it cannot): free memory, raise the "
                  "limit or use smaller tensors", dev->label, bytes, (unsigned long long)room);
}

static tb_status cl_alloc(void *state, size_t bytes, tb_devmem *out) {
  tb_cl_device *dev = state;
  out->handle = NULL;
  out->size = 0;
  if (bytes == 0) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: an allocation of 0 bytes was asked for", dev->label);
  tb_cl_int err = TB_CL_SUCCESS;
  tb_cl_mem mem = dev->rt.cl.clCreateBuffer(dev->context, TB_CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (!mem || err != TB_CL_SUCCESS) return alloc_failed(dev, bytes, err != TB_CL_SUCCESS ? err : TB_CL_MEM_OBJECT_ALLOCATION_FAILURE);
  tb_status s = reserve(dev, bytes);
  if (s == TB_OK && (s = host_room(dev, bytes)) != TB_OK) atomic_fetch_sub(&dev->live_bytes, bytes);
  if (s != TB_OK) {
    dev->rt.cl.clReleaseMemObject(mem);
    return s;
  }
  out->handle = mem;
  out->size = bytes;
  return TB_OK;
}

static void cl_free(void *state, tb_devmem mem) {
  tb_cl_device *dev = state;
  if (!mem.handle) return;
  dev->rt.cl.clReleaseMemObject((tb_cl_mem)mem.handle);
  atomic_fetch_sub(&dev->live_bytes, mem.size);
}

/* [offset, offset + bytes) inside an allocation of `size` bytes. */
static tb_status check_range(const tb_cl_device *dev, const char *what, tb_devmem mem, size_t offset, size_t bytes) {
  if (!mem.handle) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %s of a NULL buffer", dev->label, what);
  if (offset > mem.size || bytes > mem.size - offset)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %s of %zu bytes at offset %zu is outside the %zu-byte buffer", dev->label,
                    what, bytes, offset, mem.size);
  return TB_OK;
}

static tb_status cl_write(void *state, tb_devmem dst, size_t dst_offset, const void *src, size_t bytes) {
  tb_cl_device *dev = state;
  tb_status s = check_range(dev, "write", dst, dst_offset, bytes);
  if (s == TB_OK) s = tb_cl_queue_check(dev, "a write");
  if (s != TB_OK || bytes == 0) return s;
  tb_cl_int err = dev->rt.cl.clEnqueueWriteBuffer(dev->queue, (tb_cl_mem)dst.handle, TB_CL_TRUE, dst_offset, bytes, src, 0, NULL, NULL);
  if (err == TB_CL_SUCCESS) return TB_OK;
  char detail[96];
  snprintf(detail, sizeof detail, "%zu bytes at offset %zu", bytes, dst_offset);
  return tb_cl_queue_fail(dev, "clEnqueueWriteBuffer", detail, err);
}

static tb_status cl_read(void *state, tb_devmem src, size_t src_offset, void *dst, size_t bytes) {
  tb_cl_device *dev = state;
  tb_status s = check_range(dev, "read", src, src_offset, bytes);
  if (s == TB_OK) s = tb_cl_queue_check(dev, "a read");
  if (s != TB_OK || bytes == 0) return s;
  tb_cl_int err = dev->rt.cl.clEnqueueReadBuffer(dev->queue, (tb_cl_mem)src.handle, TB_CL_TRUE, src_offset, bytes, dst, 0, NULL, NULL);
  if (err == TB_CL_SUCCESS) return TB_OK;
  char detail[96];
  snprintf(detail, sizeof detail, "%zu bytes at offset %zu", bytes, src_offset);
  return tb_cl_queue_fail(dev, "clEnqueueReadBuffer", detail, err);
}

/* Wait for one enqueued command and release its event. */
static tb_status wait_event(tb_cl_device *dev, const char *call, const char *detail, tb_cl_event event) {
  tb_cl_int err = dev->rt.cl.clWaitForEvents(1, &event);
  dev->rt.cl.clReleaseEvent(event);
  if (err == TB_CL_SUCCESS) return TB_OK;
  char what[160];
  snprintf(what, sizeof what, "clWaitForEvents after %s", call);
  return tb_cl_queue_fail(dev, what, detail, err);
}

static tb_status cl_copy(void *state, tb_devmem dst, size_t dst_offset, tb_devmem src, size_t src_offset, size_t bytes) {
  tb_cl_device *dev = state;
  tb_status s = check_range(dev, "copy destination", dst, dst_offset, bytes);
  if (s == TB_OK) s = check_range(dev, "copy source", src, src_offset, bytes);
  if (s == TB_OK) s = tb_cl_queue_check(dev, "a copy");
  if (s != TB_OK || bytes == 0) return s;
  if (dst.handle == src.handle && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: copy of %zu bytes from offset %zu to offset %zu of the same buffer overlaps; "
                    "OpenCL does not copy overlapping ranges: go through a second buffer", dev->label, bytes, src_offset, dst_offset);
  char detail[128];
  snprintf(detail, sizeof detail, "%zu bytes from offset %zu to offset %zu", bytes, src_offset, dst_offset);
  tb_cl_event event = NULL;
  tb_cl_int err = dev->rt.cl.clEnqueueCopyBuffer(dev->queue, (tb_cl_mem)src.handle, (tb_cl_mem)dst.handle, src_offset,
                                                 dst_offset, bytes, 0, NULL, &event);
  if (err != TB_CL_SUCCESS) return tb_cl_queue_fail(dev, "clEnqueueCopyBuffer", detail, err);
  return wait_event(dev, "clEnqueueCopyBuffer", detail, event);
}

/* Without clEnqueueFillBuffer (OpenCL 1.1): write the repeated pattern from a host buffer. */
static tb_status fill_from_host(tb_cl_device *dev, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size,
                                size_t bytes) {
  size_t chunk = bytes < FILL_CHUNK ? bytes : FILL_CHUNK;
  unsigned char *buf = malloc(chunk);
  if (!buf) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for a %zu-byte fill buffer", dev->label, chunk);
  for (size_t i = 0; i < chunk; i += pattern_size) memcpy(buf + i, pattern, pattern_size);
  tb_status s = TB_OK;
  for (size_t done = 0; done < bytes && s == TB_OK; done += chunk) {
    size_t n = bytes - done < chunk ? bytes - done : chunk;
    s = cl_write(dev, dst, offset + done, buf, n);
  }
  free(buf);
  return s;
}

static tb_status cl_fill(void *state, tb_devmem dst, size_t offset, const void *pattern, size_t pattern_size, size_t bytes) {
  tb_cl_device *dev = state;
  if (!pattern || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: fill pattern of %zu bytes; use 1, 2, 4 or 8", dev->label, pattern_size);
  if (offset % pattern_size || bytes % pattern_size)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: fill of %zu bytes at offset %zu is not a whole number of %zu-byte patterns",
                    dev->label, bytes, offset, pattern_size);
  tb_status s = check_range(dev, "fill", dst, offset, bytes);
  if (s == TB_OK) s = tb_cl_queue_check(dev, "a fill");
  if (s != TB_OK || bytes == 0) return s;
  if (!dev->fill) return fill_from_host(dev, dst, offset, pattern, pattern_size, bytes);
  char detail[128];
  snprintf(detail, sizeof detail, "%zu bytes at offset %zu with a %zu-byte pattern", bytes, offset, pattern_size);
  tb_cl_event event = NULL;
  tb_cl_int err = dev->rt.cl.clEnqueueFillBuffer(dev->queue, (tb_cl_mem)dst.handle, pattern, pattern_size, offset, bytes, 0,
                                                 NULL, &event);
  if (err != TB_CL_SUCCESS) return tb_cl_queue_fail(dev, "clEnqueueFillBuffer", detail, err);
  return wait_event(dev, "clEnqueueFillBuffer", detail, event);
}

static tb_status cl_synchronize(void *state) {
  tb_cl_device *dev = state;
  tb_status s = tb_cl_queue_check(dev, "synchronize"); /* never a clFinish on a failed queue: it can wait forever */
  if (s != TB_OK) return s;
  tb_cl_int err = dev->rt.cl.clFinish(dev->queue);
  if (err == TB_CL_SUCCESS) return TB_OK;
  return tb_cl_queue_fail(dev, "clFinish", "", err);
}

/* Total from CL_DEVICE_GLOBAL_MEM_SIZE; free only through AMD's attribute query (KiB), else unknown:
 * TB_ERR_UNSUPPORTED, with *total_bytes still filled in. */
static tb_status cl_memory_info(void *state, uint64_t *free_bytes, uint64_t *total_bytes) {
  tb_cl_device *dev = state;
  *free_bytes = 0;
  *total_bytes = dev->global_mem;
  if (dev->amd_free_memory) {
    size_t free_kib[2];
    tb_cl_int err = tb_cl_scalar(&dev->rt.info, (tb_cl_object){.platform = NULL, .device = dev->id},
                                 TB_CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, free_kib, sizeof free_kib);
    if (err == TB_CL_SUCCESS && free_kib[0] <= UINT64_MAX / 1024u) {
      *free_bytes = (uint64_t)free_kib[0] * 1024u;
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_UNSUPPORTED, "%s: the OpenCL driver does not report free memory (only AMD's "
                  "cl_amd_device_attribute_query does); total is %llu bytes (CL_DEVICE_GLOBAL_MEM_SIZE)",
                  dev->label, (unsigned long long)dev->global_mem);
}

const tb_backend_ops tb_opencl_ops = {
    .kind = TB_BACKEND_OPENCL,
    .open = cl_open,
    .close = cl_close,
    .alignment = cl_alignment,
    .alloc = cl_alloc,
    .free = cl_free,
    .write = cl_write,
    .read = cl_read,
    .copy = cl_copy,
    .fill = cl_fill,
    .synchronize = cl_synchronize,
    .memory_info = cl_memory_info,
    .event_create = tb_cl_event_create,
    .event_record = tb_cl_event_record,
    .event_synchronize = tb_cl_event_synchronize,
    .event_query = tb_cl_event_query,
    .event_elapsed_ms = tb_cl_event_elapsed_ms,
    .event_destroy = tb_cl_event_destroy,
    .find_kernel = tb_cl_find_kernel,
};
