/* dlopen with an environment override and a list of names, symbol tables resolved by name, and the one
 * owner of every library handle: a vendor runtime, once opened, stays open for the life of the process.
 * Unloading one re-runs its constructors at the next load (HIP's LLVM aborts on that: "Option registered
 * more than once") and drops state its threads and atexit handlers still point at, so no handle is ever
 * closed; a second open of the same name returns the handle kept here without calling dlopen again. */
#include "core/dl.h"
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/env.h"

#define TB_DL_MAX_KEPT 128

typedef struct tb_dl_kept {
  char name[512]; /* what was passed to dlopen (or the module's path, for modules kept by tb_dl_keep_new_modules) */
  char path[512]; /* the file the loader mapped */
  void *handle;
} tb_dl_kept;

static pthread_mutex_t tb_dl_lock = PTHREAD_MUTEX_INITIALIZER;
static tb_dl_kept tb_dl_table[TB_DL_MAX_KEPT];
static size_t tb_dl_table_count;

static void copy_text(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

/* Under tb_dl_lock. */
static const tb_dl_kept *find_kept(const char *name) {
  for (size_t i = 0; i < tb_dl_table_count; i++)
    if (strcmp(tb_dl_table[i].name, name) == 0) return &tb_dl_table[i];
  return NULL;
}

/* Under tb_dl_lock. A full table only stops the lookup from short-cutting dlopen: the handle stays open
 * either way, and dlopen of a loaded file returns it again without running constructors. */
static void keep(const char *name, const char *path, void *handle) {
  if (tb_dl_table_count == TB_DL_MAX_KEPT || strlen(name) >= sizeof tb_dl_table[0].name) return;
  tb_dl_kept *k = &tb_dl_table[tb_dl_table_count++];
  copy_text(k->name, sizeof k->name, name);
  copy_text(k->path, sizeof k->path, path);
  k->handle = handle;
}

static void *open_one(const char *name, tb_dl_result *r) {
  pthread_mutex_lock(&tb_dl_lock);
  const tb_dl_kept *k = find_kept(name);
  if (k) {
    void *h = k->handle;
    copy_text(r->path, sizeof r->path, k->path);
    pthread_mutex_unlock(&tb_dl_lock);
    r->error[0] = '\0';
    return h;
  }
  dlerror();
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    copy_text(r->error, sizeof r->error, dlerror());
    pthread_mutex_unlock(&tb_dl_lock);
    return NULL;
  }
  struct link_map *map = NULL;
  if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0])
    copy_text(r->path, sizeof r->path, map->l_name);
  else
    copy_text(r->path, sizeof r->path, name);
  keep(name, r->path, h);
  pthread_mutex_unlock(&tb_dl_lock);
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

size_t tb_dl_kept_count(void) {
  pthread_mutex_lock(&tb_dl_lock);
  size_t n = tb_dl_table_count;
  pthread_mutex_unlock(&tb_dl_lock);
  return n;
}

struct tb_dl_modules {
  char **names;
  size_t count, cap;
};

static int add_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  tb_dl_modules *m = data;
  if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
  if (m->count == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    char **grown = realloc(m->names, cap * sizeof *grown);
    if (!grown) return 1;
    m->names = grown;
    m->cap = cap;
  }
  m->names[m->count] = strdup(info->dlpi_name);
  if (!m->names[m->count]) return 1;
  m->count++;
  return 0;
}

static void free_modules(tb_dl_modules *m) {
  if (!m) return;
  for (size_t i = 0; i < m->count; i++) free(m->names[i]);
  free(m->names);
  free(m);
}

tb_dl_modules *tb_dl_modules_snapshot(void) {
  tb_dl_modules *m = calloc(1, sizeof *m);
  if (m && dl_iterate_phdr(add_module, m) != 0) {
    free_modules(m);
    return NULL;
  }
  return m;
}

static bool listed(const tb_dl_modules *m, const char *name) {
  for (size_t i = 0; i < m->count; i++)
    if (strcmp(m->names[i], name) == 0) return true;
  return false;
}

size_t tb_dl_keep_new_modules(tb_dl_modules *before) {
  if (!before) return 0;
  tb_dl_modules *now = tb_dl_modules_snapshot();
  size_t kept = 0;
  pthread_mutex_lock(&tb_dl_lock);
  for (size_t i = 0; now && i < now->count; i++) {
    const char *name = now->names[i];
    if (listed(before, name) || find_kept(name)) continue;
    /* RTLD_NOLOAD: only a module that is still loaded; RTLD_NODELETE: its owner's dlclose leaves it mapped. */
    void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    if (!h) continue;
    keep(name, name, h);
    kept++;
  }
  pthread_mutex_unlock(&tb_dl_lock);
  free_modules(now);
  free_modules(before);
  return kept;
}
