/* Internal: the Vulkan types, structures and entry points the Vulkan probe uses, declared here with the
 * exact layouts of vulkan_core.h so that no Vulkan SDK is needed to build. Names carry a tb_vk_ prefix;
 * tests/unit/test_vulkan_api.c checks sizes and offsets against the system header when it is installed. */
#ifndef TB_RUNTIME_VULKAN_API_H
#define TB_RUNTIME_VULKAN_API_H
#include <stddef.h>
#include <stdint.h>

typedef uint32_t tb_vk_bool32;
typedef uint32_t tb_vk_flags;
typedef uint64_t tb_vk_device_size;
typedef int32_t tb_vk_result;
typedef struct tb_vk_instance_t *tb_vk_instance;
typedef struct tb_vk_physical_device_t *tb_vk_physical_device;
#if UINTPTR_MAX == UINT64_MAX
typedef struct tb_vk_messenger_t *tb_vk_messenger; /* a non-dispatchable handle */
#else
typedef uint64_t tb_vk_messenger;
#endif
typedef void (*tb_vk_void_function)(void);

#define TB_VK_MAKE_API_VERSION(major, minor, patch) (((uint32_t)(major) << 22) | ((uint32_t)(minor) << 12) | (uint32_t)(patch))
#define TB_VK_API_VERSION_1_0 TB_VK_MAKE_API_VERSION(1, 0, 0)
#define TB_VK_API_VERSION_1_1 TB_VK_MAKE_API_VERSION(1, 1, 0)
#define TB_VK_API_VERSION_1_2 TB_VK_MAKE_API_VERSION(1, 2, 0)
#define TB_VK_VERSION_MAJOR(v) (((uint32_t)(v) >> 22) & 0x7fu)
#define TB_VK_VERSION_MINOR(v) (((uint32_t)(v) >> 12) & 0x3ffu)
#define TB_VK_VERSION_PATCH(v) ((uint32_t)(v) & 0xfffu)

/* VkResult values the probe names or acts on */
#define TB_VK_SUCCESS 0
#define TB_VK_INCOMPLETE 5
#define TB_VK_ERROR_INITIALIZATION_FAILED (-3)
#define TB_VK_ERROR_LAYER_NOT_PRESENT (-6)
#define TB_VK_ERROR_EXTENSION_NOT_PRESENT (-7)
#define TB_VK_ERROR_INCOMPATIBLE_DRIVER (-9)

/* VkStructureType */
#define TB_VK_STRUCTURE_TYPE_APPLICATION_INFO 0
#define TB_VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO 1
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 1000059000
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 1000059001
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2 1000059006
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES 1000071004
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES 1000082000
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES 1000094000
#define TB_VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT 1000128003
#define TB_VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT 1000128004
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES 1000196000
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT 1000212000
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT 1000237000

/* VkPhysicalDeviceType */
#define TB_VK_PHYSICAL_DEVICE_TYPE_OTHER 0
#define TB_VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU 1
#define TB_VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU 2
#define TB_VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU 3
#define TB_VK_PHYSICAL_DEVICE_TYPE_CPU 4

#define TB_VK_MEMORY_HEAP_DEVICE_LOCAL_BIT 0x1u
#define TB_VK_DEBUG_SEVERITY_VERBOSE 0x1u
#define TB_VK_DEBUG_SEVERITY_INFO 0x10u
#define TB_VK_DEBUG_SEVERITY_WARNING 0x100u
#define TB_VK_DEBUG_SEVERITY_ERROR 0x1000u
#define TB_VK_DEBUG_TYPE_GENERAL 0x1u
#define TB_VK_DEBUG_TYPE_VALIDATION 0x2u
#define TB_VK_DEBUG_TYPE_PERFORMANCE 0x4u

