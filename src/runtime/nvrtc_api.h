/* Internal: NVRTC, the CUDA runtime compiler, as one dlopen symbol table. The CUDA backend compiles its
 * embedded kernels with it for the exact architecture of the GPU (backend/cuda/cuda_compile.c). The few
 * NVRTC types are declared here with the C ABI of nvrtc.h, so no CUDA header is needed to build.
 *
 * Search order (the first that loads wins; the library then stays loaded for the process, core/dl.c):
 *   1. TB_NVRTC_LIB, a path: when set, only it is tried, and a value that does not load is an error;
 *   2. libnvrtc.so.13, then libnvrtc.so.12, through the loader path (ldconfig, LD_LIBRARY_PATH);
 *   3. the NVIDIA pip wheels (where PyTorch users have NVRTC): in each site-packages folder,
 *      nvidia/cu13/lib/libnvrtc.so.13 (CUDA 13 wheels) then nvidia/cuda_nvrtc/lib/libnvrtc.so.12 (CUDA 12
 *      wheels). The site-packages folders are found without running Python: each PYTHONPATH entry, then
 *      the folders lib/python3.N/site-packages and dist-packages (any N; Debian's lib/python3 too) under VIRTUAL_ENV, CONDA_PREFIX,
 *      PYTHONHOME, PYTHONUSERBASE (else ~/.local), /usr/local and /usr, in that order. */
#ifndef TB_RUNTIME_NVRTC_API_H
#define TB_RUNTIME_NVRTC_API_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/status.h>
#include "core/dl.h"

typedef int tb_nvrtc_result;
typedef struct tb_nvrtc_program_st *tb_nvrtc_program;

/* nvrtcResult codes (values from nvrtc.h). */
enum {
  TB_NVRTC_SUCCESS = 0,
  TB_NVRTC_ERROR_OUT_OF_MEMORY = 1,
  TB_NVRTC_ERROR_INVALID_OPTION = 5,
  TB_NVRTC_ERROR_COMPILATION = 6,
};

/* Name, return type, parameters, optional. */
#define TB_NVRTC_SYMBOLS(X)                                                                                   \
  X(nvrtcVersion, tb_nvrtc_result, (int *major, int *minor), false)                                          \
  X(nvrtcGetErrorString, const char *, (tb_nvrtc_result result), false)                                      \
  X(nvrtcCreateProgram, tb_nvrtc_result,                                                                     \
    (tb_nvrtc_program * prog, const char *src, const char *name, int num_headers, const char *const *headers, \
     const char *const *include_names),                                                                      \
    false)                                                                                                   \
  X(nvrtcDestroyProgram, tb_nvrtc_result, (tb_nvrtc_program * prog), false)                                  \
  X(nvrtcCompileProgram, tb_nvrtc_result, (tb_nvrtc_program prog, int num_options, const char *const *options), \
    false)                                                                                                   \
  X(nvrtcGetProgramLogSize, tb_nvrtc_result, (tb_nvrtc_program prog, size_t *size), false)                   \
  X(nvrtcGetProgramLog, tb_nvrtc_result, (tb_nvrtc_program prog, char *log), false)                          \
  X(nvrtcGetPTXSize, tb_nvrtc_result, (tb_nvrtc_program prog, size_t *size), false)                          \
  X(nvrtcGetPTX, tb_nvrtc_result, (tb_nvrtc_program prog, char *ptx), false)                                 \
  X(nvrtcGetCUBINSize, tb_nvrtc_result, (tb_nvrtc_program prog, size_t *size), true)                         \
  X(nvrtcGetCUBIN, tb_nvrtc_result, (tb_nvrtc_program prog, char *cubin), true)                              \
  X(nvrtcGetNumSupportedArchs, tb_nvrtc_result, (int *count), true)                                          \
  X(nvrtcGetSupportedArchs, tb_nvrtc_result, (int *archs), true)

typedef struct tb_nvrtc_api {
#define TB_NVRTC_MEMBER(name, ret, params, optional) ret(*name) params;
  TB_NVRTC_SYMBOLS(TB_NVRTC_MEMBER)
#undef TB_NVRTC_MEMBER
  char path[512]; /* the file loaded */
  int major, minor; /* nvrtcVersion */
} tb_nvrtc_api;

/* Open NVRTC (the search order above), resolve the table and read its version. On failure
 * TB_ERR_UNAVAILABLE with a sentence naming what was tried and what to install or set; `who` ("cuda:0")
 * leads it. */
tb_status tb_nvrtc_open(tb_nvrtc_api *api, const char *who);

/* The name of an nvrtcResult ("NVRTC_ERROR_COMPILATION"): NVRTC's own string, else "NVRTC error <n>". */
void tb_nvrtc_error_name(const tb_nvrtc_api *api, tb_nvrtc_result code, char *out, size_t cap);

/* Test hook: the names tried through the loader path (NULL-terminated; NULL: back to libnvrtc.so.13 and
 * libnvrtc.so.12), so that tests on a machine with the CUDA toolkit can reach the pip wheels' folders. */
void tb_nvrtc_test_loader_names(const char *const *names);

#endif
