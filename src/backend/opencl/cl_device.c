/* Opening an OpenCL device for the backend: find the cl_device_id discovery numbered opencl:N (the
 * same walk as src/discover/opencl.c: platforms in the loader's order, all device types, at most 64
 * platforms and 256 devices each, NULL ids skipped), check its name, read its memory limits, and
 * create a context and an in-order queue. */
#include "backend/opencl/cl_device.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/opencl/cl_clblast.h"
#include "backend/opencl/cl_program.h"
#include "core/error.h"
#include "runtime/opencl_query.h"

#define CL_MAX_PLATFORMS 64u
#define CL_MAX_DEVICES 256u
#define CL_FALLBACK_ALIGNMENT 128u /* the largest built-in type (long16), the OpenCL full-profile minimum */

static tb_cl_object device_obj(tb_cl_device_id id) { return (tb_cl_object){.platform = NULL, .device = id}; }

/* Count, then ids; the result is clamped to what both calls agree on, as the probe does. */
static tb_cl_uint platform_ids(tb_cl_device *dev, tb_cl_platform_id *ids, tb_status *status) {
  tb_cl_uint count = 0, second = 0;
  tb_cl_int err = dev->rt.info.clGetPlatformIDs(0, NULL, &count);
  if (err == TB_CL_SUCCESS && count > 0) {
    tb_cl_uint asked = count > CL_MAX_PLATFORMS ? CL_MAX_PLATFORMS : count;
    err = dev->rt.info.clGetPlatformIDs(asked, ids, &second);
    if (err == TB_CL_SUCCESS) return second < asked ? second : asked;
  }
  *status = err == TB_CL_SUCCESS ? TB_OK : tb_cl_fail(dev, "clGetPlatformIDs", "", err);
  return 0;
}

static tb_cl_uint device_ids(tb_cl_device *dev, tb_cl_platform_id platform, tb_cl_device_id *ids) {
  tb_cl_uint count = 0, second = 0;
  if (dev->rt.info.clGetDeviceIDs(platform, TB_CL_DEVICE_TYPE_ALL, 0, NULL, &count) != TB_CL_SUCCESS || count == 0) return 0;
  tb_cl_uint asked = count > CL_MAX_DEVICES ? CL_MAX_DEVICES : count;
  if (dev->rt.info.clGetDeviceIDs(platform, TB_CL_DEVICE_TYPE_ALL, asked, ids, &second) != TB_CL_SUCCESS) return 0;
  return second < asked ? second : asked;
}

/* Walk platforms and devices, numbering non-NULL devices across platforms, until `index`. */
static tb_status find_by_index(tb_cl_device *dev, int index) {
  tb_cl_platform_id platforms[CL_MAX_PLATFORMS] = {0};
  tb_status status = TB_OK;
  tb_cl_uint nplat = platform_ids(dev, platforms, &status);
  if (status != TB_OK) return status;
  int seen = 0;
  for (tb_cl_uint p = 0; p < nplat; p++) {
    if (!platforms[p]) continue;
    tb_cl_device_id ids[CL_MAX_DEVICES] = {0};
    tb_cl_uint n = device_ids(dev, platforms[p], ids);
    for (tb_cl_uint d = 0; d < n; d++) {
      if (!ids[d]) continue;
      if (seen++ == index) {
        dev->platform = platforms[p];
        dev->id = ids[d];
        return TB_OK;
      }
    }
  }
  return tb_error(TB_ERR_NOT_FOUND, "%s not found: the OpenCL loader %s now reports %d device%s; the devices changed since "
                  "discovery: discover again (tb devices) and pick one of those", dev->label, dev->rt.path, seen, seen == 1 ? "" : "s");
}

static tb_status check_name(tb_cl_device *dev, const char *expected) {
  char *name = NULL;
  tb_cl_int err = tb_cl_string(&dev->rt.info, device_obj(dev->id), TB_CL_DEVICE_NAME, &name);
  if (err != TB_CL_SUCCESS) return tb_cl_fail(dev, "clGetDeviceInfo", "CL_DEVICE_NAME", err);
  tb_status s = TB_OK;
  if (expected && expected[0] && name[0] && strcmp(name, expected) != 0)
    s = tb_error(TB_ERR_NOT_FOUND, "%s: the OpenCL device at that index is now '%s'; the devices changed since discovery: "
                 "discover again (tb devices) and pick one of those", dev->label, name);
  free(name);
  return s;
}

