/* Internal: opening vendor runtimes with dlopen. No vendor SDK is needed to build: each backend lists
 * the symbols it needs in a table (an X-macro next to its few local prototypes) and resolves them here.
 * This file owns every handle: a library opened here stays loaded for the life of the process (there is
 * no close), so discovery and backend creation can run any number of times, from any thread. */
#ifndef TB_CORE_DL_H
#define TB_CORE_DL_H
#include <stdbool.h>
#include <stddef.h>

typedef struct tb_dl_symbol {
  const char *name;
  void **slot;   /* receives the address, or NULL when absent */
  bool optional; /* absent optional symbols are not an error */
} tb_dl_symbol;

/* The outcome of tb_dl_open, for error messages and `tb doctor`. */
typedef struct tb_dl_result {
  char path[512];   /* the file that was loaded (resolved path when the loader says) */
  char tried[512];  /* what was tried, e.g. "TB_CUDA_LIB=/x/libcuda.so" or "libcuda.so.1, libcuda.so" */
  char error[512];  /* the loader's message for the last failed attempt */
  bool from_env;    /* the library came from (or was required by) the environment variable */
} tb_dl_result;

/* Open a library. When the environment variable `env_var` is set, only its value is tried (a path to
 * the file); otherwise each of `names` (NULL-terminated) in order, through the normal loader path.
 * Returns the handle or NULL, filling *result either way. A name opened before returns the same handle
 * without calling dlopen again. Thread-safe. */
void *tb_dl_open(const char *env_var, const char *const *names, tb_dl_result *result);

/* Resolve every symbol of the table. false when a required symbol is missing; its name goes in
 * `missing`. */
bool tb_dl_symbols(void *handle, const tb_dl_symbol *table, size_t count, char *missing, size_t cap);

/* How many handles are kept (for tests). */
size_t tb_dl_kept_count(void);

/* The modules loaded in the process now, to find those a vendor call loads by itself (the Vulkan
 * loader opens its drivers in vkCreateInstance and closes them in vkDestroyInstance). NULL when out of
 * memory. */
typedef struct tb_dl_modules tb_dl_modules;
tb_dl_modules *tb_dl_modules_snapshot(void);

/* Keep loaded for the life of the process every module loaded since `before` (RTLD_NODELETE, handle
 * kept here), and free `before`. Modules another thread loaded in between are kept too (probes run at
 * once: another probe's runtime, which stays loaded anyway). Returns how many were newly kept; 0 for a
 * NULL snapshot. */
size_t tb_dl_keep_new_modules(tb_dl_modules *before);

#endif
