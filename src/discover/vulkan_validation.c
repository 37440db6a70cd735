/* TB_VULKAN_VALIDATION=1: the Khronos validation layer on the Vulkan probe's instance, and a debug-utils
 * messenger that counts its warnings and errors so tests can require a clean discovery. */
#include "discover/vulkan_validation.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/env.h"

#define VK_BACKEND TB_BACKEND_VULKAN
/* The backend prepares validation without a device list: its checks are then not recorded. */
#define tb_report_check(list, ...)                      \
  do {                                                 \
    if (list) (tb_report_check)(list, __VA_ARGS__);    \
  } while (0)
#define MAX_LISTED 4096u

static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static tb_vk_validation last_counts;

tb_vk_bool32 tb_vk_validation_callback(tb_vk_flags severity, tb_vk_flags types, const tb_vk_debug_callback_data *data,
                                       void *user_data) {
  (void)types;
  tb_vk_validation *v = user_data;
  if (!v) return 0;
  if (severity & TB_VK_DEBUG_SEVERITY_ERROR) v->errors++;
  else if (severity & TB_VK_DEBUG_SEVERITY_WARNING) v->warnings++;
  else return 0;
  if (!v->first_message[0]) {
    const char *id = data && data->pMessageIdName ? data->pMessageIdName : "";
    const char *text = data && data->pMessage ? data->pMessage : "(no text)";
    snprintf(v->first_message, sizeof v->first_message, "%s%s%s", id, id[0] ? ": " : "", text);
  }
  return 0; /* never abort the call that triggered the message */
}

static bool layer_installed(const tb_vk_api *api) {
  if (!api->vkEnumerateInstanceLayerProperties) return false;
  uint32_t count = 0;
  if (api->vkEnumerateInstanceLayerProperties(&count, NULL) != TB_VK_SUCCESS || count == 0) return false;
  if (count > MAX_LISTED) count = MAX_LISTED;
  tb_vk_layer_properties *layers = calloc(count, sizeof *layers);
  if (!layers) return false;
  bool found = false;
  tb_vk_result r = api->vkEnumerateInstanceLayerProperties(&count, layers);
  if (r == TB_VK_SUCCESS || r == TB_VK_INCOMPLETE)
    for (uint32_t i = 0; i < count && !found; i++)
      found = strncmp(layers[i].layerName, TB_VK_VALIDATION_LAYER, sizeof layers[i].layerName) == 0;
  free(layers);
  return found;
}

/* Is `name` among the instance extensions of `layer` (NULL: the loader and drivers)? */
static bool instance_extension(const tb_vk_api *api, const char *layer, const char *name) {
  if (!api->vkEnumerateInstanceExtensionProperties) return false;
  uint32_t count = 0;
  if (api->vkEnumerateInstanceExtensionProperties(layer, &count, NULL) != TB_VK_SUCCESS || count == 0) return false;
  if (count > MAX_LISTED) count = MAX_LISTED;
  tb_vk_extension_properties *exts = calloc(count, sizeof *exts);
  if (!exts) return false;
  bool found = false;
  tb_vk_result r = api->vkEnumerateInstanceExtensionProperties(layer, &count, exts);
  if (r == TB_VK_SUCCESS || r == TB_VK_INCOMPLETE)
    for (uint32_t i = 0; i < count && !found; i++)
      found = strncmp(exts[i].extensionName, name, sizeof exts[i].extensionName) == 0;
  free(exts);
  return found;
}

