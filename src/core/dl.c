/* dlopen with an environment override and a list of names, and symbol tables resolved by name. */
#include "core/dl.h"
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include "core/env.h"

static void copy_text(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

static void *open_one(const char *name, tb_dl_result *r) {
  dlerror();
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    copy_text(r->error, sizeof r->error, dlerror());
    return NULL;
  }
  struct link_map *map = NULL;
  if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    copy_text(r->path, sizeof r->path, map->l_name);
  else
    copy_text(r->path, sizeof r->path, name);
  r->error[0] = '\0';
  return h;
}

void *tb_dl_open(const char *env_var, const char *const *names, tb_dl_result *r) {
  memset(r, 0, sizeof *r);
  const char *override = env_var ? tb_env(env_var) : NULL;
  if (override) {
    r->from_env = true;
    snprintf(r->tried, sizeof r->tried, "%s=%s", env_var, override);
    return open_one(override, r);
  }
  size_t used = 0;
  for (size_t i = 0; names && names[i]; i++) {
    int n = snprintf(r->tried + used, sizeof r->tried - used, "%s%s", i ? ", " : "", names[i]);
    if (n > 0 && (size_t)n < sizeof r->tried - used) used += (size_t)n;
    void *h = open_one(names[i], r);
    if (h) return h;
  }
  return NULL;
}

bool tb_dl_symbols(void *handle, const tb_dl_symbol *table, size_t count, char *missing, size_t cap) {
  bool ok = true;
  if (cap) missing[0] = '\0';
  for (size_t i = 0; i < count; i++) {
    void *p = dlsym(handle, table[i].name);
    *table[i].slot = p;
    if (!p && !table[i].optional && ok) {
      ok = false;
      copy_text(missing, cap, table[i].name);
    }
  }
  return ok;
}

void tb_dl_close(void *handle) {
  if (handle) dlclose(handle);
}
