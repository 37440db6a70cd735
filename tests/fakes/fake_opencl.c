/* A fake OpenCL ICD loader for the OpenCL probe's and the OpenCL backend's tests, loaded through
 * TB_OPENCL_LIB. It reports two platforms with five devices covering every type and PCI-location
 * extension, and misbehaves on request: TBT_FAKE_OPENCL=<mode> selects a driver error, a name without
 * its terminator, a huge reply, or a count that changes between calls. Contexts, queues and buffers
 * (host memory) are real enough for the backend's memory ops; fake_opencl_live() counts the objects
 * not yet released, and the exec modes below make context, queue, buffer and copy calls fail. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../src/runtime/opencl_exec_api.h"
#include "../../src/runtime/opencl_api.h"
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_OPENCL", "fake_opencl")

#define GIB (1024ull * 1024ull * 1024ull)

typedef struct fake_device {
  const char *name, *vendor, *extensions;
  tb_cl_bitfield type;
  tb_cl_uint units, vendor_id;
  tb_cl_ulong global_mem, max_alloc, fp64_config;
  tb_cl_bool unified;
  int pci_kind; /* 0 none, 1 cl_khr_pci_bus_info, 2 NVIDIA, 3 AMD */
  tb_cl_uint domain, bus, dev, fn;
  unsigned char uuid[16];
  size_t amd_free_kib;
  const char *version;       /* CL_DEVICE_VERSION; NULL: "OpenCL 3.0 FakeCL" */
  tb_cl_uint align_bits;     /* CL_DEVICE_MEM_BASE_ADDR_ALIGN; 0: not answered */
} fake_device;

typedef struct fake_platform {
  const char *name, *vendor, *version;
  fake_device *devices;
  tb_cl_uint count;
} fake_platform;

static fake_device alpha_devices[] = {
    {.name = "Fake Discrete GPU", .vendor = "Fake Vendor Inc.", .type = TB_CL_DEVICE_TYPE_GPU, .units = 40,
     .vendor_id = 0x1234, .global_mem = 16 * GIB, .max_alloc = 4 * GIB, .unified = 0,
     .extensions = "cl_khr_fp16 cl_khr_fp64 cl_khr_pci_bus_info cl_khr_device_uuid cl_khr_subgroups",
     .pci_kind = 1, .domain = 0, .bus = 0x3b, .dev = 0, .fn = 0,
     .uuid = {0x8c, 0x0f, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab},
     .align_bits = 4096},
    {.name = "Fake Integrated GPU", .vendor = "Intel(R) Corporation", .type = TB_CL_DEVICE_TYPE_GPU, .units = 96,
     .vendor_id = 0x8086, .global_mem = 12 * GIB, .max_alloc = 4 * GIB, .unified = 1, .fp64_config = 0x3f,
     .extensions = "cl_khr_fp16_extra cl_intel_subgroups"},
};

static fake_device beta_devices[] = {
    {.name = "NVIDIA Fake H100", .vendor = "NVIDIA Corporation", .type = TB_CL_DEVICE_TYPE_GPU, .units = 132,
     .vendor_id = 0x10de, .global_mem = 80 * GIB, .max_alloc = 20 * GIB, .unified = 0,
     .extensions = "cl_khr_fp64 cl_nv_device_attribute_query", .pci_kind = 2, .domain = 1, .bus = 0x65, .dev = 1, .fn = 0},
    {.name = "gfx942", .vendor = "Advanced Micro Devices, Inc.", .type = TB_CL_DEVICE_TYPE_GPU, .units = 304,
     .vendor_id = 0x1002, .global_mem = 192 * GIB, .max_alloc = 150 * GIB, .unified = 0,
     .extensions = "cl_khr_fp16 cl_khr_fp64 cl_amd_device_attribute_query", .pci_kind = 3, .bus = 0xc1, .dev = 0,
     .fn = 0, .amd_free_kib = 190ull * 1024 * 1024},
    {.name = "Fake Accelerator", .vendor = "Fake Vendor Inc.", .type = TB_CL_DEVICE_TYPE_ACCELERATOR, .units = 8,
     .global_mem = 8 * GIB, .max_alloc = 2 * GIB, .extensions = "", .version = "OpenCL 1.1 FakeCL", .align_bits = 1024},
};

