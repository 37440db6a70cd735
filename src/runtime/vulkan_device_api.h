/* Internal: what the Vulkan backend needs beyond discovery's declarations (vulkan_api.h):
 * logical devices, queues, buffers, memory, command buffers and fences, declared with the exact layouts
 * of vulkan_core.h so no Vulkan SDK is needed to build (tests/unit/test_vulkan_memory_api.c compares them
 * with the system header). Non-dispatchable handles are 64-bit integers on every platform. */
#ifndef TB_RUNTIME_VULKAN_DEVICE_API_H
#define TB_RUNTIME_VULKAN_DEVICE_API_H
#include <stdint.h>
#include "runtime/vulkan_api.h"

typedef struct tb_vk_device_t *tb_vk_device;
typedef struct tb_vk_queue_t *tb_vk_queue;
typedef struct tb_vk_command_buffer_t *tb_vk_command_buffer;
typedef uint64_t tb_vk_buffer;
typedef uint64_t tb_vk_device_memory;
typedef uint64_t tb_vk_command_pool;
typedef uint64_t tb_vk_fence;

#define TB_VK_TIMEOUT 2
#define TB_VK_ERROR_OUT_OF_HOST_MEMORY (-1)
#define TB_VK_ERROR_OUT_OF_DEVICE_MEMORY (-2)
#define TB_VK_ERROR_DEVICE_LOST (-4)
#define TB_VK_ERROR_MEMORY_MAP_FAILED (-5)
#define TB_VK_WHOLE_SIZE (~0ULL)

#define TB_VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO 2
#define TB_VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO 3
#define TB_VK_STRUCTURE_TYPE_SUBMIT_INFO 4
#define TB_VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO 5
#define TB_VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE 6
#define TB_VK_STRUCTURE_TYPE_FENCE_CREATE_INFO 8
#define TB_VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO 12
#define TB_VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO 39
#define TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO 40
#define TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO 42
#define TB_VK_STRUCTURE_TYPE_MEMORY_BARRIER 46
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES 1000168000

#define TB_VK_QUEUE_COMPUTE_BIT 0x2u
#define TB_VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT 0x1u
#define TB_VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT 0x2u
#define TB_VK_MEMORY_PROPERTY_HOST_COHERENT_BIT 0x4u
#define TB_VK_MEMORY_PROPERTY_HOST_CACHED_BIT 0x8u
#define TB_VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT 0x10u
#define TB_VK_MEMORY_PROPERTY_PROTECTED_BIT 0x20u
#define TB_VK_BUFFER_USAGE_TRANSFER_SRC_BIT 0x1u
#define TB_VK_BUFFER_USAGE_TRANSFER_DST_BIT 0x2u
#define TB_VK_BUFFER_USAGE_STORAGE_BUFFER_BIT 0x20u
#define TB_VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT 0x2u
#define TB_VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT 0x1u
#define TB_VK_PIPELINE_STAGE_TRANSFER_BIT 0x1000u
#define TB_VK_PIPELINE_STAGE_HOST_BIT 0x4000u
#define TB_VK_ACCESS_TRANSFER_READ_BIT 0x800u
#define TB_VK_ACCESS_TRANSFER_WRITE_BIT 0x1000u
#define TB_VK_ACCESS_HOST_READ_BIT 0x2000u

typedef struct tb_vk_extent3d {
  uint32_t width, height, depth;
} tb_vk_extent3d;

typedef struct tb_vk_queue_family_properties {
  tb_vk_flags queueFlags;
  uint32_t queueCount;
  uint32_t timestampValidBits;
  tb_vk_extent3d minImageTransferGranularity;
} tb_vk_queue_family_properties;

typedef struct tb_vk_device_queue_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  uint32_t queueFamilyIndex;
  uint32_t queueCount;
  const float *pQueuePriorities;
} tb_vk_device_queue_create_info;

typedef struct tb_vk_device_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  uint32_t queueCreateInfoCount;
  const tb_vk_device_queue_create_info *pQueueCreateInfos;
  uint32_t enabledLayerCount;
  const char *const *ppEnabledLayerNames;
  uint32_t enabledExtensionCount;
  const char *const *ppEnabledExtensionNames;
  const tb_vk_physical_device_features *pEnabledFeatures;
} tb_vk_device_create_info;

