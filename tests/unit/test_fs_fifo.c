/* User-named files that are not regular files (src/core/regular_file.c): a FIFO given as the model, an .npy
 * input, a safetensors file, a record, a cpuid dump or in place of a disk-cache entry is refused at once with
 * a sentence naming the path and what it is (opening a FIFO for reading would wait for a writer forever),
 * also through `tb run` with the exit code of docs/cli.md; folders and devices likewise. Every test runs
 * under alarm(): a hang fails it instead of stalling the suite. */
#include <signal.h>
#include <sys/stat.h>
#include <tensorbridge/checkpoint.h>
#include "core/cpuid.h"
#include "core/disk_cache.h"
#include "core/regular_file.h"
#include "test_cli_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"
#define CNN MODELS "cnn_small.onnx"

static char dir[64], fifo[128];

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  strcpy(dir, "/tmp/tb_fifo_XXXXXX");
  assert_non_null(mkdtemp(dir));
  snprintf(fifo, sizeof fifo, "%s/pipe", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(120);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  alarm(0);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void expect_fifo_error(tb_status st, const char *what) {
  assert_int_equal(st, TB_ERR_INVALID_ARGUMENT);
  char want[256];
  snprintf(want, sizeof want, "the %s %s is a FIFO (named pipe), not a regular file; give the path of a file", what, fifo);
  assert_string_equal(tb_last_error(), want);
}

static void helper_kinds(void **state) {
  (void)state;
  int fd = -1;
  struct stat sb;
  char path[128];
  snprintf(path, sizeof path, "%s/file", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("12345", f);
  fclose(f);
  TB_ASSERT_OK(tb_fs_open_regular(path, "file", &fd, &sb));
  assert_true(fd >= 0);
  assert_int_equal(sb.st_size, 5);
  char buf[8] = "";
  assert_int_equal(read(fd, buf, sizeof buf), 5); /* blocking reads again */
  close(fd);

  expect_fifo_error(tb_fs_open_regular(fifo, "file", &fd, NULL), "file");
  assert_int_equal(fd, -1);
  assert_int_equal(tb_fs_open_regular(dir, "model", &fd, NULL), TB_ERR_INVALID_ARGUMENT);
  char want[300];
  snprintf(want, sizeof want, "the model %s is a folder, not a regular file; give the path of a file", dir);
  assert_string_equal(tb_last_error(), want);
  assert_int_equal(tb_fs_open_regular("/dev/null", ".npy file", &fd, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "the .npy file /dev/null is a character device, not a regular file; give the path of a file");
  snprintf(path, sizeof path, "%s/missing", dir);
  assert_int_equal(tb_fs_open_regular(path, "model", &fd, NULL), TB_ERR_NOT_FOUND);
  snprintf(want, sizeof want, "cannot open the model %s: No such file or directory", path);
  assert_string_equal(tb_last_error(), want);
}

static void readers_refuse_fifo(void **state) {
  (void)state;
  tb_model *model = (tb_model *)0x1;
  expect_fifo_error(tb_model_load(fifo, &model), "model");
  assert_null(model);
  tb_backend *cpu;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_tensor *t = (tb_tensor *)0x1;
  expect_fifo_error(tb_npy_load(fifo, cpu, &t), ".npy file");
  assert_null(t);
  tb_backend_destroy(cpu);
  tb_safetensors *st = (tb_safetensors *)0x1;
  expect_fifo_error(tb_safetensors_open(fifo, &st), "safetensors file");
  assert_null(st);
  tb_record *rec = NULL;
  expect_fifo_error(tb_record_open(fifo, &rec), "safetensors file");
  assert_null(rec);
  static tb_cpuid_dump dump;
  tb_cpuid_error err;
  assert_false(tb_cpuid_load_file(fifo, &dump, &err));
  char want[300];
  snprintf(want, sizeof want, "the cpuid dump %s is a FIFO (named pipe), not a regular file; give the path of a file", fifo);
  assert_string_equal(err.message, want);
}

/* A FIFO in place of an entry is a miss (the cache is an optimisation) and one warning naming it. */
static void cache_entry_fifo(void **state) {
  (void)state;
  setenv("TB_CACHE_DIR", dir, 1);
  setenv("TB_LOG", "warn", 1);
  char sub[128], entry[160];
  snprintf(sub, sizeof sub, "%s/opencl", dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  snprintf(entry, sizeof entry, "%s/key1", sub);
  assert_int_equal(mkfifo(entry, 0600), 0);
  void *data = (void *)0x1;
  size_t size = 1;
  char *log = NULL;
  tbt_capture_stderr_begin();
  assert_int_equal(tb_disk_cache_read("opencl", "key1", &data, &size), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_disk_cache_read("opencl", "key1", &data, &size), TB_ERR_INVALID_ARGUMENT); /* warned once */
  log = tbt_capture_stderr_end();
  assert_null(data);
  assert_int_equal(size, 0);
  char want[400];
  snprintf(want, sizeof want, "tensorbridge: warning: the disk cache entry %s is a FIFO (named pipe), not a regular file; give "
           "the path of a file; it is ignored (compiled again, not cached): remove it\n", entry);
  assert_string_equal(log, want);
  free(log);
  /* a write replaces it with the entry */
  TB_ASSERT_OK(tb_disk_cache_write("opencl", "key1", "abc", 3));
  TB_ASSERT_OK(tb_disk_cache_read("opencl", "key1", &data, &size));
  assert_int_equal(size, 3);
  assert_memory_equal(data, "abc", 3);
  free(data);
}

/* `tb run` with a FIFO as the model, an --input or --weights: exit 2 (a bad argument, docs/cli.md). */
static void cli_refuses_fifo(void **state) {
  (void)state;
  char args[512], want[256];
  snprintf(want, sizeof want, "%s is a FIFO (named pipe), not a regular file", fifo);
  snprintf(args, sizeof args, "run %s --backend cpu", fifo);
  tcli_expect_err(args, 2, want);
  snprintf(args, sizeof args, "run %s --backend cpu --input input=%s", CNN, fifo);
  tcli_expect_err(args, 2, want);
  snprintf(args, sizeof args, "run %s --backend cpu --weights %s", CNN, fifo);
  tcli_expect_err(args, 2, want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(helper_kinds, setup, teardown),
      cmocka_unit_test_setup_teardown(readers_refuse_fifo, setup, teardown),
      cmocka_unit_test_setup_teardown(cache_entry_fifo, setup, teardown),
      cmocka_unit_test_setup_teardown(cli_refuses_fifo, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