static fake_platform platforms[] = {
    {"FakeCL Alpha", "TensorBridge fakes", "OpenCL 3.0 FakeCL 1.0", alpha_devices, 2},
    {"FakeCL Beta", "TensorBridge fakes", "OpenCL 1.2 FakeCL 2.0", beta_devices, 3},
};

/* Mode host_oom_hang: a write fails with CL_OUT_OF_HOST_MEMORY, and from then on clFinish on that queue
 * never returns (what PoCL did). A new queue starts sound. */
static bool queue_broken;

static bool mode(const char *name) {
  const char *m = getenv("TBT_FAKE_OPENCL");
  return m && strcmp(m, name) == 0;
}

static tb_cl_int reply(const void *data, size_t n, size_t size, void *value, size_t *size_ret) {
  if (size_ret) *size_ret = n;
  if (value) {
    if (size < n) return TB_CL_INVALID_VALUE;
    memcpy(value, data, n);
  }
  return TB_CL_SUCCESS;
}

static tb_cl_int reply_text(const char *s, size_t size, void *value, size_t *size_ret) {
  return reply(s, strlen(s) + 1, size, value, size_ret);
}

tb_cl_int clGetPlatformIDs(tb_cl_uint num_entries, tb_cl_platform_id *ids, tb_cl_uint *num_platforms);
tb_cl_int clGetPlatformIDs(tb_cl_uint num_entries, tb_cl_platform_id *ids, tb_cl_uint *num_platforms) {
  if (mode("no_icd")) return TB_CL_PLATFORM_NOT_FOUND_KHR;
  if (mode("platform_error")) return -6; /* CL_OUT_OF_HOST_MEMORY */
  tb_cl_uint count = mode("zero_platforms") ? 0 : 2;
  if (mode("platform_count_shrinks") && ids) count = 1; /* 2 when asked for the count, 1 when asked for the ids */
  if (num_platforms) *num_platforms = count;
  for (tb_cl_uint i = 0; ids && i < num_entries && i < count; i++) ids[i] = (tb_cl_platform_id)&platforms[i];
  return TB_CL_SUCCESS;
}

tb_cl_int clGetPlatformInfo(tb_cl_platform_id id, tb_cl_uint param, size_t size, void *value, size_t *size_ret);
tb_cl_int clGetPlatformInfo(tb_cl_platform_id id, tb_cl_uint param, size_t size, void *value, size_t *size_ret) {
  const fake_platform *p = (const fake_platform *)id;
  switch (param) {
    case TB_CL_PLATFORM_NAME: return reply_text(p->name, size, value, size_ret);
    case TB_CL_PLATFORM_VENDOR: return reply_text(p->vendor, size, value, size_ret);
    case TB_CL_PLATFORM_VERSION: return reply_text(p->version, size, value, size_ret);
    default: return TB_CL_INVALID_VALUE;
  }
}

tb_cl_int clGetDeviceIDs(tb_cl_platform_id id, tb_cl_bitfield type, tb_cl_uint num_entries, tb_cl_device_id *ids,
                         tb_cl_uint *num_devices);
tb_cl_int clGetDeviceIDs(tb_cl_platform_id id, tb_cl_bitfield type, tb_cl_uint num_entries, tb_cl_device_id *ids,
                         tb_cl_uint *num_devices) {
  const fake_platform *p = (const fake_platform *)id;
  if (type != TB_CL_DEVICE_TYPE_ALL) return -31; /* CL_INVALID_DEVICE_TYPE: the probe must ask for all */
  if (mode("no_devices")) return TB_CL_DEVICE_NOT_FOUND;
  if (mode("devices_error")) return -5; /* CL_OUT_OF_RESOURCES */
  tb_cl_uint count = p->count;
  if (mode("device_count_grows") && p == &platforms[0]) count = ids ? 3 : 1; /* a device appears between calls */
  if (num_devices) *num_devices = count;
  for (tb_cl_uint i = 0; ids && i < num_entries && i < count && i < p->count; i++) ids[i] = (tb_cl_device_id)&p->devices[i];
  return TB_CL_SUCCESS;
}

