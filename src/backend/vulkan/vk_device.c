/* Opening one Vulkan device for the backend: the loader, an instance (validation layer on when
 * TB_VULKAN_VALIDATION=1), the physical device "vulkan:N" in enumeration order (checked against the
 * UUID discovery saw), a logical device with one compute-capable queue, a command pool with one
 * reusable command buffer, and a fence. Also the submit-and-wait helpers the copies use. */
#include "backend/vulkan/vk_device.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_backend.h"
#include "backend/vulkan/vk_compute.h"
#include "core/env.h"
#include "core/error.h"
#include "core/uuid.h"
#include "runtime/vulkan_loader.h"

#define MAX_PHYSICAL_DEVICES 64u
#define MAX_QUEUE_FAMILIES 64u
#define MAX_DEVICE_EXTENSIONS 4096u
#define FENCE_TIMEOUT_NS (120ull * 1000 * 1000 * 1000)
#define BUDGET_EXTENSION "VK_EXT_memory_budget"

/* Validation messages of devices already closed, for tests (vk_backend.h). */
static pthread_mutex_t closed_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned closed_messages;
static char closed_first[512];

tb_status tb_vk_fail(const vk_state *s, const char *call, tb_vk_result r) {
  tb_status st = (r == TB_VK_ERROR_OUT_OF_DEVICE_MEMORY || r == TB_VK_ERROR_OUT_OF_HOST_MEMORY) ? TB_ERR_OUT_OF_MEMORY
                                                                                                  : TB_ERR_DRIVER;
  return tb_error(st, "%s: %s failed with %d %s", s->label, call, (int)r, tb_vk_result_name(r));
}

static tb_status open_loader(vk_state *s) {
  tb_dl_result dl;
  s->loader = tb_vk_loader_open(&dl);
  if (!s->loader)
    return tb_error(TB_ERR_UNAVAILABLE, "%s: the Vulkan loader could not be loaded (tried %s: %s); install libvulkan1 or set TB_VULKAN_LIB",
                    s->label, dl.tried, dl.error);
  char missing[128];
  if (!tb_vk_loader_entry(s->loader, &s->api, missing, sizeof missing))
    return tb_error(TB_ERR_UNAVAILABLE, "%s: %s not found in %s: it is not the Vulkan loader", s->label, missing, dl.path);
  tb_vk_loader_global(&s->api);
  if (!s->api.vkCreateInstance)
    return tb_error(TB_ERR_UNAVAILABLE, "%s: vkCreateInstance not available from %s", s->label, dl.path);
  return TB_OK;
}

