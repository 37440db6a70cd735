/* cuBLASLt's symbol table: finding the library (TB_CUBLASLT_LIB, the loader path, the NVIDIA pip wheels'
 * folders; see cublaslt_api.h), resolving it, reading its version, and naming its status codes. */
#include "runtime/cublaslt_api.h"
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "runtime/nvidia_lib_search.h"

static const char *const default_loader_names[] = {"libcublasLt.so.13", "libcublasLt.so.12", NULL};
/* Inside a site-packages folder: the CUDA 13 wheels' layout, then the CUDA 12 wheels'. */
static const char *const wheel_files[] = {"nvidia/cu13/lib/libcublasLt.so.13", "nvidia/cublas/lib/libcublasLt.so.12",
                                          NULL};

static _Atomic(const char *const *) test_loader_names;

void tb_cublaslt_test_loader_names(const char *const *names) { atomic_store(&test_loader_names, names); }

static void *find_library(const char *who, tb_dl_result *dl, tb_status *st) {
  const char *const *names = atomic_load(&test_loader_names);
  const tb_nvidia_lib_spec spec = {"TB_CUBLASLT_LIB", names ? names : default_loader_names, wheel_files};
  tb_nvidia_lib_search s;
  void *h = tb_nvidia_lib_find(&spec, &s);
  *dl = s.dl;
  *st = TB_OK;
  if (h) return h;
  if (s.dl.from_env) {
    *st = tb_error(TB_ERR_UNAVAILABLE,
                   "%s: %s cannot be loaded: %s; set TB_CUBLASLT_LIB to the path of cuBLASLt (libcublasLt.so.13 or "
                   "libcublasLt.so.12, e.g. /usr/local/cuda/lib64/libcublasLt.so.13), or unset it to search the "
                   "loader path and the NVIDIA pip wheels",
                   who, s.dl.tried, s.dl.error[0] ? s.dl.error : "not found");
    return NULL;
  }
  char searched[1700];
  tb_nvidia_lib_searched_text(&s, searched, sizeof searched);
  *st = tb_error(TB_ERR_UNAVAILABLE,
                 "%s: cuBLASLt (libcublasLt, the GEMM library the CUDA backend runs MatMul and Gemm with) was not "
                 "found: tried %s through the loader path (%s) and the NVIDIA pip wheels' nvidia/cu13/lib and "
                 "nvidia/cublas/lib in %s%s; install cuBLAS (the CUDA toolkit's libcublas package, or `pip install "
                 "nvidia-cublas`), or set TB_CUBLASLT_LIB to the path of libcublasLt.so.13 or libcublasLt.so.12",
                 who, s.dl.tried, s.dl.error[0] ? s.dl.error : "not found", searched, s.refused);
  return NULL;
}

tb_status tb_cublaslt_open(tb_cublaslt_api *api, const char *who) {
  memset(api, 0, sizeof *api);
  tb_dl_result dl;
  tb_status st;
  void *h = find_library(who, &dl, &st);
  if (!h) return st;
  const tb_dl_symbol table[] = {
#define TB_CUBLASLT_ENTRY(name, ret, params, optional) {#name, (void **)&api->name, optional},
      TB_CUBLASLT_SYMBOLS(TB_CUBLASLT_ENTRY)
#undef TB_CUBLASLT_ENTRY
  };
  char missing[64];
  if (!tb_dl_symbols(h, table, sizeof table / sizeof table[0], missing, sizeof missing)) {
    memset(api, 0, sizeof *api);
    return tb_error(TB_ERR_UNAVAILABLE, "%s: %s (%s) does not export %s, so it is not a usable cuBLASLt; %s", who,
                    dl.path, dl.tried, missing,
                    dl.from_env ? "point TB_CUBLASLT_LIB at libcublasLt.so.13 or libcublasLt.so.12 of the CUDA "
                                  "toolkit or of the nvidia-cublas wheel"
                                : "install cuBLAS 12 or newer, or set TB_CUBLASLT_LIB to its libcublasLt");
  }
  snprintf(api->path, sizeof api->path, "%s", dl.path);
  api->version = api->cublasLtGetVersion();
  return TB_OK;
}

void tb_cublaslt_status_name(const tb_cublaslt_api *api, tb_cublas_status status, char *out, size_t cap) {
  const char *name = api && api->cublasLtGetStatusName ? api->cublasLtGetStatusName(status) : NULL;
  if (name && name[0])
    snprintf(out, cap, "%s", name);
  else
    snprintf(out, cap, "cuBLAS status %d", status);
}
