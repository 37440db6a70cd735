/* Helpers for the XPU probe's tests: the environment for the intel fixtures and the fake Level Zero, a
 * writable copy of a fixture to break on purpose, and discovery run by an unprivileged child. */
#ifndef TB_TEST_INTEL_TREE_H
#define TB_TEST_INTEL_TREE_H
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test_util.h"

#define XPU_ONLY (1u << TB_BACKEND_XPU)
#define XPU_GIB 1073741824ull

static const char *const xpu_max_buses[4] = {"0000:29:00.0", "0000:3a:00.0", "0000:9a:00.0", "0000:ca:00.0"};

/* No vendor library, no fake mode, and `fixture` as the root ("" for the real machine). */
static inline void xpu_env(const char *fixture) {
  tbt_clear_env();
  tbt_no_vendor_libs();
  unsetenv("FAKE_ZE_MODE");
  unsetenv("FAKE_ZE_DEVICES");
  if (fixture[0]) tbt_use_fixture(fixture);
}

/* The fake Level Zero loader with the given device set and mode. */
static inline void xpu_use_fake(const char *devices, const char *mode) {
  setenv("TB_ZE_LIB", tbt_fake("fake_ze"), 1);
  setenv("FAKE_ZE_DEVICES", devices, 1);
  setenv("FAKE_ZE_MODE", mode, 1);
}

/* Copy tests/fixtures/<fixture> into a new directory under /tmp (mode 0755, so a dropped-privilege child
 * can read it), point TB_FSROOT at it and return its path (free with xpu_tree_remove). */
static inline char *xpu_tree_copy(const char *fixture) {
  char *root = strdup("/tmp/tb-xpu-XXXXXX");
  assert_non_null(root);
  assert_non_null(mkdtemp(root));
  assert_int_equal(chmod(root, 0755), 0);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cp -R '%s/%s/.' '%s'", TB_TEST_FIXTURES, fixture, root);
  assert_int_equal(system(cmd), 0);
  setenv("TB_FSROOT", root, 1);
  return root;
}

/* Replace (or create) the file root/rel with text. */
static inline void xpu_tree_write(const char *root, const char *rel, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* Run a shell command inside the tree (cd root && cmd). */
static inline void xpu_tree_sh(const char *root, const char *cmd) {
  char line[2048];
  snprintf(line, sizeof line, "cd '%s' && %s", root, cmd);
  assert_int_equal(system(line), 0);
}

static inline void xpu_tree_remove(char *root) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  assert_int_equal(system(cmd), 0);
  free(root);
}

/* Discover `kind` in a child process that dropped to uid/gid 65534 (tests run as root, and root passes every
 * permission check). Returns what the child saw, one line per device: "device|usable|reason|fix\n", then
 * "summary|<summary>\n". The caller frees it. */
static inline char *xpu_discover_as_nobody(tb_backend_kind kind) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    tb_discover_options opts = {.size = sizeof opts, .backends = 1u << kind};
    tb_device_list *list = NULL;
    if (tb_discover(&opts, &list) != TB_OK) _exit(4);
    FILE *out = fdopen(fds[1], "w");
    if (!out) _exit(5);
    for (size_t i = 0; i < tb_device_list_count(list); i++) {
      const tb_device_info *d = tb_device_list_get(list, i);
      if (d->backend == kind) fprintf(out, "%s|%d|%s|%s\n", d->device, d->usable ? 1 : 0, d->reason, d->fix);
    }
    fprintf(out, "summary|%s\n", tb_device_list_report(list, kind)->summary);
    fclose(out);
    tb_device_list_destroy(list);
    _exit(0);
  }
  close(fds[1]);
  size_t cap = 8192, len = 0;
  char *text = calloc(1, cap);
  assert_non_null(text);
  ssize_t r;
  while ((r = read(fds[0], text + len, cap - 1 - len)) > 0) len += (size_t)r;
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("unprivileged child failed (status 0x%x): %s", status, text);
  return text;
}

/* The line of `device` in xpu_discover_as_nobody's output, copied into out; fails the test when absent. */
static inline void xpu_child_line(const char *text, const char *device, char *out, size_t cap) {
  char key[64];
  snprintf(key, sizeof key, "%s|", device);
  const char *line = text;
  while (line && *line) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    if (strncmp(line, key, strlen(key)) == 0) {
      snprintf(out, cap, "%.*s", (int)len, line);
      return;
    }
    line = eol ? eol + 1 : NULL;
  }
  fail_msg("no line for %s in: %s", device, text);
}

#endif
