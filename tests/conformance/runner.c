/* tb_conformance: the ONNX conformance runner. Walks the backend tests of libonnx-testdata, runs each one
 * in a child process (a crash or a hang is that test's failure, not the run's end), and reports passed /
 * failed / skipped per operator and overall. With --check it compares against the expected-failures
 * file: the exit status is 1 when a test not listed there fails or the pass count drops below the floor
 * recorded for the suite and level. Usage: see `tb_conformance --help` and docs/conformance.md. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "conformance.h"
#include "pb_data.h"

#ifndef TB_CONFORMANCE_EXPECTED
#define TB_CONFORMANCE_EXPECTED NULL
#endif

static const char usage[] =
    "Usage: tb_conformance [options]\n"
    "\n"
    "Run the ONNX backend tests of libonnx-testdata on the CPU backend and report passed / failed /\n"
    "skipped per operator (node tests) and per model (pytorch-converted, pytorch-operator, simple).\n"
    "Outputs match when |got - expected| <= atol + rtol * |expected| (rtol 1e-3, atol 1e-7, the ONNX\n"
    "backend test runner's defaults), NaN equal to NaN; integers and bool exactly.\n"
    "\n"
    "Options:\n"
    "  --data DIR        the folder with node/, pytorch-converted/, ... (default " CONF_DEFAULT_DATA ")\n"
    "  --suite S         node | models | pytorch-converted | pytorch-operator | simple | all (default all)\n"
    "  --level L         O0..O3 or none|conservative|balanced|aggressive (default O0)\n"
    "  --backend B       the backend to prepare on: cpu, opencl:0, vulkan:0, ... (default cpu); nodes it has no\n"
    "                    kernel for run on the CPU, and the report counts the tests that ran wholly on it\n"
    "  --filter PAT      only tests whose name matches PAT (a glob with * ? [...], else a substring)\n"
    "  --op OP           only node tests of this operator (e.g. Conv)\n"
    "  --list            list the selected tests (suite, name, operator) without running them\n"
    "  --verbose         print each test as it finishes, with the full reason (first mismatching element)\n"
    "  --json            the report as JSON\n"
    "  --markdown        the report as Markdown tables (for docs/conformance.md)\n"
    "  --expected FILE   the expected-failures file (default tests/conformance/expected_failures.txt)\n"
    "  --check           exit 1 when a test not in the expected file fails, or when the pass count is\n"
    "                    below the floor the file records for this --suite and --level\n"
    "  --jobs N          tests run in parallel (default 2)\n"
    "  --timeout S       seconds before a test is stopped and failed (default 120)\n"
    "  --no-fork         run tests in this process (for a debugger; a crash ends the run)\n"
    "\n"
    "Exit: 0 all selected tests passed (with --check: nothing unexpected), 1 otherwise, 2 usage error,\n"
    "77 the test data folder does not exist or the backend is not available here (CTest counts this as\n"
    "skipped).\n";

typedef struct test_list {
  conf_test *v;
  size_t n, cap;
} test_list;

static const char *const all_suites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

static bool suite_selected(const char *which, const char *suite) {
  if (strcmp(which, "all") == 0) return true;
  if (strcmp(which, "models") == 0) return strcmp(suite, "node") != 0;
  return strcmp(which, suite) == 0;
}

static bool name_matches(const char *filter, const char *name) {
  if (!filter) return true;
  if (strpbrk(filter, "*?[")) return fnmatch(filter, name, 0) == 0;
  return strstr(name, filter) != NULL;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool add_test(test_list *l, const conf_options *o, const char *suite, const char *dir, const char *name) {
  char path[PATH_MAX + 200], err[600];
  snprintf(path, sizeof path, "%s/%s/model.onnx", dir, name);
  struct stat st;
  if (stat(path, &st) != 0) return true;
  conf_test t;
  memset(&t, 0, sizeof t);
  snprintf(t.suite, sizeof t.suite, "%s", suite);
  snprintf(t.name, sizeof t.name, "%s", name);
  int dir_len = snprintf(t.dir, sizeof t.dir, "%s/%s", dir, name);
  if (dir_len < 0 || (size_t)dir_len >= sizeof t.dir) return true; /* a path too long for the runner: not a test */
  t.is_model = strcmp(suite, "node") != 0;
  if (t.is_model) {
    snprintf(t.op, sizeof t.op, "(model)");
  } else {
    pb_model_info info;
    if (!pb_model_info_read(path, &info, err, sizeof err))
      snprintf(t.op, sizeof t.op, "(unreadable)");
    else if (info.node_count == 1)
      snprintf(t.op, sizeof t.op, "%s", info.first_op);
    else
      snprintf(t.op, sizeof t.op, "(multi-node)");
  }
  if (o->op && strcmp(o->op, t.op) != 0) return true;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 256;
    conf_test *bigger = realloc(l->v, cap * sizeof *bigger);
    if (!bigger) return false;
    l->v = bigger;
    l->cap = cap;
  }
  l->v[l->n++] = t;
  return true;
}

