/* One Vulkan physical device to one tb_device_info: identity, driver, UUID, PCI location, subgroup size,
 * fp16/int8/fp64 support, cooperative matrices, memory heaps and budget. Only queries: no VkDevice. */
#include "discover/vulkan_device.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/uuid.h"
#include "discover/pci.h"

#define VK_BACKEND TB_BACKEND_VULKAN
#define MAX_DEVICE_EXTENSIONS 4096u
#define SUBGROUP_FEATURE_BASIC 0x1u
#define SHADER_STAGE_COMPUTE 0x20u

typedef struct vk_extensions {
  tb_vk_extension_properties *items;
  uint32_t count;
} vk_extensions;

/* Everything asked of the driver about one device; has_* says which extension structures it filled. */
typedef struct vk_facts {
  tb_vk_physical_device_properties props;
  tb_vk_id_properties id;
  tb_vk_driver_properties driver;
  tb_vk_subgroup_properties subgroup;
  tb_vk_pci_bus_info_properties pci;
  tb_vk_physical_device_features features;
  tb_vk_float16_int8_features f16i8;
  tb_vk_memory_properties memory;
  tb_vk_memory_budget_properties budget;
  bool has_id, has_driver, has_subgroup, has_pci, has_f16i8, has_budget;
} vk_facts;

static bool at_least(uint32_t version, uint32_t major, uint32_t minor) {
  uint32_t ma = TB_VK_VERSION_MAJOR(version), mi = TB_VK_VERSION_MINOR(version);
  return ma > major || (ma == major && mi >= minor);
}

static bool has_ext(const vk_extensions *e, const char *name) {
  for (uint32_t i = 0; i < e->count; i++)
    if (strncmp(e->items[i].extensionName, name, sizeof e->items[i].extensionName) == 0) return true;
  return false;
}

/* Device extensions, asked again when the count grows between the two calls (VK_INCOMPLETE). */
static void read_extensions(tb_device_list *list, const tb_vk_api *api, tb_vk_physical_device phys, const char *device,
                            vk_extensions *out) {
  out->items = NULL;
  out->count = 0;
  for (int attempt = 0; attempt < 3; attempt++) {
    uint32_t count = 0;
    tb_vk_result r = api->vkEnumerateDeviceExtensionProperties(phys, NULL, &count, NULL);
    if (r != TB_VK_SUCCESS) {
      tb_report_check(list, VK_BACKEND, false, "vkEnumerateDeviceExtensionProperties", "%s: %d %s", device, (int)r,
                      tb_vk_result_name(r));
      return;
    }
    if (count == 0) return;
    uint32_t cap = count > MAX_DEVICE_EXTENSIONS ? MAX_DEVICE_EXTENSIONS : count;
    tb_vk_extension_properties *items = calloc(cap, sizeof *items);
    if (!items) {
      list->arena.failed = true;
      return;
    }
    uint32_t written = cap;
    r = api->vkEnumerateDeviceExtensionProperties(phys, NULL, &written, items);
    if (r == TB_VK_SUCCESS || (r == TB_VK_INCOMPLETE && (cap < count || attempt == 2))) {
      out->items = items;
      out->count = written < cap ? written : cap;
      return;
    }
    free(items);
    if (r != TB_VK_INCOMPLETE) {
      tb_report_check(list, VK_BACKEND, false, "vkEnumerateDeviceExtensionProperties", "%s: %d %s", device, (int)r,
                      tb_vk_result_name(r));
      return;
    }
  }
}

#define CHAIN(tail, s)  \
  do {                  \
    *(tail) = &(s);     \
    (tail) = &(s).pNext; \
  } while (0)

