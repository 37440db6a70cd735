/* Keeps the Vulkan drivers (ICDs) the loader opened during the probe loaded for the life of the process.
 * The loader unloads its drivers at vkDestroyInstance, and drivers keep global state they never free
 * (Mesa's lavapipe sets up LLVM once per load): unloading them at every probe would leak that state
 * each time. Marking them RTLD_NODELETE keeps them as a long-lived Vulkan application would. */
#include "discover/vulkan_resident.h"
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODULES 1024

typedef struct module_names {
  char *names[MAX_MODULES];
  size_t count;
} module_names;

static int collect(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  module_names *m = data;
  if (info->dlpi_name && info->dlpi_name[0] && m->count < MAX_MODULES) {
    char *copy = strdup(info->dlpi_name);
    if (copy) m->names[m->count++] = copy;
  }
  return 0;
}

/* True when the object itself (not one of its dependencies) exports the ICD entry point. */
static bool is_vulkan_driver(void *handle, const char *name) {
  void *entry = dlsym(handle, "vk_icdGetInstanceProcAddr");
  Dl_info where;
  return entry && dladdr(entry, &where) && where.dli_fname && strcmp(where.dli_fname, name) == 0;
}

size_t tb_vk_keep_drivers_loaded(void) {
  module_names *m = calloc(1, sizeof *m);
  if (!m) return 0;
  dl_iterate_phdr(collect, m);
  size_t kept = 0;
  for (size_t i = 0; i < m->count; i++) {
    void *handle = dlopen(m->names[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!handle) continue;
    if (is_vulkan_driver(handle, m->names[i])) {
      void *pinned = dlopen(m->names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
      if (pinned) {
        kept++;
        dlclose(pinned);
      }
    }
    dlclose(handle);
  }
  for (size_t i = 0; i < m->count; i++) free(m->names[i]);
  free(m);
  return kept;
}
