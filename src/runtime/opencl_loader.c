/* Opening the OpenCL ICD loader for the probe and the backend, and keeping it loaded.
 *
 * The ICD loader stays loaded for the life of the process once opened, as in any OpenCL program:
 * ocl-icd never unloads its drivers and does not free its vendor table when it is unloaded itself, so
 * opening and closing it again and again would leak. It also reads OCL_ICD_VENDORS only when first
 * loaded. core/dl.c keeps the handle: nobody closes it. */
#include "runtime/opencl_loader.h"

void *tb_cl_loader_open(tb_dl_result *dl) {
  static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so", NULL};
  return tb_dl_open(TB_CL_LIB_ENV, names, dl);
}

bool tb_cl_loader_resolve(void *handle, tb_cl_api *api, char *missing, size_t cap) {
  const tb_dl_symbol table[] = {
#define TB_CL_ENTRY(name, ret, args) {#name, (void **)&api->name, false},
      TB_CL_SYMBOLS(TB_CL_ENTRY)
#undef TB_CL_ENTRY
  };
  return tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, cap);
}