static tb_status create_instance(vk_state *s) {
  uint32_t version = TB_VK_API_VERSION_1_0;
  if (s->api.vkEnumerateInstanceVersion && s->api.vkEnumerateInstanceVersion(&version) != TB_VK_SUCCESS)
    version = TB_VK_API_VERSION_1_0;
  version &= ~0xfffu;
  tb_vk_validation_prepare(NULL, &s->api, &s->validation);
  /* as the probe does: the drivers the loader opens stay loaded (their global state is set up once) */
  tb_dl_modules *before = tb_dl_modules_snapshot();
  tb_vk_instance_request request = tb_vk_validation_request(&s->validation);
  tb_vk_result r = tb_vk_loader_create_instance(&s->api, &request, "TensorBridge", version, &s->instance);
  if ((r == TB_VK_ERROR_LAYER_NOT_PRESENT || r == TB_VK_ERROR_EXTENSION_NOT_PRESENT) && s->validation.layer_enabled) {
    s->validation.layer_enabled = s->validation.counting = false;
    request = tb_vk_validation_request(&s->validation);
    r = tb_vk_loader_create_instance(&s->api, &request, "TensorBridge", version, &s->instance);
  }
  tb_dl_keep_new_modules(before);
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkCreateInstance", r);
  if (s->validation.requested && !s->validation.counting)
    tb_log(TB_LOG_WARN, "%s: TB_VULKAN_VALIDATION=1 but the Khronos validation layer or VK_EXT_debug_utils is not available; "
                        "running without validation (install vulkan-validationlayers)", s->label);
  if (!s->instance) return tb_error(TB_ERR_DRIVER, "%s: vkCreateInstance returned VK_SUCCESS but no instance", s->label);
  tb_vk_loader_instance(&s->api, s->instance);
#define LOAD(name, ret, args) s->vk.name = (ret(*) args)s->api.vkGetInstanceProcAddr(s->instance, #name);
  TB_VK_EXEC_INSTANCE_FUNCTIONS(LOAD)
#undef LOAD
  const struct { const char *name; bool present; } required[] = {
      {"vkDestroyInstance", s->api.vkDestroyInstance != NULL},
      {"vkEnumeratePhysicalDevices", s->api.vkEnumeratePhysicalDevices != NULL},
      {"vkGetPhysicalDeviceProperties", s->api.vkGetPhysicalDeviceProperties != NULL},
      {"vkGetPhysicalDeviceMemoryProperties", s->api.vkGetPhysicalDeviceMemoryProperties != NULL},
      {"vkEnumerateDeviceExtensionProperties", s->api.vkEnumerateDeviceExtensionProperties != NULL},
      {"vkGetPhysicalDeviceQueueFamilyProperties", s->vk.vkGetPhysicalDeviceQueueFamilyProperties != NULL},
      {"vkCreateDevice", s->vk.vkCreateDevice != NULL},
      {"vkGetDeviceProcAddr", s->vk.vkGetDeviceProcAddr != NULL}};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    if (!required[i].present)
      return tb_error(TB_ERR_DRIVER, "%s: %s not available from the Vulkan loader; reinstall libvulkan1 and the driver", s->label,
                      required[i].name);
  s->has_properties2 = version >= TB_VK_API_VERSION_1_1 && s->api.vkGetPhysicalDeviceProperties2 && s->api.vkGetPhysicalDeviceMemoryProperties2;
  tb_vk_validation_attach(NULL, &s->api, s->instance, &s->validation);
  return TB_OK;
}

/* The device UUID as discovery formats it, "" when the driver cannot say. */
static void device_uuid(vk_state *s, tb_vk_physical_device phys, char *out, size_t cap) {
  out[0] = '\0';
  tb_vk_physical_device_properties props;
  s->api.vkGetPhysicalDeviceProperties(phys, &props);
  if (!s->has_properties2 || props.apiVersion < TB_VK_API_VERSION_1_1) return;
  tb_vk_id_properties id = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  tb_vk_physical_device_properties2 p2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &id};
  s->api.vkGetPhysicalDeviceProperties2(phys, &p2);
  tb_uuid_text(id.deviceUUID, out, cap);
}

/* vulkan:N is the N-th device in enumeration order; when its UUID is not the one discovery saw (devices
 * came or went since), the device with that UUID. */
static tb_status find_physical_device(vk_state *s, const tb_device_info *info) {
  tb_vk_physical_device devices[MAX_PHYSICAL_DEVICES];
  uint32_t count = MAX_PHYSICAL_DEVICES;
  tb_vk_result r = s->api.vkEnumeratePhysicalDevices(s->instance, &count, devices);
  if (r != TB_VK_SUCCESS && r != TB_VK_INCOMPLETE) return tb_vk_fail(s, "vkEnumeratePhysicalDevices", r);
  if ((uint32_t)info->index >= count)
    return tb_error(TB_ERR_NOT_FOUND, "%s: the Vulkan driver now reports %u device%s, so there is no device %d; run `tb devices` again",
                    s->label, count, count == 1 ? "" : "s", info->index);
  s->phys = devices[info->index];
  const char *want = info->uuid ? info->uuid : "";
  if (!want[0]) return TB_OK;
  char uuid[TB_UUID_TEXT_SIZE];
  device_uuid(s, s->phys, uuid, sizeof uuid);
  if (!uuid[0] || strcmp(uuid, want) == 0) return TB_OK;
  for (uint32_t i = 0; i < count; i++) {
    device_uuid(s, devices[i], uuid, sizeof uuid);
    if (strcmp(uuid, want) == 0) {
      s->phys = devices[i];
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_NOT_FOUND, "%s: no Vulkan device has UUID %s any more (device %d now has another); run `tb devices` again",
                  s->label, want, info->index);
}

static void read_properties(vk_state *s) {
  s->api.vkGetPhysicalDeviceProperties(s->phys, &s->props);
  s->api.vkGetPhysicalDeviceMemoryProperties(s->phys, &s->memory);
  s->has_properties2 = s->has_properties2 && s->props.apiVersion >= TB_VK_API_VERSION_1_1;
  s->max_allocation = 0;
  if (s->has_properties2) {
    tb_vk_maintenance3_properties m3 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    tb_vk_physical_device_properties2 p2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &m3};
    s->api.vkGetPhysicalDeviceProperties2(s->phys, &p2);
    s->max_allocation = m3.maxMemoryAllocationSize;
  }
  if (!s->max_allocation)
    for (uint32_t h = 0; h < s->memory.memoryHeapCount && h < TB_VK_MAX_MEMORY_HEAPS; h++)
      if (s->memory.memoryHeaps[h].size > s->max_allocation) s->max_allocation = s->memory.memoryHeaps[h].size;
}

