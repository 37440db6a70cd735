/* Bounded OpenCL info queries: strings that may be huge or lack their terminator, fixed-size scalars,
 * and extension-list lookups. The OpenCL probe builds devices from these. */
#include "runtime/opencl_query.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tb_cl_int info_call(const tb_cl_api *api, tb_cl_object obj, tb_cl_uint param, size_t size, void *value,
                           size_t *size_ret) {
  if (obj.platform) return api->clGetPlatformInfo(obj.platform, param, size, value, size_ret);
  return api->clGetDeviceInfo(obj.device, param, size, value, size_ret);
}

/* Printable text: control bytes become spaces, and surrounding blanks go. */
static void tidy(char *s) {
  for (char *c = s; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';
  size_t len = strlen(s);
  while (len && s[len - 1] == ' ') s[--len] = '\0';
  size_t lead = strspn(s, " ");
  if (lead) memmove(s, s + lead, len - lead + 1);
}

tb_cl_int tb_cl_string(const tb_cl_api *api, tb_cl_object obj, tb_cl_uint param, char **out) {
  *out = NULL;
  size_t size = 0;
  tb_cl_int err = info_call(api, obj, param, 0, NULL, &size);
  if (err != TB_CL_SUCCESS) return err;
  if (size > TB_CL_STRING_MAX) return TB_CL_REPLY_TOO_LONG;
  char *buf = calloc(1, size + 1);
  if (!buf) return TB_CL_HOST_OOM;
  size_t written = 0;
  if (size) {
    err = info_call(api, obj, param, size, buf, &written);
    if (err != TB_CL_SUCCESS) {
      free(buf);
      return err;
    }
  }
  buf[written < size ? written : size] = '\0';
  tidy(buf);
  *out = buf;
  return TB_CL_SUCCESS;
}

tb_cl_int tb_cl_scalar(const tb_cl_api *api, tb_cl_object obj, tb_cl_uint param, void *out, size_t size) {
  memset(out, 0, size);
  size_t got = size;
  tb_cl_int err = info_call(api, obj, param, size, out, &got);
  if (err != TB_CL_SUCCESS) {
    memset(out, 0, size);
    return err;
  }
  if (got != size) {
    memset(out, 0, size);
    return TB_CL_REPLY_WRONG_SIZE;
  }
  return TB_CL_SUCCESS;
}

bool tb_cl_has_extension(const char *extensions, const char *name) {
  size_t len = strlen(name);
  for (const char *p = extensions; p && *p;) {
    p += strspn(p, " ");
    size_t word = strcspn(p, " ");
    if (word == len && strncmp(p, name, len) == 0) return true;
    p += word;
  }
  return false;
}

void tb_cl_code_text(tb_cl_int code, char *out, size_t cap) {
  switch (code) {
    case TB_CL_REPLY_TOO_LONG:
      snprintf(out, cap, "a reply longer than the %u bytes accepted", (unsigned)TB_CL_STRING_MAX);
      break;
    case TB_CL_REPLY_WRONG_SIZE:
      snprintf(out, cap, "a reply of the wrong size");
      break;
    case TB_CL_HOST_OOM:
      snprintf(out, cap, "out of host memory");
      break;
    default:
      snprintf(out, cap, "%d %s", (int)code, tb_cl_error_name(code));
  }
}
