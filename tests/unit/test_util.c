/* Shared test helpers (see test_util.h). */
#include "test_util.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const tb_vars[] = {"TB_BACKEND",  "TB_FSROOT",   "TB_CPU_FEATURES", "TB_CUDA_LIB",
                                      "TB_NVML_LIB", "TB_HIP_LIB",  "TB_ROCM_SMI_LIB", "TB_ZE_LIB",
                                      "TB_OPENCL_LIB", "TB_VULKAN_LIB", "TB_TPU_LIB",  "TB_CPUID_FILE",
                                      "TB_NVRTC_LIB"};

/* The fakes' load-once marks (tests/fakes/fake_once.h): defined here, before any probe thread runs, so that
 * a fake's constructor replaces a value instead of growing the environment while other threads read it
 * (ctest defines them too; this covers runs by hand and under valgrind). */
static const char *const fake_load_marks[] = {"FAKE_LOADED_CUDA", "FAKE_LOADED_NVML",   "FAKE_LOADED_HIP",
                                              "FAKE_LOADED_ROCM_SMI", "FAKE_LOADED_ZE", "FAKE_LOADED_OPENCL",
                                              "FAKE_LOADED_VULKAN", "FAKE_LOADED_NVRTC"};

/* TB_CPU_FEATURES as the test process started with it (CTest starts it empty; scripts/test_isa.sh runs the
 * kernel tests once with a mask that every test then starts from). */
static char start_mask[256];

__attribute__((constructor)) static void save_start_mask(void) {
  const char *mask = getenv("TB_CPU_FEATURES");
  if (mask && strlen(mask) < sizeof start_mask) snprintf(start_mask, sizeof start_mask, "%s", mask);
}

void tbt_clear_env(void) {
  for (size_t i = 0; i < sizeof tb_vars / sizeof tb_vars[0]; i++) unsetenv(tb_vars[i]);
  for (size_t i = 0; i < sizeof fake_load_marks / sizeof fake_load_marks[0]; i++) setenv(fake_load_marks[i], "", 0);
  if (start_mask[0]) setenv("TB_CPU_FEATURES", start_mask, 1);
}

void tbt_use_fixture(const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/%s", TB_TEST_FIXTURES, name);
  setenv("TB_FSROOT", path, 1);
}

const char *tbt_fake(const char *name) {
  static char path[8][1024];
  static int slot;
  char *p = path[slot++ % 8];
  snprintf(p, 1024, "%s/%s.so", TB_TEST_FAKES, name);
  return p;
}

void tbt_no_vendor_libs(void) {
  static const char *const libs[] = {"TB_CUDA_LIB", "TB_NVML_LIB",   "TB_HIP_LIB",    "TB_ROCM_SMI_LIB",
                                     "TB_ZE_LIB",   "TB_OPENCL_LIB", "TB_VULKAN_LIB", "TB_TPU_LIB"};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) setenv(libs[i], "/nonexistent/tb-test-no-lib.so", 1);
}

tb_device_list *tbt_discover(uint32_t mask) {
  tb_discover_options opts = {.size = sizeof opts, .backends = mask};
  tb_device_list *list = NULL;
  TB_ASSERT_OK(tb_discover(&opts, &list));
  assert_non_null(list);
  return list;
}

const tb_device_info *tbt_nth(const tb_device_list *list, tb_backend_kind kind, int n) {
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend == kind && n-- == 0) return d;
  }
  return NULL;
}

size_t tbt_count(const tb_device_list *list, tb_backend_kind kind) {
  size_t n = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++)
    if (tb_device_list_get(list, i)->backend == kind) n++;
  return n;
}

int tbt_report_has(const tb_backend_report *r, const char *what_part, const char *detail_part) {
  for (size_t i = 0; i < r->check_count; i++)
    if ((!what_part || strstr(r->checks[i].what, what_part)) && (!detail_part || strstr(r->checks[i].detail, detail_part)))
      return 1;
  return 0;
}

int tbt_run_tool(const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", TB_TEST_TOOL, args);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += r;
    if (cap - len < 1024) {
      char *grown = realloc(buf, cap * 2);
      if (!grown) break;
      buf = grown;
      cap *= 2;
    }
  }
  if (buf) buf[len] = '\0';
  int status = pclose(p);
  if (out) *out = buf; else free(buf);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int captured_fd = -1, saved_stderr = -1;

void tbt_capture_stderr_begin(void) {
  char path[] = "/tmp/tb_stderr_XXXXXX";
  fflush(stderr);
  captured_fd = mkstemp(path);
  assert_true(captured_fd >= 0);
  unlink(path);
  saved_stderr = dup(2);
  assert_true(saved_stderr >= 0);
  assert_true(dup2(captured_fd, 2) >= 0);
}

