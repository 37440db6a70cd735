/* A fake Vulkan loader for the Vulkan probe's tests, loaded through TB_VULKAN_LIB. It reports three
 * physical devices (a discrete NVIDIA GPU with every extension the probe reads, an integrated Intel
 * GPU, a Vulkan 1.1 virtual GPU) and misbehaves on request: TBT_FAKE_VULKAN=<mode> selects an
 * instance error, a device name without a terminator, a device count that grows between calls, a
 * Vulkan 1.0 loader, a validation layer that reports one warning and one error through the debug-utils
 * messenger ("with_layer"), or a listed layer that fails to load ("layer_broken"). Counters (fake_vulkan_*) let a test that keeps the library open check what the
 * probe did: instances created and destroyed, the apiVersion asked for, 1.1 calls on a 1.0 instance. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/runtime/vulkan_api.h"
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_VULKAN", "fake_vulkan")

#define GIB (1024ull * 1024ull * 1024ull)

typedef struct fake_gpu {
  const char *name;
  uint32_t vendor, device, type, api, driver_version;
  const char *const *extensions;
  uint32_t extension_count;
  uint64_t heap_size[2];
  uint32_t heap_flags[2];
  uint32_t heap_count;
  uint64_t budget0, usage0;
  bool f16, i8, f64;
  uint32_t subgroup;
  uint32_t pci_bus;
} fake_gpu;

static const char *const nvidia_exts[] = {"VK_KHR_swapchain", "VK_EXT_pci_bus_info", "VK_EXT_memory_budget",
                                          "VK_KHR_cooperative_matrix", "VK_KHR_shader_float16_int8"};
static const char *const intel_exts[] = {"VK_KHR_swapchain", "VK_KHR_shader_float16_int8"};
static const char *const virtual_exts[] = {"VK_NV_cooperative_matrix"};

static const fake_gpu gpus[] = {
    {"NVIDIA Fake RTX 4090", 0x10de, 0x2684, TB_VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, TB_VK_MAKE_API_VERSION(1, 3, 277),
     (550u << 22) | (54u << 14) | (14u << 6), nvidia_exts, 5, {24 * GIB, 64 * GIB}, {TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT, 0},
     2, 22 * GIB, 2 * GIB, true, true, true, 32, 0x65},
    {"Fake Intel Graphics", 0x8086, 0xa7a0, TB_VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, TB_VK_MAKE_API_VERSION(1, 3, 255),
     TB_VK_MAKE_API_VERSION(23, 2, 1), intel_exts, 2, {16 * GIB, 0}, {TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT, 0}, 1, 0, 0,
     true, true, false, 16, 0},
    {"Fake Virtual GPU", 0x1af4, 0x1050, TB_VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, TB_VK_MAKE_API_VERSION(1, 1, 0),
     TB_VK_MAKE_API_VERSION(1, 0, 0), virtual_exts, 1, {4 * GIB, 0}, {TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT, 0}, 1, 0, 0,
     false, false, false, 0, 0},
};

static int instance_object, messenger_object;
static int live_instances, created_instances, calls_after_1_0, enumerate_calls, live_messengers;
static tb_vk_debug_callback messenger_callback;
static void *messenger_user_data;
static uint32_t asked_api_version;

int fake_vulkan_live_instances(void);
int fake_vulkan_live_instances(void) { return live_instances; }
int fake_vulkan_created_instances(void);
int fake_vulkan_created_instances(void) { return created_instances; }
int fake_vulkan_calls_after_1_0(void);
int fake_vulkan_calls_after_1_0(void) { return calls_after_1_0; }
int fake_vulkan_live_messengers(void);
int fake_vulkan_live_messengers(void) { return live_messengers; }
uint32_t fake_vulkan_asked_api_version(void);
uint32_t fake_vulkan_asked_api_version(void) { return asked_api_version; }

static bool mode(const char *name) {
  const char *m = getenv("TBT_FAKE_VULKAN");
  return m && strcmp(m, name) == 0;
}

static const fake_gpu *gpu_of(tb_vk_physical_device phys) { return (const fake_gpu *)phys; }

static tb_vk_result enumerate_instance_version(uint32_t *version) {
  *version = TB_VK_MAKE_API_VERSION(1, 3, 280);
  return TB_VK_SUCCESS;
}

static bool layer_listed(void) { return mode("with_layer") || mode("layer_broken"); }

static tb_vk_result enumerate_layers(uint32_t *count, tb_vk_layer_properties *layers) {
  uint32_t n = layer_listed() ? 1 : 0;
  if (layers && *count < n) n = *count;
  if (layers && n) {
    memset(layers, 0, sizeof *layers);
    strcpy(layers->layerName, "VK_LAYER_KHRONOS_validation");
  }
  *count = n;
  return TB_VK_SUCCESS;
}

static tb_vk_result enumerate_instance_extensions(const char *layer, uint32_t *count, tb_vk_extension_properties *exts) {
  if (layer) {
    *count = 0;
    return layer_listed() && strcmp(layer, "VK_LAYER_KHRONOS_validation") == 0 ? TB_VK_SUCCESS : TB_VK_ERROR_LAYER_NOT_PRESENT;
  }
  uint32_t n = layer_listed() ? 1 : 0;
  if (exts && *count < n) n = *count;
  if (exts && n) {
    memset(exts, 0, sizeof *exts);
    strcpy(exts->extensionName, "VK_EXT_debug_utils");
  }
  *count = n;
  return TB_VK_SUCCESS;
}

static void send_message(tb_vk_debug_callback callback, void *user_data, tb_vk_flags severity, const char *id, const char *text) {
  tb_vk_debug_callback_data data = {.sType = TB_VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT,
                                    .pMessageIdName = id, .pMessage = text};
  callback(severity, TB_VK_DEBUG_TYPE_VALIDATION, &data, user_data);
}

/* Layers and extensions must be the ones listed; a messenger chained to the create info hears a warning. */
static tb_vk_result check_layers(const tb_vk_instance_create_info *info) {
  if (info->enabledLayerCount > 0) {
    if (!layer_listed() || mode("layer_broken")) return TB_VK_ERROR_LAYER_NOT_PRESENT;
    if (info->enabledLayerCount != 1 || strcmp(info->ppEnabledLayerNames[0], "VK_LAYER_KHRONOS_validation") != 0)
      return TB_VK_ERROR_LAYER_NOT_PRESENT;
  }
  for (uint32_t i = 0; i < info->enabledExtensionCount; i++)
    if (!layer_listed() || strcmp(info->ppEnabledExtensionNames[i], "VK_EXT_debug_utils") != 0) return TB_VK_ERROR_EXTENSION_NOT_PRESENT;
  for (const tb_vk_debug_messenger_create_info *m = info->pNext; m; m = m->pNext)
    if (m->sType == TB_VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT && (m->messageSeverity & TB_VK_DEBUG_SEVERITY_WARNING))
      send_message(m->pfnUserCallback, m->pUserData, TB_VK_DEBUG_SEVERITY_WARNING, "FAKE-0001", "fake warning at vkCreateInstance");
  return TB_VK_SUCCESS;
}