static void query(const tb_vk_api *api, uint32_t instance_version, tb_vk_physical_device phys, const vk_extensions *exts,
                  vk_facts *f) {
  memset(f, 0, sizeof *f);
  api->vkGetPhysicalDeviceProperties(phys, &f->props);
  uint32_t device_version = f->props.apiVersion;
  bool v11 = at_least(instance_version, 1, 1) && at_least(device_version, 1, 1);
  bool v12 = v11 && at_least(instance_version, 1, 2) && at_least(device_version, 1, 2);

  if (v11 && api->vkGetPhysicalDeviceProperties2) {
    tb_vk_physical_device_properties2 props2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    void **tail = &props2.pNext;
    f->id.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    f->subgroup.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    f->driver.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    f->pci.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT;
    CHAIN(tail, f->id);
    CHAIN(tail, f->subgroup);
    f->has_id = f->has_subgroup = true;
    if (v12 || has_ext(exts, "VK_KHR_driver_properties")) {
      CHAIN(tail, f->driver);
      f->has_driver = true;
    }
    if (has_ext(exts, "VK_EXT_pci_bus_info")) {
      CHAIN(tail, f->pci);
      f->has_pci = true;
    }
    api->vkGetPhysicalDeviceProperties2(phys, &props2);
    f->props = props2.properties;
  }

  if (v11 && api->vkGetPhysicalDeviceFeatures2) {
    tb_vk_physical_device_features2 features2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    void **tail = &features2.pNext;
    f->f16i8.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    if (v12 || has_ext(exts, "VK_KHR_shader_float16_int8")) {
      CHAIN(tail, f->f16i8);
      f->has_f16i8 = true;
    }
    api->vkGetPhysicalDeviceFeatures2(phys, &features2);
    f->features = features2.features;
  } else {
    api->vkGetPhysicalDeviceFeatures(phys, &f->features);
  }

  if (v11 && api->vkGetPhysicalDeviceMemoryProperties2) {
    tb_vk_memory_properties2 memory2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    void **tail = &memory2.pNext;
    f->budget.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
    if (has_ext(exts, "VK_EXT_memory_budget")) {
      CHAIN(tail, f->budget);
      f->has_budget = true;
    }
    api->vkGetPhysicalDeviceMemoryProperties2(phys, &memory2);
    f->memory = memory2.memoryProperties;
  } else {
    api->vkGetPhysicalDeviceMemoryProperties(phys, &f->memory);
  }
  if (f->memory.memoryHeapCount > TB_VK_MAX_MEMORY_HEAPS) f->memory.memoryHeapCount = TB_VK_MAX_MEMORY_HEAPS;
}

static tb_device_type device_type(int32_t vk_type) {
  switch (vk_type) {
    case TB_VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return TB_DEVICE_INTEGRATED_GPU;
    case TB_VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return TB_DEVICE_DISCRETE_GPU;
    case TB_VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return TB_DEVICE_VIRTUAL_GPU;
    case TB_VK_PHYSICAL_DEVICE_TYPE_CPU: return TB_DEVICE_CPU;
    default: return TB_DEVICE_OTHER;
  }
}