char *tbt_capture_stderr_end(void) {
  fflush(stderr);
  assert_true(dup2(saved_stderr, 2) >= 0);
  close(saved_stderr);
  off_t size = lseek(captured_fd, 0, SEEK_END);
  assert_true(size >= 0);
  char *text = calloc(1, (size_t)size + 1);
  assert_non_null(text);
  assert_int_equal(pread(captured_fd, text, (size_t)size, 0), (ssize_t)size);
  close(captured_fd);
  captured_fd = saved_stderr = -1;
  return text;
}

int tbt_setup_clean_env(void **state) {
  (void)state;
  tbt_clear_env();
  return 0;
}

int tbt_setup_clean_nvidia(void **state) {
  static const char *const fake_vars[] = {"FAKE_CUDA_MODE", "FAKE_CUDA_DEVICES", "FAKE_CUDA_COUNT",
                                          "FAKE_CUDA_INIT_CODE", "FAKE_NVML_MODE", "FAKE_NVML_TOTAL_EXTRA",
                                          "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "FAKE_CUDA_INIT_LOG"};
  tbt_setup_clean_env(state);
  for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++) unsetenv(fake_vars[i]);
  return 0;
}

void tbt_use_nvidia_fakes(void) {
  setenv("TB_CUDA_LIB", tbt_fake("fake_cuda"), 1);
  setenv("TB_NVML_LIB", tbt_fake("fake_nvml"), 1);
}

const char *tbt_line(const char *text, const char *prefix, char *buf, size_t size) {
  size_t n = strlen(prefix);
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    if (strncmp(p, prefix, n) == 0) {
      const char *end = strchr(p, '\n');
      size_t len = end ? (size_t)(end - p) : strlen(p);
      if (len >= size) len = size - 1;
      memcpy(buf, p, len);
      buf[len] = '\0';
      return buf;
    }
  }
  return NULL;
}

static void tree_shell(const char *cmd) {
  if (system(cmd) != 0) fail_msg("failed: %s", cmd);
}

char *tbt_fixture_copy(const char *fixture) {
  char *root = malloc(256);
  assert_non_null(root);
  snprintf(root, 256, "/tmp/tb-test-%s-XXXXXX", fixture);
  assert_non_null(mkdtemp(root));
  assert_int_equal(chmod(root, 0755), 0);
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cp -R '%s/%s/.' '%s'", TB_TEST_FIXTURES, fixture, root);
  tree_shell(cmd);
  setenv("TB_FSROOT", root, 1);
  return root;
}

void tbt_tree_write(const char *root, const char *rel, const char *text) {
  char path[2048];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

void tbt_tree_restore(const char *root, const char *fixture, const char *rel) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cp '%s/%s/%s' '%s/%s'", TB_TEST_FIXTURES, fixture, rel, root, rel);
  tree_shell(cmd);
}

void tbt_tree_sh(const char *root, const char *cmd) {
  char line[4096];
  snprintf(line, sizeof line, "cd '%s' && %s", root, cmd);
  tree_shell(line);
}

void tbt_tree_remove(char *root) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  tree_shell(cmd);
  free(root);
}

/* In the child: drop to nobody, run fn with the pipe as its output, and exit with its code. */
static void run_child(int fd, tbt_child_fn fn, const void *arg) {
  FILE *out = fdopen(fd, "w");
  if (!out) _exit(2);
  if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
  int code = fn(arg, out);
  fclose(out);
  _exit(code);
}

char *tbt_run_as_nobody(tbt_child_fn fn, const void *arg) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL); /* the child must not write the parent's buffered output again */
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    run_child(fds[1], fn, arg);
  }
  close(fds[1]);
  size_t cap = 8192, len = 0;
  char *text = malloc(cap);
  assert_non_null(text);
  ssize_t r;
  while ((r = read(fds[0], text + len, cap - 1 - len)) > 0) {
    len += (size_t)r;
    if (cap - 1 - len == 0) {
      text = realloc(text, cap *= 2);
      assert_non_null(text);
    }
  }
  text[len] = '\0';
  close(fds[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("unprivileged child failed (status 0x%x): %s", status, text);
  return text;
}

bool tbt_cpu_has_bf16_path(void) {
  uint64_t need = tb_gemm_bf16_path_features(TB_GEMM_BF16_AVX512BF16);
  return (tb_convert_hardware_features() & need) == need;
}