static tb_vk_result create_instance(const tb_vk_instance_create_info *info, const void *alloc, tb_vk_instance *out) {
  (void)alloc;
  if (mode("incompatible")) return TB_VK_ERROR_INCOMPATIBLE_DRIVER;
  if (mode("init_failed")) return TB_VK_ERROR_INITIALIZATION_FAILED;
  if (info->sType != TB_VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO) return TB_VK_ERROR_INITIALIZATION_FAILED;
  tb_vk_result layers = check_layers(info);
  if (layers != TB_VK_SUCCESS) return layers;
  asked_api_version = info->pApplicationInfo ? info->pApplicationInfo->apiVersion : 0;
  enumerate_calls = 0;
  if (mode("null_instance")) { /* a broken loader: success without an instance */
    *out = NULL;
    return TB_VK_SUCCESS;
  }
  created_instances++;
  live_instances++;
  *out = (tb_vk_instance)&instance_object;
  return TB_VK_SUCCESS;
}

static void destroy_instance(tb_vk_instance instance, const void *alloc) {
  (void)alloc;
  if (instance) live_instances--;
}

static tb_vk_result create_messenger(tb_vk_instance instance, const tb_vk_debug_messenger_create_info *info, const void *alloc,
                                     tb_vk_messenger *out) {
  (void)instance, (void)alloc;
  messenger_callback = info->pfnUserCallback;
  messenger_user_data = info->pUserData;
  live_messengers++;
  *out = (tb_vk_messenger)(uintptr_t)&messenger_object;
  return TB_VK_SUCCESS;
}

static void destroy_messenger(tb_vk_instance instance, tb_vk_messenger messenger, const void *alloc) {
  (void)instance, (void)alloc;
  if (messenger) live_messengers--;
  messenger_callback = NULL;
}

