/* Internal: every read of /sys, /proc and /dev goes through here, below a root that TB_FSROOT can
 * move (tests point it at recorded trees under tests/fixtures). Paths given are absolute system
 * paths such as "/sys/bus/pci/devices". */
#ifndef TB_CORE_FS_H
#define TB_CORE_FS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Write TB_FSROOT + path into out; false when it does not fit. */
bool tb_fs_path(char *out, size_t cap, const char *path);
/* The current root ("" for the real system). */
const char *tb_fs_root(void);

/* Read a small text file whole into buf (NUL-terminated, trailing whitespace removed).
 * false when missing, unreadable, or empty; a file longer than cap-1 bytes is truncated. */
bool tb_fs_read(const char *path, char *buf, size_t cap);
/* Read a number written in decimal or 0x-hex; false when missing or not a number. */
bool tb_fs_read_u64(const char *path, uint64_t *out);
bool tb_fs_exists(const char *path);
/* access(2) under the root; mode as R_OK|W_OK. Returns 0 or the errno. */
int tb_fs_access(const char *path, int mode);
/* readlink(2) under the root, the last path component only ("nvidia" for a driver link). */
bool tb_fs_link_name(const char *path, char *buf, size_t cap);

/* Entries of a directory (no "." or ".."), sorted by name. Free with tb_fs_free_names.
 * Returns false (and *count 0) when the directory is missing or unreadable. */
bool tb_fs_list(const char *dir, char ***names, size_t *count);
void tb_fs_free_names(char **names, size_t count);

/* Find `key` in text made of lines "key value" or "KEY=value" (as in KFD properties and uevent
 * files); copies the value. false when absent. */
bool tb_kv_find(const char *text, const char *key, char *out, size_t cap);
/* The same for a numeric value. */
bool tb_kv_u64(const char *text, const char *key, uint64_t *out);

/* Parse a whole string as an unsigned number (decimal, or hex with 0x); false on any junk. */
bool tb_parse_u64(const char *s, uint64_t *out);

#endif
