/* Tests of tb_soak itself: a clean short run passes; each test-only fault (--inject corrupt, leak, reserved) makes
 * it exit 1 with the sentence that names what went wrong; bad options exit 2 and a model or backend that cannot be
 * set up exits 3, each with its sentence. The tool runs as a child process, stdout and stderr together. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#define ENCODER TB_SOAK_MODELS "/encoder_small.onnx"
/* One thread on the CPU for 6 s, 1.5 s of it warm-up: enough runs after the baseline for every fault to show. */
#define SHORT_RUN "--duration 6 --warmup 1.5 --threads 1 --backends cpu " ENCODER

/* Runs tb_soak with `args`; returns its exit code and its output (malloc'd) in *out. */
static int run_soak(const char *args, char **out) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", TB_SOAK_TOOL, args);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  size_t cap = 1 << 16, len = 0, n;
  char *buf = malloc(cap);
  assert_non_null(buf);
  while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (cap - len < 1024) {
      buf = realloc(buf, cap *= 2);
      assert_non_null(buf);
    }
  }
  buf[len] = '\0';
  int status = pclose(p);
  *out = buf;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void assert_contains(const char *text, const char *part) {
  if (!strstr(text, part)) fail_msg("expected '%s' in the output:\n%s", part, text);
}

static void clean_run_passes(void **state) {
  (void)state;
  char *out = NULL;
  assert_int_equal(run_soak(SHORT_RUN, &out), 0);
  assert_contains(out, "0 failed, 0 memory bounds exceeded: passed");
  assert_contains(out, "reserved on cpu: baseline");
  assert_null(strstr(out, "FAILED"));
  free(out);
}

static void corrupt_output_fails(void **state) {
  (void)state;
  char *out = NULL;
  assert_int_equal(run_soak(SHORT_RUN " --inject corrupt", &out), 1);
  assert_contains(out, "tb_soak: FAILED: output 'y' of encoder_small on cpu at O2 (thread 0, run ");
  assert_contains(out, "differs from the CPU O0 reference: 1 of ");
  assert_contains(out, "max abs error 1000");
  assert_contains(out, " runs, 1 failed, 0 memory bounds exceeded: FAILED");
  assert_contains(out, "tb_soak: FAILED: 1 of ");
  free(out);
}

static void leak_fails(void **state) {
  (void)state;
  char *out = NULL;
  assert_int_equal(run_soak(SHORT_RUN " --inject leak --max-rss-growth 16", &out), 1);
  assert_contains(out, "tb_soak: FAILED: the process's RSS grew by ");
  assert_contains(out, "more than the bound of 16 MiB (--max-rss-growth)");
  assert_contains(out, " runs, 0 failed, 1 memory bound exceeded: FAILED");
  free(out);
}

static void reserved_growth_fails(void **state) {
  (void)state;
  char *out = NULL;
  assert_int_equal(run_soak(SHORT_RUN " --inject reserved --max-rss-growth 4096 --max-reserved-growth 1", &out), 1);
  assert_contains(out, "tb_soak: FAILED: the memory reserved on cpu grew by ");
  assert_contains(out, "more than the bound of 1 MiB (--max-reserved-growth)");
  assert_contains(out, " runs, 0 failed, 1 memory bound exceeded: FAILED");
  free(out);
}

static void bad_input_exit_codes(void **state) {
  (void)state;
  char *out = NULL;
  assert_int_equal(run_soak("--threads 0 " ENCODER, &out), 2);
  assert_contains(out, "tb_soak: --threads '0' is not a count from 1 to 16");
  free(out);
  assert_int_equal(run_soak("--levels O2,O9 " ENCODER, &out), 2);
  assert_contains(out, "tb_soak: --levels: 'O9' is not a level; use O0, O1, O2 or O3");
  free(out);
  assert_int_equal(run_soak("--duration 5 --warmup 5 " ENCODER, &out), 2);
  assert_contains(out, "the warm-up of 5 s is not shorter than the duration of 5 s");
  free(out);
  assert_int_equal(run_soak("--backends cpu", &out), 2);
  assert_contains(out, "tb_soak: no model given; name one or more .onnx files");
  free(out);
  assert_int_equal(run_soak("--backends cpu " TB_SOAK_MODELS "/no_such_model.onnx", &out), 3);
  assert_contains(out, "tb_soak: cannot load model " TB_SOAK_MODELS "/no_such_model.onnx: ");
  free(out);
  assert_int_equal(run_soak("--backends cpu,nosuch " ENCODER, &out), 3);
  assert_contains(out, "tb_soak: cannot create backend 'nosuch': ");
  free(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_input_exit_codes), cmocka_unit_test(clean_run_passes),
      cmocka_unit_test(corrupt_output_fails), cmocka_unit_test(leak_fails),
      cmocka_unit_test(reserved_growth_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