static tb_cl_int device_name(const fake_device *d, size_t size, void *value, size_t *size_ret) {
  bool first = d == &alpha_devices[0];
  if (first && mode("unterminated")) return reply(d->name, strlen(d->name), size, value, size_ret); /* no NUL */
  if (first && mode("huge_name")) {
    if (size_ret) *size_ret = (size_t)64 << 20;
    return value ? TB_CL_INVALID_VALUE : TB_CL_SUCCESS;
  }
  if (first && mode("name_error")) return -33; /* CL_INVALID_DEVICE */
  return reply_text(d->name, size, value, size_ret);
}

static tb_cl_int device_pci(const fake_device *d, tb_cl_uint param, size_t size, void *value, size_t *size_ret) {
  bool bad = mode("bad_pci") && d == &alpha_devices[0];
  if (param == TB_CL_DEVICE_PCI_BUS_INFO_KHR && d->pci_kind == 1) {
    tb_cl_device_pci_bus_info_khr info = {d->domain, d->bus, bad ? 40u : d->dev, d->fn};
    return reply(&info, sizeof info, size, value, size_ret);
  }
  if (d->pci_kind == 2) {
    tb_cl_uint v = param == TB_CL_DEVICE_PCI_BUS_ID_NV ? d->bus : param == TB_CL_DEVICE_PCI_SLOT_ID_NV ? (d->dev << 3) | d->fn : d->domain;
    if (param == TB_CL_DEVICE_PCI_BUS_ID_NV || param == TB_CL_DEVICE_PCI_SLOT_ID_NV || param == TB_CL_DEVICE_PCI_DOMAIN_ID_NV)
      return reply(&v, sizeof v, size, value, size_ret);
  }
  if (param == TB_CL_DEVICE_TOPOLOGY_AMD && d->pci_kind == 3) {
    tb_cl_device_topology_amd topo;
    memset(&topo, 0, sizeof topo);
    topo.pcie.type = TB_CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD;
    topo.pcie.bus = (signed char)d->bus; /* 0xc1 is negative as a cl_char */
    topo.pcie.device = (signed char)d->dev;
    topo.pcie.function = (signed char)d->fn;
    return reply(&topo, sizeof topo, size, value, size_ret);
  }
  if (param == TB_CL_DEVICE_GLOBAL_FREE_MEMORY_AMD && d->pci_kind == 3) {
    size_t free_kib[2] = {d->amd_free_kib, d->amd_free_kib / 2};
    return reply(free_kib, sizeof free_kib, size, value, size_ret);
  }
  return TB_CL_INVALID_VALUE;
}