typedef struct tb_vk_maintenance3_properties {
  int32_t sType;
  void *pNext;
  uint32_t maxPerSetDescriptors;
  tb_vk_device_size maxMemoryAllocationSize;
} tb_vk_maintenance3_properties;

typedef struct tb_vk_buffer_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  tb_vk_device_size size;
  tb_vk_flags usage;
  int32_t sharingMode;
  uint32_t queueFamilyIndexCount;
  const uint32_t *pQueueFamilyIndices;
} tb_vk_buffer_create_info;

typedef struct tb_vk_memory_requirements {
  tb_vk_device_size size;
  tb_vk_device_size alignment;
  uint32_t memoryTypeBits;
} tb_vk_memory_requirements;

typedef struct tb_vk_memory_allocate_info {
  int32_t sType;
  const void *pNext;
  tb_vk_device_size allocationSize;
  uint32_t memoryTypeIndex;
} tb_vk_memory_allocate_info;

typedef struct tb_vk_mapped_memory_range {
  int32_t sType;
  const void *pNext;
  tb_vk_device_memory memory;
  tb_vk_device_size offset;
  tb_vk_device_size size;
} tb_vk_mapped_memory_range;

typedef struct tb_vk_command_pool_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  uint32_t queueFamilyIndex;
} tb_vk_command_pool_create_info;

typedef struct tb_vk_command_buffer_allocate_info {
  int32_t sType;
  const void *pNext;
  tb_vk_command_pool commandPool;
  int32_t level; /* 0: primary */
  uint32_t commandBufferCount;
} tb_vk_command_buffer_allocate_info;

typedef struct tb_vk_command_buffer_begin_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  const void *pInheritanceInfo;
} tb_vk_command_buffer_begin_info;

typedef struct tb_vk_buffer_copy {
  tb_vk_device_size srcOffset;
  tb_vk_device_size dstOffset;
  tb_vk_device_size size;
} tb_vk_buffer_copy;

typedef struct tb_vk_memory_barrier {
  int32_t sType;
  const void *pNext;
  tb_vk_flags srcAccessMask;
  tb_vk_flags dstAccessMask;
} tb_vk_memory_barrier;

typedef struct tb_vk_submit_info {
  int32_t sType;
  const void *pNext;
  uint32_t waitSemaphoreCount;
  const uint64_t *pWaitSemaphores;
  const tb_vk_flags *pWaitDstStageMask;
  uint32_t commandBufferCount;
  const tb_vk_command_buffer *pCommandBuffers;
  uint32_t signalSemaphoreCount;
  const uint64_t *pSignalSemaphores;
} tb_vk_submit_info;

typedef struct tb_vk_fence_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
} tb_vk_fence_create_info;


/* Instance-level functions execution needs in addition to discovery's TB_VK_INSTANCE_FUNCTIONS. */
#define TB_VK_EXEC_INSTANCE_FUNCTIONS(X)                                                                      \
  X(vkGetPhysicalDeviceQueueFamilyProperties, void, (tb_vk_physical_device, uint32_t *, tb_vk_queue_family_properties *)) \
  X(vkCreateDevice, tb_vk_result, (tb_vk_physical_device, const tb_vk_device_create_info *, const void *, tb_vk_device *)) \
  X(vkGetDeviceProcAddr, tb_vk_void_function, (tb_vk_device, const char *))

