/* Internal: opening a file a user named (a model, an .npy input, weights, external data, a cache entry, a
 * cpuid dump) for reading, without ever blocking on something that is not a file: a FIFO, a device, a
 * socket or a folder is refused with a sentence that names the path and what it is. */
#ifndef TB_CORE_REGULAR_FILE_H
#define TB_CORE_REGULAR_FILE_H
#include <sys/stat.h>
#include <tensorbridge/status.h>

/* Open `path` read-only (O_CLOEXEC) and check that it is a regular file; *fd and *info (may be NULL) are
 * set on TB_OK. `what` names the file's role ("model", ".npy file"). Errors: TB_ERR_NOT_FOUND (missing),
 * TB_ERR_PERMISSION (refused by the OS), TB_ERR_IO (any other open failure: "cannot open the <what>
 * <path>: <reason>"), TB_ERR_INVALID_ARGUMENT (not a regular file: "the <what> <path> is a FIFO (named
 * pipe), not a regular file; ..."). On failure errno is the open's error, or 0 when the path is not a
 * regular file. */
tb_status tb_fs_open_regular(const char *path, const char *what, int *fd, struct stat *info);

/* "a FIFO (named pipe)", "a folder", ... for a file mode that is not a regular file's. */
const char *tb_fs_kind_name(mode_t mode);

#endif