/* "OpenCL 3.0 PoCL ..." -> 3, 0; anything else -> 1, 0 (the oldest API, so only 1.0 calls are made). */
static void parse_version(const char *text, int *major, int *minor) {
  *major = 1, *minor = 0;
  int ma = 0, mi = 0;
  if (text && sscanf(text, "OpenCL %d.%d", &ma, &mi) == 2 && ma >= 1) *major = ma, *minor = mi;
}

static bool at_least(int major, int minor, int want_major, int want_minor) {
  return major > want_major || (major == want_major && minor >= want_minor);
}

static void read_limits(tb_cl_device *dev, int *platform_major, int *platform_minor) {
  const tb_cl_api *api = &dev->rt.info;
  tb_cl_object obj = device_obj(dev->id);
  char *text = NULL;
  tb_cl_string(api, obj, TB_CL_DEVICE_VERSION, &text);
  parse_version(text, &dev->version_major, &dev->version_minor);
  free(text);
  text = NULL;
  tb_cl_string(api, (tb_cl_object){.platform = dev->platform, .device = NULL}, TB_CL_PLATFORM_VERSION, &text);
  parse_version(text, platform_major, platform_minor);
  free(text);
  text = NULL;
  tb_cl_scalar(api, obj, TB_CL_DEVICE_GLOBAL_MEM_SIZE, &dev->global_mem, sizeof dev->global_mem);
  tb_cl_scalar(api, obj, TB_CL_DEVICE_MAX_MEM_ALLOC_SIZE, &dev->max_alloc, sizeof dev->max_alloc);
  tb_cl_uint align_bits = 0;
  tb_cl_scalar(api, obj, TB_CL_DEVICE_MEM_BASE_ADDR_ALIGN, &align_bits, sizeof align_bits);
  size_t align = align_bits / 8u;
  dev->alignment = align && (align & (align - 1)) == 0 ? align : CL_FALLBACK_ALIGNMENT;
  if (tb_cl_string(api, obj, TB_CL_DEVICE_EXTENSIONS, &text) == TB_CL_SUCCESS) {
    dev->amd_free_memory = tb_cl_has_extension(text, "cl_amd_device_attribute_query");
    dev->fp16 = tb_cl_has_extension(text, "cl_khr_fp16");
  }
  free(text);
  text = NULL;
  if (tb_cl_string(api, obj, TB_CL_DEVICE_NAME, &text) == TB_CL_SUCCESS) snprintf(dev->device_name, sizeof dev->device_name, "%s", text);
  free(text);
  text = NULL;
  if (tb_cl_string(api, obj, TB_CL_DRIVER_VERSION, &text) == TB_CL_SUCCESS)
    snprintf(dev->driver_version, sizeof dev->driver_version, "%s", text);
  free(text);
  size_t max_wg = 0;
  tb_cl_scalar(api, obj, TB_CL_DEVICE_MAX_WORK_GROUP_SIZE, &max_wg, sizeof max_wg);
  dev->max_work_group = max_wg;
  dev->fill = dev->rt.cl.clEnqueueFillBuffer && at_least(dev->version_major, dev->version_minor, 1, 2);
  tb_cl_ulong type = 0;
  tb_cl_uint unified = 0;
  tb_cl_scalar(api, obj, TB_CL_DEVICE_TYPE, &type, sizeof type);
  tb_cl_scalar(api, obj, TB_CL_DEVICE_HOST_UNIFIED_MEMORY, &unified, sizeof unified);
  dev->host_memory = (type & TB_CL_DEVICE_TYPE_CPU) != 0 || unified != 0;
}