tb_cl_int clGetDeviceInfo(tb_cl_device_id id, tb_cl_uint param, size_t size, void *value, size_t *size_ret);
tb_cl_int clGetDeviceInfo(tb_cl_device_id id, tb_cl_uint param, size_t size, void *value, size_t *size_ret) {
  const fake_device *d = (const fake_device *)id;
  tb_cl_bool available = !(mode("unavailable") && d == &alpha_devices[0]);
  tb_cl_ulong local_mem = 64 * 1024;
  size_t wg = 1024;
  tb_cl_uint clock = 1800;
  switch (param) {
    case TB_CL_DEVICE_NAME: return device_name(d, size, value, size_ret);
    case TB_CL_DEVICE_VENDOR: return reply_text(d->vendor, size, value, size_ret);
    case TB_CL_DEVICE_EXTENSIONS: return reply_text(d->extensions, size, value, size_ret);
    case TB_CL_DRIVER_VERSION: return reply_text("1.2.3-fake", size, value, size_ret);
    case TB_CL_DEVICE_VERSION: return reply_text(d->version ? d->version : "OpenCL 3.0 FakeCL", size, value, size_ret);
    case TB_CL_DEVICE_MEM_BASE_ADDR_ALIGN:
      if (!d->align_bits) return TB_CL_INVALID_VALUE;
      return reply(&d->align_bits, sizeof d->align_bits, size, value, size_ret);
    case TB_CL_DEVICE_OPENCL_C_VERSION: return reply_text("OpenCL C 3.0 FakeCL", size, value, size_ret);
    case TB_CL_DEVICE_PROFILE: return reply_text("FULL_PROFILE", size, value, size_ret);
    case TB_CL_DEVICE_TYPE: return reply(&d->type, sizeof d->type, size, value, size_ret);
    case TB_CL_DEVICE_MAX_COMPUTE_UNITS: return reply(&d->units, sizeof d->units, size, value, size_ret);
    case TB_CL_DEVICE_VENDOR_ID: return reply(&d->vendor_id, sizeof d->vendor_id, size, value, size_ret);
    case TB_CL_DEVICE_GLOBAL_MEM_SIZE: return reply(&d->global_mem, sizeof d->global_mem, size, value, size_ret);
    case TB_CL_DEVICE_MAX_MEM_ALLOC_SIZE: return reply(&d->max_alloc, sizeof d->max_alloc, size, value, size_ret);
    case TB_CL_DEVICE_DOUBLE_FP_CONFIG: return reply(&d->fp64_config, sizeof d->fp64_config, size, value, size_ret);
    case TB_CL_DEVICE_HOST_UNIFIED_MEMORY: return reply(&d->unified, sizeof d->unified, size, value, size_ret);
    case TB_CL_DEVICE_AVAILABLE: return reply(&available, sizeof available, size, value, size_ret);
    case TB_CL_DEVICE_LOCAL_MEM_SIZE: return reply(&local_mem, sizeof local_mem, size, value, size_ret);
    case TB_CL_DEVICE_MAX_WORK_GROUP_SIZE: return reply(&wg, sizeof wg, size, value, size_ret);
    case TB_CL_DEVICE_MAX_CLOCK_FREQUENCY: return reply(&clock, sizeof clock, size, value, size_ret);
    case TB_CL_DEVICE_UUID_KHR:
      if (!d->uuid[0]) return TB_CL_INVALID_VALUE;
      return reply(d->uuid, sizeof d->uuid, size, value, size_ret);
    default: return device_pci(d, param, size, value, size_ret);
  }
}

/* ---- Contexts, queues and buffers, for the OpenCL backend's tests ----------------------------------
 * Modes: context_error (clCreateContext: -2 CL_DEVICE_NOT_AVAILABLE), queue_error (both queue calls:
 * -6 CL_OUT_OF_HOST_MEMORY, with different details per call), alloc_failure (clCreateBuffer above 1 MiB:
 * -4 CL_MEM_OBJECT_ALLOCATION_FAILURE), read_error (clEnqueueReadBuffer: -5 CL_OUT_OF_RESOURCES),
 * copy_error (the copy's event: -14 CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST), finish_error
 * (clFinish: -36 CL_INVALID_COMMAND_QUEUE). A buffer larger than the device's max_alloc is always
 * -61 CL_INVALID_BUFFER_SIZE, as real drivers answer. */

#define FAKE_MAGIC_CONTEXT 0x43545854u
#define FAKE_MAGIC_QUEUE 0x51554555u
#define FAKE_MAGIC_MEM 0x4d454d4fu
#define FAKE_MAGIC_EVENT 0x45564e54u

typedef struct fake_object {
  unsigned magic;
  const fake_device *device;
  size_t size;
  unsigned char *data;
  unsigned long long stamp; /* markers: the order they were enqueued in */
  int pending;              /* markers: CL_QUEUED answers left before CL_COMPLETE */
} fake_object;

static int live_objects;
static int queue_calls_v2, queue_calls_v1, fill_calls;
static int marker_calls, event_info_calls, profiling_calls, wait_calls;

