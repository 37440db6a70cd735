/* The plain OpenCL allocation call, clCreateBuffer/clReleaseMemObject, on the device a backend uses:
 * libOpenCL.so.1 opened with dlopen (TB_OPENCL_LIB overrides the name), the device found by its position
 * among every platform's devices and checked by name, one context on it. The few prototypes are here. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plain_alloc.h"

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_bitfield;
typedef struct cl_opaque *cl_handle; /* platform, device, context and mem are all opaque pointers */

#define CL_DEVICE_TYPE_ALL 0xFFFFFFFFu
#define CL_DEVICE_NAME 0x102B
#define CL_MEM_READ_WRITE 1u
#define MAX_CL 64

typedef struct opencl_api {
  void *lib;
  cl_int (*GetPlatformIDs)(cl_uint, cl_handle *, cl_uint *);
  cl_int (*GetDeviceIDs)(cl_handle, cl_bitfield, cl_uint, cl_handle *, cl_uint *);
  cl_int (*GetDeviceInfo)(cl_handle, cl_uint, size_t, void *, size_t *);
  cl_handle (*CreateContext)(const intptr_t *, cl_uint, const cl_handle *, void (*)(const char *, const void *, size_t, void *),
                             void *, cl_int *);
  cl_int (*ReleaseContext)(cl_handle);
  cl_handle (*CreateBuffer)(cl_handle, cl_bitfield, size_t, void *, cl_int *);
  cl_int (*ReleaseMemObject)(cl_handle);
  cl_handle context;
} opencl_api;

static void *opencl_alloc(void *state, size_t bytes) {
  opencl_api *api = state;
  cl_int err = 0;
  cl_handle mem = api->CreateBuffer(api->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  return err == 0 ? (void *)mem : NULL;
}

static void opencl_release(void *state, void *allocation) {
  opencl_api *api = state;
  api->ReleaseMemObject((cl_handle)allocation);
}

static void opencl_close(void *state) {
  opencl_api *api = state;
  if (api->context) api->ReleaseContext(api->context);
  dlclose(api->lib);
  free(api);
}

/* Load the symbols; false when one is missing. */
static bool load(opencl_api *api) {
#define LOAD(name) (*(void **)&api->name = dlsym(api->lib, "cl" #name)) != NULL
  return LOAD(GetPlatformIDs) && LOAD(GetDeviceIDs) && LOAD(GetDeviceInfo) && LOAD(CreateContext) &&
         LOAD(ReleaseContext) && LOAD(CreateBuffer) && LOAD(ReleaseMemObject);
#undef LOAD
}

/* Every device of every platform, in order; returns the count. */
static cl_uint all_devices(opencl_api *api, cl_handle *devices) {
  cl_handle platforms[MAX_CL];
  cl_uint platform_count = 0, total = 0;
  if (api->GetPlatformIDs(MAX_CL, platforms, &platform_count) != 0) return 0;
  for (cl_uint p = 0; p < platform_count && p < MAX_CL; p++) {
    cl_uint n = 0;
    if (api->GetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_CL - total, devices + total, &n) != 0) continue;
    total += n < MAX_CL - total ? n : MAX_CL - total;
  }
  return total;
}

bool plain_opencl_open(const tb_device_info *device, plain_alloc *out, char *why, size_t why_size) {
  const char *lib_name = getenv("TB_OPENCL_LIB") ? getenv("TB_OPENCL_LIB") : "libOpenCL.so.1";
  opencl_api *api = calloc(1, sizeof *api);
  if (!api) {
    snprintf(why, why_size, "out of host memory");
    return false;
  }
  api->lib = dlopen(lib_name, RTLD_NOW | RTLD_LOCAL);
  if (!api->lib || !load(api)) {
    snprintf(why, why_size, "%s: %s", lib_name, api->lib ? "an OpenCL symbol is missing" : dlerror());
    if (api->lib) dlclose(api->lib);
    free(api);
    return false;
  }
  cl_handle devices[MAX_CL];
  cl_uint count = all_devices(api, devices);
  cl_handle chosen = NULL;
  char name[256];
  for (cl_uint i = 0; i < count && !chosen; i++) {
    cl_uint at = device->index >= 0 ? ((cl_uint)device->index + i) % count : i; /* the backend's index first */
    if (api->GetDeviceInfo(devices[at], CL_DEVICE_NAME, sizeof name, name, NULL) == 0 && strcmp(name, device->name) == 0)
      chosen = devices[at];
  }
  cl_int err = 0;
  if (chosen) api->context = api->CreateContext(NULL, 1, &chosen, NULL, NULL, &err);
  if (!chosen || err != 0 || !api->context) {
    snprintf(why, why_size, "no OpenCL context on '%s' (%u devices, clCreateContext %d)", device->name, count, err);
    api->context = NULL;
    opencl_close(api);
    return false;
  }
  *out = (plain_alloc){"clCreateBuffer/clReleaseMemObject", api, opencl_alloc, opencl_release, opencl_close};
  return true;
}
