/* Helpers for the ROCm probe's tests: a writable copy of tests/fixtures/mi300x to break on purpose,
 * and the environment that points the probe at the fixture and the fake HIP / ROCm SMI libraries. */
#ifndef TB_TEST_AMD_TREE_H
#define TB_TEST_AMD_TREE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "test_util.h"

#define AMD_MI300X_VRAM 206158430208ull
#define AMD_ROCM_ONLY (1u << TB_BACKEND_ROCM)

/* Fixture mi300x, fake HIP and ROCm SMI in their default (working) modes, no other vendor library. */
static inline void amd_use_fakes(void) {
  tbt_clear_env();
  tbt_no_vendor_libs();
  unsetenv("FAKE_HIP_MODE");
  unsetenv("FAKE_HIP_DEVICES");
  unsetenv("FAKE_RSMI_MODE");
  setenv("TB_HIP_LIB", tbt_fake("fake_hip"), 1);
  setenv("TB_ROCM_SMI_LIB", tbt_fake("fake_rocm_smi"), 1);
  tbt_use_fixture("mi300x");
}

/* Copy the mi300x fixture into a new directory under /tmp (mode 0755, so a dropped-privilege child can
 * read it), point TB_FSROOT at it and return its path (free with amd_tree_remove). */
static inline char *amd_tree_copy(void) {
  char *root = strdup("/tmp/tb-amd-XXXXXX");
  assert_non_null(root);
  assert_non_null(mkdtemp(root));
  assert_int_equal(chmod(root, 0755), 0);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cp -R '%s/mi300x/.' '%s'", TB_TEST_FIXTURES, root);
  assert_int_equal(system(cmd), 0);
  setenv("TB_FSROOT", root, 1);
  return root;
}

/* Replace (or create) the file root/rel with text. */
static inline void amd_tree_write(const char *root, const char *rel, const char *text) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* Replace one "key value" line of a properties file in the tree. */
static inline void amd_tree_set_prop(const char *root, const char *rel, const char *key, const char *value) {
  char path[1024], line[256], out[16384] = "";
  snprintf(path, sizeof path, "%s/%s", root, rel);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot read %s", path);
  size_t klen = strlen(key), used = 0;
  while (fgets(line, sizeof line, f)) {
    int n = (strncmp(line, key, klen) == 0 && line[klen] == ' ')
                ? snprintf(out + used, sizeof out - used, "%s %s\n", key, value)
                : snprintf(out + used, sizeof out - used, "%s", line);
    if (n > 0) used += (size_t)n;
  }
  fclose(f);
  amd_tree_write(root, rel, out);
}

/* Put back the fixture's own version of root/rel. */
static inline void amd_tree_restore(const char *root, const char *rel) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "cp '%s/mi300x/%s' '%s/%s'", TB_TEST_FIXTURES, rel, root, rel);
  assert_int_equal(system(cmd), 0);
}

static inline void amd_tree_remove(char *root) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  assert_int_equal(system(cmd), 0);
  free(root);
}

#endif