/* For tests (found with dlsym): objects created and not released; which calls were made. */
int fake_opencl_live(void);
int fake_opencl_live(void) { return live_objects; }
int fake_opencl_calls(const char *name);
int fake_opencl_calls(const char *name) {
  if (strcmp(name, "clCreateCommandQueueWithProperties") == 0) return queue_calls_v2;
  if (strcmp(name, "clCreateCommandQueue") == 0) return queue_calls_v1;
  if (strcmp(name, "clEnqueueFillBuffer") == 0) return fill_calls;
  if (strcmp(name, "clEnqueueMarkerWithWaitList") == 0) return marker_calls;
  if (strcmp(name, "clGetEventInfo") == 0) return event_info_calls;
  if (strcmp(name, "clGetEventProfilingInfo") == 0) return profiling_calls;
  if (strcmp(name, "clWaitForEvents") == 0) return wait_calls;
  return -1;
}

static fake_object *make(unsigned magic, const fake_device *d, size_t size) {
  fake_object *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->magic = magic, o->device = d, o->size = size;
  if (size && !(o->data = calloc(1, size))) {
    free(o);
    return NULL;
  }
  live_objects++;
  return o;
}

static tb_cl_int release(void *handle, unsigned magic) {
  fake_object *o = handle;
  if (!o || o->magic != magic) return -38; /* CL_INVALID_MEM_OBJECT (or the matching invalid-object code) */
  o->magic = 0;
  free(o->data);
  free(o);
  live_objects--;
  return TB_CL_SUCCESS;
}

static fake_object *as(void *handle, unsigned magic) {
  fake_object *o = handle;
  return o && o->magic == magic ? o : NULL;
}

static void *fail_with(tb_cl_int *err, tb_cl_int code) {
  if (err) *err = code;
  return NULL;
}

tb_cl_context clCreateContext(const tb_cl_context_properties *props, tb_cl_uint n, const tb_cl_device_id *devices,
                              tb_cl_context_notify notify, void *user, tb_cl_int *err);
tb_cl_context clCreateContext(const tb_cl_context_properties *props, tb_cl_uint n, const tb_cl_device_id *devices,
                              tb_cl_context_notify notify, void *user, tb_cl_int *err) {
  (void)notify, (void)user;
  if (mode("context_error")) return fail_with(err, TB_CL_DEVICE_NOT_AVAILABLE);
  if (!props || props[0] != TB_CL_CONTEXT_PLATFORM || !props[1] || props[2] != 0 || n != 1 || !devices || !devices[0])
    return fail_with(err, TB_CL_INVALID_VALUE);
  fake_object *o = make(FAKE_MAGIC_CONTEXT, (const fake_device *)devices[0], 0);
  if (!o) return fail_with(err, TB_CL_OUT_OF_HOST_MEMORY);
  if (err) *err = TB_CL_SUCCESS;
  return (tb_cl_context)o;
}

tb_cl_int clReleaseContext(tb_cl_context c);
tb_cl_int clReleaseContext(tb_cl_context c) { return release(c, FAKE_MAGIC_CONTEXT); }

static tb_cl_command_queue make_queue(tb_cl_context c, tb_cl_device_id d, tb_cl_int *err) {
  fake_object *ctx = as(c, FAKE_MAGIC_CONTEXT);
  if (!ctx) return fail_with(err, -34); /* CL_INVALID_CONTEXT */
  if ((const fake_device *)d != ctx->device) return fail_with(err, -33); /* CL_INVALID_DEVICE */
  if (mode("queue_error")) return fail_with(err, TB_CL_OUT_OF_HOST_MEMORY);
  fake_object *q = make(FAKE_MAGIC_QUEUE, ctx->device, 0);
  queue_broken = false;
  if (!q) return fail_with(err, TB_CL_OUT_OF_HOST_MEMORY);
  if (err) *err = TB_CL_SUCCESS;
  return (tb_cl_command_queue)q;
}

tb_cl_command_queue clCreateCommandQueue(tb_cl_context c, tb_cl_device_id d, tb_cl_command_queue_properties p, tb_cl_int *err);
tb_cl_command_queue clCreateCommandQueue(tb_cl_context c, tb_cl_device_id d, tb_cl_command_queue_properties p, tb_cl_int *err) {
  queue_calls_v1++;
  if (p != 0) return fail_with(err, -35); /* CL_INVALID_QUEUE_PROPERTIES: the backend wants a plain in-order queue */
  return make_queue(c, d, err);
}

