/* Internal: finding an NVIDIA library that is not part of the driver (NVRTC, cuBLASLt, cuDNN) the way a
 * user has it installed: an environment variable naming the file, the loader path (the CUDA toolkit,
 * Debian's or NVIDIA's packages), or the NVIDIA pip wheels that PyTorch users have. Each library's table
 * (nvrtc_api.c, cublaslt_api.c, cudnn_api.c) says which names and wheel files, and words its own errors
 * from what the search saw.
 *
 * The site-packages folders are found without running Python, in this order: each absolute PYTHONPATH
 * entry (taken as a site-packages folder itself), then lib/python3.N/site-packages and dist-packages (any
 * N) under VIRTUAL_ENV, CONDA_PREFIX, PYTHONHOME, PYTHONUSERBASE (else ~/.local), /usr/local and /usr. */
#ifndef TB_RUNTIME_NVIDIA_LIB_SEARCH_H
#define TB_RUNTIME_NVIDIA_LIB_SEARCH_H
#include <stdbool.h>
#include <stddef.h>
#include "core/dl.h"

typedef struct tb_nvidia_lib_spec {
  const char *env_var;              /* "TB_NVRTC_LIB": when set, only its value is tried */
  const char *const *loader_names;  /* NULL-terminated, through the loader path */
  const char *const *wheel_files;   /* NULL-terminated, relative to a site-packages folder */
} tb_nvidia_lib_spec;

/* What the search saw, for the caller's error sentence. */
typedef struct tb_nvidia_lib_search {
  tb_dl_result dl;     /* the library loaded; else the loader path's (or the variable's) attempt */
  char searched[1536]; /* the site-packages folders looked in, comma-separated */
  int folders;         /* how many */
  char refused[1100];  /* "; <file> is there but did not load (<loader's message>)" for the first such file */
} tb_nvidia_lib_search;

/* The library's handle (kept loaded for the process by core/dl.c), or NULL. s->dl.from_env says that the
 * variable was set (then nothing else was tried). */
void *tb_nvidia_lib_find(const tb_nvidia_lib_spec *spec, tb_nvidia_lib_search *s);

/* "the site-packages folders /a, /b" or "no site-packages folder (none found under ...)", for errors. */
void tb_nvidia_lib_searched_text(const tb_nvidia_lib_search *s, char *out, size_t cap);

#endif
