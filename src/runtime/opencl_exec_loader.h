/* Internal: the OpenCL runtime as the backend uses it: the ICD loader opened through the probe's
 * shared loader (opencl_loader.h), its info queries and the execution entry points. */
#ifndef TB_RUNTIME_OPENCL_EXEC_LOADER_H
#define TB_RUNTIME_OPENCL_EXEC_LOADER_H
#include <tensorbridge/status.h>
#include "runtime/opencl_exec_api.h"
#include "runtime/opencl_api.h"

typedef struct tb_cl_runtime {
  void *handle;
  char path[512];    /* the library loaded */
  tb_cl_api info;    /* clGetPlatformIDs, clGetDeviceIDs, clGet*Info */
  tb_cl_exec_api cl; /* contexts, queues, buffers, copies; optional entries may be NULL */
} tb_cl_runtime;

/* Open the loader and resolve every entry point. Errors (TB_ERR_UNAVAILABLE) name the library tried
 * or the missing symbol, with the fix. */
tb_status tb_cl_runtime_open(tb_cl_runtime *rt);
void tb_cl_runtime_close(tb_cl_runtime *rt);

#endif
