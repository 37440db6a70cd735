/* CLBlast's symbol table: opening libclblast once per process for the OpenCL backend's GEMMs. */
#include "runtime/clblast_api.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include "core/dl.h"
#include "core/env.h"

static tb_clblast_api table;
static atomic_bool loaded;
static char why_not[400];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  static const char *const names[] = {"libclblast.so.1", "libclblast.so", NULL};
  tb_dl_result dl;
  void *h = tb_dl_open("TB_CLBLAST_LIB", names, &dl);
  if (!h) {
    snprintf(why_not, sizeof why_not, "CLBlast not loaded (tried %.120s: %.200s); install libclblast1 for its tuned GEMM", dl.tried,
             dl.error);
    tb_log(TB_LOG_INFO, "OpenCL: %s; using the built-in tiled GEMM", why_not);
    return;
  }
  const tb_dl_symbol symbols[] = {
#define TB_CLBLAST_ENTRY(name, ret, args) {#name, (void **)&table.name, false},
      TB_CLBLAST_SYMBOLS(TB_CLBLAST_ENTRY)
#undef TB_CLBLAST_ENTRY
  };
  char missing[96];
  if (!tb_dl_symbols(h, symbols, sizeof symbols / sizeof symbols[0], missing, sizeof missing)) {
    snprintf(why_not, sizeof why_not, "%.200s has no %.60s; install libclblast1 1.5 or later", dl.path, missing);
    tb_log(TB_LOG_INFO, "OpenCL: %s; using the built-in tiled GEMM", why_not);
    return; /* the library stays loaded, unused: core/dl.c owns the handle */
  }
  atomic_store(&loaded, true); /* kept loaded for the life of the process */
}

const tb_clblast_api *tb_clblast_api_open(char *why, size_t cap) {
  pthread_once(&once, load);
  if (atomic_load(&loaded)) return &table;
  snprintf(why, cap, "%s", why_not);
  return NULL;
}

const tb_clblast_api *tb_clblast_api_loaded(void) { return atomic_load(&loaded) ? &table : NULL; }