#define TB_VK_MAX_NAME_SIZE 256
#define TB_VK_MAX_DESCRIPTION_SIZE 256
#define TB_VK_MAX_DRIVER_NAME_SIZE 256
#define TB_VK_MAX_DRIVER_INFO_SIZE 256
#define TB_VK_UUID_SIZE 16
#define TB_VK_LUID_SIZE 8
#define TB_VK_MAX_MEMORY_TYPES 32
#define TB_VK_MAX_MEMORY_HEAPS 16

typedef struct tb_vk_application_info {
  int32_t sType;
  const void *pNext;
  const char *pApplicationName;
  uint32_t applicationVersion;
  const char *pEngineName;
  uint32_t engineVersion;
  uint32_t apiVersion;
} tb_vk_application_info;

typedef struct tb_vk_instance_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  const tb_vk_application_info *pApplicationInfo;
  uint32_t enabledLayerCount;
  const char *const *ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char *const *ppEnabledExtensionNames;
} tb_vk_instance_create_info;

typedef struct tb_vk_layer_properties {
  char layerName[TB_VK_MAX_NAME_SIZE];
  uint32_t specVersion;
  uint32_t implementationVersion;
  char description[TB_VK_MAX_DESCRIPTION_SIZE];
} tb_vk_layer_properties;

typedef struct tb_vk_extension_properties {
  char extensionName[TB_VK_MAX_NAME_SIZE];
  uint32_t specVersion;
} tb_vk_extension_properties;

/* VkPhysicalDeviceLimits: runs of 4-byte fields the probe does not read are grouped into arrays. */
typedef struct tb_vk_limits {
  uint32_t maxImageDimensions_to_maxUniformBufferRange[7];
  uint32_t maxStorageBufferRange;
  uint32_t maxPushConstantsSize_to_maxSamplerAllocationCount[3];
  tb_vk_device_size bufferImageGranularity;
  tb_vk_device_size sparseAddressSpaceSize;
  uint32_t maxBoundDescriptorSets_to_maxFragmentCombinedOutputResources[38];
  uint32_t maxComputeSharedMemorySize;
  uint32_t maxComputeWorkGroupCount[3];
  uint32_t maxComputeWorkGroupInvocations;
  uint32_t maxComputeWorkGroupSize[3];
  uint32_t subPixelPrecisionBits_to_viewportSubPixelBits[13];
  size_t minMemoryMapAlignment;
  tb_vk_device_size minTexelBufferOffsetAlignment;
  tb_vk_device_size minUniformBufferOffsetAlignment;
  tb_vk_device_size minStorageBufferOffsetAlignment;
  uint32_t minTexelOffset_to_standardSampleLocations[35];
  tb_vk_device_size optimalBufferCopyOffsetAlignment;
  tb_vk_device_size optimalBufferCopyRowPitchAlignment;
  tb_vk_device_size nonCoherentAtomSize;
} tb_vk_limits;

typedef struct tb_vk_physical_device_properties {
  uint32_t apiVersion;
  uint32_t driverVersion;
  uint32_t vendorID;
  uint32_t deviceID;
  int32_t deviceType;
  char deviceName[TB_VK_MAX_NAME_SIZE];
  uint8_t pipelineCacheUUID[TB_VK_UUID_SIZE];
  tb_vk_limits limits;
  tb_vk_bool32 sparseProperties[5];
} tb_vk_physical_device_properties;

typedef struct tb_vk_physical_device_properties2 {
  int32_t sType;
  void *pNext;
  tb_vk_physical_device_properties properties;
} tb_vk_physical_device_properties2;

typedef struct tb_vk_id_properties {
  int32_t sType;
  void *pNext;
  uint8_t deviceUUID[TB_VK_UUID_SIZE];
  uint8_t driverUUID[TB_VK_UUID_SIZE];
  uint8_t deviceLUID[TB_VK_LUID_SIZE];
  uint32_t deviceNodeMask;
  tb_vk_bool32 deviceLUIDValid;
} tb_vk_id_properties;

typedef struct tb_vk_conformance_version {
  uint8_t major, minor, subminor, patch;
} tb_vk_conformance_version;