static tb_vk_result enumerate_devices(tb_vk_instance instance, uint32_t *count, tb_vk_physical_device *devices) {
  (void)instance;
  if (!devices && messenger_callback)
    send_message(messenger_callback, messenger_user_data, TB_VK_DEBUG_SEVERITY_ERROR, "FAKE-0002", "fake error at vkEnumeratePhysicalDevices");
  if (mode("enum_error")) return TB_VK_ERROR_INITIALIZATION_FAILED;
  uint32_t n = mode("no_devices") ? 0 : 3;
  if (mode("count_grows") && enumerate_calls++ < 2) n = 1; /* one device at first, three from the second round */
  if (!devices) {
    *count = n;
    return TB_VK_SUCCESS;
  }
  uint32_t written = *count < n ? *count : n;
  if (mode("count_grows") && enumerate_calls == 2) n = 3; /* a device appeared before the ids were asked for */
  for (uint32_t i = 0; i < written; i++) devices[i] = (tb_vk_physical_device)&gpus[i];
  *count = written;
  return written < n ? TB_VK_INCOMPLETE : TB_VK_SUCCESS;
}

static void fill_properties(const fake_gpu *g, tb_vk_physical_device_properties *p) {
  memset(p, 0, sizeof *p);
  p->apiVersion = g->api;
  p->driverVersion = g->driver_version;
  p->vendorID = g->vendor;
  p->deviceID = g->device;
  p->deviceType = (int32_t)g->type;
  if (g == &gpus[0] && mode("unterminated")) memset(p->deviceName, 'X', sizeof p->deviceName); /* no NUL at all */
  else strncpy(p->deviceName, g->name, sizeof p->deviceName - 1);
  p->limits.maxComputeSharedMemorySize = 49152;
  p->limits.maxComputeWorkGroupInvocations = 1024;
  p->limits.maxComputeWorkGroupSize[0] = p->limits.maxComputeWorkGroupSize[1] = 1024;
  p->limits.maxComputeWorkGroupSize[2] = 64;
  p->limits.maxStorageBufferRange = 0xffffffffu;
}

static void get_properties(tb_vk_physical_device phys, tb_vk_physical_device_properties *p) { fill_properties(gpu_of(phys), p); }

static void get_properties2(tb_vk_physical_device phys, tb_vk_physical_device_properties2 *p2) {
  const fake_gpu *g = gpu_of(phys);
  if (mode("old_loader")) calls_after_1_0++;
  fill_properties(g, &p2->properties);
  for (void *next = p2->pNext; next;) {
    int32_t stype = *(const int32_t *)next;
    if (stype == TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES) {
      tb_vk_id_properties *id = next;
      for (int i = 0; i < TB_VK_UUID_SIZE; i++) id->deviceUUID[i] = (uint8_t)(0x10 * (g - gpus + 1) + i);
      memset(id->driverUUID, 0xd0, sizeof id->driverUUID);
      next = id->pNext;
    } else if (stype == TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES) {
      tb_vk_subgroup_properties *s = next;
      s->subgroupSize = g->subgroup;
      s->supportedStages = g->subgroup ? 0x20u : 0;
      s->supportedOperations = g->subgroup ? 0xffu : 0;
      next = s->pNext;
    } else if (stype == TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES) {
      tb_vk_driver_properties *d = next;
      d->driverID = g->vendor == 0x10de ? 4 : 6;
      strcpy(d->driverName, g->vendor == 0x10de ? "NVIDIA" : "Intel open-source Mesa driver");
      strcpy(d->driverInfo, g->vendor == 0x10de ? "550.54.14" : "Mesa 23.2.1");
      d->conformanceVersion = (tb_vk_conformance_version){1, 3, 7, 2};
      next = d->pNext;
    } else if (stype == TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT) {
      tb_vk_pci_bus_info_properties *b = next;
      b->pciDomain = 0, b->pciBus = g->pci_bus, b->pciDevice = 0, b->pciFunction = 0;
      next = b->pNext;
    } else {
      next = ((tb_vk_id_properties *)next)->pNext; /* every structure starts with sType, pNext */
    }
  }
}

static void fill_features(const fake_gpu *g, tb_vk_physical_device_features *f) {
  memset(f, 0, sizeof *f);
  f->flags[TB_VK_FEATURE_SHADER_FLOAT64] = g->f64;
  f->flags[TB_VK_FEATURE_SHADER_INT64] = 1;
  f->flags[TB_VK_FEATURE_SHADER_INT16] = 1;
}

static void get_features(tb_vk_physical_device phys, tb_vk_physical_device_features *f) { fill_features(gpu_of(phys), f); }

