/* The HIP runtime's symbol table: opening the library for the probe or for the backend, naming its codes. */
#include "runtime/amd_hip_api.h"
#include <stdio.h>
#include <string.h>

static const char *const hip_names[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", NULL};

void *tb_hip_api_open(tb_hip_api *api, bool memory, tb_dl_result *dl, char *missing, size_t cap) {
  memset(api, 0, sizeof *api);
  if (cap) missing[0] = '\0';
  void *handle = tb_dl_open("TB_HIP_LIB", hip_names, dl);
  if (!handle) return NULL;
  const tb_dl_symbol table[] = {
#define TB_HIP_PROBE_ENTRY(name, ret, params, optional) {#name, (void **)&api->name, optional},
#define TB_HIP_MEMORY_ENTRY(name, ret, params) {#name, (void **)&api->name, !memory},
#define TB_HIP_EVENT_ENTRY(name, ret, params) {#name, (void **)&api->name, true},
      TB_HIP_PROBE_SYMBOLS(TB_HIP_PROBE_ENTRY) TB_HIP_MEMORY_SYMBOLS(TB_HIP_MEMORY_ENTRY)
          TB_HIP_EVENT_SYMBOLS(TB_HIP_EVENT_ENTRY) TB_HIP_POINTER_SYMBOLS(TB_HIP_EVENT_ENTRY)
#undef TB_HIP_PROBE_ENTRY
#undef TB_HIP_MEMORY_ENTRY
#undef TB_HIP_EVENT_ENTRY
  };
  if (!tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, cap)) {
    memset(api, 0, sizeof *api);
    return NULL;
  }
  return handle;
}

void tb_hip_api_error_name(const tb_hip_api *api, int code, char *out, size_t cap) {
  const char *name = api->hipGetErrorName ? api->hipGetErrorName(code) : NULL;
  if (!name || strncmp(name, "hip", 3) != 0 || strlen(name) >= cap) name = tb_hip_error_name(code);
  snprintf(out, cap, "%s", name);
}

const char *tb_hip_error_name(int code) {
  static const struct {
    int code;
    const char *name;
  } names[] = {{0, "hipSuccess"},
               {1, "hipErrorInvalidValue"},
               {2, "hipErrorOutOfMemory"},
               {3, "hipErrorNotInitialized"},
               {4, "hipErrorDeinitialized"},
               {35, "hipErrorInsufficientDriver"},
               {100, "hipErrorNoDevice"},
               {101, "hipErrorInvalidDevice"},
               {200, "hipErrorInvalidImage"},
               {201, "hipErrorInvalidContext"},
               {209, "hipErrorNoBinaryForGpu"},
               {303, "hipErrorSharedObjectInitFailed"},
               {304, "hipErrorOperatingSystem"},
               {400, "hipErrorInvalidHandle"},
               {500, "hipErrorNotFound"},
               {700, "hipErrorIllegalAddress"},
               {801, "hipErrorNotSupported"},
               {999, "hipErrorUnknown"},
               {1052, "hipErrorRuntimeMemory"},
               {1053, "hipErrorRuntimeOther"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].code == code) return names[i].name;
  return "hipError?";
}
