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

static char *output; /* the last run's stdout and stderr; freed by the next run and at the end */

/* Runs tb_soak with `args`; returns its exit code, its output in `output`. */
static int run_soak(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", TB_SOAK_TOOL, args);
  free(output);
  size_t cap = 1 << 16, len = 0, n;
  output = malloc(cap);
  assert_non_null(output);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  while ((n = fread(output + len, 1, cap - len - 1, p)) > 0) {
    len += n;
    if (cap - len < 1024) {
      char *grown = realloc(output, cap *= 2);
      assert_non_null(grown);
      output = grown;
    }
  }
  output[len] = '\0';
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int free_output(void **state) {
  (void)state;
  free(output);
  output = NULL;
  return 0;
}

static void assert_contains(const char *part) {
  if (!strstr(output, part)) fail_msg("expected '%s' in the output:\n%s", part, output);
}

static void clean_run_passes(void **state) {
  (void)state;
  assert_int_equal(run_soak(SHORT_RUN), 0);
  assert_contains("0 failed, 0 memory bounds exceeded: passed");
  assert_contains("reserved on cpu: baseline");
  assert_null(strstr(output, "FAILED"));
}

static void corrupt_output_fails(void **state) {
  (void)state;
  assert_int_equal(run_soak(SHORT_RUN " --inject corrupt"), 1);
  assert_contains("tb_soak: FAILED: output 'y' of encoder_small on cpu at O2 (thread 0, run ");
  assert_contains("differs from the CPU O0 reference: 1 of ");
  assert_contains("max abs error 1000");
  assert_contains(" runs, 1 failed, 0 memory bounds exceeded: FAILED");
  assert_contains("tb_soak: FAILED: 1 of ");
}

static void leak_fails(void **state) {
  (void)state;
  assert_int_equal(run_soak(SHORT_RUN " --inject leak --max-rss-growth 16"), 1);
  assert_contains("tb_soak: FAILED: the process's RSS grew by ");
  assert_contains("more than the bound of 16 MiB (--max-rss-growth)");
  assert_contains(" runs, 0 failed, 1 memory bound exceeded: FAILED");
}

static void reserved_growth_fails(void **state) {
  (void)state;
  assert_int_equal(run_soak(SHORT_RUN " --inject reserved --max-rss-growth 4096 --max-reserved-growth 1"), 1);
  assert_contains("tb_soak: FAILED: the memory reserved on cpu grew by ");
  assert_contains("more than the bound of 1 MiB (--max-reserved-growth)");
  assert_contains(" runs, 0 failed, 1 memory bound exceeded: FAILED");
}

static void bad_input_exit_codes(void **state) {
  (void)state;
  assert_int_equal(run_soak("--threads 0 " ENCODER), 2);
  assert_contains("tb_soak: --threads '0' is not a count from 1 to 16");
  assert_int_equal(run_soak("--levels O2,O9 " ENCODER), 2);
  assert_contains("tb_soak: --levels: 'O9' is not a level; use O0, O1, O2 or O3");
  assert_int_equal(run_soak("--duration 5 --warmup 5 " ENCODER), 2);
  assert_contains("the warm-up of 5 s is not shorter than the duration of 5 s");
  assert_int_equal(run_soak("--backends cpu"), 2);
  assert_contains("tb_soak: no model given; name one or more .onnx files");
  assert_int_equal(run_soak("--backends cpu " TB_SOAK_MODELS "/no_such_model.onnx"), 3);
  assert_contains("tb_soak: cannot load model " TB_SOAK_MODELS "/no_such_model.onnx: ");
  assert_int_equal(run_soak("--backends cpu,nosuch " ENCODER), 3);
  assert_contains("tb_soak: cannot create backend 'nosuch': ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_input_exit_codes), cmocka_unit_test(clean_run_passes),
      cmocka_unit_test(corrupt_output_fails), cmocka_unit_test(leak_fails),
      cmocka_unit_test(reserved_growth_fails),
  };
  return cmocka_run_group_tests(tests, NULL, free_output);
}
