/* The Vulkan probe: opens the loader (libvulkan.so.1), creates an instance (with the Khronos validation
 * layer when TB_VULKAN_VALIDATION=1), lists every physical device as "vulkan:N" in enumeration order,
 * and destroys the instance before returning. No VkDevice is created. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/dl.h"
#include "discover/probes.h"
#include "runtime/vulkan_api.h"
#include "discover/vulkan_device.h"
#include "runtime/vulkan_loader.h"
#include "discover/vulkan_validation.h"

#define VK_BACKEND TB_BACKEND_VULKAN
#define MAX_PHYSICAL_DEVICES 64u
#define VK_DRIVER_FIX "install mesa-vulkan-drivers or your GPU vendor's Vulkan driver"

typedef struct vk_probe {
  tb_device_list *list;
  tb_vk_api api;
  const char *path;
  uint32_t instance_version;
  tb_vk_instance instance;
  tb_vk_validation validation;
} vk_probe;

static void *open_loader(tb_device_list *list, tb_dl_result *dl) {
  void *handle = tb_vk_loader_open(dl);
  if (handle) {
    tb_report_check(list, VK_BACKEND, true, dl->from_env ? "dlopen TB_VULKAN_LIB" : "dlopen libvulkan.so.1", "%s", dl->path);
    return handle;
  }
  if (dl->from_env) {
    tb_report_check(list, VK_BACKEND, false, "dlopen TB_VULKAN_LIB", "%s: %s", dl->tried, dl->error);
    tb_report_set(list, VK_BACKEND, "point TB_VULKAN_LIB at the Vulkan loader (libvulkan.so.1), or unset it to search the loader path",
                  "%s could not be loaded: %s", dl->tried, dl->error);
  } else {
    tb_report_check(list, VK_BACKEND, false, "dlopen libvulkan.so.1", "tried %s: %s", dl->tried, dl->error);
    tb_report_set(list, VK_BACKEND,
                  "install libvulkan1 and a Vulkan driver (mesa-vulkan-drivers, or your GPU vendor's), "
                  "or set TB_VULKAN_LIB to the path of libvulkan.so.1",
                  "libvulkan.so.1 not found in the loader path");
  }
  return NULL;
}

static void missing_function(vk_probe *p, const char *name) {
  tb_report_check(p->list, VK_BACKEND, false, "vkGetInstanceProcAddr", "%s not available from %s", name, p->path);
  tb_report_set(p->list, VK_BACKEND, "reinstall the Vulkan loader (libvulkan1) and driver; run `vulkaninfo` to check them",
                "%s not available from %s", name, p->path);
}

/* vkCreateInstance and the optional global functions, through vkGetInstanceProcAddr(NULL, ...). */
static bool load_global(vk_probe *p) {
  tb_vk_loader_global(&p->api);
  if (!p->api.vkCreateInstance) {
    missing_function(p, "vkCreateInstance");
    return false;
  }
  p->instance_version = TB_VK_API_VERSION_1_0;
  if (p->api.vkEnumerateInstanceVersion) {
    uint32_t v = 0;
    tb_vk_result r = p->api.vkEnumerateInstanceVersion(&v);
    if (r == TB_VK_SUCCESS) p->instance_version = v;
    else tb_report_check(p->list, VK_BACKEND, false, "vkEnumerateInstanceVersion", "%d %s; assuming Vulkan 1.0", (int)r, tb_vk_result_name(r));
  }
  char text[32];
  tb_vk_api_version_text(p->instance_version, text, sizeof text);
  tb_report_check(p->list, VK_BACKEND, true, "loader instance version", "%s%s", text,
                  p->api.vkEnumerateInstanceVersion ? "" : " (no vkEnumerateInstanceVersion: a Vulkan 1.0 loader)");
  return true;
}

static bool load_instance(vk_probe *p) {
  tb_vk_loader_instance(&p->api, p->instance);
  const struct { const char *name; bool present; } required[] = {
      {"vkEnumeratePhysicalDevices", p->api.vkEnumeratePhysicalDevices != NULL},
      {"vkGetPhysicalDeviceProperties", p->api.vkGetPhysicalDeviceProperties != NULL},
      {"vkGetPhysicalDeviceFeatures", p->api.vkGetPhysicalDeviceFeatures != NULL},
      {"vkGetPhysicalDeviceMemoryProperties", p->api.vkGetPhysicalDeviceMemoryProperties != NULL},
      {"vkEnumerateDeviceExtensionProperties", p->api.vkEnumerateDeviceExtensionProperties != NULL}};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
    if (!required[i].present) {
      missing_function(p, required[i].name);
      return false;
    }
  }
  return true;
}

