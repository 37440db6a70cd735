/* libcuda's symbol table: opening the library for the probe or for the backend, and naming its codes. */
#include "runtime/nvidia_cuda_api.h"
#include <stdio.h>
#include <string.h>

static const char *const libcuda_names[] = {"libcuda.so.1", "libcuda.so", NULL};

void *tb_cuda_api_open(tb_cuda_api *api, bool memory, tb_dl_result *dl, char *missing, size_t cap) {
  memset(api, 0, sizeof *api);
  if (cap) missing[0] = '\0';
  void *handle = tb_dl_open("TB_CUDA_LIB", libcuda_names, dl);
  if (!handle) return NULL;
  const tb_dl_symbol table[] = {
#define TB_CUDA_PROBE_ENTRY(name, ret, params, optional) {#name, (void **)&api->name, optional},
#define TB_CUDA_MEMORY_ENTRY(name, ret, params) {#name, (void **)&api->name, !memory},
#define TB_CUDA_EVENT_ENTRY(name, ret, params) {#name, (void **)&api->name, true},
      TB_CUDA_PROBE_SYMBOLS(TB_CUDA_PROBE_ENTRY) TB_CUDA_MEMORY_SYMBOLS(TB_CUDA_MEMORY_ENTRY)
          TB_CUDA_EVENT_SYMBOLS(TB_CUDA_EVENT_ENTRY) TB_CUDA_POINTER_SYMBOLS(TB_CUDA_EVENT_ENTRY)
              TB_CUDA_MODULE_SYMBOLS(TB_CUDA_EVENT_ENTRY) TB_CUDA_EXEC_SYMBOLS(TB_CUDA_EVENT_ENTRY)
#undef TB_CUDA_PROBE_ENTRY
#undef TB_CUDA_MEMORY_ENTRY
#undef TB_CUDA_EVENT_ENTRY
  };
  if (!tb_dl_symbols(handle, table, sizeof table / sizeof table[0], missing, cap)) {
    memset(api, 0, sizeof *api);
    return NULL;
  }
  return handle;
}

/* The stub library answers cuGetErrorName with 34 itself, so the local table is needed too. */
void tb_cuda_api_error_name(const tb_cuda_api *api, tb_cu_result code, char *out, size_t cap) {
  const char *name = NULL;
  if (api->cuGetErrorName && api->cuGetErrorName(code, &name) != TB_CUDA_SUCCESS) name = NULL;
  if (!name || !name[0]) name = tb_cuda_error_name(code);
  if (name)
    snprintf(out, cap, "%.*s", (int)(cap > 1 ? cap - 1 : 0), name);
  else
    snprintf(out, cap, "CUDA error %d", code);
}
