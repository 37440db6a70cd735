/* Internal: the Khronos validation layer on the Vulkan probe's instance when TB_VULKAN_VALIDATION=1,
 * with a VK_EXT_debug_utils messenger that counts the warnings and errors it reports. Tests read the
 * counts of the last probe with tb_vulkan_validation_last() to assert that discovery is clean. */
#ifndef TB_DISCOVER_VULKAN_VALIDATION_H
#define TB_DISCOVER_VULKAN_VALIDATION_H
#include <stdbool.h>
#include "discover/devlist.h"
#include "runtime/vulkan_api.h"
#include "runtime/vulkan_loader.h"

#define TB_VK_VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"
#define TB_VK_DEBUG_UTILS_EXTENSION "VK_EXT_debug_utils"

typedef struct tb_vk_validation {
  bool requested;     /* TB_VULKAN_VALIDATION=1 */
  bool layer_enabled; /* the layer is installed and was enabled on the instance */
  bool counting;      /* VK_EXT_debug_utils was enabled: messages are counted */
  unsigned warnings;
  unsigned errors;
  char first_message[512]; /* the first warning or error, "" when none */
  /* set up by tb_vk_validation_prepare, used while the instance lives */
  const char *layer_names[1];
  const char *extension_names[1];
  tb_vk_debug_messenger_create_info messenger_info;
  tb_vk_messenger messenger;
  bool messenger_created;
} tb_vk_validation;

/* Read TB_VULKAN_VALIDATION and, when it asks for validation, look for the layer and the debug-utils
 * extension through the loader's global functions. Records checks; fills the names to enable and the
 * messenger info to chain into VkInstanceCreateInfo (pNext), which counts into *v. `list` may be NULL
 * (the backend): then nothing is recorded. */
void tb_vk_validation_prepare(tb_device_list *list, const tb_vk_api *api, tb_vk_validation *v);

/* The layer, extension and messenger chain `v` prepared, as the loader's instance request. */
tb_vk_instance_request tb_vk_validation_request(const tb_vk_validation *v);

/* After vkCreateInstance: a messenger for the instance's lifetime (the chained one covers only
 * creation and destruction). */
void tb_vk_validation_attach(tb_device_list *list, const tb_vk_api *api, tb_vk_instance instance, tb_vk_validation *v);
/* Before vkDestroyInstance. */
void tb_vk_validation_detach(const tb_vk_api *api, tb_vk_instance instance, tb_vk_validation *v);

/* After vkDestroyInstance: a check with the counts, and the counts published for
 * tb_vulkan_validation_last(). */
void tb_vk_validation_finish(tb_device_list *list, const tb_vk_validation *v);

/* The counts of the most recent Vulkan probe in this process (all zero/false before the first, and
 * when that probe ran without TB_VULKAN_VALIDATION=1). */
void tb_vulkan_validation_last(tb_vk_validation *out);
/* Warnings plus errors of the most recent probe. */
unsigned tb_vulkan_validation_messages(void);

/* The messenger callback (exposed so tests can check the counting rules directly). */
tb_vk_bool32 tb_vk_validation_callback(tb_vk_flags severity, tb_vk_flags types, const tb_vk_debug_callback_data *data,
                                       void *user_data);

#endif
