/* Internal: keeping loaded Vulkan drivers resident across probes (vulkan_resident.c). */
#ifndef TB_DISCOVER_VULKAN_RESIDENT_H
#define TB_DISCOVER_VULKAN_RESIDENT_H
#include <stdbool.h>
#include <stddef.h>

/* Mark every loaded Vulkan driver (an object exporting vk_icdGetInstanceProcAddr itself) as
 * RTLD_NODELETE, so the loader's dlclose at vkDestroyInstance leaves it loaded. Call while the
 * instance is alive. Returns how many drivers are kept. */
size_t tb_vk_keep_drivers_loaded(void);

#endif