static void get_features2(tb_vk_physical_device phys, tb_vk_physical_device_features2 *f2) {
  const fake_gpu *g = gpu_of(phys);
  if (mode("old_loader")) calls_after_1_0++;
  fill_features(g, &f2->features);
  for (void *next = f2->pNext; next;) {
    tb_vk_float16_int8_features *f = next;
    if (f->sType == TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES) {
      f->shaderFloat16 = g->f16;
      f->shaderInt8 = g->i8;
    }
    next = f->pNext;
  }
}

static void fill_memory(const fake_gpu *g, tb_vk_memory_properties *m) {
  memset(m, 0, sizeof *m);
  m->memoryTypeCount = 1;
  m->memoryHeapCount = g->heap_count;
  for (uint32_t h = 0; h < g->heap_count; h++) {
    m->memoryHeaps[h].size = g->heap_size[h];
    m->memoryHeaps[h].flags = g->heap_flags[h];
  }
}

static void get_memory(tb_vk_physical_device phys, tb_vk_memory_properties *m) { fill_memory(gpu_of(phys), m); }

static void get_memory2(tb_vk_physical_device phys, tb_vk_memory_properties2 *m2) {
  const fake_gpu *g = gpu_of(phys);
  if (mode("old_loader")) calls_after_1_0++;
  fill_memory(g, &m2->memoryProperties);
  for (void *next = m2->pNext; next;) {
    tb_vk_memory_budget_properties *b = next;
    if (b->sType == TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT) {
      b->heapBudget[0] = g->budget0;
      b->heapUsage[0] = g->usage0;
      b->heapBudget[1] = 60 * GIB;
      b->heapUsage[1] = 10 * GIB;
    }
    next = b->pNext;
  }
}

static tb_vk_result enumerate_device_extensions(tb_vk_physical_device phys, const char *layer, uint32_t *count,
                                                tb_vk_extension_properties *exts) {
  const fake_gpu *g = gpu_of(phys);
  if (layer) return TB_VK_ERROR_LAYER_NOT_PRESENT;
  if (!exts) {
    *count = g->extension_count;
    return TB_VK_SUCCESS;
  }
  uint32_t written = *count < g->extension_count ? *count : g->extension_count;
  for (uint32_t i = 0; i < written; i++) {
    memset(&exts[i], 0, sizeof exts[i]);
    strncpy(exts[i].extensionName, g->extensions[i], sizeof exts[i].extensionName - 1);
    exts[i].specVersion = 1;
  }
  *count = written;
  return written < g->extension_count ? TB_VK_INCOMPLETE : TB_VK_SUCCESS;
}

tb_vk_void_function vkGetInstanceProcAddr(tb_vk_instance instance, const char *name);
tb_vk_void_function vkGetInstanceProcAddr(tb_vk_instance instance, const char *name) {
  static const struct { const char *name; tb_vk_void_function fn; bool needs_instance; } table[] = {
      {"vkCreateInstance", (tb_vk_void_function)create_instance, false},
      {"vkEnumerateInstanceVersion", (tb_vk_void_function)enumerate_instance_version, false},
      {"vkEnumerateInstanceLayerProperties", (tb_vk_void_function)enumerate_layers, false},
      {"vkEnumerateInstanceExtensionProperties", (tb_vk_void_function)enumerate_instance_extensions, false},
      {"vkDestroyInstance", (tb_vk_void_function)destroy_instance, true},
      {"vkEnumeratePhysicalDevices", (tb_vk_void_function)enumerate_devices, true},
      {"vkGetPhysicalDeviceProperties", (tb_vk_void_function)get_properties, true},
      {"vkGetPhysicalDeviceProperties2", (tb_vk_void_function)get_properties2, true},
      {"vkGetPhysicalDeviceFeatures", (tb_vk_void_function)get_features, true},
      {"vkGetPhysicalDeviceFeatures2", (tb_vk_void_function)get_features2, true},
      {"vkGetPhysicalDeviceMemoryProperties", (tb_vk_void_function)get_memory, true},
      {"vkGetPhysicalDeviceMemoryProperties2", (tb_vk_void_function)get_memory2, true},
      {"vkEnumerateDeviceExtensionProperties", (tb_vk_void_function)enumerate_device_extensions, true},
      {"vkCreateDebugUtilsMessengerEXT", (tb_vk_void_function)create_messenger, true},
      {"vkDestroyDebugUtilsMessengerEXT", (tb_vk_void_function)destroy_messenger, true},
  };
  if (mode("old_loader") && strcmp(name, "vkEnumerateInstanceVersion") == 0) return NULL;
  if (mode("no_enumerate") && strcmp(name, "vkEnumeratePhysicalDevices") == 0) return NULL;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0) return (table[i].needs_instance && !instance) ? NULL : table[i].fn;
  return NULL;
}
