/* NVRTC's symbol table: finding the library (TB_NVRTC_LIB, the loader path, the NVIDIA pip wheels'
 * folders; see nvrtc_api.h), resolving it, reading its version, and naming its result codes. */
#define _POSIX_C_SOURCE 200809L
#include "runtime/nvrtc_api.h"
#include <glob.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/env.h"
#include "core/error.h"

static const char *const default_loader_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", NULL};
/* Inside a site-packages folder: the CUDA 13 wheels' layout, then the CUDA 12 wheels'. */
static const char *const wheel_files[] = {"nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"};

static _Atomic(const char *const *) test_loader_names;

void tb_nvrtc_test_loader_names(const char *const *names) { atomic_store(&test_loader_names, names); }

static const char *const *loader_names(void) {
  const char *const *names = atomic_load(&test_loader_names);
  return names ? names : default_loader_names;
}

/* Text appended to a fixed buffer, cut when full. */
typedef struct text {
  char *buf;
  size_t cap, len;
} text;

static void add(text *t, const char *a, const char *b) {
  if (t->len + 1 >= t->cap) return;
  int n = snprintf(t->buf + t->len, t->cap - t->len, "%s%s", a, b);
  if (n > 0) t->len = (size_t)n < t->cap - t->len ? t->len + (size_t)n : t->cap - 1;
}

/* The wheel search: what was looked at (for the error) and the library, once one loads. */
typedef struct wheel_search {
  text searched;  /* the site-packages folders looked in */
  int folders;    /* how many */
  char refused[1100]; /* the first wheel file that exists but did not load, and the loader's message */
  void *handle;
  tb_dl_result dl;
} wheel_search;

static bool is_regular(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* Try the wheels' files in one site-packages folder. */
static void try_site_packages(wheel_search *w, const char *folder) {
  struct stat sb;
  if (w->handle || stat(folder, &sb) != 0 || !S_ISDIR(sb.st_mode)) return;
  add(&w->searched, w->folders ? ", " : "", folder);
  w->folders++;
  for (size_t i = 0; i < sizeof wheel_files / sizeof wheel_files[0] && !w->handle; i++) {
    char path[sizeof w->dl.path];
    int n = snprintf(path, sizeof path, "%s/%s", folder, wheel_files[i]);
    if (n < 0 || (size_t)n >= sizeof path || !is_regular(path)) continue;
    const char *const names[] = {path, NULL};
    w->handle = tb_dl_open(NULL, names, &w->dl);
    /* the file found here, even when the loader had mapped the same file under another name before */
    if (w->handle) snprintf(w->dl.path, sizeof w->dl.path, "%s", path);
    else if (!w->refused[0]) snprintf(w->refused, sizeof w->refused, "; %s is there but did not load (%s)", path, w->dl.error);
  }
}

/* Every lib/python3.N/{site,dist}-packages folder under a prefix (PYTHONHOME may be "prefix:exec_prefix"). */
static void try_prefix(wheel_search *w, const char *prefix, size_t len) {
  if (w->handle || len == 0 || prefix[0] != '/' || len > 900) return;
  static const char *const kinds[] = {"site-packages", "dist-packages"};
  for (size_t p = 0; p < sizeof kinds / sizeof kinds[0]; p++) {
    char pattern[1024];
    snprintf(pattern, sizeof pattern, "%.*s/lib/python3*/%s", (int)len, prefix, kinds[p]);
    glob_t g;
    if (glob(pattern, GLOB_ONLYDIR, NULL, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; i++) try_site_packages(w, g.gl_pathv[i]);
    }
    globfree(&g);
  }
}

static void try_env_prefix(wheel_search *w, const char *var) {
  const char *v = tb_env(var);
  if (v) try_prefix(w, v, strcspn(v, ":"));
}

static void search_wheels(wheel_search *w) {
  const char *path = tb_env("PYTHONPATH");
  for (const char *p = path; p && *p && !w->handle;) {
    size_t n = strcspn(p, ":");
    char folder[1024];
    if (n > 0 && n < sizeof folder && p[0] == '/') {
      memcpy(folder, p, n);
      folder[n] = '\0';
      try_site_packages(w, folder);
    }
    p += n + (p[n] == ':');
  }
  try_env_prefix(w, "VIRTUAL_ENV");
  try_env_prefix(w, "CONDA_PREFIX");
  try_env_prefix(w, "PYTHONHOME");
  const char *user = tb_env("PYTHONUSERBASE");
  char local[1024];
  const char *home = tb_env("HOME");
  if (!user && home && snprintf(local, sizeof local, "%s/.local", home) < (int)sizeof local) user = local;
  if (user) try_prefix(w, user, strlen(user));
  try_prefix(w, "/usr/local", strlen("/usr/local"));
  try_prefix(w, "/usr", strlen("/usr"));
}

static tb_status not_found(const char *who, const tb_dl_result *loader, const wheel_search *w) {
  return tb_error(TB_ERR_UNAVAILABLE,
                  "%s: NVRTC (libnvrtc, the CUDA runtime compiler the CUDA backend builds its kernels with) was not "
                  "found: tried %s through the loader path (%s) and the NVIDIA pip wheels' nvidia/cu13/lib and "
                  "nvidia/cuda_nvrtc/lib in %s%s%s; install NVRTC (the CUDA toolkit's cuda-nvrtc package, or `pip "
                  "install nvidia-cuda-nvrtc`), or set TB_NVRTC_LIB to the path of libnvrtc.so.13 or libnvrtc.so.12",
                  who, loader->tried, loader->error[0] ? loader->error : "not found",
                  w->folders ? "the site-packages folders " : "no site-packages folder (none found under VIRTUAL_ENV, "
                                                              "CONDA_PREFIX, PYTHONHOME, PYTHONPATH, PYTHONUSERBASE, "
                                                              "~/.local, /usr/local or /usr)",
                  w->folders ? w->searched.buf : "", w->refused);
}

/* The library: TB_NVRTC_LIB alone when set, else the loader path, else the wheels. */
static void *find_library(const char *who, tb_dl_result *dl, tb_status *st) {
  void *h = tb_dl_open("TB_NVRTC_LIB", loader_names(), dl);
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
  char searched[1536] = "";
  wheel_search w = {.searched = {searched, sizeof searched, 0}};
  search_wheels(&w);
  if (w.handle) {
    *dl = w.dl;
    return w.handle;
  }
  *st = not_found(who, dl, &w);
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
