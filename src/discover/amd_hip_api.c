/* The HIP runtime's symbol table: opening the library for the probe or for the backend, naming its codes. */
#include "discover/amd_hip_api.h"
#include <stdio.h>
#include <string.h>
#include "discover/amd_hip.h"

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
          TB_HIP_EVENT_SYMBOLS(TB_HIP_EVENT_ENTRY)
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
