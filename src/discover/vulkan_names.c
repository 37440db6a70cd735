/* Names and text for Vulkan values: VkResult names, vendor ids, driver and API versions. */
#include <stdio.h>
#include <string.h>
#include "runtime/vulkan_api.h"

typedef struct vk_result_entry {
  tb_vk_result code;
  const char *name;
} vk_result_entry;

static const vk_result_entry vk_results[] = {
    {0, "VK_SUCCESS"},
    {1, "VK_NOT_READY"},
    {2, "VK_TIMEOUT"},
    {3, "VK_EVENT_SET"},
    {4, "VK_EVENT_RESET"},
    {5, "VK_INCOMPLETE"},
    {-1, "VK_ERROR_OUT_OF_HOST_MEMORY"},
    {-2, "VK_ERROR_OUT_OF_DEVICE_MEMORY"},
    {-3, "VK_ERROR_INITIALIZATION_FAILED"},
    {-4, "VK_ERROR_DEVICE_LOST"},
    {-5, "VK_ERROR_MEMORY_MAP_FAILED"},
    {-6, "VK_ERROR_LAYER_NOT_PRESENT"},
    {-7, "VK_ERROR_EXTENSION_NOT_PRESENT"},
    {-8, "VK_ERROR_FEATURE_NOT_PRESENT"},
    {-9, "VK_ERROR_INCOMPATIBLE_DRIVER"},
    {-10, "VK_ERROR_TOO_MANY_OBJECTS"},
    {-11, "VK_ERROR_FORMAT_NOT_SUPPORTED"},
    {-12, "VK_ERROR_FRAGMENTED_POOL"},
    {-13, "VK_ERROR_UNKNOWN"},
    {-1000069000, "VK_ERROR_OUT_OF_POOL_MEMORY"},
    {-1000072003, "VK_ERROR_INVALID_EXTERNAL_HANDLE"},
    {-1000161000, "VK_ERROR_FRAGMENTATION"},
    {-1000257000, "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS"},
};

const char *tb_vk_result_name(tb_vk_result result) {
  for (size_t i = 0; i < sizeof vk_results / sizeof vk_results[0]; i++)
    if (vk_results[i].code == result) return vk_results[i].name;
  return "unknown VkResult";
}

const char *tb_vk_vendor_name(uint32_t vendor_id) {
  static const struct { uint32_t id; const char *name; } vendors[] = {
      {0x10de, "NVIDIA"},   {0x1002, "AMD"},         {0x1022, "AMD"},      {0x8086, "Intel"},
      {0x13b5, "ARM"},      {0x5143, "Qualcomm"},    {0x1010, "Imagination"}, {0x14e4, "Broadcom"},
      {0x106b, "Apple"},    {0x1414, "Microsoft"},   {0x1ae0, "Google"},   {0x144d, "Samsung"},
      {0x10001, "Vivante"}, {0x10002, "VeriSilicon"}, {0x10003, "Kazan"},  {0x10004, "Codeplay"},
      {0x10005, "Mesa"},    {0x10006, "PoCL"},       {0x10007, "Mobileye"}};
  for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
    if (vendors[i].id == vendor_id) return vendors[i].name;
  return NULL;
}

void tb_vk_driver_version_text(uint32_t vendor_id, uint32_t v, char *out, size_t cap) {
  if (vendor_id == 0x10de)
    snprintf(out, cap, "%u.%u.%u.%u", (v >> 22) & 0x3ffu, (v >> 14) & 0xffu, (v >> 6) & 0xffu, v & 0x3fu);
  else
    snprintf(out, cap, "%u.%u.%u", TB_VK_VERSION_MAJOR(v), TB_VK_VERSION_MINOR(v), TB_VK_VERSION_PATCH(v));
}

void tb_vk_api_version_text(uint32_t v, char *out, size_t cap) {
  snprintf(out, cap, "%u.%u.%u", TB_VK_VERSION_MAJOR(v), TB_VK_VERSION_MINOR(v), TB_VK_VERSION_PATCH(v));
}

void tb_vk_fixed_text(const char *field, size_t field_size, char *out, size_t cap) {
  if (!cap) return;
  size_t len = strnlen(field, field_size);
  if (len >= cap) len = cap - 1;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)field[i];
    out[i] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
  }
  out[len] = '\0';
  while (len && out[len - 1] == ' ') out[--len] = '\0';
}