void tb_vk_validation_prepare(tb_device_list *list, const tb_vk_api *api, tb_vk_validation *v) {
  memset(v, 0, sizeof *v);
  const char *setting = tb_env("TB_VULKAN_VALIDATION");
  if (!setting || strcmp(setting, "0") == 0) return;
  if (strcmp(setting, "1") != 0) {
    tb_report_check(list, VK_BACKEND, false, "TB_VULKAN_VALIDATION", "'%s' is not 0 or 1; validation stays off", setting);
    return;
  }
  v->requested = true;
  if (!layer_installed(api)) {
    tb_report_check(list, VK_BACKEND, false, "validation layer " TB_VK_VALIDATION_LAYER,
                    "TB_VULKAN_VALIDATION=1 but the layer is not installed (install vulkan-validationlayers, or check VK_LAYER_PATH)");
    return;
  }
  v->layer_enabled = true;
  v->layer_names[0] = TB_VK_VALIDATION_LAYER;
  tb_report_check(list, VK_BACKEND, true, "validation layer " TB_VK_VALIDATION_LAYER, "enabled (TB_VULKAN_VALIDATION=1)");
  if (!instance_extension(api, NULL, TB_VK_DEBUG_UTILS_EXTENSION) &&
      !instance_extension(api, TB_VK_VALIDATION_LAYER, TB_VK_DEBUG_UTILS_EXTENSION)) {
    tb_report_check(list, VK_BACKEND, false, TB_VK_DEBUG_UTILS_EXTENSION,
                    "absent: validation messages go to the layer's own log and are not counted");
    return;
  }
  v->counting = true;
  v->extension_names[0] = TB_VK_DEBUG_UTILS_EXTENSION;
  v->messenger_info = (tb_vk_debug_messenger_create_info){
      .sType = TB_VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
      .messageSeverity = TB_VK_DEBUG_SEVERITY_WARNING | TB_VK_DEBUG_SEVERITY_ERROR,
      .messageType = TB_VK_DEBUG_TYPE_GENERAL | TB_VK_DEBUG_TYPE_VALIDATION | TB_VK_DEBUG_TYPE_PERFORMANCE,
      .pfnUserCallback = tb_vk_validation_callback,
      .pUserData = v,
  };
}

tb_vk_instance_request tb_vk_validation_request(const tb_vk_validation *v) {
  return (tb_vk_instance_request){
      .layer_count = v->layer_enabled ? 1u : 0u,
      .layer_names = v->layer_names,
      .extension_count = v->counting ? 1u : 0u,
      .extension_names = v->extension_names,
      .next = v->counting ? &v->messenger_info : NULL,
  };
}

void tb_vk_validation_attach(tb_device_list *list, const tb_vk_api *api, tb_vk_instance instance, tb_vk_validation *v) {
  if (!v->counting) return;
  if (!api->vkCreateDebugUtilsMessengerEXT || !api->vkDestroyDebugUtilsMessengerEXT) {
    tb_report_check(list, VK_BACKEND, false, "vkCreateDebugUtilsMessengerEXT",
                    "not available: only messages during instance creation and destruction are counted");
    return;
  }
  tb_vk_result r = api->vkCreateDebugUtilsMessengerEXT(instance, &v->messenger_info, NULL, &v->messenger);
  if (r != TB_VK_SUCCESS) {
    tb_report_check(list, VK_BACKEND, false, "vkCreateDebugUtilsMessengerEXT", "%d %s", (int)r, tb_vk_result_name(r));
    return;
  }
  v->messenger_created = true;
}

void tb_vk_validation_detach(const tb_vk_api *api, tb_vk_instance instance, tb_vk_validation *v) {
  if (!v->messenger_created) return;
  api->vkDestroyDebugUtilsMessengerEXT(instance, v->messenger, NULL);
  v->messenger_created = false;
}

void tb_vk_validation_finish(tb_device_list *list, const tb_vk_validation *v) {
  if (v->counting)
    tb_report_check(list, VK_BACKEND, v->warnings + v->errors == 0, "validation messages", "%u warning%s, %u error%s%s%s",
                    v->warnings, v->warnings == 1 ? "" : "s", v->errors, v->errors == 1 ? "" : "s",
                    v->first_message[0] ? "; first: " : "", v->first_message);
  pthread_mutex_lock(&last_lock);
  last_counts = *v;
  last_counts.messenger_info.pUserData = NULL;
  pthread_mutex_unlock(&last_lock);
}

void tb_vulkan_validation_last(tb_vk_validation *out) {
  pthread_mutex_lock(&last_lock);
  *out = last_counts;
  pthread_mutex_unlock(&last_lock);
}

unsigned tb_vulkan_validation_messages(void) {
  pthread_mutex_lock(&last_lock);
  unsigned n = last_counts.warnings + last_counts.errors;
  pthread_mutex_unlock(&last_lock);
  return n;
}
