/* The plain Vulkan allocation call, vkAllocateMemory/vkFreeMemory of the first device-local memory type,
 * on the physical device a backend uses (found by position, checked by name): libvulkan.so.1 opened with
 * dlopen (TB_VULKAN_LIB overrides the name), one instance and one logical device with one queue. Only raw
 * device memory is measured: no VkBuffer is created or bound. The few structs and prototypes are here. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plain_alloc.h"

typedef int32_t VkResult;
typedef struct vk_opaque *VkHandle; /* VkInstance, VkPhysicalDevice, VkDevice: dispatchable pointers */
typedef uint64_t VkDeviceMemory;

#define VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT 0x1u
#define VK_API_VERSION_1_1 ((1u << 22) | (1u << 12))
#define MAX_GPUS 16

typedef struct VkApplicationInfo {
  int sType; /* 0 */
  const void *pNext;
  const char *pApplicationName;
  uint32_t applicationVersion;
  const char *pEngineName;
  uint32_t engineVersion;
  uint32_t apiVersion;
} VkApplicationInfo;

typedef struct VkInstanceCreateInfo {
  int sType; /* 1 */
  const void *pNext;
  uint32_t flags;
  const VkApplicationInfo *pApplicationInfo;
  uint32_t enabledLayerCount;
  const char *const *ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char *const *ppEnabledExtensionNames;
} VkInstanceCreateInfo;

typedef struct VkDeviceQueueCreateInfo {
  int sType; /* 2 */
  const void *pNext;
  uint32_t flags;
  uint32_t queueFamilyIndex;
  uint32_t queueCount;
  const float *pQueuePriorities;
} VkDeviceQueueCreateInfo;

typedef struct VkDeviceCreateInfo {
  int sType; /* 3 */
  const void *pNext;
  uint32_t flags;
  uint32_t queueCreateInfoCount;
  const VkDeviceQueueCreateInfo *pQueueCreateInfos;
  uint32_t enabledLayerCount;
  const char *const *ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char *const *ppEnabledExtensionNames;
  const void *pEnabledFeatures;
} VkDeviceCreateInfo;

typedef struct VkMemoryAllocateInfo {
  int sType; /* 5 */
  const void *pNext;
  uint64_t allocationSize;
  uint32_t memoryTypeIndex;
} VkMemoryAllocateInfo;

typedef struct VkPhysicalDeviceMemoryProperties {
  uint32_t memoryTypeCount;
  struct {
    uint32_t propertyFlags;
    uint32_t heapIndex;
  } memoryTypes[32];
  uint32_t memoryHeapCount;
  struct {
    uint64_t size;
    uint32_t flags;
  } memoryHeaps[16];
} VkPhysicalDeviceMemoryProperties;

/* VkPhysicalDeviceProperties begins apiVersion, driverVersion, vendorID, deviceID, deviceType, then
 * deviceName[256]; the rest (limits, sparse properties) is left as bytes. */
typedef struct VkPhysicalDeviceProperties {
  uint32_t apiVersion, driverVersion, vendorID, deviceID, deviceType;
  char deviceName[256];
  unsigned char rest[2048];
} VkPhysicalDeviceProperties;

typedef struct vulkan_api {
  void *lib;
  VkResult (*CreateInstance)(const VkInstanceCreateInfo *, const void *, VkHandle *);
  void (*DestroyInstance)(VkHandle, const void *);
  VkResult (*EnumeratePhysicalDevices)(VkHandle, uint32_t *, VkHandle *);
  void (*GetPhysicalDeviceProperties)(VkHandle, VkPhysicalDeviceProperties *);
  void (*GetPhysicalDeviceMemoryProperties)(VkHandle, VkPhysicalDeviceMemoryProperties *);
  VkResult (*CreateDevice)(VkHandle, const VkDeviceCreateInfo *, const void *, VkHandle *);
  void (*DestroyDevice)(VkHandle, const void *);
  VkResult (*AllocateMemory)(VkHandle, const VkMemoryAllocateInfo *, const void *, VkDeviceMemory *);
  void (*FreeMemory)(VkHandle, VkDeviceMemory, const void *);
  VkHandle instance, device;
  uint32_t memory_type;
} vulkan_api;

static void *vulkan_alloc(void *state, size_t bytes) {
  vulkan_api *api = state;
  VkMemoryAllocateInfo info = {.sType = 5, .allocationSize = bytes, .memoryTypeIndex = api->memory_type};
  VkDeviceMemory memory = 0;
  if (api->AllocateMemory(api->device, &info, NULL, &memory) != 0) return NULL;
  return (void *)(uintptr_t)memory;
}

static void vulkan_release(void *state, void *allocation) {
  vulkan_api *api = state;
  api->FreeMemory(api->device, (VkDeviceMemory)(uintptr_t)allocation, NULL);
}

