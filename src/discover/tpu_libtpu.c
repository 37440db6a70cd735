/* Looking for libtpu.so on disk (never dlopen: loading it starts the TPU runtime). */
#include "discover/tpu_libtpu.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "core/env.h"
#include "core/fs.h"

static bool regular_file(const char *real_path) {
  struct stat st;
  return stat(real_path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool under_root(const char *path, char *out, size_t cap) {
  if (!tb_fs_exists(path)) return false;
  snprintf(out, cap, "%s", path);
  return true;
}

/* <base>/python3.*\/{site,dist}-packages/libtpu/libtpu.so under the root. */
static bool in_python_dirs(const char *base, char *out, size_t cap) {
  char **names = NULL;
  size_t n = 0;
  bool found = false;
  if (!tb_fs_list(base, &names, &n)) return false;
  for (size_t i = 0; i < n && !found; i++) {
    if (strncmp(names[i], "python3", 7) != 0) continue;
    static const char *const kinds[] = {"site-packages", "dist-packages"};
    for (size_t k = 0; k < 2 && !found; k++) {
      char candidate[1024];
      int len = snprintf(candidate, sizeof candidate, "%s/%s/%s/libtpu/libtpu.so", base, names[i], kinds[k]);
      found = len > 0 && (size_t)len < sizeof candidate && under_root(candidate, out, cap);
    }
  }
  tb_fs_free_names(names, n);
  return found;
}

static bool search_usual_places(char *out, size_t cap) {
  static const char *const files[] = {"/usr/lib/libtpu.so", "/usr/local/lib/libtpu.so", "/lib/libtpu.so"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    if (under_root(files[i], out, cap)) return true;
  static const char *const bases[] = {"/usr/local/lib", "/usr/lib", "/opt/conda/lib"};
  for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
    if (in_python_dirs(bases[i], out, cap)) return true;
  char base[512];
  const char *venv = tb_env("VIRTUAL_ENV");
  if (venv && snprintf(base, sizeof base, "%s/lib", venv) < (int)sizeof base && in_python_dirs(base, out, cap)) return true;
  const char *home = tb_env("HOME");
  if (home && snprintf(base, sizeof base, "%s/.local/lib", home) < (int)sizeof base && in_python_dirs(base, out, cap))
    return true;
  return false;
}

bool tb_libtpu_find(tb_device_list *list, char *path, size_t path_cap, char *tried, size_t tried_cap) {
  path[0] = '\0';
  const char *env = tb_env("TB_TPU_LIB");
  if (env) {
    bool ok = regular_file(env);
    if (ok) snprintf(path, path_cap, "%s", env);
    snprintf(tried, tried_cap, "TB_TPU_LIB=%s", env);
    tb_report_check(list, TB_BACKEND_TPU, ok, "libtpu.so (not loaded)", "TB_TPU_LIB=%s: %s", env,
                    ok ? "found" : "no such file");
    return ok;
  }
  const char *jax_path = tb_env("TPU_LIBRARY_PATH");
  if (jax_path && regular_file(jax_path)) {
    snprintf(path, path_cap, "%s", jax_path);
    tb_report_check(list, TB_BACKEND_TPU, true, "libtpu.so (not loaded)", "TPU_LIBRARY_PATH=%s", jax_path);
    return true;
  }
  if (search_usual_places(path, path_cap)) {
    tb_report_check(list, TB_BACKEND_TPU, true, "libtpu.so (not loaded)", "%s%s", tb_fs_root(), path);
    return true;
  }
  snprintf(tried, tried_cap,
           "%s/usr/lib, /usr/local/lib, /lib and python3.*/{site,dist}-packages/libtpu under /usr/local/lib, "
           "/usr/lib, /opt/conda/lib, $VIRTUAL_ENV/lib, ~/.local/lib",
           jax_path ? "TPU_LIBRARY_PATH, " : "");
  tb_report_check(list, TB_BACKEND_TPU, false, "libtpu.so (not loaded)", "not found in %s", tried);
  return false;
}
