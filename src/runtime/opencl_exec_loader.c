/* Loading the OpenCL runtime for the backend: the same library the probe opens (TB_OPENCL_LIB or
 * libOpenCL.so.1), kept loaded for the life of the process as the probe keeps it (see
 * opencl_loader.c), with the execution entry points resolved on top of the info ones. */
#include "runtime/opencl_exec_loader.h"
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "runtime/opencl_loader.h"

static tb_status missing_symbol(tb_cl_runtime *rt, bool from_env, const char *missing) {
  tb_status s = tb_error(TB_ERR_UNAVAILABLE, "%s not found in %s; %s", missing, rt->path,
                         from_env ? "point TB_OPENCL_LIB at an OpenCL ICD loader (libOpenCL.so.1), or unset it"
                                  : "reinstall ocl-icd-libopencl1: the library found is not a complete OpenCL ICD loader");
  tb_cl_runtime_close(rt);
  return s;
}

tb_status tb_cl_runtime_open(tb_cl_runtime *rt) {
  memset(rt, 0, sizeof *rt);
  tb_dl_result dl;
  rt->handle = tb_cl_loader_open(&dl);
  if (!rt->handle) {
    if (dl.from_env)
      return tb_error(TB_ERR_UNAVAILABLE, "%s could not be loaded: %s; point TB_OPENCL_LIB at an OpenCL ICD loader "
                      "(libOpenCL.so.1), or unset it to search the loader path", dl.tried, dl.error);
    return tb_error(TB_ERR_UNAVAILABLE, "libOpenCL.so.1 not found in the loader path (tried %s: %s); install "
                    "ocl-icd-libopencl1 and an ICD (e.g. pocl-opencl-icd), or set TB_OPENCL_LIB to the path of "
                    "libOpenCL.so.1", dl.tried, dl.error);
  }
  snprintf(rt->path, sizeof rt->path, "%s", dl.path);
  char missing[128];
  if (!tb_cl_loader_resolve(rt->handle, &rt->info, missing, sizeof missing)) return missing_symbol(rt, dl.from_env, missing);
  const tb_dl_symbol table[] = {
#define TB_CL_EXEC_ENTRY(name, ret, args, optional) {#name, (void **)&rt->cl.name, optional},
      TB_CL_EXEC_SYMBOLS(TB_CL_EXEC_ENTRY)
#undef TB_CL_EXEC_ENTRY
  };
  if (!tb_dl_symbols(rt->handle, table, sizeof table / sizeof table[0], missing, sizeof missing))
    return missing_symbol(rt, dl.from_env, missing);
  if (!rt->cl.clCreateCommandQueue && !rt->cl.clCreateCommandQueueWithProperties)
    return missing_symbol(rt, dl.from_env, "clCreateCommandQueue (and clCreateCommandQueueWithProperties)");
  return TB_OK;
}

void tb_cl_runtime_close(tb_cl_runtime *rt) {
  rt->handle = NULL; /* the library stays loaded: core/dl.c owns the handle */
}