typedef struct tb_vk_driver_properties {
  int32_t sType;
  void *pNext;
  int32_t driverID;
  char driverName[TB_VK_MAX_DRIVER_NAME_SIZE];
  char driverInfo[TB_VK_MAX_DRIVER_INFO_SIZE];
  tb_vk_conformance_version conformanceVersion;
} tb_vk_driver_properties;

typedef struct tb_vk_subgroup_properties {
  int32_t sType;
  void *pNext;
  uint32_t subgroupSize;
  tb_vk_flags supportedStages;
  tb_vk_flags supportedOperations;
  tb_vk_bool32 quadOperationsInAllStages;
} tb_vk_subgroup_properties;

typedef struct tb_vk_pci_bus_info_properties {
  int32_t sType;
  void *pNext;
  uint32_t pciDomain;
  uint32_t pciBus;
  uint32_t pciDevice;
  uint32_t pciFunction;
} tb_vk_pci_bus_info_properties;

/* VkPhysicalDeviceFeatures: 55 VkBool32 in a row; the probe reads three of them by index. */
#define TB_VK_FEATURE_COUNT 55
#define TB_VK_FEATURE_SHADER_FLOAT64 39
#define TB_VK_FEATURE_SHADER_INT64 40
#define TB_VK_FEATURE_SHADER_INT16 41
typedef struct tb_vk_physical_device_features {
  tb_vk_bool32 flags[TB_VK_FEATURE_COUNT];
} tb_vk_physical_device_features;

typedef struct tb_vk_physical_device_features2 {
  int32_t sType;
  void *pNext;
  tb_vk_physical_device_features features;
} tb_vk_physical_device_features2;

typedef struct tb_vk_float16_int8_features {
  int32_t sType;
  void *pNext;
  tb_vk_bool32 shaderFloat16;
  tb_vk_bool32 shaderInt8;
} tb_vk_float16_int8_features;

typedef struct tb_vk_memory_type {
  tb_vk_flags propertyFlags;
  uint32_t heapIndex;
} tb_vk_memory_type;

typedef struct tb_vk_memory_heap {
  tb_vk_device_size size;
  tb_vk_flags flags;
} tb_vk_memory_heap;

typedef struct tb_vk_memory_properties {
  uint32_t memoryTypeCount;
  tb_vk_memory_type memoryTypes[TB_VK_MAX_MEMORY_TYPES];
  uint32_t memoryHeapCount;
  tb_vk_memory_heap memoryHeaps[TB_VK_MAX_MEMORY_HEAPS];
} tb_vk_memory_properties;

typedef struct tb_vk_memory_properties2 {
  int32_t sType;
  void *pNext;
  tb_vk_memory_properties memoryProperties;
} tb_vk_memory_properties2;

typedef struct tb_vk_memory_budget_properties {
  int32_t sType;
  void *pNext;
  tb_vk_device_size heapBudget[TB_VK_MAX_MEMORY_HEAPS];
  tb_vk_device_size heapUsage[TB_VK_MAX_MEMORY_HEAPS];
} tb_vk_memory_budget_properties;

typedef struct tb_vk_debug_callback_data {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  const char *pMessageIdName;
  int32_t messageIdNumber;
  const char *pMessage;
  uint32_t queueLabelCount;
  const void *pQueueLabels;
  uint32_t cmdBufLabelCount;
  const void *pCmdBufLabels;
  uint32_t objectCount;
  const void *pObjects;
} tb_vk_debug_callback_data;

typedef tb_vk_bool32 (*tb_vk_debug_callback)(tb_vk_flags severity, tb_vk_flags types, const tb_vk_debug_callback_data *data,
                                             void *user_data);

typedef struct tb_vk_debug_messenger_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  tb_vk_flags messageSeverity;
  tb_vk_flags messageType;
  tb_vk_debug_callback pfnUserCallback;
  void *pUserData;
} tb_vk_debug_messenger_create_info;

