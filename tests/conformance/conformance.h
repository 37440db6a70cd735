/* The conformance runner (tb_conformance): runs the ONNX backend tests of Debian's libonnx-testdata
 * (node, pytorch-converted, pytorch-operator, simple) through tb_model_load / tb_model_prepare /
 * tb_prepared_run on a backend (the CPU by default) and reports passed / failed / skipped per operator and
 * overall, and on a device backend how many passed with every node on the device.
 * This header is what its files share: the options, one test's record, and the parts. */
#ifndef TB_CONFORMANCE_H
#define TB_CONFORMANCE_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/tensorbridge.h>

#define CONF_DEFAULT_DATA "/usr/share/libonnx-testdata/data"
#define CONF_EXIT_SKIP 77 /* no test data on this machine: CTest's SKIP_RETURN_CODE */

typedef enum conf_outcome { CONF_PASSED = 0, CONF_FAILED, CONF_SKIPPED } conf_outcome;

typedef struct conf_options {
  const char *data;       /* the folder holding node/, pytorch-converted/, ... */
  const char *suite;      /* node | models | pytorch-converted | pytorch-operator | simple | all */
  tb_opt_level level;
  const char *filter;     /* fnmatch pattern when it has * ? [, else a substring of the test name */
  const char *op;         /* only node tests of this op type */
  const char *expected;   /* the expected-failures file */
  const char *backend;    /* the backend the tests are prepared on ("cpu", "opencl:0", "vulkan", ...) */
  bool list, json, markdown, verbose, check, fork;
  int timeout_s;
  int jobs;
} conf_options;

typedef struct conf_test {
  char suite[32];
  char name[160];
  char dir[PATH_MAX];
  char op[128];           /* node tests: the op type of the single node, "(multi-node)" for expanded ones */
  bool is_model;          /* pytorch-converted, pytorch-operator, simple */
  conf_outcome outcome;
  char reason[1024];
  double ms;
  bool on_device;         /* every node ran on the backend's device (never true on the CPU backend) */
  double rtol, atol;      /* ONNX's runner's tolerance, widened to the library's tolerance table when the
                             prepared model computes in a reduced precision (bf16 at O3) */
  const char *expected_reason; /* from the expected-failures file, NULL when not listed */
} conf_test;

/* run_test.c: run one test, in this process. Fills outcome and reason. */
void conf_run_test(const conf_options *o, conf_test *t);

/* expected.c: the expected-failures file. */
typedef struct conf_expected conf_expected;
/* NULL with a message on stderr when the file is malformed (a listed test without a reason, a bad floor). */
conf_expected *conf_expected_load(const char *path);
void conf_expected_free(conf_expected *e);
/* The reason a test is allowed to fail at this level, or NULL. */
const char *conf_expected_reason(const conf_expected *e, const char *test, tb_opt_level level);
/* The floor recorded for (suite, level): -1 when none is recorded. */
long conf_expected_floor(const conf_expected *e, const char *suite, tb_opt_level level);
size_t conf_expected_count(const conf_expected *e);
/* Entry i: its test name, level ("" for every level) and reason. */
void conf_expected_entry(const conf_expected *e, size_t i, const char **test, const char **level, const char **reason);

/* report.c: table, JSON, markdown. */
void conf_report_table(const conf_options *o, const conf_test *tests, size_t n);
void conf_report_json(const conf_options *o, const conf_test *tests, size_t n);
void conf_report_markdown(const conf_options *o, const conf_test *tests, size_t n, const conf_expected *e);
const char *conf_outcome_name(conf_outcome outcome);

#endif