tb_cl_command_queue clCreateCommandQueueWithProperties(tb_cl_context c, tb_cl_device_id d, const tb_cl_queue_properties *p,
                                                       tb_cl_int *err);
tb_cl_command_queue clCreateCommandQueueWithProperties(tb_cl_context c, tb_cl_device_id d, const tb_cl_queue_properties *p,
                                                       tb_cl_int *err) {
  queue_calls_v2++;
  if (p && p[0] != 0) return fail_with(err, -35);
  return make_queue(c, d, err);
}

tb_cl_int clReleaseCommandQueue(tb_cl_command_queue q);
tb_cl_int clReleaseCommandQueue(tb_cl_command_queue q) { return release(q, FAKE_MAGIC_QUEUE); }

tb_cl_mem clCreateBuffer(tb_cl_context c, tb_cl_mem_flags flags, size_t size, void *host, tb_cl_int *err);
tb_cl_mem clCreateBuffer(tb_cl_context c, tb_cl_mem_flags flags, size_t size, void *host, tb_cl_int *err) {
  fake_object *ctx = as(c, FAKE_MAGIC_CONTEXT);
  if (!ctx) return fail_with(err, -34);
  if (flags != TB_CL_MEM_READ_WRITE || host) return fail_with(err, TB_CL_INVALID_VALUE);
  if (size == 0 || size > ctx->device->max_alloc) return fail_with(err, TB_CL_INVALID_BUFFER_SIZE);
  if (mode("alloc_failure") && size > (1u << 20)) return fail_with(err, TB_CL_MEM_OBJECT_ALLOCATION_FAILURE);
  fake_object *m = make(FAKE_MAGIC_MEM, ctx->device, size);
  if (!m) return fail_with(err, TB_CL_MEM_OBJECT_ALLOCATION_FAILURE);
  if (err) *err = TB_CL_SUCCESS;
  return (tb_cl_mem)m;
}

tb_cl_int clReleaseMemObject(tb_cl_mem m);
tb_cl_int clReleaseMemObject(tb_cl_mem m) { return release(m, FAKE_MAGIC_MEM); }

/* Checks common to every enqueue; makes the event when one is asked for. */
static tb_cl_int enqueue(tb_cl_command_queue q, tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event) {
  if (!as(q, FAKE_MAGIC_QUEUE)) return -36; /* CL_INVALID_COMMAND_QUEUE */
  if ((nwait == 0) != (wait == NULL)) return -57; /* CL_INVALID_EVENT_WAIT_LIST */
  if (event && !(*event = (tb_cl_event)make(FAKE_MAGIC_EVENT, NULL, 0))) return TB_CL_OUT_OF_HOST_MEMORY;
  return TB_CL_SUCCESS;
}

static bool in_range(const fake_object *m, size_t offset, size_t size) {
  return m && size > 0 && offset <= m->size && size <= m->size - offset;
}

tb_cl_int clEnqueueWriteBuffer(tb_cl_command_queue q, tb_cl_mem mem, tb_cl_bool blocking, size_t offset, size_t size,
                               const void *src, tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event);
tb_cl_int clEnqueueWriteBuffer(tb_cl_command_queue q, tb_cl_mem mem, tb_cl_bool blocking, size_t offset, size_t size,
                               const void *src, tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event) {
  fake_object *m = as(mem, FAKE_MAGIC_MEM);
  if (!m) return -38;
  if (!blocking || !src || !in_range(m, offset, size)) return TB_CL_INVALID_VALUE;
  if (mode("host_oom_hang")) {
    queue_broken = true;
    return TB_CL_OUT_OF_HOST_MEMORY;
  }
  tb_cl_int err = enqueue(q, nwait, wait, event);
  if (err == TB_CL_SUCCESS) memcpy(m->data + offset, src, size);
  return err;
}

tb_cl_int clEnqueueReadBuffer(tb_cl_command_queue q, tb_cl_mem mem, tb_cl_bool blocking, size_t offset, size_t size, void *dst,
                              tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event);