/* A queue is made only when the call says so and returns one; anything else is the call's failure. */
static tb_status queue_made(tb_cl_device *dev, const char *call, tb_cl_int err) {
  if (dev->queue && err == TB_CL_SUCCESS) return TB_OK;
  dev->queue = NULL;
  return tb_cl_fail(dev, call, "in-order queue", err != TB_CL_SUCCESS ? err : TB_CL_INVALID_VALUE);
}

static tb_status create_queue(tb_cl_device *dev, int platform_major, int platform_minor) {
  tb_cl_int err = TB_CL_SUCCESS;
  bool v2 = at_least(dev->version_major, dev->version_minor, 2, 0) && at_least(platform_major, platform_minor, 2, 0);
  if (v2 && dev->rt.cl.clCreateCommandQueueWithProperties) {
    dev->queue = dev->rt.cl.clCreateCommandQueueWithProperties(dev->context, dev->id, NULL, &err);
    return queue_made(dev, "clCreateCommandQueueWithProperties", err);
  }
  if (!dev->rt.cl.clCreateCommandQueue)
    return tb_error(TB_ERR_UNAVAILABLE, "%s: an OpenCL %d.%d device needs clCreateCommandQueue, which %s does not export; "
                    "install a loader that supports OpenCL 1.x devices (ocl-icd-libopencl1)",
                    dev->label, dev->version_major, dev->version_minor, dev->rt.path);
  dev->queue = dev->rt.cl.clCreateCommandQueue(dev->context, dev->id, 0, &err);
  return queue_made(dev, "clCreateCommandQueue", err);
}

static tb_status open_device(const tb_device_info *info, tb_cl_device *dev) {
  tb_status s = tb_cl_runtime_open(&dev->rt);
  if (s != TB_OK) return s;
  if ((s = find_by_index(dev, info->index)) != TB_OK) return s;
  if ((s = check_name(dev, info->name)) != TB_OK) return s;
  int platform_major = 1, platform_minor = 0;
  read_limits(dev, &platform_major, &platform_minor);
  const tb_cl_context_properties props[] = {TB_CL_CONTEXT_PLATFORM, (tb_cl_context_properties)dev->platform, 0};
  tb_cl_int err = TB_CL_SUCCESS;
  dev->context = dev->rt.cl.clCreateContext(props, 1, &dev->id, NULL, NULL, &err);
  if (!dev->context || err != TB_CL_SUCCESS) {
    dev->context = NULL;
    return tb_cl_fail(dev, "clCreateContext", "", err != TB_CL_SUCCESS ? err : TB_CL_INVALID_VALUE);
  }
  return create_queue(dev, platform_major, platform_minor);
}

tb_status tb_cl_device_open(const tb_device_info *info, tb_cl_device *dev) {
  memset(dev, 0, sizeof *dev);
  atomic_init(&dev->live_bytes, 0);
  if (!info || info->backend != TB_BACKEND_OPENCL || info->index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "the OpenCL backend was given %s, which is not an OpenCL device; pick an "
                    "opencl:N device from tb devices", info && info->device ? info->device : "no device");
  snprintf(dev->label, sizeof dev->label, "%s (%s)", info->device ? info->device : "opencl:?", info->name ? info->name : "");
  if (pthread_mutex_init(&dev->program_lock, NULL) != 0)
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: could not create a mutex (out of resources)", dev->label);
  dev->lock_made = true;
  tb_status s = open_device(info, dev);
  if (s != TB_OK) tb_cl_device_close(dev);
  return s;
}

void tb_cl_device_close(tb_cl_device *dev) {
  if (dev->queue && !atomic_load(&dev->queue_failed)) dev->rt.cl.clFinish(dev->queue); /* a failed queue may never finish */
  tb_clblast_forget(dev);
  tb_cl_program_release(dev);
  if (dev->lock_made) pthread_mutex_destroy(&dev->program_lock);
  dev->lock_made = false;
  if (dev->queue) dev->rt.cl.clReleaseCommandQueue(dev->queue);
  if (dev->context) dev->rt.cl.clReleaseContext(dev->context);
  dev->queue = NULL;
  dev->context = NULL;
  tb_cl_runtime_close(&dev->rt);
}