static bool collect(const conf_options *o, test_list *l) {
  for (size_t s = 0; s < sizeof all_suites / sizeof all_suites[0]; s++) {
    if (!suite_selected(o->suite, all_suites[s])) continue;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", o->data, all_suites[s]);
    DIR *d = opendir(dir);
    if (!d) continue;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strncmp(e->d_name, "test_", 5) != 0 || !name_matches(o->filter, e->d_name)) continue;
      if (n == cap) {
        cap = cap ? cap * 2 : 256;
        char **bigger = realloc(names, cap * sizeof *bigger);
        if (!bigger) break;
        names = bigger;
      }
      if ((names[n] = strdup(e->d_name)) != NULL) n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_name);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
      if (ok) ok = add_test(l, o, all_suites[s], dir, names[i]);
      free(names[i]);
    }
    free(names);
    if (!ok) return false;
  }
  return true;
}

/* ---- running in children --------------------------------------------------------------------- */

typedef struct child_msg {
  int outcome;
  int on_device;
  double ms;
  char reason[1024];
} child_msg; /* < PIPE_BUF: the child's single write never blocks on a full pipe */

typedef struct running {
  pid_t pid;
  int fd;
  size_t test;
} running;

static void print_progress(const conf_options *o, const conf_test *t) {
  if (!o->verbose) return;
  fprintf(stderr, "%-7s %s/%s (%s, %.0f ms)%s%s\n", conf_outcome_name(t->outcome), t->suite, t->name, t->op, t->ms,
          t->reason[0] ? ": " : "", t->reason);
}

static bool start_child(const conf_options *o, test_list *l, size_t i, running *r) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    if (o->timeout_s > 0) alarm((unsigned)o->timeout_s);
    conf_test *t = &l->v[i];
    conf_run_test(o, t);
    child_msg m;
    memset(&m, 0, sizeof m);
    m.outcome = (int)t->outcome;
    m.on_device = t->on_device;
    m.ms = t->ms;
    snprintf(m.reason, sizeof m.reason, "%s", t->reason);
    ssize_t w = write(fds[1], &m, sizeof m);
    close(fds[1]);
    free(l->v);
    exit(w == (ssize_t)sizeof m ? 0 : 1); /* exit, not _exit: the sanitizers' leak check runs per test */
  }
  close(fds[1]);
  r->pid = pid;
  r->fd = fds[0];
  r->test = i;
  return true;
}

static void finish_child(const conf_options *o, test_list *l, running *r, int status) {
  conf_test *t = &l->v[r->test];
  child_msg m;
  ssize_t got = read(r->fd, &m, sizeof m);
  close(r->fd);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    t->outcome = CONF_FAILED;
    if (sig == SIGALRM)
      snprintf(t->reason, sizeof t->reason, "timed out after %d s", o->timeout_s);
    else
      snprintf(t->reason, sizeof t->reason, "crashed: signal %d (%s)", sig, strsignal(sig));
  } else if (got != (ssize_t)sizeof m) {
    t->outcome = CONF_FAILED;
    snprintf(t->reason, sizeof t->reason, "the test process exited with status %d before reporting",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  } else {
    t->outcome = (conf_outcome)m.outcome;
    t->on_device = m.on_device != 0;
    t->ms = m.ms;
    snprintf(t->reason, sizeof t->reason, "%s", m.reason);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && t->outcome == CONF_PASSED) {
      t->outcome = CONF_FAILED;
      snprintf(t->reason, sizeof t->reason,
               "the outputs matched but the test process exited with status %d (a sanitizer report: leak or "
               "memory error; run with --no-fork to see it)",
               WEXITSTATUS(status));
    }
  }
  print_progress(o, t);
}

