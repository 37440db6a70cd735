/* Internal: opening the OpenCL ICD loader (libOpenCL.so.1, or TB_OPENCL_LIB) and resolving the info
 * entry points. Shared by the OpenCL probe (src/discover/opencl.c) and the OpenCL backend
 * (src/backend/opencl/), so both open the same library the same way and keep it loaded. */
#ifndef TB_RUNTIME_OPENCL_LOADER_H
#define TB_RUNTIME_OPENCL_LOADER_H
#include <stdbool.h>
#include <stddef.h>
#include "core/dl.h"
#include "runtime/opencl_api.h"

#define TB_CL_LIB_ENV "TB_OPENCL_LIB"

/* Open the loader: only $TB_OPENCL_LIB when set, else libOpenCL.so.1, libOpenCL.so. NULL on failure,
 * with *dl saying what was tried and why it failed. */
void *tb_cl_loader_open(tb_dl_result *dl);

/* Resolve TB_CL_SYMBOLS (the info queries) into *api; false with the missing name otherwise. */
bool tb_cl_loader_resolve(void *handle, tb_cl_api *api, char *missing, size_t cap);

#endif
