/* Host memory running out inside an OpenCL MatMul (PoCL: device memory is host memory; CLBlast allocates
 * its own temporary buffers): each run in a child process whose address space (RLIMIT_AS) leaves only a
 * little room above what it already uses, for a sweep of room sizes, with CLBlast and with the built-in
 * GEMM. Every child must end by itself within its time (no hang in clFinish at close) with TB_OK or
 * TB_ERR_OUT_OF_MEMORY and a sentence naming the device, never by a signal (docs/opencl.md,
 * "Out of host memory"). */
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "test_engine_util.h"
#include "backend/opencl/cl_clblast.h"
#include "test_util.h"

enum { K = 1024, N = 1024, M = 1024 };

/* y = x @ W with x [rows, K] (rows symbolic) and W [K, N] constant. */
static tb_model *matmul_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "big");
  int64_t x_dims[2] = {-1, K}, w_dims[2] = {K, N};
  const char *sym[2] = {"rows", NULL};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, sym);
  float *w = calloc((size_t)K * N, sizeof *w);
  assert_non_null(w);
  for (size_t i = 0; i < (size_t)K * N; i++) w[i] = (float)(i % 3) - 1.0f;
  tbt_const_f32(g, "W", 2, w_dims, w);
  free(w);
  tbt_node(g, "MatMul", "mm", "x,W", "y");
  tbt_output(g, "y");
  return tbt_model_of(m);
}

static size_t vm_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f) {
    if (fscanf(f, "%lu", &pages) != 1) pages = 0;
    fclose(f);
  }
  return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static tb_tensor *input(tb_backend *cpu, int64_t rows) {
  int64_t dims[2] = {rows, K};
  tb_tensor *x = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 2, dims, &x));
  TB_ASSERT_OK(tb_tensor_fill(x, &(float){0.5f}));
  return x;
}

static tb_status run_once(tb_prepared *p, tb_tensor *x) {
  tb_tensor *y = NULL;
  const char *names[1] = {"x"};
  tb_status st = tb_prepared_run(p, 1, names, &x, 1, NULL, &y);
  tb_tensor_destroy(y);
  return st;
}

/* The child: warm up without a limit (programs built, buffers cached), then limit the address space to
 * what it uses plus `room` and run a bigger product. Writes "status|message" to fd. */
static void child(int fd, size_t room, bool clblast) {
  setenv("TB_CLBLAST", clblast ? "on" : "off", 1);
  setenv("TB_CACHE_DIR", "off", 1);
  alarm(60);
  tb_backend *dev = NULL, *cpu = NULL;
  tb_model *model = matmul_model();
  tb_prepared *p = NULL;
  tb_prepare_options opts = {.size = sizeof opts, .level = TB_LEVEL_O2};
  tb_status st = tb_backend_create("opencl:0", &dev);
  if (st == TB_OK) st = tb_backend_create("cpu", &cpu);
  if (st == TB_OK) st = tb_model_prepare(model, dev, &opts, &p, NULL);
  tb_tensor *small = st == TB_OK ? input(cpu, 64) : NULL, *big = st == TB_OK ? input(cpu, M) : NULL;
  if (st == TB_OK) st = run_once(p, small);
  if (st == TB_OK) st = tb_backend_synchronize(dev); /* the warm-up done before the limit */
  if (st == TB_OK) {
    struct rlimit lim = {.rlim_cur = vm_bytes() + room, .rlim_max = RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &lim);
    st = run_once(p, big);
    if (st == TB_OK) st = tb_backend_synchronize(dev);
  }
  char msg[1024];
  int n = snprintf(msg, sizeof msg, "%d|%s", (int)st, st == TB_OK ? "" : tb_last_error());
  if (write(fd, msg, (size_t)n) != n) _exit(3);
  tb_tensor_destroy(small);
  tb_tensor_destroy(big);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
  tb_backend_destroy(dev); /* no clFinish on a failed queue: a hang here is SIGALRM */
  _exit(0);
}

static void sweep(bool clblast) {
#if defined(__SANITIZE_ADDRESS__)
  /* AddressSanitizer's runtime allocates for itself (its stack depot) under the same RLIMIT_AS and exits 1
   * when it cannot: the sweep says nothing about our code there. The plain build runs it. */
  (void)clblast;
  (void)child;
  TBT_SKIP("the RLIMIT_AS sweep runs in the build without AddressSanitizer, whose own runtime needs memory the limit denies");
#else
  static const size_t rooms_mib[] = {0, 6, 20, 40};
  for (size_t i = 0; i < sizeof rooms_mib / sizeof rooms_mib[0]; i++) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      child(fds[1], rooms_mib[i] << 20, clblast);
    }
    close(fds[1]);
    char msg[1100] = "";
    ssize_t got = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    msg[got > 0 ? got : 0] = '\0';
    print_message("%s, room %zu MiB: %s (%s %d)\n", clblast ? "CLBlast" : "built-in", rooms_mib[i], msg,
                  WIFSIGNALED(wstatus) ? "signal" : "exit", WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : WEXITSTATUS(wstatus));
    if (WIFSIGNALED(wstatus))
      fail_msg("room %zu MiB: the child died with signal %d (%s) after '%s'", rooms_mib[i], WTERMSIG(wstatus),
               WTERMSIG(wstatus) == SIGALRM ? "a hang" : "a crash", msg);
    assert_int_equal(WEXITSTATUS(wstatus), 0);
    int st = atoi(msg);
    if (st != TB_OK && st != TB_ERR_OUT_OF_MEMORY) fail_msg("room %zu MiB: %s", rooms_mib[i], msg);
    if (st == TB_ERR_OUT_OF_MEMORY) TB_ASSERT_CONTAINS(msg, "out of");
  }
#endif
}

static void with_clblast(void **state) {
  (void)state;
  char why[400];
  if (!tb_clblast_available(why, sizeof why)) {
    print_message("skipped: %s\n", why);
    return;
  }
  sweep(true);
}

static void builtin_gemm(void **state) {
  (void)state;
  sweep(false);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {cmocka_unit_test(builtin_gemm), cmocka_unit_test(with_clblast)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
