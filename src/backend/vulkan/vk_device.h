/* Internal: one open Vulkan device of the backend (vk_device.c): the loader and function tables, the
 * instance (with the validation layer when TB_VULKAN_VALIDATION=1), the physical device matched to the
 * tb_device_info, a logical device with one compute-capable queue, a command pool with one reusable
 * command buffer and a fence, and the memory allocator (vk_memory.h). One mutex serialises all of it. */
#ifndef TB_BACKEND_VK_DEVICE_H
#define TB_BACKEND_VK_DEVICE_H
#include <pthread.h>
#include <stdbool.h>
#include <tensorbridge/device.h>
#include "runtime/vulkan_device_api.h"
#include "backend/vulkan/vk_memory.h"
#include "discover/vulkan_validation.h"

typedef struct vk_state {
  pthread_mutex_t lock;
  char label[96]; /* "vulkan:0 (llvmpipe (LLVM 15.0.6, 256 bits))" for messages */
  void *loader;   /* dlopen handle of libvulkan (core/dl.c keeps it open) */
  tb_vk_api api;  /* discovery's global and instance functions */
  tb_vk_exec_api vk;
  tb_vk_instance instance;
  tb_vk_physical_device phys;
  tb_vk_device device;
  tb_vk_queue queue;
  uint32_t queue_family;
  tb_vk_command_pool pool;
  tb_vk_command_buffer cmd;
  tb_vk_fence fence;
  tb_vk_validation validation;
  tb_vk_physical_device_properties props;
  tb_vk_memory_properties memory;
  uint64_t max_allocation; /* maxMemoryAllocationSize, or the largest heap when unknown */
  bool has_properties2;    /* Vulkan 1.1 instance and device */
  bool has_budget;         /* VK_EXT_memory_budget enabled */
  vk_allocator mem;
  bool fp16;                   /* shaderFloat16 and storageBuffer16BitAccess reported and enabled */
  struct vk_compute *compute;  /* vk_compute.h: made on the first kernel prepare */
  char compute_missing[64];    /* a compute function the driver lacks ("" when all are there) */
} vk_state;

tb_status tb_vk_device_open(const tb_device_info *info, vk_state **out);
void tb_vk_device_close(vk_state *s);
bool tb_vk_has_device_extension(vk_state *s, const char *name);

/* The status for a failed call: VK_ERROR_OUT_OF_{HOST,DEVICE}_MEMORY -> TB_ERR_OUT_OF_MEMORY, others
 * TB_ERR_DRIVER; the message names the device, the call, the code and its name. */
tb_status tb_vk_fail(const vk_state *s, const char *call, tb_vk_result r);

/* Start recording into the one command buffer; tb_vk_submit_wait ends it, submits it and waits on the fence. */
tb_status tb_vk_begin(vk_state *s);
tb_status tb_vk_submit_wait(vk_state *s);
/* A barrier making transfer writes visible to `dst_access` at `dst_stage`. */
void tb_vk_barrier(vk_state *s, tb_vk_flags dst_stage, tb_vk_flags dst_access);

#endif
