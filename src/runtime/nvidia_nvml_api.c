/* NVML's symbol table: opening libnvidia-ml for the NVIDIA probe, and naming its return codes. */
#include "runtime/nvidia_nvml_api.h"
#include <string.h>

static const char *const libnvml_names[] = {"libnvidia-ml.so.1", NULL};

/* nvmlReturn_t names for the codes discovery meets, used when nvmlErrorString is absent. */
static const char *local_error_name(tb_nvml_return code) {
  switch (code) {
    case 1: return "NVML_ERROR_UNINITIALIZED";
    case 2: return "NVML_ERROR_INVALID_ARGUMENT";
    case 3: return "NVML_ERROR_NOT_SUPPORTED";
    case 4: return "NVML_ERROR_NO_PERMISSION";
    case 6: return "NVML_ERROR_NOT_FOUND";
    case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 15: return "NVML_ERROR_GPU_IS_LOST";
    case 17: return "NVML_ERROR_OPERATING_SYSTEM";
    case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 999: return "NVML_ERROR_UNKNOWN";
    default: return "NVML error";
  }
}

void *tb_nvml_api_open(tb_nvml_api *api, tb_dl_result *dl, char *missing, size_t cap) {
  memset(api, 0, sizeof *api);
  if (cap) missing[0] = '\0';
  void *handle = tb_dl_open("TB_NVML_LIB", libnvml_names, dl);
  if (!handle) return NULL;
  const tb_dl_symbol table[] = {
#define TB_NVML_ENTRY(name, ret, params, optional) {#name, (void **)&api->name, optional},
      TB_NVML_SYMBOLS(TB_NVML_ENTRY)
#undef TB_NVML_ENTRY
  };
  if (!tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, cap)) {
    memset(api, 0, sizeof *api);
    return NULL;
  }
  return handle;
}

const char *tb_nvml_error_text(const tb_nvml_api *api, tb_nvml_return code) {
  const char *s = api->nvmlErrorString ? api->nvmlErrorString(code) : NULL;
  return s && s[0] ? s : local_error_name(code);
}