tb_cl_int clEnqueueReadBuffer(tb_cl_command_queue q, tb_cl_mem mem, tb_cl_bool blocking, size_t offset, size_t size, void *dst,
                              tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event) {
  fake_object *m = as(mem, FAKE_MAGIC_MEM);
  if (!m) return -38;
  if (!blocking || !dst || !in_range(m, offset, size)) return TB_CL_INVALID_VALUE;
  if (mode("read_error")) return TB_CL_OUT_OF_RESOURCES;
  tb_cl_int err = enqueue(q, nwait, wait, event);
  if (err == TB_CL_SUCCESS) memcpy(dst, m->data + offset, size);
  return err;
}

tb_cl_int clEnqueueCopyBuffer(tb_cl_command_queue q, tb_cl_mem src, tb_cl_mem dst, size_t src_offset, size_t dst_offset,
                              size_t size, tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event);
tb_cl_int clEnqueueCopyBuffer(tb_cl_command_queue q, tb_cl_mem src, tb_cl_mem dst, size_t src_offset, size_t dst_offset,
                              size_t size, tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event) {
  fake_object *s = as(src, FAKE_MAGIC_MEM), *d = as(dst, FAKE_MAGIC_MEM);
  if (!s || !d) return -38;
  if (!in_range(s, src_offset, size) || !in_range(d, dst_offset, size)) return TB_CL_INVALID_VALUE;
  if (s == d && src_offset < dst_offset + size && dst_offset < src_offset + size) return -8; /* CL_MEM_COPY_OVERLAP */
  tb_cl_int err = enqueue(q, nwait, wait, event);
  if (err == TB_CL_SUCCESS) memmove(d->data + dst_offset, s->data + src_offset, size);
  return err;
}

tb_cl_int clEnqueueFillBuffer(tb_cl_command_queue q, tb_cl_mem mem, const void *pattern, size_t pattern_size, size_t offset,
                              size_t size, tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event);
tb_cl_int clEnqueueFillBuffer(tb_cl_command_queue q, tb_cl_mem mem, const void *pattern, size_t pattern_size, size_t offset,
                              size_t size, tb_cl_uint nwait, const tb_cl_event *wait, tb_cl_event *event) {
  fill_calls++;
  fake_object *m = as(mem, FAKE_MAGIC_MEM);
  if (!m) return -38;
  bool width_ok = pattern_size == 1 || pattern_size == 2 || pattern_size == 4 || pattern_size == 8 || pattern_size == 16 ||
                  pattern_size == 32 || pattern_size == 64 || pattern_size == 128;
  if (!pattern || !width_ok || offset % pattern_size || size % pattern_size || !in_range(m, offset, size))
    return TB_CL_INVALID_VALUE;
  tb_cl_int err = enqueue(q, nwait, wait, event);
  for (size_t i = 0; err == TB_CL_SUCCESS && i < size; i += pattern_size) memcpy(m->data + offset + i, pattern, pattern_size);
  return err;
}

tb_cl_int clWaitForEvents(tb_cl_uint n, const tb_cl_event *events);
tb_cl_int clWaitForEvents(tb_cl_uint n, const tb_cl_event *events) {
  wait_calls++;
  if (n == 0 || !events) return TB_CL_INVALID_VALUE;
  for (tb_cl_uint i = 0; i < n; i++)
    if (!as(events[i], FAKE_MAGIC_EVENT)) return -58; /* CL_INVALID_EVENT */
  if (mode("copy_error")) return -14;
  for (tb_cl_uint i = 0; i < n; i++) as(events[i], FAKE_MAGIC_EVENT)->pending = 0; /* waited: complete */
  return TB_CL_SUCCESS;
}

tb_cl_int clReleaseEvent(tb_cl_event e);
tb_cl_int clReleaseEvent(tb_cl_event e) { return release(e, FAKE_MAGIC_EVENT); }

