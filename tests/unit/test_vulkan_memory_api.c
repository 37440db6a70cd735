/* The Vulkan backend's local declarations (runtime/vulkan_device_api.h) against the system's vulkan_core.h:
 * structure sizes and offsets, structure-type values, flag bits and result codes. Checked at compile
 * time when the header is installed; without it there is nothing to compare with. */
#include <string.h>
#include "runtime/vulkan_device_api.h"
#include "test_util.h"

#if __has_include(<vulkan/vulkan_core.h>)
#include <vulkan/vulkan_core.h>
#define HAVE_VULKAN_HEADERS 1
#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), #a)
#define OFF(a, fa, b, fb) _Static_assert(offsetof(a, fa) == offsetof(b, fb), #a "." #fa)
#define EQ(a, b) _Static_assert((a) == (b), #a)
SAME(tb_vk_queue_family_properties, VkQueueFamilyProperties);
SAME(tb_vk_device_queue_create_info, VkDeviceQueueCreateInfo);
OFF(tb_vk_device_queue_create_info, pQueuePriorities, VkDeviceQueueCreateInfo, pQueuePriorities);
SAME(tb_vk_device_create_info, VkDeviceCreateInfo);
OFF(tb_vk_device_create_info, ppEnabledExtensionNames, VkDeviceCreateInfo, ppEnabledExtensionNames);
OFF(tb_vk_device_create_info, pEnabledFeatures, VkDeviceCreateInfo, pEnabledFeatures);
SAME(tb_vk_maintenance3_properties, VkPhysicalDeviceMaintenance3Properties);
OFF(tb_vk_maintenance3_properties, maxMemoryAllocationSize, VkPhysicalDeviceMaintenance3Properties, maxMemoryAllocationSize);
SAME(tb_vk_buffer_create_info, VkBufferCreateInfo);
OFF(tb_vk_buffer_create_info, size, VkBufferCreateInfo, size);
OFF(tb_vk_buffer_create_info, usage, VkBufferCreateInfo, usage);
OFF(tb_vk_buffer_create_info, pQueueFamilyIndices, VkBufferCreateInfo, pQueueFamilyIndices);
SAME(tb_vk_memory_requirements, VkMemoryRequirements);
OFF(tb_vk_memory_requirements, memoryTypeBits, VkMemoryRequirements, memoryTypeBits);
SAME(tb_vk_memory_allocate_info, VkMemoryAllocateInfo);
OFF(tb_vk_memory_allocate_info, memoryTypeIndex, VkMemoryAllocateInfo, memoryTypeIndex);
SAME(tb_vk_mapped_memory_range, VkMappedMemoryRange);
OFF(tb_vk_mapped_memory_range, size, VkMappedMemoryRange, size);
SAME(tb_vk_command_pool_create_info, VkCommandPoolCreateInfo);
SAME(tb_vk_command_buffer_allocate_info, VkCommandBufferAllocateInfo);
OFF(tb_vk_command_buffer_allocate_info, commandBufferCount, VkCommandBufferAllocateInfo, commandBufferCount);
SAME(tb_vk_command_buffer_begin_info, VkCommandBufferBeginInfo);
SAME(tb_vk_buffer_copy, VkBufferCopy);
SAME(tb_vk_memory_barrier, VkMemoryBarrier);
SAME(tb_vk_submit_info, VkSubmitInfo);
OFF(tb_vk_submit_info, pCommandBuffers, VkSubmitInfo, pCommandBuffers);
OFF(tb_vk_submit_info, pSignalSemaphores, VkSubmitInfo, pSignalSemaphores);
SAME(tb_vk_fence_create_info, VkFenceCreateInfo);
SAME(tb_vk_buffer, VkBuffer);
SAME(tb_vk_device_memory, VkDeviceMemory);
SAME(tb_vk_fence, VkFence);
SAME(tb_vk_command_pool, VkCommandPool);
EQ(TB_VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_SUBMIT_INFO, VK_STRUCTURE_TYPE_SUBMIT_INFO);
EQ(TB_VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE, VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE);
EQ(TB_VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
EQ(TB_VK_STRUCTURE_TYPE_MEMORY_BARRIER, VK_STRUCTURE_TYPE_MEMORY_BARRIER);
EQ(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
EQ(TB_VK_QUEUE_COMPUTE_BIT, VK_QUEUE_COMPUTE_BIT);
EQ(TB_VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
EQ(TB_VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
EQ(TB_VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
EQ(TB_VK_MEMORY_PROPERTY_HOST_CACHED_BIT, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
EQ(TB_VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT, VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT);
EQ(TB_VK_MEMORY_PROPERTY_PROTECTED_BIT, VK_MEMORY_PROPERTY_PROTECTED_BIT);
EQ(TB_VK_BUFFER_USAGE_TRANSFER_SRC_BIT, VK_BUFFER_USAGE_TRANSFER_SRC_BIT);
EQ(TB_VK_BUFFER_USAGE_TRANSFER_DST_BIT, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
EQ(TB_VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
EQ(TB_VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT);
EQ(TB_VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
EQ(TB_VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
EQ(TB_VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_HOST_BIT);
EQ(TB_VK_ACCESS_TRANSFER_READ_BIT, VK_ACCESS_TRANSFER_READ_BIT);
EQ(TB_VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
EQ(TB_VK_ACCESS_HOST_READ_BIT, VK_ACCESS_HOST_READ_BIT);
EQ(TB_VK_TIMEOUT, VK_TIMEOUT);
EQ(TB_VK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_HOST_MEMORY);
EQ(TB_VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY);
EQ(TB_VK_ERROR_DEVICE_LOST, VK_ERROR_DEVICE_LOST);
EQ(TB_VK_ERROR_MEMORY_MAP_FAILED, VK_ERROR_MEMORY_MAP_FAILED);
#endif

static void matches_system_header(void **state) {
  (void)state;
#ifdef HAVE_VULKAN_HEADERS
  assert_int_equal(sizeof(tb_vk_submit_info), sizeof(VkSubmitInfo)); /* the rest at compile time */
  assert_int_equal(TB_VK_WHOLE_SIZE, VK_WHOLE_SIZE);
#else
  skip(); /* no <vulkan/vulkan_core.h> (libvulkan-dev) on this machine: nothing to compare with */
#endif
}

static void result_names_used_in_messages(void **state) {
  (void)state;
  assert_string_equal(tb_vk_result_name(TB_VK_ERROR_OUT_OF_DEVICE_MEMORY), "VK_ERROR_OUT_OF_DEVICE_MEMORY");
  assert_string_equal(tb_vk_result_name(TB_VK_ERROR_OUT_OF_HOST_MEMORY), "VK_ERROR_OUT_OF_HOST_MEMORY");
  assert_string_equal(tb_vk_result_name(TB_VK_ERROR_DEVICE_LOST), "VK_ERROR_DEVICE_LOST");
  assert_string_equal(tb_vk_result_name(TB_VK_TIMEOUT), "VK_TIMEOUT");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_system_header),
      cmocka_unit_test(result_names_used_in_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
