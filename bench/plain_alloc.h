/* The plain allocation call of each API, for bench/alloc_bench to compare the caching allocator with:
 * malloc/free for the CPU, clCreateBuffer/clReleaseMemObject for OpenCL, vkAllocateMemory/vkFreeMemory
 * (device-local memory type) for Vulkan, each runtime opened with dlopen. Other backends have none here. */
#ifndef TB_BENCH_PLAIN_ALLOC_H
#define TB_BENCH_PLAIN_ALLOC_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/tensorbridge.h>

typedef struct plain_alloc {
  const char *name; /* "malloc/free" */
  void *state;
  /* A new allocation of `bytes`, or NULL when it fails. */
  void *(*alloc)(void *state, size_t bytes);
  void (*release)(void *state, void *allocation);
  void (*close)(void *state);
} plain_alloc;

/* Open the plain API for `device` (as a backend sees it). false with a sentence in `why` when there is
 * none here. */
bool plain_alloc_open(const tb_device_info *device, plain_alloc *out, char *why, size_t why_size);
void plain_alloc_close(plain_alloc *p);

/* One per API, in plain_<api>.c. */
bool plain_opencl_open(const tb_device_info *device, plain_alloc *out, char *why, size_t why_size);
bool plain_vulkan_open(const tb_device_info *device, plain_alloc *out, char *why, size_t why_size);

#endif