bool tb_vk_has_device_extension(vk_state *s, const char *name) {
  uint32_t count = 0;
  if (s->api.vkEnumerateDeviceExtensionProperties(s->phys, NULL, &count, NULL) != TB_VK_SUCCESS || count == 0) return false;
  if (count > MAX_DEVICE_EXTENSIONS) count = MAX_DEVICE_EXTENSIONS;
  tb_vk_extension_properties *exts = calloc(count, sizeof *exts);
  if (!exts) return false;
  bool found = false;
  tb_vk_result r = s->api.vkEnumerateDeviceExtensionProperties(s->phys, NULL, &count, exts);
  if (r == TB_VK_SUCCESS || r == TB_VK_INCOMPLETE)
    for (uint32_t i = 0; i < count && !found; i++) found = strncmp(exts[i].extensionName, name, sizeof exts[i].extensionName) == 0;
  free(exts);
  return found;
}

/* The first queue family that can run compute (and therefore transfers). */
static tb_status pick_queue_family(vk_state *s) {
  tb_vk_queue_family_properties families[MAX_QUEUE_FAMILIES];
  uint32_t count = MAX_QUEUE_FAMILIES;
  s->vk.vkGetPhysicalDeviceQueueFamilyProperties(s->phys, &count, families);
  for (uint32_t i = 0; i < count && i < MAX_QUEUE_FAMILIES; i++) {
    if ((families[i].queueFlags & TB_VK_QUEUE_COMPUTE_BIT) && families[i].queueCount > 0) {
      s->queue_family = i;
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_UNSUPPORTED, "%s: none of its %u Vulkan queue families can run compute work", s->label, count);
}

/* fp16 kernels need float16 arithmetic and 16-bit storage buffers (Vulkan 1.2 device): when both are
 * reported, the two feature structures (with only those two set) go in the create info's chain. */
static bool fp16_features(vk_state *s, tb_vk_16bit_storage_features *storage, tb_vk_float16_int8_features *f16) {
  if (!s->has_properties2 || s->props.apiVersion < TB_VK_API_VERSION_1_2 || !s->api.vkGetPhysicalDeviceFeatures2) return false;
  *f16 = (tb_vk_float16_int8_features){.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  *storage = (tb_vk_16bit_storage_features){.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, .pNext = f16};
  tb_vk_physical_device_features2 f2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = storage};
  s->api.vkGetPhysicalDeviceFeatures2(s->phys, &f2);
  bool ok = storage->storageBuffer16BitAccess && f16->shaderFloat16;
  *f16 = (tb_vk_float16_int8_features){.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, .shaderFloat16 = 1};
  *storage = (tb_vk_16bit_storage_features){.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, .pNext = f16,
                                            .storageBuffer16BitAccess = 1};
  return ok;
}

static tb_status create_device(vk_state *s) {
  const float priority = 1.0f;
  tb_vk_device_queue_create_info queue = {
      .sType = TB_VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
      .queueFamilyIndex = s->queue_family,
      .queueCount = 1,
      .pQueuePriorities = &priority,
  };
  const char *extensions[1] = {BUDGET_EXTENSION};
  s->has_budget = s->has_properties2 && tb_vk_has_device_extension(s, BUDGET_EXTENSION);
  tb_vk_device_create_info info = {
      .sType = TB_VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
      .queueCreateInfoCount = 1,
      .pQueueCreateInfos = &queue,
      .enabledExtensionCount = s->has_budget ? 1u : 0u,
      .ppEnabledExtensionNames = s->has_budget ? extensions : NULL,
  };
  tb_vk_16bit_storage_features storage;
  tb_vk_float16_int8_features f16;
  s->fp16 = fp16_features(s, &storage, &f16);
  if (s->fp16) info.pNext = &storage;
  tb_vk_result r = s->vk.vkCreateDevice(s->phys, &info, NULL, &s->device);
  if (r != TB_VK_SUCCESS) {
    s->device = NULL;
    return tb_vk_fail(s, "vkCreateDevice", r);
  }
#define LOAD(name, ret, args) s->vk.name = (ret(*) args)s->vk.vkGetDeviceProcAddr(s->device, #name);
  TB_VK_DEVICE_FUNCTIONS(LOAD)
#define CHECK(name, ret, args) \
  if (!s->vk.name) return tb_error(TB_ERR_DRIVER, "%s: the Vulkan driver does not provide %s", s->label, #name);
  TB_VK_DEVICE_FUNCTIONS(CHECK)
#undef CHECK
  TB_VK_COMPUTE_FUNCTIONS(LOAD)
#define CHECK_COMPUTE(name, ret, args) \
  if (!s->vk.name && !s->compute_missing[0]) snprintf(s->compute_missing, sizeof s->compute_missing, "%s", #name);
  TB_VK_COMPUTE_FUNCTIONS(CHECK_COMPUTE)
#undef CHECK_COMPUTE
#undef LOAD
  s->vk.vkGetDeviceQueue(s->device, s->queue_family, 0, &s->queue);
  return TB_OK;
}

static tb_status create_commands(vk_state *s) {
  tb_vk_command_pool_create_info pool = {
      .sType = TB_VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
      .flags = TB_VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
      .queueFamilyIndex = s->queue_family,
  };
  tb_vk_result r = s->vk.vkCreateCommandPool(s->device, &pool, NULL, &s->pool);
  if (r != TB_VK_SUCCESS) {
    s->pool = 0;
    return tb_vk_fail(s, "vkCreateCommandPool", r);
  }
  tb_vk_command_buffer_allocate_info alloc = {
      .sType = TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = s->pool,
      .level = 0,
      .commandBufferCount = 1,
  };
  r = s->vk.vkAllocateCommandBuffers(s->device, &alloc, &s->cmd);
  if (r != TB_VK_SUCCESS) {
    s->cmd = NULL;
    return tb_vk_fail(s, "vkAllocateCommandBuffers", r);
  }
  tb_vk_fence_create_info fence = {.sType = TB_VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  r = s->vk.vkCreateFence(s->device, &fence, NULL, &s->fence);
  if (r != TB_VK_SUCCESS) {
    s->fence = 0;
    return tb_vk_fail(s, "vkCreateFence", r);
  }
  return TB_OK;
}

tb_status tb_vk_device_open(const tb_device_info *info, vk_state **out) {
  *out = NULL;
  if (!info || info->backend != TB_BACKEND_VULKAN || info->index < 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "the Vulkan backend needs a Vulkan device from discovery (vulkan:N), not %s",
                    info && info->device ? info->device : "(none)");
  vk_state *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "vulkan:%d: out of host memory opening the device", info->index);
  pthread_mutex_init(&s->lock, NULL);
  snprintf(s->label, sizeof s->label, "vulkan:%d (%s)", info->index, info->name && info->name[0] ? info->name : "?");
  tb_status st = open_loader(s);
  if (st == TB_OK) st = create_instance(s);
  if (st == TB_OK) st = find_physical_device(s, info);
  if (st == TB_OK) {
    read_properties(s);
    st = pick_queue_family(s);
  }
  if (st == TB_OK) st = create_device(s);
  if (st == TB_OK) st = create_commands(s);
  if (st != TB_OK) {
    tb_vk_device_close(s);
    return st;
  }
  tb_vk_memory_init(s);
  *out = s;
  return TB_OK;
}

/* Count the device's validation messages for tb_vk_closed_validation_messages and say so on stderr, so
 * that a run with TB_VULKAN_VALIDATION=1 (tb run, tb_conformance) shows them without a debugger. */
static void record_validation(const vk_state *s) {
  unsigned n = s->validation.warnings + s->validation.errors;
  if (n)
    tb_log(TB_LOG_WARN, "%s: the Khronos validation layer reported %u error(s) and %u warning(s); first: %s", s->label,
           s->validation.errors, s->validation.warnings, s->validation.first_message);
  pthread_mutex_lock(&closed_lock);
  closed_messages += n;
  if (n && !closed_first[0]) snprintf(closed_first, sizeof closed_first, "%s", s->validation.first_message);
  pthread_mutex_unlock(&closed_lock);
}

void tb_vk_device_close(vk_state *s) {
  if (!s) return;
  if (s->device) {
    if (s->vk.vkDeviceWaitIdle) s->vk.vkDeviceWaitIdle(s->device);
    tb_vk_compute_release(s);
    tb_vk_memory_release(s);
    if (s->fence) s->vk.vkDestroyFence(s->device, s->fence, NULL);
    if (s->pool) s->vk.vkDestroyCommandPool(s->device, s->pool, NULL); /* frees the command buffer */
    if (s->vk.vkDestroyDevice) s->vk.vkDestroyDevice(s->device, NULL);
  }
  if (s->instance) {
    tb_vk_validation_detach(&s->api, s->instance, &s->validation);
    if (s->api.vkDestroyInstance) s->api.vkDestroyInstance(s->instance, NULL);
  }
  record_validation(s);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

tb_status tb_vk_begin(vk_state *s) {
  tb_vk_command_buffer_begin_info begin = {
      .sType = TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = TB_VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  tb_vk_result r = s->vk.vkBeginCommandBuffer(s->cmd, &begin); /* resets it: the pool allows that */
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, "vkBeginCommandBuffer", r);
}

tb_status tb_vk_submit_wait(vk_state *s) {
  tb_vk_result r = s->vk.vkEndCommandBuffer(s->cmd);
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkEndCommandBuffer", r);
  r = s->vk.vkResetFences(s->device, 1, &s->fence);
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkResetFences", r);
  tb_vk_submit_info submit = {
      .sType = TB_VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &s->cmd,
  };
  r = s->vk.vkQueueSubmit(s->queue, 1, &submit, s->fence);
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkQueueSubmit", r);
  r = s->vk.vkWaitForFences(s->device, 1, &s->fence, 1, FENCE_TIMEOUT_NS);
  if (r == TB_VK_TIMEOUT)
    return tb_error(TB_ERR_DRIVER, "%s: a copy did not finish within %llu s (vkWaitForFences returned %d VK_TIMEOUT)", s->label,
                    FENCE_TIMEOUT_NS / 1000000000ull, (int)r);
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, "vkWaitForFences", r);
}

void tb_vk_barrier(vk_state *s, tb_vk_flags dst_stage, tb_vk_flags dst_access) {
  tb_vk_memory_barrier barrier = {
      .sType = TB_VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = TB_VK_ACCESS_TRANSFER_WRITE_BIT,
      .dstAccessMask = dst_access,
  };
  s->vk.vkCmdPipelineBarrier(s->cmd, TB_VK_PIPELINE_STAGE_TRANSFER_BIT, dst_stage, 0, 1, &barrier, 0, NULL, 0, NULL);
}

unsigned tb_vk_closed_validation_messages(char *first, size_t cap) {
  pthread_mutex_lock(&closed_lock);
  unsigned n = closed_messages;
  if (first && cap) snprintf(first, cap, "%s", closed_first);
  pthread_mutex_unlock(&closed_lock);
  return n;
}