static bool run_all(const conf_options *o, test_list *l) {
  if (!o->fork) {
    for (size_t i = 0; i < l->n; i++) {
      conf_run_test(o, &l->v[i]);
      print_progress(o, &l->v[i]);
    }
    return true;
  }
  int jobs = o->jobs > 0 ? o->jobs : 1;
  running *slots = calloc((size_t)jobs, sizeof *slots);
  if (!slots) return false;
  size_t next = 0, active = 0;
  bool ok = true;
  while (next < l->n || active > 0) {
    while (ok && next < l->n && active < (size_t)jobs) {
      size_t s = 0;
      while (slots[s].pid) s++;
      if (!start_child(o, l, next, &slots[s])) {
        fprintf(stderr, "tb_conformance: fork failed: %s\n", strerror(errno));
        ok = false;
        break;
      }
      next++;
      active++;
    }
    if (active == 0) break;
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int s = 0; s < jobs; s++)
      if (slots[s].pid == pid) {
        finish_child(o, l, &slots[s], status);
        slots[s].pid = 0;
        active--;
      }
  }
  free(slots);
  return ok;
}

/* ---- options and the check ------------------------------------------------------------------- */

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tb_conformance: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "; see tb_conformance --help\n");
  va_end(ap);
  return 2;
}

static int parse(int argc, char **argv, conf_options *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
#define VALUE_OPT(flag) (strcmp(a, flag) == 0 && (has_value || (usage_error("%s needs a value", flag), false)))
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage, stdout);
      return -1;
    } else if (strcmp(a, "--list") == 0) {
      o->list = true;
    } else if (strcmp(a, "--json") == 0) {
      o->json = true;
    } else if (strcmp(a, "--markdown") == 0) {
      o->markdown = true;
    } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
      o->verbose = true;
    } else if (strcmp(a, "--check") == 0) {
      o->check = true;
    } else if (strcmp(a, "--no-fork") == 0) {
      o->fork = false;
    } else if (VALUE_OPT("--data")) {
      o->data = argv[++i];
    } else if (VALUE_OPT("--suite")) {
      o->suite = argv[++i];
      const char *ok[] = {"node", "models", "pytorch-converted", "pytorch-operator", "simple", "all"};
      bool known = false;
      for (size_t k = 0; k < 6; k++) known |= strcmp(o->suite, ok[k]) == 0;
      if (!known)
        return usage_error("unknown suite '%s'; the suites are node, models, pytorch-converted, pytorch-operator, "
                           "simple, all", o->suite);
    } else if (VALUE_OPT("--level")) {
      if (tb_opt_level_parse(argv[++i], &o->level) != TB_OK) return usage_error("%s", tb_last_error());
    } else if (VALUE_OPT("--backend")) {
      o->backend = argv[++i];
    } else if (VALUE_OPT("--filter")) {
      o->filter = argv[++i];
    } else if (VALUE_OPT("--op")) {
      o->op = argv[++i];
    } else if (VALUE_OPT("--expected")) {
      o->expected = argv[++i];
    } else if (VALUE_OPT("--jobs")) {
      o->jobs = atoi(argv[++i]);
      if (o->jobs < 1 || o->jobs > 64) return usage_error("--jobs takes 1..64, not '%s'", argv[i]);
    } else if (VALUE_OPT("--timeout")) {
      o->timeout_s = atoi(argv[++i]);
      if (o->timeout_s < 0) return usage_error("--timeout takes seconds >= 0, not '%s'", argv[i]);
    } else if (a[0] == '-' && (strcmp(a, "--data") == 0 || strcmp(a, "--suite") == 0 || strcmp(a, "--level") == 0 ||
                               strcmp(a, "--filter") == 0 || strcmp(a, "--op") == 0 || strcmp(a, "--expected") == 0 ||
                               strcmp(a, "--jobs") == 0 || strcmp(a, "--timeout") == 0)) {
      return 2; /* the value was missing: VALUE_OPT printed it */
    } else {
      return usage_error("unknown argument '%s'", a);
    }
#undef VALUE_OPT
  }
  return 0;
}

