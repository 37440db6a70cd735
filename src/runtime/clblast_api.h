/* Internal: CLBlast (libclblast.so.1, or TB_CLBLAST_LIB) through dlopen, opened the first time it is
 * wanted and kept loaded (CLBlast keeps its own caches): the two entry points the OpenCL backend calls,
 * declared locally with the enum values of clblast_c.h, so no CLBlast header is needed to build. */
#ifndef TB_RUNTIME_CLBLAST_API_H
#define TB_RUNTIME_CLBLAST_API_H
#include <stdbool.h>
#include <stddef.h>
#include "runtime/opencl_exec_api.h"

#define TB_CLBLAST_ROW_MAJOR 101
#define TB_CLBLAST_NO_TRANS 111
#define TB_CLBLAST_TRANS 112

#define TB_CLBLAST_SYMBOLS(X)                                                                                  \
  X(CLBlastSgemm, int,                                                                                         \
    (int, int, int, size_t, size_t, size_t, float, tb_cl_mem, size_t, size_t, tb_cl_mem, size_t, size_t, float, \
     tb_cl_mem, size_t, size_t, tb_cl_command_queue *, tb_cl_event *))                                          \
  X(CLBlastClearCache, int, (void))

typedef struct tb_clblast_api {
#define TB_CLBLAST_FIELD(name, ret, args) ret(*name) args;
  TB_CLBLAST_SYMBOLS(TB_CLBLAST_FIELD)
#undef TB_CLBLAST_FIELD
} tb_clblast_api;

/* The table, opening the library on the first call (once per process). NULL when the library or one of
 * its entry points is missing: the reason in `why`, and an info line in the log the first time. */
const tb_clblast_api *tb_clblast_api_open(char *why, size_t cap);

/* The table when an earlier tb_clblast_api_open loaded it, else NULL (never opens the library). */
const tb_clblast_api *tb_clblast_api_loaded(void);

#endif