tb_cl_int clFinish(tb_cl_command_queue q);
tb_cl_int clFinish(tb_cl_command_queue q) {
  if (!as(q, FAKE_MAGIC_QUEUE)) return -36;
  while (queue_broken) sleep(1); /* as PoCL after running out of host memory: never returns */
  return mode("finish_error") ? -36 : TB_CL_SUCCESS;
}

/* ---- Events: markers, their status and profiling ---------------------------------------------------
 * Modes: profiling (clGetCommandQueueInfo reports CL_QUEUE_PROFILING_ENABLE and a marker's
 * CL_PROFILING_COMMAND_END is 250000 ns per marker enqueued before it), marker_error (clEnqueueMarkerWithWaitList: -5
 * CL_OUT_OF_RESOURCES), event_failed (a marker's status is -14, the error of a command before it).
 * TBT_FAKE_OPENCL_NOT_READY=<n>: a new marker answers CL_QUEUED to its first n status queries. */

static unsigned long long marker_clock;

tb_cl_int clEnqueueMarkerWithWaitList(tb_cl_command_queue q, tb_cl_uint nwait, const tb_cl_event *wait,
                                      tb_cl_event *event);
tb_cl_int clEnqueueMarkerWithWaitList(tb_cl_command_queue q, tb_cl_uint nwait, const tb_cl_event *wait,
                                      tb_cl_event *event) {
  marker_calls++;
  if (mode("marker_error")) return TB_CL_OUT_OF_RESOURCES;
  tb_cl_int err = enqueue(q, nwait, wait, event);
  if (err != TB_CL_SUCCESS || !event) return err;
  fake_object *m = (fake_object *)*event;
  m->stamp = ++marker_clock;
  const char *not_ready = getenv("TBT_FAKE_OPENCL_NOT_READY");
  m->pending = not_ready ? atoi(not_ready) : 0;
  return TB_CL_SUCCESS;
}

tb_cl_int clGetEventInfo(tb_cl_event e, tb_cl_uint param, size_t size, void *value, size_t *size_ret);
tb_cl_int clGetEventInfo(tb_cl_event e, tb_cl_uint param, size_t size, void *value, size_t *size_ret) {
  event_info_calls++;
  fake_object *m = as(e, FAKE_MAGIC_EVENT);
  if (!m) return -58; /* CL_INVALID_EVENT */
  if (param != TB_CL_EVENT_COMMAND_EXECUTION_STATUS) return TB_CL_INVALID_VALUE;
  tb_cl_int status = TB_CL_COMPLETE;
  if (mode("event_failed")) {
    status = -14;
  } else if (m->pending > 0) {
    m->pending--;
    status = 3; /* CL_QUEUED */
  }
  return reply(&status, sizeof status, size, value, size_ret);
}

tb_cl_int clGetEventProfilingInfo(tb_cl_event e, tb_cl_uint param, size_t size, void *value, size_t *size_ret);
tb_cl_int clGetEventProfilingInfo(tb_cl_event e, tb_cl_uint param, size_t size, void *value, size_t *size_ret) {
  profiling_calls++;
  fake_object *m = as(e, FAKE_MAGIC_EVENT);
  if (!m) return -58;
  if (!mode("profiling")) return -7; /* CL_PROFILING_INFO_NOT_AVAILABLE */
  if (param != TB_CL_PROFILING_COMMAND_END) return TB_CL_INVALID_VALUE;
  tb_cl_ulong ns = m->stamp * 250000ull;
  return reply(&ns, sizeof ns, size, value, size_ret);
}

tb_cl_int clGetCommandQueueInfo(tb_cl_command_queue q, tb_cl_uint param, size_t size, void *value, size_t *size_ret);
tb_cl_int clGetCommandQueueInfo(tb_cl_command_queue q, tb_cl_uint param, size_t size, void *value, size_t *size_ret) {
  if (!as(q, FAKE_MAGIC_QUEUE)) return -36;
  if (param != TB_CL_QUEUE_PROPERTIES) return TB_CL_INVALID_VALUE;
  tb_cl_bitfield props = mode("profiling") ? TB_CL_QUEUE_PROFILING_ENABLE : 0;
  return reply(&props, sizeof props, size, value, size_ret);
}