/* --check: unexpected failures and the floor. Prints what it finds; returns the exit code. */
static int check(const conf_options *o, const test_list *l, const conf_expected *e) {
  size_t passed = 0, unexpected = 0, fixed = 0;
  for (size_t i = 0; i < l->n; i++) {
    const conf_test *t = &l->v[i];
    if (t->outcome == CONF_PASSED) {
      passed++;
      if (t->expected_reason) {
        if (!fixed++) fprintf(stderr, "\nListed as expected failures but now passing (remove them from the file):\n");
        fprintf(stderr, "  %s\n", t->name);
      }
    } else if (t->outcome == CONF_FAILED && !t->expected_reason) {
      if (!unexpected++) fprintf(stderr, "\nUNEXPECTED failures (fix them, or list them with a reason in the file):\n");
      fprintf(stderr, "  %s: %s\n", t->name, t->reason);
    }
  }
  /* the floor counts a whole suite: it does not apply to a --filter or --op selection */
  long floor = o->filter || o->op ? -1 : conf_expected_floor(e, o->suite, o->level);
  bool below = floor >= 0 && (long)passed < floor;
  if (below)
    fprintf(stderr, "\nPASS COUNT DROPPED: %zu passed, below the floor of %ld recorded for %s at %s\n", passed, floor,
            o->suite, tb_opt_level_name(o->level));
  fprintf(stderr, "\ncheck %s %s: %zu passed (floor %ld), %zu unexpected failures -> %s\n", o->suite,
          tb_opt_level_name(o->level), passed, floor, unexpected, unexpected || below ? "FAIL" : "OK");
  return unexpected || below ? 1 : 0;
}

/* Whether the backend can be created, asked in a child process: drivers (PoCL) start threads that a later
 * fork of the test children would inherit half-copied, and then hang. */
static bool backend_available(const char *backend) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return true; /* cannot ask: let the tests say */
  if (pid == 0) {
    tb_backend *b = NULL;
    tb_status st = tb_backend_create(backend, &b);
    if (st != TB_OK) fprintf(stderr, "tb_conformance: backend '%s' is not available here: %s\n", backend, tb_last_error());
    tb_backend_destroy(b);
    exit(st == TB_OK ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv) {
  conf_options o = {.data = CONF_DEFAULT_DATA, .suite = "all", .level = TB_LEVEL_O0,
                    .expected = TB_CONFORMANCE_EXPECTED, .fork = true, .timeout_s = 120, .jobs = 2, .backend = "cpu"};
  int code = parse(argc, argv, &o);
  if (code != 0) return code < 0 ? 0 : code;
  struct stat st;
  if (stat(o.data, &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "tb_conformance: the test data folder %s does not exist; install Debian's libonnx-testdata "
                    "(apt-get install libonnx-testdata) or pass --data DIR\n", o.data);
    return CONF_EXIT_SKIP;
  }
  if (!backend_available(o.backend)) return CONF_EXIT_SKIP;
  conf_expected *e = conf_expected_load(o.expected);
  if (!e) return 2;
  test_list l = {0};
  if (!collect(&o, &l)) {
    fprintf(stderr, "tb_conformance: out of memory listing the tests\n");
    conf_expected_free(e);
    free(l.v);
    return 1;
  }
  if (l.n == 0) {
    fprintf(stderr, "tb_conformance: no test in %s matches (suite %s%s%s%s%s)\n", o.data, o.suite,
            o.filter ? ", filter " : "", o.filter ? o.filter : "", o.op ? ", op " : "", o.op ? o.op : "");
    conf_expected_free(e);
    free(l.v);
    return o.check ? 1 : 0;
  }
  if (o.list) {
    for (size_t i = 0; i < l.n; i++) printf("%-18s %-60s %s\n", l.v[i].suite, l.v[i].name, l.v[i].op);
    conf_expected_free(e);
    free(l.v);
    return 0;
  }
  bool ran = run_all(&o, &l);
  size_t failed = 0;
  for (size_t i = 0; i < l.n; i++) {
    l.v[i].expected_reason = conf_expected_reason(e, l.v[i].name, o.level);
    failed += l.v[i].outcome == CONF_FAILED;
  }
  if (o.json)
    conf_report_json(&o, l.v, l.n);
  else if (o.markdown)
    conf_report_markdown(&o, l.v, l.n, e);
  else
    conf_report_table(&o, l.v, l.n);
  code = o.check ? check(&o, &l, e) : (failed ? 1 : 0);
  if (!ran) code = 1;
  conf_expected_free(e);
  free(l.v);
  return code;
}