/* Device-level functions, through vkGetDeviceProcAddr. */
#define TB_VK_DEVICE_FUNCTIONS(X)                                                                             \
  X(vkDestroyDevice, void, (tb_vk_device, const void *))                                                      \
  X(vkGetDeviceQueue, void, (tb_vk_device, uint32_t, uint32_t, tb_vk_queue *))                                \
  X(vkDeviceWaitIdle, tb_vk_result, (tb_vk_device))                                                           \
  X(vkCreateBuffer, tb_vk_result, (tb_vk_device, const tb_vk_buffer_create_info *, const void *, tb_vk_buffer *)) \
  X(vkDestroyBuffer, void, (tb_vk_device, tb_vk_buffer, const void *))                                        \
  X(vkGetBufferMemoryRequirements, void, (tb_vk_device, tb_vk_buffer, tb_vk_memory_requirements *))           \
  X(vkBindBufferMemory, tb_vk_result, (tb_vk_device, tb_vk_buffer, tb_vk_device_memory, tb_vk_device_size))  \
  X(vkAllocateMemory, tb_vk_result, (tb_vk_device, const tb_vk_memory_allocate_info *, const void *, tb_vk_device_memory *)) \
  X(vkFreeMemory, void, (tb_vk_device, tb_vk_device_memory, const void *))                                    \
  X(vkMapMemory, tb_vk_result, (tb_vk_device, tb_vk_device_memory, tb_vk_device_size, tb_vk_device_size, tb_vk_flags, void **)) \
  X(vkUnmapMemory, void, (tb_vk_device, tb_vk_device_memory))                                                 \
  X(vkFlushMappedMemoryRanges, tb_vk_result, (tb_vk_device, uint32_t, const tb_vk_mapped_memory_range *))    \
  X(vkInvalidateMappedMemoryRanges, tb_vk_result, (tb_vk_device, uint32_t, const tb_vk_mapped_memory_range *)) \
  X(vkCreateCommandPool, tb_vk_result, (tb_vk_device, const tb_vk_command_pool_create_info *, const void *, tb_vk_command_pool *)) \
  X(vkDestroyCommandPool, void, (tb_vk_device, tb_vk_command_pool, const void *))                             \
  X(vkAllocateCommandBuffers, tb_vk_result, (tb_vk_device, const tb_vk_command_buffer_allocate_info *, tb_vk_command_buffer *)) \
  X(vkBeginCommandBuffer, tb_vk_result, (tb_vk_command_buffer, const tb_vk_command_buffer_begin_info *))     \
  X(vkEndCommandBuffer, tb_vk_result, (tb_vk_command_buffer))                                                 \
  X(vkResetCommandBuffer, tb_vk_result, (tb_vk_command_buffer, tb_vk_flags))                                  \
  X(vkCmdCopyBuffer, void, (tb_vk_command_buffer, tb_vk_buffer, tb_vk_buffer, uint32_t, const tb_vk_buffer_copy *)) \
  X(vkCmdFillBuffer, void, (tb_vk_command_buffer, tb_vk_buffer, tb_vk_device_size, tb_vk_device_size, uint32_t)) \
  X(vkCmdPipelineBarrier, void, (tb_vk_command_buffer, tb_vk_flags, tb_vk_flags, tb_vk_flags, uint32_t,      \
                                 const tb_vk_memory_barrier *, uint32_t, const void *, uint32_t, const void *)) \
  X(vkQueueSubmit, tb_vk_result, (tb_vk_queue, uint32_t, const tb_vk_submit_info *, tb_vk_fence))            \
  X(vkCreateFence, tb_vk_result, (tb_vk_device, const tb_vk_fence_create_info *, const void *, tb_vk_fence *)) \
  X(vkDestroyFence, void, (tb_vk_device, tb_vk_fence, const void *))                                          \
  X(vkWaitForFences, tb_vk_result, (tb_vk_device, uint32_t, const tb_vk_fence *, tb_vk_bool32, uint64_t))     \
  X(vkResetFences, tb_vk_result, (tb_vk_device, uint32_t, const tb_vk_fence *))

/* ---- Compute (model execution, kernels/): shaders, pipelines, descriptors, dispatches. ---- */
typedef uint64_t tb_vk_shader_module;
typedef uint64_t tb_vk_pipeline;
typedef uint64_t tb_vk_pipeline_layout;
typedef uint64_t tb_vk_pipeline_cache;
typedef uint64_t tb_vk_descriptor_set_layout;
typedef uint64_t tb_vk_descriptor_pool;
typedef uint64_t tb_vk_descriptor_set;

#define TB_VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO 16
#define TB_VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO 17
#define TB_VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO 18
#define TB_VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO 29
#define TB_VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO 30
#define TB_VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO 32
#define TB_VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO 33
#define TB_VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO 34
#define TB_VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET 35
#define TB_VK_DESCRIPTOR_TYPE_STORAGE_BUFFER 7
#define TB_VK_SHADER_STAGE_COMPUTE_BIT 0x20u
#define TB_VK_PIPELINE_BIND_POINT_COMPUTE 1
#define TB_VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT 0x800u
#define TB_VK_ACCESS_SHADER_READ_BIT 0x20u
#define TB_VK_ACCESS_SHADER_WRITE_BIT 0x40u
#define TB_VK_ACCESS_HOST_WRITE_BIT 0x4000u
#define TB_VK_SUBGROUP_FEATURE_BASIC_BIT 0x1u
#define TB_VK_SUBGROUP_FEATURE_ARITHMETIC_BIT 0x4u
#define TB_VK_PIPELINE_CACHE_HEADER_VERSION_ONE 1
#define TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES 1000083000

