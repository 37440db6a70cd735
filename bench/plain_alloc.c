/* The plain allocation call for a device's backend (see plain_alloc.h); malloc/free for the CPU. */
#include "plain_alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *host_alloc(void *state, size_t bytes) {
  (void)state;
  return malloc(bytes);
}

static void host_release(void *state, void *allocation) {
  (void)state;
  free(allocation);
}

static void host_close(void *state) { (void)state; }

bool plain_alloc_open(const tb_device_info *device, plain_alloc *out, char *why, size_t why_size) {
  memset(out, 0, sizeof *out);
  switch (device->backend) {
    case TB_BACKEND_CPU:
      *out = (plain_alloc){"malloc/free", NULL, host_alloc, host_release, host_close};
      return true;
    case TB_BACKEND_OPENCL:
      return plain_opencl_open(device, out, why, why_size);
    case TB_BACKEND_VULKAN:
      return plain_vulkan_open(device, out, why, why_size);
    default:
      snprintf(why, why_size, "no plain allocation call is measured for the %s backend here",
               tb_backend_name(device->backend));
      return false;
  }
}

void plain_alloc_close(plain_alloc *p) {
  if (p->close) p->close(p->state);
  memset(p, 0, sizeof *p);
}
