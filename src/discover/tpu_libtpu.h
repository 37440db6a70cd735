/* Internal: is libtpu (the TPU runtime) installed? Looked for on disk, never loaded: discovery stays cheap and
 * a TPU runtime is only started by a backend. */
#ifndef TB_DISCOVER_TPU_LIBTPU_H
#define TB_DISCOVER_TPU_LIBTPU_H
#include <stdbool.h>
#include <stddef.h>
#include "discover/devlist.h"

/* Find libtpu.so. TB_TPU_LIB, when set, is the only place tried (a real path, as with every TB_*_LIB). Else
 * TPU_LIBRARY_PATH (the variable JAX and PyTorch/XLA honour), then the usual install places under TB_FSROOT:
 * /usr/lib, /usr/local/lib, /lib, and libtpu/libtpu.so in the site-packages / dist-packages of python3.*
 * under /usr/local/lib, /usr/lib, /opt/conda/lib, $VIRTUAL_ENV/lib and $HOME/.local/lib.
 * Fills `path` when found, else `tried` with what was looked at; records a check of the TPU report. */
bool tb_libtpu_find(tb_device_list *list, char *path, size_t path_cap, char *tried, size_t tried_cap);

#endif
