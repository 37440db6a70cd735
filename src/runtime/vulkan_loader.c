/* The Vulkan loader steps the probe and the backend share: open libvulkan, resolve the entry points,
 * create an instance with the layers, extensions and chain asked for (the validation layer and its messenger). */
#include "runtime/vulkan_loader.h"

void *tb_vk_loader_open(tb_dl_result *dl) {
  static const char *const names[] = {"libvulkan.so.1", "libvulkan.so", NULL};
  return tb_dl_open("TB_VULKAN_LIB", names, dl);
}

bool tb_vk_loader_entry(void *handle, tb_vk_api *api, char *missing, size_t cap) {
  const tb_dl_symbol table[] = {{"vkGetInstanceProcAddr", (void **)&api->vkGetInstanceProcAddr, false}};
  return tb_dl_symbols(handle, table, 1, missing, cap);
}

void tb_vk_loader_global(tb_vk_api *api) {
#define TB_VK_LOAD_GLOBAL(name, ret, args) api->name = (ret(*) args)api->vkGetInstanceProcAddr(NULL, #name);
  TB_VK_GLOBAL_FUNCTIONS(TB_VK_LOAD_GLOBAL)
#undef TB_VK_LOAD_GLOBAL
}

void tb_vk_loader_instance(tb_vk_api *api, tb_vk_instance instance) {
#define TB_VK_LOAD_INSTANCE(name, ret, args) api->name = (ret(*) args)api->vkGetInstanceProcAddr(instance, #name);
  TB_VK_INSTANCE_FUNCTIONS(TB_VK_LOAD_INSTANCE)
#undef TB_VK_LOAD_INSTANCE
}

tb_vk_result tb_vk_loader_create_instance(const tb_vk_api *api, const tb_vk_instance_request *request,
                                          const char *app_name, uint32_t api_version, tb_vk_instance *out) {
  tb_vk_application_info app = {
      .sType = TB_VK_STRUCTURE_TYPE_APPLICATION_INFO,
      .pApplicationName = app_name,
      .applicationVersion = 1,
      .pEngineName = "TensorBridge",
      .engineVersion = 1,
      .apiVersion = api_version,
  };
  tb_vk_instance_create_info info = {
      .sType = TB_VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
      .pNext = request->next,
      .pApplicationInfo = &app,
      .enabledLayerCount = request->layer_count,
      .ppEnabledLayerNames = request->layer_count ? request->layer_names : NULL,
      .enabledExtensionCount = request->extension_count,
      .ppEnabledExtensionNames = request->extension_count ? request->extension_names : NULL,
  };
  *out = NULL;
  tb_vk_result r = api->vkCreateInstance(&info, NULL, out);
  if (r != TB_VK_SUCCESS) *out = NULL;
  return r;
}