typedef struct tb_vk_16bit_storage_features {
  int32_t sType;
  void *pNext;
  tb_vk_bool32 storageBuffer16BitAccess;
  tb_vk_bool32 uniformAndStorageBuffer16BitAccess;
  tb_vk_bool32 storagePushConstant16;
  tb_vk_bool32 storageInputOutput16;
} tb_vk_16bit_storage_features;

typedef struct tb_vk_shader_module_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  size_t codeSize;
  const uint32_t *pCode;
} tb_vk_shader_module_create_info;

typedef struct tb_vk_descriptor_set_layout_binding {
  uint32_t binding;
  int32_t descriptorType;
  uint32_t descriptorCount;
  tb_vk_flags stageFlags;
  const void *pImmutableSamplers;
} tb_vk_descriptor_set_layout_binding;

typedef struct tb_vk_descriptor_set_layout_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  uint32_t bindingCount;
  const tb_vk_descriptor_set_layout_binding *pBindings;
} tb_vk_descriptor_set_layout_create_info;

typedef struct tb_vk_push_constant_range {
  tb_vk_flags stageFlags;
  uint32_t offset;
  uint32_t size;
} tb_vk_push_constant_range;

typedef struct tb_vk_pipeline_layout_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  uint32_t setLayoutCount;
  const tb_vk_descriptor_set_layout *pSetLayouts;
  uint32_t pushConstantRangeCount;
  const tb_vk_push_constant_range *pPushConstantRanges;
} tb_vk_pipeline_layout_create_info;

typedef struct tb_vk_specialization_map_entry {
  uint32_t constantID;
  uint32_t offset;
  size_t size;
} tb_vk_specialization_map_entry;

typedef struct tb_vk_specialization_info {
  uint32_t mapEntryCount;
  const tb_vk_specialization_map_entry *pMapEntries;
  size_t dataSize;
  const void *pData;
} tb_vk_specialization_info;

typedef struct tb_vk_pipeline_shader_stage_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  tb_vk_flags stage;
  tb_vk_shader_module module;
  const char *pName;
  const tb_vk_specialization_info *pSpecializationInfo;
} tb_vk_pipeline_shader_stage_create_info;

typedef struct tb_vk_compute_pipeline_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  tb_vk_pipeline_shader_stage_create_info stage;
  tb_vk_pipeline_layout layout;
  tb_vk_pipeline basePipelineHandle;
  int32_t basePipelineIndex;
} tb_vk_compute_pipeline_create_info;

typedef struct tb_vk_pipeline_cache_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  size_t initialDataSize;
  const void *pInitialData;
} tb_vk_pipeline_cache_create_info;

typedef struct tb_vk_descriptor_pool_size {
  int32_t type;
  uint32_t descriptorCount;
} tb_vk_descriptor_pool_size;

typedef struct tb_vk_descriptor_pool_create_info {
  int32_t sType;
  const void *pNext;
  tb_vk_flags flags;
  uint32_t maxSets;
  uint32_t poolSizeCount;
  const tb_vk_descriptor_pool_size *pPoolSizes;
} tb_vk_descriptor_pool_create_info;

typedef struct tb_vk_descriptor_set_allocate_info {
  int32_t sType;
  const void *pNext;
  tb_vk_descriptor_pool descriptorPool;
  uint32_t descriptorSetCount;
  const tb_vk_descriptor_set_layout *pSetLayouts;
} tb_vk_descriptor_set_allocate_info;

typedef struct tb_vk_descriptor_buffer_info {
  tb_vk_buffer buffer;
  tb_vk_device_size offset;
  tb_vk_device_size range;
} tb_vk_descriptor_buffer_info;

typedef struct tb_vk_write_descriptor_set {
  int32_t sType;
  const void *pNext;
  tb_vk_descriptor_set dstSet;
  uint32_t dstBinding;
  uint32_t dstArrayElement;
  uint32_t descriptorCount;
  int32_t descriptorType;
  const void *pImageInfo;
  const tb_vk_descriptor_buffer_info *pBufferInfo;
  const void *pTexelBufferView;
} tb_vk_write_descriptor_set;

