/* Helpers for the tests of the `tb` tool: run it with stdout and stderr captured, and parse its JSON
 * with cJSON (the tests may use cJSON; the tool itself may not). Static so that each test_cli*.c
 * executable takes what it uses. */
#ifndef TB_TEST_CLI_UTIL_H
#define TB_TEST_CLI_UTIL_H
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "test_util.h"

typedef struct tcli_run {
  int code;  /* exit code, -1 when the tool did not exit normally */
  char *out; /* stdout, never NULL */
  char *err; /* stderr, never NULL */
} tcli_run;

static inline char *tcli_slurp(FILE *f) {
  size_t cap = 4096, len = 0, got;
  char *buf = malloc(cap);
  assert_non_null(buf);
  while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (cap - len < 1024) {
      buf = realloc(buf, cap *= 2);
      assert_non_null(buf);
    }
  }
  buf[len] = '\0';
  return buf;
}

/* Run `<prefix>tb <args>` (args a shell command tail; prefix "" or a command such as setpriv that runs tb)
 * in the current environment. */
static inline tcli_run tcli_with(const char *prefix, const char *args) {
  char err_path[] = "/tmp/tb-test-cli-stderr-XXXXXX";
  int fd = mkstemp(err_path);
  assert_true(fd >= 0);
  close(fd);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s%s %s 2>%s", prefix, TB_TEST_TOOL, args, err_path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  tcli_run r;
  r.out = tcli_slurp(p);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  FILE *e = fopen(err_path, "r");
  assert_non_null(e);
  r.err = tcli_slurp(e);
  fclose(e);
  unlink(err_path);
  return r;
}

/* Run `tb <args>` (a shell command tail) in the current environment. */
static inline tcli_run tcli(const char *args) { return tcli_with("", args); }

/* Run `tb <args>` as nobody when the test runs as root (root passes every permission check), else as itself:
 * for the cases about files and folders tb may not write. */
static inline tcli_run tcli_unprivileged(const char *args) {
  return tcli_with(geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "", args);
}

static inline void tcli_free(tcli_run *r) {
  free(r->out);
  free(r->err);
}

/* Fail unless the run exited with `code`; shows both streams when it did not. */
#define TCLI_ASSERT_EXIT(run, expected)                                                                   \
  do {                                                                                                    \
    if ((run).code != (expected))                                                                         \
      fail_msg("exit code %d, expected %d\n--- stdout:\n%s\n--- stderr:\n%s", (run).code, (expected), (run).out, \
               (run).err);                                                                                \
  } while (0)

/* Run `tb <args>` and check the exit code and that stderr contains err_part. */
static inline void tcli_expect_err(const char *args, int code, const char *err_part) {
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, code);
  TB_ASSERT_CONTAINS(r.err, err_part);
  tcli_free(&r);
}

/* Run `tb <args>` and check the exit code and that stdout is exactly `out`. */
static inline void tcli_expect_out(const char *args, int code, const char *out) {
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, code);
  assert_string_equal(r.out, out);
  tcli_free(&r);
}

/* A recorded machine: the Sapphire Rapids server of tests/fixtures/cpu_spr (its cpuid dump, /sys and
 * /proc) with no vendor runtime, so every value tb prints comes from files and two runs print the same
 * (the live machine's free memory changes between runs). */
static inline void tcli_recorded_spr(void) {
  static char cpuid[1024];
  tbt_use_fixture("cpu_spr");
  snprintf(cpuid, sizeof cpuid, "%s/cpu_spr/cpuid.txt", TB_TEST_FIXTURES);
  setenv("TB_CPUID_FILE", cpuid, 1);
  tbt_no_vendor_libs();
}

/* Parse JSON output; fails the test when it is not valid JSON. Free with cJSON_Delete. */
static inline cJSON *tcli_json(const char *text) {
  cJSON *j = cJSON_Parse(text);
  if (!j) fail_msg("not valid JSON near \"%.40s\" in:\n%s", cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "?", text);
  return j;
}

static inline const char *tcli_json_str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsString(v)) fail_msg("JSON key \"%s\" is missing or not a string", key);
  return v->valuestring;
}

#endif
