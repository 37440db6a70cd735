/* The search for NVIDIA's user-space libraries (nvidia_lib_search.h): the environment variable, the loader
 * path, then the NVIDIA pip wheels' folders in every site-packages folder a process can know of. */
#define _POSIX_C_SOURCE 200809L
#include "runtime/nvidia_lib_search.h"
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "core/env.h"

static void add_searched(tb_nvidia_lib_search *s, const char *folder) {
  size_t len = strlen(s->searched);
  if (len + 1 >= sizeof s->searched) return;
  snprintf(s->searched + len, sizeof s->searched - len, "%s%s", s->folders ? ", " : "", folder);
}

static bool is_regular(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The wheel search: the handle once one loads. */
typedef struct wheel_search {
  const tb_nvidia_lib_spec *spec;
  tb_nvidia_lib_search *s;
  tb_dl_result dl;
  void *handle;
} wheel_search;

/* Try the wheels' files in one site-packages folder. */
static void try_site_packages(wheel_search *w, const char *folder) {
  struct stat sb;
  if (w->handle || stat(folder, &sb) != 0 || !S_ISDIR(sb.st_mode)) return;
  add_searched(w->s, folder);
  w->s->folders++;
  for (size_t i = 0; w->spec->wheel_files[i] && !w->handle; i++) {
    char path[sizeof w->dl.path];
    int n = snprintf(path, sizeof path, "%s/%s", folder, w->spec->wheel_files[i]);
    if (n < 0 || (size_t)n >= sizeof path || !is_regular(path)) continue;
    const char *const names[] = {path, NULL};
    w->handle = tb_dl_open(NULL, names, &w->dl);
    /* the file found here, even when the loader had mapped the same file under another name before */
    if (w->handle)
      snprintf(w->dl.path, sizeof w->dl.path, "%s", path);
    else if (!w->s->refused[0])
      snprintf(w->s->refused, sizeof w->s->refused, "; %s is there but did not load (%s)", path, w->dl.error);
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

void *tb_nvidia_lib_find(const tb_nvidia_lib_spec *spec, tb_nvidia_lib_search *s) {
  memset(s, 0, sizeof *s);
  void *h = tb_dl_open(spec->env_var, spec->loader_names, &s->dl);
  if (h || s->dl.from_env) return h;
  wheel_search w = {.spec = spec, .s = s};
  search_wheels(&w);
  if (w.handle) s->dl = w.dl;
  return w.handle;
}

void tb_nvidia_lib_searched_text(const tb_nvidia_lib_search *s, char *out, size_t cap) {
  if (s->folders)
    snprintf(out, cap, "the site-packages folders %s", s->searched);
  else
    snprintf(out, cap, "no site-packages folder (none found under VIRTUAL_ENV, CONDA_PREFIX, PYTHONHOME, PYTHONPATH, "
                       "PYTHONUSERBASE, ~/.local, /usr/local or /usr)");
}
