/* The on-disk cache of compiled device code (src/core/disk_cache.c): where the folder is (TB_CACHE_DIR,
 * XDG_CACHE_HOME, HOME), TB_CACHE_DIR=off, a relative TB_CACHE_DIR, bad kinds and keys, a write and read back,
 * a missing entry, an entry replaced, an empty entry, and a folder that cannot be made. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/disk_cache.h"
#include "test_util.h"

static char root[64];

static int setup(void **state) {
  (void)state;
  snprintf(root, sizeof root, "/tmp/tb-cache-XXXXXX");
  if (!mkdtemp(root)) return -1;
  unsetenv("XDG_CACHE_HOME");
  setenv("TB_CACHE_DIR", root, 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  int rc = system(cmd);
  unsetenv("TB_CACHE_DIR");
  return rc == 0 ? 0 : -1;
}

static void folder_from_the_environment(void **state) {
  (void)state;
  char dir[4096], want[256];
  TB_ASSERT_OK(tb_disk_cache_dir("opencl", dir, sizeof dir));
  snprintf(want, sizeof want, "%s/opencl", root);
  assert_string_equal(dir, want);
  unsetenv("TB_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/var/cache/me", 1);
  TB_ASSERT_OK(tb_disk_cache_dir("vulkan", dir, sizeof dir));
  assert_string_equal(dir, "/var/cache/me/tensorbridge/vulkan");
  unsetenv("XDG_CACHE_HOME");
  char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  setenv("HOME", "/home/someone", 1);
  TB_ASSERT_OK(tb_disk_cache_dir("vulkan", dir, sizeof dir));
  assert_string_equal(dir, "/home/someone/.cache/tensorbridge/vulkan");
  unsetenv("HOME");
  assert_int_equal(tb_disk_cache_dir("vulkan", dir, sizeof dir), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "none of TB_CACHE_DIR, XDG_CACHE_HOME and HOME");
  if (home) setenv("HOME", home, 1);
  free(home);
}

static void off_relative_and_bad_names(void **state) {
  (void)state;
  char dir[4096];
  void *data = NULL;
  size_t size = 0;
  setenv("TB_CACHE_DIR", "off", 1);
  assert_int_equal(tb_disk_cache_dir("opencl", dir, sizeof dir), TB_ERR_UNAVAILABLE);
  assert_string_equal(tb_last_error(), "disk cache: switched off by TB_CACHE_DIR=off");
  assert_int_equal(tb_disk_cache_write("opencl", "k", "x", 1), TB_ERR_UNAVAILABLE);
  setenv("TB_CACHE_DIR", "cache/here", 1);
  assert_int_equal(tb_disk_cache_read("opencl", "k", &data, &size), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(),
                      "disk cache: TB_CACHE_DIR='cache/here' is not an absolute path; set it to one, or to 'off'");
  assert_null(data);
  setenv("TB_CACHE_DIR", root, 1);
  assert_int_equal(tb_disk_cache_write("../etc", "k", "x", 1), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "kind '../etc' is not a plain name");
  assert_int_equal(tb_disk_cache_write("opencl", "a/b", "x", 1), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "key 'a/b' is not a plain name");
  assert_int_equal(tb_disk_cache_write("opencl", ".hidden", "x", 1), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_disk_cache_read("opencl", NULL, &data, &size), TB_ERR_INVALID_ARGUMENT);
}

static void write_read_replace(void **state) {
  (void)state;
  void *data = NULL;
  size_t size = 0;
  assert_int_equal(tb_disk_cache_read("opencl", "dev-1234", &data, &size), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "no entry");
  TB_ASSERT_OK(tb_disk_cache_write("opencl", "dev-1234", "first", 5));
  TB_ASSERT_OK(tb_disk_cache_read("opencl", "dev-1234", &data, &size));
  assert_int_equal(size, 5);
  assert_memory_equal(data, "first", 5);
  free(data);
  TB_ASSERT_OK(tb_disk_cache_write("opencl", "dev-1234", "second!", 7));
  TB_ASSERT_OK(tb_disk_cache_read("opencl", "dev-1234", &data, &size));
  assert_int_equal(size, 7);
  assert_memory_equal(data, "second!", 7);
  free(data);
  char path[256];
  snprintf(path, sizeof path, "%s/opencl", root);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_mode & 0777, 0700); /* the folder it made is private */
  /* an empty entry (a write cut short by a crash elsewhere) is an error, read as a miss by callers */
  snprintf(path, sizeof path, "%s/opencl/empty", root);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
  assert_int_equal(tb_disk_cache_read("opencl", "empty", &data, &size), TB_ERR_IO);
  TB_ASSERT_CONTAINS(tb_last_error(), "is empty, unreadable or larger than 1 GiB");
  assert_null(data);
}

static void folder_that_cannot_be_made(void **state) {
  (void)state;
  char file[128], dir[160];
  snprintf(file, sizeof file, "%s/plain-file", root);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  snprintf(dir, sizeof dir, "%s/sub", file); /* a folder inside a file */
  setenv("TB_CACHE_DIR", dir, 1);
  assert_int_equal(tb_disk_cache_write("vulkan", "k", "x", 1), TB_ERR_IO);
  TB_ASSERT_CONTAINS(tb_last_error(), "disk cache: cannot create folder");
  setenv("TB_CACHE_DIR", root, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(folder_from_the_environment, setup, teardown),
      cmocka_unit_test_setup_teardown(off_relative_and_bad_names, setup, teardown),
      cmocka_unit_test_setup_teardown(write_read_replace, setup, teardown),
      cmocka_unit_test_setup_teardown(folder_that_cannot_be_made, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
