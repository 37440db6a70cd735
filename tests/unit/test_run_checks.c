/* The per-thread list of deferred device checks (src/backend/run_checks.c): after a failed run every check still
 * looks, a check that found bad input wins over the run's error wherever it is in the list, and the run's own
 * sentence stands whole when no check found anything. Host only: the checks here are plain functions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include "backend/run_checks.h"
#include "core/error.h"

/* A check that could not read the device (its copy failing): a driver error, nothing found. */
static tb_status cannot_look(void *data, bool *found) {
  (void)data;
  *found = false;
  return tb_error(TB_ERR_DRIVER, "cuMemcpyDtoH_v2 failed: an illegal memory access was encountered");
}

/* A check that found a bad index. */
static tb_status finds_bad_index(void *data, bool *found) {
  (void)data;
  *found = true;
  return tb_error(TB_ERR_INVALID_ARGUMENT, "node 'g' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
}

static tb_status passes(void *data, bool *found) {
  (void)data;
  *found = false;
  return TB_OK;
}

static tb_run_check *list_of(tb_run_check_fn a, tb_run_check_fn b) {
  static int keys[2];
  assert_int_equal(tb_run_checks_add(&keys[0], a, NULL, NULL), TB_OK);
  assert_int_equal(tb_run_checks_add(&keys[1], b, NULL, NULL), TB_OK);
  return tb_run_checks_take();
}

/* Before: the first check that could not look returned the run's error at once, so the second never ran. */
static void a_later_check_finds_the_cause_after_one_that_cannot_look(void **state) {
  (void)state;
  tb_run_check *list = list_of(cannot_look, finds_bad_index);
  tb_status prior = tb_error(TB_ERR_DRIVER, "tb_cu_add_f32 failed: too many resources requested for launch");
  assert_int_equal(tb_run_checks_run(list, prior), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "node 'g' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
  tb_run_checks_free(list);
}

/* No check found anything: the run's own status and its whole sentence (as long as the error buffer holds). */
static void the_runs_own_error_stands_when_no_check_finds_anything(void **state) {
  (void)state;
  char sentence[TB_ERROR_CAP];
  memset(sentence, 'x', sizeof sentence - 1);
  sentence[sizeof sentence - 1] = '\0';
  memcpy(sentence, "run failed: ", 12);
  tb_run_check *list = list_of(cannot_look, passes);
  tb_status prior = tb_error(TB_ERR_DRIVER, "%s", sentence);
  assert_int_equal(tb_run_checks_run(list, prior), TB_ERR_DRIVER);
  assert_string_equal(tb_last_error(), sentence);
  tb_run_checks_free(list);
}

/* A good run: the first failing check's status and sentence, whatever it is. */
static void without_a_prior_error_the_first_failing_check_reports(void **state) {
  (void)state;
  tb_run_check *list = list_of(passes, cannot_look);
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_ERR_DRIVER);
  assert_string_equal(tb_last_error(), "cuMemcpyDtoH_v2 failed: an illegal memory access was encountered");
  tb_run_checks_free(list);
  list = list_of(passes, passes);
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_OK);
  tb_run_checks_free(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_later_check_finds_the_cause_after_one_that_cannot_look),
      cmocka_unit_test(the_runs_own_error_stands_when_no_check_finds_anything),
      cmocka_unit_test(without_a_prior_error_the_first_failing_check_reports),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
