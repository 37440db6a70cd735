/* NVRTC's symbol table: finding the library (TB_NVRTC_LIB, the loader path, the NVIDIA pip wheels'
 * folders; see nvrtc_api.h), resolving it, reading its version, and naming its result codes. */
#define _POSIX_C_SOURCE 200809L
#include "runtime/nvrtc_api.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime/nvidia_lib_search.h"
#include "core/error.h"

static const char *const default_loader_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", NULL};
/* Inside a site-packages folder: the CUDA 13 wheels' layout, then the CUDA 12 wheels'. */
static const char *const wheel_files[] = {"nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", NULL};

static _Atomic(const char *const *) test_loader_names;

void tb_nvrtc_test_loader_names(const char *const *names) { atomic_store(&test_loader_names, names); }

static const char *const *loader_names(void) {
  const char *const *names = atomic_load(&test_loader_names);
  return names ? names : default_loader_names;
}

static tb_status not_found(const char *who, const tb_nvidia_lib_search *s) {
  char searched[1700];
  tb_nvidia_lib_searched_text(s, searched, sizeof searched);
  return tb_error(TB_ERR_UNAVAILABLE,
                  "%s: NVRTC (libnvrtc, the CUDA runtime compiler the CUDA backend builds its kernels with) was not "
                  "found: tried %s through the loader path (%s) and the NVIDIA pip wheels' nvidia/cu13/lib and "
                  "nvidia/cuda_nvrtc/lib in %s%s; install NVRTC (the CUDA toolkit's cuda-nvrtc package, or `pip "
                  "install nvidia-cuda-nvrtc`), or set TB_NVRTC_LIB to the path of libnvrtc.so.13 or libnvrtc.so.12",
                  who, s->dl.tried, s->dl.error[0] ? s->dl.error : "not found", searched, s->refused);
}

/* The library: TB_NVRTC_LIB alone when set, else the loader path, else the wheels. */
static void *find_library(const char *who, tb_dl_result *dl, tb_status *st) {
  const tb_nvidia_lib_spec spec = {"TB_NVRTC_LIB", loader_names(), wheel_files};
  tb_nvidia_lib_search s;
  void *h = tb_nvidia_lib_find(&spec, &s);
  *dl = s.dl;
  *st = TB_OK;
  if (h) return h;
  if (dl->from_env) {
    *st = tb_error(TB_ERR_UNAVAILABLE,
                   "%s: %s cannot be loaded: %s; set TB_NVRTC_LIB to the path of NVRTC (libnvrtc.so.13 or "
                   "libnvrtc.so.12, e.g. /usr/local/cuda/lib64/libnvrtc.so.13), or unset it to search the loader "
                   "path and the NVIDIA pip wheels",
                   who, dl->tried, dl->error[0] ? dl->error : "not found");
    return NULL;
  }
  *st = not_found(who, &s);
  return NULL;
}

tb_status tb_nvrtc_open(tb_nvrtc_api *api, const char *who) {
  memset(api, 0, sizeof *api);
  tb_dl_result dl;
  tb_status st;
  void *h = find_library(who, &dl, &st);
  if (!h) return st;
  const tb_dl_symbol table[] = {
#define TB_NVRTC_ENTRY(name, ret, params, optional) {#name, (void **)&api->name, optional},
      TB_NVRTC_SYMBOLS(TB_NVRTC_ENTRY)
#undef TB_NVRTC_ENTRY
  };
  char missing[64];
  const char *fix = dl.from_env ? "point TB_NVRTC_LIB at libnvrtc.so.13 or libnvrtc.so.12 of the CUDA toolkit or of the "
                                  "nvidia-cuda-nvrtc wheel"
                                : "install a complete NVRTC (CUDA 12 or newer), or set TB_NVRTC_LIB to one";
  if (!tb_dl_symbols(h, table, sizeof table / sizeof table[0], missing, sizeof missing)) {
    memset(api, 0, sizeof *api);
    return tb_error(TB_ERR_UNAVAILABLE, "%s: %s (%s) does not export %s, so it is not a usable NVRTC; %s", who, dl.path,
                    dl.tried, missing, fix);
  }
  snprintf(api->path, sizeof api->path, "%s", dl.path);
  tb_nvrtc_result r = api->nvrtcVersion(&api->major, &api->minor);
  if (r != TB_NVRTC_SUCCESS || api->major < 1 || api->major > 99 || api->minor < 0 || api->minor > 99) {
    char name[96];
    tb_nvrtc_error_name(api, r, name, sizeof name);
    int major = api->major, minor = api->minor;
    memset(api, 0, sizeof *api);
    return tb_error(TB_ERR_UNAVAILABLE, "%s: nvrtcVersion of %s returned %d %s (version %d.%d), so it is not a usable NVRTC; %s",
                    who, dl.path, r, name, major, minor, fix);
  }
  return TB_OK;
}

void tb_nvrtc_error_name(const tb_nvrtc_api *api, tb_nvrtc_result code, char *out, size_t cap) {
  const char *name = api && api->nvrtcGetErrorString ? api->nvrtcGetErrorString(code) : NULL;
  if (name && name[0])
    snprintf(out, cap, "%s", name);
  else
    snprintf(out, cap, "NVRTC error %d", code);
}