static void report_create_error(vk_probe *p, tb_vk_result r) {
  tb_report_check(p->list, VK_BACKEND, false, "vkCreateInstance", "%d %s", (int)r, tb_vk_result_name(r));
  switch (r) {
    case TB_VK_ERROR_INCOMPATIBLE_DRIVER:
      tb_report_set(p->list, VK_BACKEND, VK_DRIVER_FIX,
                    "no Vulkan driver: vkCreateInstance returned %d %s (the loader found no installed driver (ICD) "
                    "that can run this instance)",
                    (int)r, tb_vk_result_name(r));
      break;
    case TB_VK_ERROR_INITIALIZATION_FAILED:
      tb_report_set(p->list, VK_BACKEND,
                    "a Vulkan driver or layer failed to initialise: run `vulkaninfo` to see which, reinstall it, "
                    "and check VK_ICD_FILENAMES, VK_DRIVER_FILES and VK_INSTANCE_LAYERS",
                    "vkCreateInstance failed with %d %s", (int)r, tb_vk_result_name(r));
      break;
    case TB_VK_ERROR_LAYER_NOT_PRESENT:
      tb_report_set(p->list, VK_BACKEND, "a layer named in VK_INSTANCE_LAYERS is missing or broken: fix or unset VK_INSTANCE_LAYERS",
                    "vkCreateInstance failed with %d %s", (int)r, tb_vk_result_name(r));
      break;
    default:
      tb_report_set(p->list, VK_BACKEND, "run `vulkaninfo` to check the Vulkan loader and driver; reinstall them",
                    "vkCreateInstance failed with %d %s", (int)r, tb_vk_result_name(r));
  }
}

static tb_vk_result try_create(vk_probe *p, uint32_t api_version) {
  tb_vk_instance_request request = tb_vk_validation_request(&p->validation);
  return tb_vk_loader_create_instance(&p->api, &request, "TensorBridge discovery", api_version, &p->instance);
}

static bool create_instance(vk_probe *p) {
  tb_vk_validation *v = &p->validation;
  tb_vk_validation_prepare(p->list, &p->api, v);
  uint32_t api_version = p->instance_version & ~0xfffu; /* the loader's major.minor; the patch does not matter */
  tb_vk_result r = try_create(p, api_version);
  if ((r == TB_VK_ERROR_LAYER_NOT_PRESENT || r == TB_VK_ERROR_EXTENSION_NOT_PRESENT) && v->layer_enabled) {
    /* A listed but broken validation layer must not hide the devices. */
    tb_report_check(p->list, VK_BACKEND, false, "vkCreateInstance", "%d %s with " TB_VK_VALIDATION_LAYER "; retrying without validation",
                    (int)r, tb_vk_result_name(r));
    v->layer_enabled = v->counting = false;
    r = try_create(p, api_version);
  }
  if (r != TB_VK_SUCCESS) {
    report_create_error(p, r);
    p->instance = NULL;
    return false;
  }
  if (!p->instance) {
    tb_report_check(p->list, VK_BACKEND, false, "vkCreateInstance", "returned VK_SUCCESS but no instance");
    tb_report_set(p->list, VK_BACKEND, "run `vulkaninfo` to check the Vulkan loader and driver; reinstall them",
                  "vkCreateInstance returned VK_SUCCESS but a NULL instance: the loader at %s is broken", p->path);
    return false;
  }
  p->instance_version = api_version;
  char text[32];
  tb_vk_api_version_text(api_version, text, sizeof text);
  tb_report_check(p->list, VK_BACKEND, true, "vkCreateInstance", "apiVersion %s%s", text,
                  v->layer_enabled ? ", " TB_VK_VALIDATION_LAYER : "");
  return true;
}

static void report_enumerate_error(vk_probe *p, tb_vk_result r) {
  tb_report_check(p->list, VK_BACKEND, false, "vkEnumeratePhysicalDevices", "%d %s", (int)r, tb_vk_result_name(r));
  tb_report_set(p->list, VK_BACKEND, "run `vulkaninfo` to see which driver fails; reinstall it (" VK_DRIVER_FIX ")",
                "vkEnumeratePhysicalDevices failed with %d %s", (int)r, tb_vk_result_name(r));
}

