/* Internal: one Vulkan physical device to one tb_device_info (vulkan_device.c). */
#ifndef TB_DISCOVER_VULKAN_DEVICE_H
#define TB_DISCOVER_VULKAN_DEVICE_H
#include <stdbool.h>
#include "discover/devlist.h"
#include "runtime/vulkan_api.h"

/* Add "vulkan:N" for `phys`: properties (through vkGetPhysicalDeviceProperties2 and its extension
 * structures when the instance is Vulkan 1.1 or newer), features, memory heaps and budget, device
 * extensions. `instance_version` is the apiVersion the instance was created with. */
void tb_vk_probe_device(tb_device_list *list, const tb_vk_api *api, uint32_t instance_version, tb_vk_physical_device phys);

#endif
