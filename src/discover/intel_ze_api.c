/* Level Zero's symbol table: opening the loader for the probe or for the backend. */
#include "discover/intel_ze_api.h"
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
