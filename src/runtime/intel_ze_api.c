/* Level Zero's symbol table: opening the loader for the probe or for the backend, and naming its results. */
#include "runtime/intel_ze_api.h"
#include <string.h>

static const char *const loader_names[] = {"libze_loader.so.1", "libze_loader.so", NULL};

void *tb_ze_api_open(ze_api *api, bool memory, tb_dl_result *dl, char *missing, size_t cap) {
  memset(api, 0, sizeof *api);
  if (cap) missing[0] = '\0';
  void *handle = tb_dl_open("TB_ZE_LIB", loader_names, dl);
  if (!handle) return NULL;
  const tb_dl_symbol table[] = {
#define TB_ZE_PROBE_ENTRY(name, optional) {#name, &api->name, optional},
#define TB_ZE_MEMORY_ENTRY(name, optional) {#name, &api->name, optional || !memory},
      TB_ZE_PROBE_SYMBOLS(TB_ZE_PROBE_ENTRY) TB_ZE_MEMORY_SYMBOLS(TB_ZE_MEMORY_ENTRY)
          TB_ZE_EVENT_SYMBOLS(TB_ZE_PROBE_ENTRY)
#undef TB_ZE_PROBE_ENTRY
#undef TB_ZE_MEMORY_ENTRY
  };
  if (!tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, cap)) {
    memset(api, 0, sizeof *api);
    return NULL;
  }
  return handle;
}

static const struct { uint32_t code; const char *name; } ze_results[] = {
    {0x0, "ZE_RESULT_SUCCESS"},
    {0x1, "ZE_RESULT_NOT_READY"},
    {0x70000001, "ZE_RESULT_ERROR_DEVICE_LOST"},
    {0x70000002, "ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY"},
    {0x70000003, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"},
    {0x70000006, "ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET"},
    {0x70000007, "ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE"},
    {0x70010000, "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"},
    {0x70010001, "ZE_RESULT_ERROR_NOT_AVAILABLE"},
    {0x70020000, "ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE"},
    {0x78000001, "ZE_RESULT_ERROR_UNINITIALIZED"},
    {0x78000002, "ZE_RESULT_ERROR_UNSUPPORTED_VERSION"},
    {0x78000003, "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"},
    {0x78000004, "ZE_RESULT_ERROR_INVALID_ARGUMENT"},
    {0x78000005, "ZE_RESULT_ERROR_INVALID_NULL_HANDLE"},
    {0x78000007, "ZE_RESULT_ERROR_INVALID_NULL_POINTER"},
    {0x78000008, "ZE_RESULT_ERROR_INVALID_SIZE"},
    {0x7800000c, "ZE_RESULT_ERROR_INVALID_ENUMERATION"},
    {0x7800000d, "ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION"},
    {0x7ffffffe, "ZE_RESULT_ERROR_UNKNOWN"},
};

const char *tb_ze_result_name(uint32_t result) {
  for (size_t i = 0; i < sizeof ze_results / sizeof ze_results[0]; i++)
    if (ze_results[i].code == result) return ze_results[i].name;
  return "unknown ze_result_t";
}
