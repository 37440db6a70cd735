/* cuDNN's symbol table: finding the library (TB_CUDNN_LIB, the loader path, the NVIDIA pip wheels'
 * folders; see cudnn_api.h), resolving it, checking its version, and naming its status codes. */
#include "runtime/cudnn_api.h"
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "runtime/nvidia_lib_search.h"

static const char *const default_loader_names[] = {"libcudnn.so.9", NULL};
static const char *const wheel_files[] = {"nvidia/cudnn/lib/libcudnn.so.9", NULL};

static _Atomic(const char *const *) test_loader_names;

void tb_cudnn_test_loader_names(const char *const *names) { atomic_store(&test_loader_names, names); }

static const char *const fix_env = "point TB_CUDNN_LIB at libcudnn.so.9 of cuDNN 9 (the cudnn9 package or the "
                                   "nvidia-cudnn wheel), or unset it to search the loader path and the NVIDIA pip wheels";
static const char *const fix_install = "install cuDNN 9 (NVIDIA's cudnn9-cuda-13 or -12 package, or `pip install "
                                       "nvidia-cudnn-cu13`), or set TB_CUDNN_LIB to its libcudnn.so.9; without it, "
                                       "convolutions run on the backend's own kernels";

static void *find_library(const char *who, tb_dl_result *dl, tb_status *st) {
  const char *const *names = atomic_load(&test_loader_names);
  const tb_nvidia_lib_spec spec = {"TB_CUDNN_LIB", names ? names : default_loader_names, wheel_files};
  tb_nvidia_lib_search s;
  void *h = tb_nvidia_lib_find(&spec, &s);
  *dl = s.dl;
  *st = TB_OK;
  if (h) return h;
  if (s.dl.from_env) {
    *st = tb_error(TB_ERR_UNAVAILABLE, "%s: %s cannot be loaded: %s; %s", who, s.dl.tried,
                   s.dl.error[0] ? s.dl.error : "not found", fix_env);
    return NULL;
  }
  char searched[1700];
  tb_nvidia_lib_searched_text(&s, searched, sizeof searched);
  *st = tb_error(TB_ERR_UNAVAILABLE,
                 "%s: cuDNN (libcudnn, the library the CUDA backend runs convolutions with) was not found: tried %s "
                 "through the loader path (%s) and the NVIDIA pip wheels' nvidia/cudnn/lib in %s%s; %s",
                 who, s.dl.tried, s.dl.error[0] ? s.dl.error : "not found", searched, s.refused, fix_install);
  return NULL;
}

tb_status tb_cudnn_open(tb_cudnn_api *api, const char *who) {
  memset(api, 0, sizeof *api);
  tb_dl_result dl;
  tb_status st;
  void *h = find_library(who, &dl, &st);
  if (!h) return st;
  const tb_dl_symbol table[] = {
#define TB_CUDNN_ENTRY(name, ret, params, optional) {#name, (void **)&api->name, optional},
      TB_CUDNN_SYMBOLS(TB_CUDNN_ENTRY)
#undef TB_CUDNN_ENTRY
  };
  char missing[64];
  if (!tb_dl_symbols(h, table, sizeof table / sizeof table[0], missing, sizeof missing)) {
    memset(api, 0, sizeof *api);
    return tb_error(TB_ERR_UNAVAILABLE, "%s: %s (%s) does not export %s, so it is not a usable cuDNN 9; %s", who,
                    dl.path, dl.tried, missing, dl.from_env ? fix_env : fix_install);
  }
  size_t version = api->cudnnGetVersion();
  if (version < 90000 || version >= 100000) {
    memset(api, 0, sizeof *api);
    return tb_error(TB_ERR_UNAVAILABLE, "%s: %s is cuDNN %zu.%zu (cudnnGetVersion %zu), and the CUDA backend uses cuDNN 9; %s",
                    who, dl.path, version / 10000, version / 100 % 100, version, dl.from_env ? fix_env : fix_install);
  }
  snprintf(api->path, sizeof api->path, "%s", dl.path);
  api->version = version;
  return TB_OK;
}

void tb_cudnn_status_name(const tb_cudnn_api *api, tb_cudnn_status status, char *out, size_t cap) {
  const char *name = api && api->cudnnGetErrorString ? api->cudnnGetErrorString(status) : NULL;
  int n = name && name[0] ? snprintf(out, cap, "%s", name) : snprintf(out, cap, "cuDNN status %d", status);
  if (n < 0 || (size_t)n >= cap || !api || !api->cudnnGetLastErrorString) return;
  char last[256] = "";
  api->cudnnGetLastErrorString(last, sizeof last);
  last[sizeof last - 1] = '\0';
  if (last[0]) snprintf(out + n, cap - (size_t)n, " (%s)", last);
}
