/* Internal: bounded OpenCL info queries for the OpenCL probe (opencl_query.c). */
#ifndef TB_RUNTIME_OPENCL_QUERY_H
#define TB_RUNTIME_OPENCL_QUERY_H
#include <stdbool.h>
#include <stddef.h>
#include "runtime/opencl_api.h"

/* Longest driver string accepted; device extension lists run to a few KiB, names to tens of bytes. */
#define TB_CL_STRING_MAX (1u << 20)

/* Outcomes that are not OpenCL codes (OpenCL codes are 0 or negative). */
#define TB_CL_REPLY_TOO_LONG 1
#define TB_CL_REPLY_WRONG_SIZE 2
#define TB_CL_HOST_OOM 3

/* A platform or a device: exactly one of the two is set. */
typedef struct tb_cl_object {
  tb_cl_platform_id platform;
  tb_cl_device_id device;
} tb_cl_object;

/* A string property: *out is malloc'd, always terminated, with control bytes blanked and outer blanks
 * trimmed, even when the driver forgets the terminator. Returns TB_CL_SUCCESS or the failure code. */
tb_cl_int tb_cl_string(const tb_cl_api *api, tb_cl_object obj, tb_cl_uint param, char **out);
/* A fixed-size property; the driver must answer exactly `size` bytes. *out is zeroed on failure. */
tb_cl_int tb_cl_scalar(const tb_cl_api *api, tb_cl_object obj, tb_cl_uint param, void *out, size_t size);

/* True when the space-separated list holds `name` as a whole word. */
bool tb_cl_has_extension(const char *extensions, const char *name);

/* "-30 CL_INVALID_VALUE", or what a TB_CL_REPLY_* code means. */
void tb_cl_code_text(tb_cl_int code, char *out, size_t cap);

#endif