/* memory_total: the device-local heaps (a CPU device: its largest heap); memory_free from the budget. */
static void set_memory(tb_device_list *list, tb_device_info *dev, const vk_facts *f) {
  const tb_vk_memory_properties *m = &f->memory;
  uint32_t largest = 0;
  for (uint32_t h = 0; h < m->memoryHeapCount; h++) {
    bool local = m->memoryHeaps[h].flags & TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    char key[32];
    snprintf(key, sizeof key, "memory_heap_%u", h);
    tb_dev_prop(list, dev, key, "%llu bytes%s", (unsigned long long)m->memoryHeaps[h].size, local ? ", device_local" : "");
    if (m->memoryHeaps[h].size > m->memoryHeaps[largest].size) largest = h;
  }
  tb_dev_prop(list, dev, "memory_heap_count", "%u", m->memoryHeapCount);
  tb_dev_prop(list, dev, "memory_budget", "%s", f->has_budget ? "VK_EXT_memory_budget" : "no");
  uint64_t total = 0, free_bytes = 0;
  for (uint32_t h = 0; h < m->memoryHeapCount; h++) {
    bool counted = dev->type == TB_DEVICE_CPU ? h == largest : (m->memoryHeaps[h].flags & TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
    if (!counted) continue;
    total += m->memoryHeaps[h].size;
    if (f->budget.heapBudget[h] > f->budget.heapUsage[h]) free_bytes += f->budget.heapBudget[h] - f->budget.heapUsage[h];
  }
  dev->memory_total = total;
  dev->memory_total_known = total > 0;
  if (f->has_budget && total > 0) {
    dev->memory_free = free_bytes < total ? free_bytes : total;
    dev->memory_free_known = true;
  }
  if (dev->type == TB_DEVICE_CPU || dev->type == TB_DEVICE_INTEGRATED_GPU) tb_dev_set(list, &dev->memory_type, "system");
}

static void set_capabilities(tb_device_list *list, tb_device_info *dev, const vk_facts *f, const vk_extensions *exts) {
  const tb_vk_bool32 *feat = f->features.flags;
  dev->dtypes = TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_BOOL);
  if (feat[TB_VK_FEATURE_SHADER_FLOAT64]) {
    dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_F64);
    dev->features |= TB_FEATURE_BIT(TB_FEATURE_FP64);
  }
  if (feat[TB_VK_FEATURE_SHADER_INT64]) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_I64);
  if (feat[TB_VK_FEATURE_SHADER_INT16]) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_I16);
  if (f->has_f16i8 && f->f16i8.shaderFloat16) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_F16);
  if (f->has_f16i8 && f->f16i8.shaderInt8) dev->dtypes |= TB_DTYPE_BIT(TB_DTYPE_I8) | TB_DTYPE_BIT(TB_DTYPE_U8);
  tb_dev_prop(list, dev, "shader_float16", "%s", f->has_f16i8 && f->f16i8.shaderFloat16 ? "yes" : "no");
  tb_dev_prop(list, dev, "shader_int8", "%s", f->has_f16i8 && f->f16i8.shaderInt8 ? "yes" : "no");
  const char *coop = has_ext(exts, "VK_KHR_cooperative_matrix") ? "VK_KHR_cooperative_matrix"
                     : has_ext(exts, "VK_NV_cooperative_matrix") ? "VK_NV_cooperative_matrix" : NULL;
  if (coop) {
    dev->features |= TB_FEATURE_BIT(TB_FEATURE_COOPERATIVE_MATRIX);
    tb_dev_prop(list, dev, "cooperative_matrix", "%s", coop);
  }
  if (f->has_subgroup && f->subgroup.subgroupSize > 0 && (f->subgroup.supportedOperations & SUBGROUP_FEATURE_BASIC) &&
      (f->subgroup.supportedStages & SHADER_STAGE_COMPUTE))
    dev->features |= TB_FEATURE_BIT(TB_FEATURE_SUBGROUPS);
  if (dev->type == TB_DEVICE_CPU || dev->type == TB_DEVICE_INTEGRATED_GPU)
    dev->features |= TB_FEATURE_BIT(TB_FEATURE_UNIFIED_MEMORY);
  tb_dev_set(list, &dev->capability_source, "Vulkan device query");
}

