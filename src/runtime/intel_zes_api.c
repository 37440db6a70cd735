/* Level Zero Sysman's symbol table, resolved from the loader the core API opened. */
#include "runtime/intel_zes_api.h"
#include <string.h>
#include "core/dl.h"

void tb_zes_api_resolve(void *handle, tb_zes_api *api) {
  memset(api, 0, sizeof *api);
  tb_dl_symbol table[] = {
#define TB_ZES_ENTRY(name) {#name, &api->name, true},
      TB_ZES_SYMBOLS(TB_ZES_ENTRY)
#undef TB_ZES_ENTRY
  };
  tb_dl_symbols(handle, table, sizeof table / sizeof table[0], NULL, 0);
}