/* VkPipelineCacheHeaderVersionOne: the start of every pipeline cache's data. */
typedef struct tb_vk_pipeline_cache_header {
  uint32_t headerSize;
  int32_t headerVersion;
  uint32_t vendorID;
  uint32_t deviceID;
  uint8_t pipelineCacheUUID[16];
} tb_vk_pipeline_cache_header;

/* Device-level functions for compute, loaded after TB_VK_DEVICE_FUNCTIONS; when one is missing the device
 * still copies memory but runs no kernels (the reason is logged and kept). */
#define TB_VK_COMPUTE_FUNCTIONS(X)                                                                            \
  X(vkCreateShaderModule, tb_vk_result, (tb_vk_device, const tb_vk_shader_module_create_info *, const void *, tb_vk_shader_module *)) \
  X(vkDestroyShaderModule, void, (tb_vk_device, tb_vk_shader_module, const void *))                          \
  X(vkCreateDescriptorSetLayout, tb_vk_result, (tb_vk_device, const tb_vk_descriptor_set_layout_create_info *, const void *, tb_vk_descriptor_set_layout *)) \
  X(vkDestroyDescriptorSetLayout, void, (tb_vk_device, tb_vk_descriptor_set_layout, const void *))           \
  X(vkCreatePipelineLayout, tb_vk_result, (tb_vk_device, const tb_vk_pipeline_layout_create_info *, const void *, tb_vk_pipeline_layout *)) \
  X(vkDestroyPipelineLayout, void, (tb_vk_device, tb_vk_pipeline_layout, const void *))                      \
  X(vkCreatePipelineCache, tb_vk_result, (tb_vk_device, const tb_vk_pipeline_cache_create_info *, const void *, tb_vk_pipeline_cache *)) \
  X(vkDestroyPipelineCache, void, (tb_vk_device, tb_vk_pipeline_cache, const void *))                        \
  X(vkGetPipelineCacheData, tb_vk_result, (tb_vk_device, tb_vk_pipeline_cache, size_t *, void *))            \
  X(vkCreateComputePipelines, tb_vk_result, (tb_vk_device, tb_vk_pipeline_cache, uint32_t, const tb_vk_compute_pipeline_create_info *, const void *, tb_vk_pipeline *)) \
  X(vkDestroyPipeline, void, (tb_vk_device, tb_vk_pipeline, const void *))                                   \
  X(vkCreateDescriptorPool, tb_vk_result, (tb_vk_device, const tb_vk_descriptor_pool_create_info *, const void *, tb_vk_descriptor_pool *)) \
  X(vkDestroyDescriptorPool, void, (tb_vk_device, tb_vk_descriptor_pool, const void *))                      \
  X(vkAllocateDescriptorSets, tb_vk_result, (tb_vk_device, const tb_vk_descriptor_set_allocate_info *, tb_vk_descriptor_set *)) \
  X(vkUpdateDescriptorSets, void, (tb_vk_device, uint32_t, const tb_vk_write_descriptor_set *, uint32_t, const void *)) \
  X(vkCmdBindPipeline, void, (tb_vk_command_buffer, int32_t, tb_vk_pipeline))                               \
  X(vkCmdBindDescriptorSets, void, (tb_vk_command_buffer, int32_t, tb_vk_pipeline_layout, uint32_t, uint32_t, \
                                    const tb_vk_descriptor_set *, uint32_t, const uint32_t *))               \
  X(vkCmdPushConstants, void, (tb_vk_command_buffer, tb_vk_pipeline_layout, tb_vk_flags, uint32_t, uint32_t, const void *)) \
  X(vkCmdDispatch, void, (tb_vk_command_buffer, uint32_t, uint32_t, uint32_t))

typedef struct tb_vk_exec_api {
#define TB_VK_EXEC_FIELD(name, ret, args) ret(*name) args;
  TB_VK_EXEC_INSTANCE_FUNCTIONS(TB_VK_EXEC_FIELD)
  TB_VK_DEVICE_FUNCTIONS(TB_VK_EXEC_FIELD)
  TB_VK_COMPUTE_FUNCTIONS(TB_VK_EXEC_FIELD)
#undef TB_VK_EXEC_FIELD
} tb_vk_exec_api;

#endif