static void set_identity(tb_device_list *list, tb_device_info *dev, const vk_facts *f) {
  const tb_vk_physical_device_properties *p = &f->props;
  char text[300];
  tb_vk_fixed_text(p->deviceName, sizeof p->deviceName, text, sizeof text);
  tb_dev_set(list, &dev->name, "%s", text[0] ? text : "unnamed Vulkan device");
  const char *vendor = tb_vk_vendor_name(p->vendorID);
  if (vendor) tb_dev_set(list, &dev->vendor, "%s", vendor);
  else tb_dev_set(list, &dev->vendor, "0x%x", p->vendorID);
  dev->type = device_type(p->deviceType);
  tb_dev_prop(list, dev, "vendor_id", "0x%04x", p->vendorID);
  tb_dev_prop(list, dev, "device_id", "0x%04x", p->deviceID);
  tb_vk_driver_version_text(p->vendorID, p->driverVersion, text, sizeof text);
  tb_dev_set(list, &dev->driver_version, "%s", text);
  tb_vk_api_version_text(p->apiVersion, text, sizeof text);
  tb_dev_prop(list, dev, "api_version", "%s", text);
  if (f->has_driver) {
    tb_vk_fixed_text(f->driver.driverName, sizeof f->driver.driverName, text, sizeof text);
    tb_dev_prop(list, dev, "driver_name", "%s", text);
    tb_vk_fixed_text(f->driver.driverInfo, sizeof f->driver.driverInfo, text, sizeof text);
    tb_dev_prop(list, dev, "driver_info", "%s", text);
    tb_dev_prop(list, dev, "driver_id", "%d", (int)f->driver.driverID);
    const tb_vk_conformance_version *c = &f->driver.conformanceVersion;
    tb_dev_prop(list, dev, "conformance_version", "%u.%u.%u.%u", c->major, c->minor, c->subminor, c->patch);
  }
  if (f->has_id) {
    tb_uuid_text(f->id.deviceUUID, text, sizeof text);
    if (text[0]) tb_dev_set(list, &dev->uuid, "%s", text);
    tb_uuid_text(f->id.driverUUID, text, sizeof text);
    if (text[0]) tb_dev_prop(list, dev, "driver_uuid", "%s", text);
  }
  if (f->has_pci) {
    const tb_vk_pci_bus_info_properties *b = &f->pci;
    if (b->pciDomain <= 0xffffu && b->pciBus <= 0xffu && b->pciDevice <= 0x1fu && b->pciFunction <= 7u) {
      tb_pci_format(b->pciDomain, b->pciBus, b->pciDevice, b->pciFunction, text, sizeof text);
      tb_dev_set(list, &dev->pci_bus_id, "%s", text);
    } else {
      tb_report_check(list, VK_BACKEND, false, dev->device, "VK_EXT_pci_bus_info out of range: domain %u bus %u device %u function %u",
                      b->pciDomain, b->pciBus, b->pciDevice, b->pciFunction);
    }
  }
}

static void set_limits(tb_device_list *list, tb_device_info *dev, const vk_facts *f) {
  const tb_vk_limits *l = &f->props.limits;
  if (f->has_subgroup) {
    tb_dev_prop(list, dev, "subgroup_size", "%u", f->subgroup.subgroupSize);
    tb_dev_prop(list, dev, "subgroup_operations", "0x%x", f->subgroup.supportedOperations);
  }
  tb_dev_prop(list, dev, "max_compute_shared_memory", "%u", l->maxComputeSharedMemorySize);
  tb_dev_prop(list, dev, "max_compute_workgroup_invocations", "%u", l->maxComputeWorkGroupInvocations);
  tb_dev_prop(list, dev, "max_compute_workgroup_size", "%u,%u,%u", l->maxComputeWorkGroupSize[0],
              l->maxComputeWorkGroupSize[1], l->maxComputeWorkGroupSize[2]);
  tb_dev_prop(list, dev, "max_storage_buffer_range", "%u", l->maxStorageBufferRange);
}

void tb_vk_probe_device(tb_device_list *list, const tb_vk_api *api, uint32_t instance_version, tb_vk_physical_device phys) {
  tb_device_info *dev = tb_devlist_add(list, VK_BACKEND);
  if (!dev) return;
  dev->usable = true;
  vk_extensions exts;
  read_extensions(list, api, phys, dev->device, &exts);
  vk_facts *f = malloc(sizeof *f);
  if (!f) {
    free(exts.items);
    list->arena.failed = true;
    return;
  }
  query(api, instance_version, phys, &exts, f);
  set_identity(list, dev, f);
  set_memory(list, dev, f);
  set_capabilities(list, dev, f, &exts);
  set_limits(list, dev, f);
  tb_dev_prop(list, dev, "device_extension_count", "%u", exts.count);
  char api_text[32];
  tb_vk_api_version_text(f->props.apiVersion, api_text, sizeof api_text);
  tb_report_check(list, VK_BACKEND, true, dev->device, "%s (%s, Vulkan %s, driver %s)", dev->name,
                  tb_device_type_name(dev->type), api_text, tb_device_property(dev, "driver_name") ? tb_device_property(dev, "driver_name") : dev->driver_version);
  free(f);
  free(exts.items);
}