/* Entry points. vkGetInstanceProcAddr comes from the library; the global ones from it with a NULL
 * instance, the instance ones with the instance. */
typedef tb_vk_void_function (*tb_vk_get_instance_proc_addr_fn)(tb_vk_instance, const char *);

#define TB_VK_GLOBAL_FUNCTIONS(X)                                                                          \
  X(vkCreateInstance, tb_vk_result, (const tb_vk_instance_create_info *, const void *, tb_vk_instance *)) \
  X(vkEnumerateInstanceVersion, tb_vk_result, (uint32_t *))                                               \
  X(vkEnumerateInstanceLayerProperties, tb_vk_result, (uint32_t *, tb_vk_layer_properties *))             \
  X(vkEnumerateInstanceExtensionProperties, tb_vk_result, (const char *, uint32_t *, tb_vk_extension_properties *))

#define TB_VK_INSTANCE_FUNCTIONS(X)                                                                         \
  X(vkDestroyInstance, void, (tb_vk_instance, const void *))                                               \
  X(vkEnumeratePhysicalDevices, tb_vk_result, (tb_vk_instance, uint32_t *, tb_vk_physical_device *))       \
  X(vkGetPhysicalDeviceProperties, void, (tb_vk_physical_device, tb_vk_physical_device_properties *))      \
  X(vkGetPhysicalDeviceProperties2, void, (tb_vk_physical_device, tb_vk_physical_device_properties2 *))    \
  X(vkGetPhysicalDeviceFeatures, void, (tb_vk_physical_device, tb_vk_physical_device_features *))          \
  X(vkGetPhysicalDeviceFeatures2, void, (tb_vk_physical_device, tb_vk_physical_device_features2 *))        \
  X(vkGetPhysicalDeviceMemoryProperties, void, (tb_vk_physical_device, tb_vk_memory_properties *))         \
  X(vkGetPhysicalDeviceMemoryProperties2, void, (tb_vk_physical_device, tb_vk_memory_properties2 *))       \
  X(vkEnumerateDeviceExtensionProperties, tb_vk_result,                                                    \
    (tb_vk_physical_device, const char *, uint32_t *, tb_vk_extension_properties *))                       \
  X(vkCreateDebugUtilsMessengerEXT, tb_vk_result,                                                          \
    (tb_vk_instance, const tb_vk_debug_messenger_create_info *, const void *, tb_vk_messenger *))          \
  X(vkDestroyDebugUtilsMessengerEXT, void, (tb_vk_instance, tb_vk_messenger, const void *))

typedef struct tb_vk_api {
  tb_vk_get_instance_proc_addr_fn vkGetInstanceProcAddr;
#define TB_VK_FIELD(name, ret, args) ret(*name) args;
  TB_VK_GLOBAL_FUNCTIONS(TB_VK_FIELD)
  TB_VK_INSTANCE_FUNCTIONS(TB_VK_FIELD)
#undef TB_VK_FIELD
} tb_vk_api;

/* "VK_ERROR_INCOMPATIBLE_DRIVER", ...; "unknown VkResult" otherwise (vulkan_names.c). */
const char *tb_vk_result_name(tb_vk_result result);
/* "NVIDIA", "AMD", "Intel", "Mesa", ... from a PCI or Khronos vendor id; NULL when unknown. */
const char *tb_vk_vendor_name(uint32_t vendor_id);
/* The driver version as the vendor encodes it: NVIDIA 10.8.8.6 bits, everyone else VK_VERSION. */
void tb_vk_driver_version_text(uint32_t vendor_id, uint32_t version, char *out, size_t cap);
/* "1.3.230" */
void tb_vk_api_version_text(uint32_t version, char *out, size_t cap);
/* A fixed-size char array from the driver as a terminated string, even when the driver filled every byte. */
void tb_vk_fixed_text(const char *field, size_t field_size, char *out, size_t cap);

#endif