static void vulkan_close(void *state) {
  vulkan_api *api = state;
  if (api->device) api->DestroyDevice(api->device, NULL);
  if (api->instance) api->DestroyInstance(api->instance, NULL);
  dlclose(api->lib);
  free(api);
}

static bool load(vulkan_api *api) {
#define LOAD(name) (*(void **)&api->name = dlsym(api->lib, "vk" #name)) != NULL
  return LOAD(CreateInstance) && LOAD(DestroyInstance) && LOAD(EnumeratePhysicalDevices) &&
         LOAD(GetPhysicalDeviceProperties) && LOAD(GetPhysicalDeviceMemoryProperties) && LOAD(CreateDevice) &&
         LOAD(DestroyDevice) && LOAD(AllocateMemory) && LOAD(FreeMemory);
#undef LOAD
}

/* The physical device at the backend's index whose name matches, else the first whose name matches. */
static VkHandle find_gpu(vulkan_api *api, const tb_device_info *device, uint32_t *count) {
  VkHandle gpus[MAX_GPUS];
  *count = MAX_GPUS;
  if (api->EnumeratePhysicalDevices(api->instance, count, gpus) < 0) *count = 0;
  for (uint32_t i = 0; i < *count; i++) {
    uint32_t at = device->index >= 0 ? ((uint32_t)device->index + i) % *count : i;
    VkPhysicalDeviceProperties props;
    memset(&props, 0, sizeof props);
    api->GetPhysicalDeviceProperties(gpus[at], &props);
    if (strncmp(props.deviceName, device->name, sizeof props.deviceName) == 0) return gpus[at];
  }
  return NULL;
}

/* Instance, physical device, memory type and logical device; a sentence in `why` when one fails. */
static bool open_device(vulkan_api *api, const tb_device_info *device, char *why, size_t why_size) {
  VkApplicationInfo app = {.sType = 0, .pApplicationName = "tb alloc_bench", .apiVersion = VK_API_VERSION_1_1};
  VkInstanceCreateInfo instance_info = {.sType = 1, .pApplicationInfo = &app};
  VkResult r = api->CreateInstance(&instance_info, NULL, &api->instance);
  if (r != 0) {
    snprintf(why, why_size, "vkCreateInstance returned %d", r);
    api->instance = NULL;
    return false;
  }
  uint32_t count = 0;
  VkHandle gpu = find_gpu(api, device, &count);
  if (!gpu) {
    snprintf(why, why_size, "no Vulkan physical device named '%s' among %u", device->name, count);
    return false;
  }
  VkPhysicalDeviceMemoryProperties memory;
  memset(&memory, 0, sizeof memory);
  api->GetPhysicalDeviceMemoryProperties(gpu, &memory);
  api->memory_type = UINT32_MAX;
  for (uint32_t i = 0; i < memory.memoryTypeCount && i < 32 && api->memory_type == UINT32_MAX; i++)
    if (memory.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) api->memory_type = i;
  if (api->memory_type == UINT32_MAX) {
    snprintf(why, why_size, "'%s' has no device-local memory type", device->name);
    return false;
  }
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue = {.sType = 2, .queueFamilyIndex = 0, .queueCount = 1, .pQueuePriorities = &priority};
  VkDeviceCreateInfo device_info = {.sType = 3, .queueCreateInfoCount = 1, .pQueueCreateInfos = &queue};
  r = api->CreateDevice(gpu, &device_info, NULL, &api->device);
  if (r != 0) {
    snprintf(why, why_size, "vkCreateDevice on '%s' returned %d", device->name, r);
    api->device = NULL;
    return false;
  }
  return true;
}

bool plain_vulkan_open(const tb_device_info *device, plain_alloc *out, char *why, size_t why_size) {
  const char *lib_name = getenv("TB_VULKAN_LIB") ? getenv("TB_VULKAN_LIB") : "libvulkan.so.1";
  vulkan_api *api = calloc(1, sizeof *api);
  if (!api) {
    snprintf(why, why_size, "out of host memory");
    return false;
  }
  api->lib = dlopen(lib_name, RTLD_NOW | RTLD_LOCAL);
  if (!api->lib || !load(api)) {
    snprintf(why, why_size, "%s: %s", lib_name, api->lib ? "a Vulkan symbol is missing" : dlerror());
    if (api->lib) dlclose(api->lib);
    free(api);
    return false;
  }
  if (!open_device(api, device, why, why_size)) {
    vulkan_close(api);
    return false;
  }
  *out = (plain_alloc){"vkAllocateMemory/vkFreeMemory", api, vulkan_alloc, vulkan_release, vulkan_close};
  return true;
}
