/* Internal: the Vulkan loader steps shared by the probe (discover/vulkan.c) and the Vulkan backend
 * (backend/vulkan/): opening libvulkan, resolving the global and instance entry points of tb_vk_api, and
 * creating an instance with the layers, extensions and pNext chain the caller asks for. */
#ifndef TB_RUNTIME_VULKAN_LOADER_H
#define TB_RUNTIME_VULKAN_LOADER_H
#include <stdbool.h>
#include "core/dl.h"
#include "runtime/vulkan_api.h"

/* dlopen TB_VULKAN_LIB when set, else libvulkan.so.1 then libvulkan.so. NULL on failure (*dl says why). */
void *tb_vk_loader_open(tb_dl_result *dl);

/* api->vkGetInstanceProcAddr from the opened loader; false (and its name in `missing`) when absent. */
bool tb_vk_loader_entry(void *handle, tb_vk_api *api, char *missing, size_t cap);

/* The global functions (vkCreateInstance, ...) through vkGetInstanceProcAddr(NULL, name). Absent ones stay NULL. */
void tb_vk_loader_global(tb_vk_api *api);
/* The instance functions of TB_VK_INSTANCE_FUNCTIONS for `instance`. Absent ones stay NULL. */
void tb_vk_loader_instance(tb_vk_api *api, tb_vk_instance instance);

/* What an instance is created with beyond the application: layers, extensions and a pNext chain
 * (discover/vulkan_validation.h fills one for TB_VULKAN_VALIDATION=1). All zero: a plain instance. */
typedef struct tb_vk_instance_request {
  uint32_t layer_count;
  const char *const *layer_names;
  uint32_t extension_count;
  const char *const *extension_names;
  const void *next;
} tb_vk_instance_request;

/* vkCreateInstance at `api_version` with `request`'s layers, extensions and chain. *out is NULL unless it
 * returns TB_VK_SUCCESS. */
tb_vk_result tb_vk_loader_create_instance(const tb_vk_api *api, const tb_vk_instance_request *request,
                                          const char *app_name, uint32_t api_version, tb_vk_instance *out);

#endif
