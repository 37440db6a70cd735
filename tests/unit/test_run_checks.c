/* The per-thread list of deferred device checks (src/backend/run_checks.c): after a failed run every check still
 * looks, a check that found bad input wins over the run's error wherever it is in the list, and the run's own
 * sentence stands whole when no check found anything; a gate read once per pass runs the checks behind it only when
 * set, then all of them, and is cleared. Host only: the checks and gates here are plain functions. */
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

/* A gate over a host word: its reads and clears counted; `broken`: its read fails. */
typedef struct word_gate {
  int word, reads, clears;
  bool broken;
} word_gate;

static tb_status gate_fn(void *data, bool clear, bool *set) {
  word_gate *g = data;
  if (clear) {
    g->clears++;
    g->word = 0;
    return TB_OK;
  }
  g->reads++;
  if (g->broken) return tb_error(TB_ERR_DRIVER, "cuMemcpyDtoH_v2 failed: the word");
  *set = g->word != 0;
  return TB_OK;
}

/* A check behind the gate over a node's host flag: counts its runs, finds its flag set (and resets it). */
typedef struct node_flag {
  int set, runs;
  const char *name;
} node_flag;

static tb_status flag_fn(void *data, bool *found) {
  node_flag *f = data;
  f->runs++;
  if (!f->set) return TB_OK;
  f->set = 0;
  *found = true;
  return tb_error(TB_ERR_INVALID_ARGUMENT, "node '%s' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5", f->name);
}

static tb_run_check *gated_list(word_gate *g, node_flag *f, int n) {
  assert_int_equal(tb_run_checks_add_gate(g, gate_fn, g, NULL), TB_OK);
  for (int i = 0; i < n; i++) assert_int_equal(tb_run_checks_add_behind(&f[i], g, flag_fn, &f[i], NULL), TB_OK);
  assert_ptr_equal(tb_run_checks_find(g), g);
  return tb_run_checks_take();
}

/* The gate clear: one read per pass, none of the three checks behind it runs, nothing cleared. */
static void a_clear_gate_skips_the_checks_behind_it(void **state) {
  (void)state;
  word_gate g = {0};
  node_flag f[3] = {{0, 0, "a"}, {0, 0, "b"}, {0, 0, "c"}};
  size_t made = tb_run_checks_made();
  tb_run_check *list = gated_list(&g, f, 3);
  assert_int_equal(tb_run_checks_made() - made, 3); /* the gate is not counted */
  for (int pass = 0; pass < 5; pass++) assert_int_equal(tb_run_checks_run(list, TB_OK), TB_OK);
  assert_int_equal(g.reads, 5);
  assert_int_equal(g.clears, 0);
  for (int i = 0; i < 3; i++) assert_int_equal(f[i].runs, 0);
  tb_run_checks_free(list);
}

/* The gate set with two flags set: every check behind it runs (each resets its flag), the first one's sentence is
 * the pass's, the gate is cleared once; the next pass reads the gate only, and passes. */
static void a_set_gate_runs_every_check_and_is_cleared(void **state) {
  (void)state;
  word_gate g = {.word = 1};
  node_flag f[3] = {{0, 0, "a"}, {1, 0, "b"}, {1, 0, "c"}};
  tb_run_check *list = gated_list(&g, f, 3);
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "node 'b' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
  assert_int_equal(g.reads, 1);
  assert_int_equal(g.clears, 1);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(f[i].runs, 1);
    assert_int_equal(f[i].set, 0);
  }
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_OK);
  assert_int_equal(g.reads, 2);
  assert_int_equal(f[2].runs, 1);
  /* after a failed run, a set gate's check wins over the run's error */
  g.word = f[2].set = 1;
  tb_status prior = tb_error(TB_ERR_DRIVER, "tb_cu_add_f32 failed: too many resources requested for launch");
  assert_int_equal(tb_run_checks_run(list, prior), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "node 'c' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
  tb_run_checks_free(list);
}

/* A gate that cannot be read hides nothing: the checks behind it run as if it were set, and a flag they find is the
 * cause over the run's error; without a prior error the gate's read failure is the pass's. */
static void an_unreadable_gate_hides_no_check(void **state) {
  (void)state;
  word_gate g = {.broken = true};
  node_flag f[2] = {{0, 0, "a"}, {1, 0, "b"}};
  tb_run_check *list = gated_list(&g, f, 2);
  tb_status prior = tb_error(TB_ERR_DRIVER, "tb_cu_add_f32 failed: an illegal memory access was encountered");
  assert_int_equal(tb_run_checks_run(list, prior), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "node 'b' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
  assert_int_equal(f[0].runs, 1);
  assert_int_equal(g.clears, 0);
  prior = tb_error(TB_ERR_DRIVER, "tb_cu_add_f32 failed: an illegal memory access was encountered");
  assert_int_equal(tb_run_checks_run(list, prior), TB_ERR_DRIVER);
  assert_string_equal(tb_last_error(), "tb_cu_add_f32 failed: an illegal memory access was encountered");
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_ERR_DRIVER);
  assert_string_equal(tb_last_error(), "cuMemcpyDtoH_v2 failed: the word");
  tb_run_checks_free(list);
}

/* A good run whose gate read fails, a flag behind it set: the check's sentence (bad input found wins over the gate's
 * read failure, which came first). Before: the gate's read failure was the pass's and the found one was dropped. */
static void a_found_flag_wins_over_a_gate_that_cannot_be_read_in_a_good_run(void **state) {
  (void)state;
  word_gate g = {.broken = true};
  node_flag f[2] = {{0, 0, "a"}, {1, 0, "b"}};
  tb_run_check *list = gated_list(&g, f, 2);
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "node 'b' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
  assert_int_equal(f[1].set, 0);
  /* two found ones: the first found stays */
  f[0].set = f[1].set = 1;
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "node 'a' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
  assert_int_equal(f[1].set, 0);
  tb_run_checks_free(list);
}

/* An ungated check after the first failure still runs (it resets its flag): a failing run followed by a good one
 * reports nothing. Before: the ungated check was skipped, its flag left set, and the next run reported it. */
static void every_check_runs_after_the_first_failure(void **state) {
  (void)state;
  static int keys[2];
  node_flag f[2] = {{1, 0, "a"}, {1, 0, "b"}};
  assert_int_equal(tb_run_checks_add(&keys[0], flag_fn, &f[0], NULL), TB_OK);
  assert_int_equal(tb_run_checks_add(&keys[1], flag_fn, &f[1], NULL), TB_OK);
  tb_run_check *list = tb_run_checks_take();
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "node 'a' (Gather): index 9 (indices element 0) is out of range for axis 0 of size 5");
  assert_int_equal(f[1].runs, 1);
  assert_int_equal(f[1].set, 0);
  assert_int_equal(tb_run_checks_run(list, TB_OK), TB_OK);
  tb_run_checks_free(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_later_check_finds_the_cause_after_one_that_cannot_look),
      cmocka_unit_test(the_runs_own_error_stands_when_no_check_finds_anything),
      cmocka_unit_test(without_a_prior_error_the_first_failing_check_reports),
      cmocka_unit_test(a_clear_gate_skips_the_checks_behind_it),
      cmocka_unit_test(a_set_gate_runs_every_check_and_is_cleared),
      cmocka_unit_test(an_unreadable_gate_hides_no_check),
      cmocka_unit_test(a_found_flag_wins_over_a_gate_that_cannot_be_read_in_a_good_run),
      cmocka_unit_test(every_check_runs_after_the_first_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