/* The physical devices; asked again when the count grows between the two calls (VK_INCOMPLETE). */
static void probe_devices(vk_probe *p) {
  for (int attempt = 0; attempt < 3; attempt++) {
    uint32_t count = 0;
    tb_vk_result r = p->api.vkEnumeratePhysicalDevices(p->instance, &count, NULL);
    if (r != TB_VK_SUCCESS) {
      report_enumerate_error(p, r);
      return;
    }
    if (count == 0) {
      tb_report_check(p->list, VK_BACKEND, false, "vkEnumeratePhysicalDevices", "0 devices");
      tb_report_set(p->list, VK_BACKEND, VK_DRIVER_FIX, "no Vulkan device: the installed drivers report no physical device");
      return;
    }
    uint32_t cap = count > MAX_PHYSICAL_DEVICES ? MAX_PHYSICAL_DEVICES : count;
    tb_vk_physical_device *devices = calloc(cap, sizeof *devices);
    if (!devices) {
      p->list->arena.failed = true;
      return;
    }
    uint32_t written = cap;
    r = p->api.vkEnumeratePhysicalDevices(p->instance, &written, devices);
    bool last_try = attempt == 2 || cap < count;
    if (r == TB_VK_INCOMPLETE && !last_try) {
      tb_report_check(p->list, VK_BACKEND, false, "vkEnumeratePhysicalDevices",
                      "device count changed after %u (VK_INCOMPLETE); asking again", count);
      free(devices);
      continue;
    }
    if (r != TB_VK_SUCCESS && r != TB_VK_INCOMPLETE) {
      report_enumerate_error(p, r);
      free(devices);
      return;
    }
    if (written > cap) written = cap;
    tb_report_check(p->list, VK_BACKEND, r == TB_VK_SUCCESS, "vkEnumeratePhysicalDevices", "%u device%s%s", written,
                    written == 1 ? "" : "s", r == TB_VK_SUCCESS ? "" : " (VK_INCOMPLETE: probing those returned)");
    for (uint32_t i = 0; i < written; i++) {
      if (devices[i]) tb_vk_probe_device(p->list, &p->api, p->instance_version, devices[i]);
      else tb_report_check(p->list, VK_BACKEND, false, "vkEnumeratePhysicalDevices", "device handle %u is NULL; skipped", i);
    }
    free(devices);
    return;
  }
}

/* The loader opens its drivers (ICDs) in vkCreateInstance and closes them in vkDestroyInstance; drivers
 * keep global state they never free (lavapipe sets up LLVM once per load), so the ones it opened stay
 * loaded for the life of the process, as in a long-lived Vulkan application (core/dl.c keeps them). */
static bool keep_drivers_loaded_around(vk_probe *p) {
  tb_dl_modules *before = tb_dl_modules_snapshot();
  bool ok = create_instance(p);
  tb_dl_keep_new_modules(before);
  return ok;
}

void tb_probe_vulkan(tb_device_list *list) {
  vk_probe p = {.list = list};
  tb_dl_result dl;
  void *handle = open_loader(list, &dl);
  if (!handle) {
    tb_vk_validation_finish(list, &p.validation);
    return;
  }
  p.path = dl.path;
  char missing[128];
  if (!tb_vk_loader_entry(handle, &p.api, missing, sizeof missing)) {
    tb_report_check(list, VK_BACKEND, false, "dlsym", "%s not found in %s", missing, dl.path);
    tb_report_set(list, VK_BACKEND,
                  dl.from_env ? "point TB_VULKAN_LIB at the Vulkan loader (libvulkan.so.1), or unset it"
                              : "reinstall libvulkan1: the library found is not the Vulkan loader",
                  "%s not found in %s", missing, dl.path);
  } else if (load_global(&p) && keep_drivers_loaded_around(&p)) {
    if (load_instance(&p)) {
      tb_vk_validation_attach(list, &p.api, p.instance, &p.validation);
      probe_devices(&p);
      tb_vk_validation_detach(&p.api, p.instance, &p.validation);
    }
    if (p.api.vkDestroyInstance) p.api.vkDestroyInstance(p.instance, NULL);
    else tb_report_check(list, VK_BACKEND, false, "vkDestroyInstance", "not available from %s: the instance is leaked", dl.path);
  }
  tb_vk_validation_finish(list, &p.validation);
}
