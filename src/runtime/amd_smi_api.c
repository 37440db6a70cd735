/* ROCm SMI's symbol table: opening the library for the ROCm probe, and naming its status codes. */
#include "runtime/amd_smi_api.h"
#include <string.h>

static const char *const rsmi_names[] = {"librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so", NULL};

void *tb_rsmi_api_open(tb_rsmi_api *api, tb_dl_result *dl, char *missing, size_t cap) {
  memset(api, 0, sizeof *api);
  if (cap) missing[0] = '\0';
  void *handle = tb_dl_open("TB_ROCM_SMI_LIB", rsmi_names, dl);
  if (!handle) return NULL;
  const tb_dl_symbol table[] = {
#define TB_RSMI_ENTRY(name, type, optional) {#name, (void **)&api->name, optional},
      TB_RSMI_SYMBOLS(TB_RSMI_ENTRY)
#undef TB_RSMI_ENTRY
  };
  if (!tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, cap)) {
    memset(api, 0, sizeof *api);
    return NULL;
  }
  return handle;
}

const char *tb_smi_status_name(uint32_t status) {
  static const char *const names[] = {"RSMI_STATUS_SUCCESS",          "RSMI_STATUS_INVALID_ARGS",
                                      "RSMI_STATUS_NOT_SUPPORTED",    "RSMI_STATUS_FILE_ERROR",
                                      "RSMI_STATUS_PERMISSION",       "RSMI_STATUS_OUT_OF_RESOURCES",
                                      "RSMI_STATUS_INTERNAL_EXCEPTION", "RSMI_STATUS_INPUT_OUT_OF_BOUNDS",
                                      "RSMI_STATUS_INIT_ERROR",       "RSMI_STATUS_NOT_YET_IMPLEMENTED",
                                      "RSMI_STATUS_NOT_FOUND",        "RSMI_STATUS_INSUFFICIENT_SIZE",
                                      "RSMI_STATUS_INTERRUPT",        "RSMI_STATUS_UNEXPECTED_SIZE",
                                      "RSMI_STATUS_NO_DATA",          "RSMI_STATUS_UNEXPECTED_DATA",
                                      "RSMI_STATUS_BUSY",             "RSMI_STATUS_REFCOUNT_OVERFLOW"};
  if (status < sizeof names / sizeof names[0]) return names[status];
  if (status == 0xFFFFFFFFu) return "RSMI_STATUS_UNKNOWN_ERROR";
  return "RSMI_STATUS_?";
}
