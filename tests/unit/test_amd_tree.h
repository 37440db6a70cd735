/* Helpers for the ROCm probe's tests: the environment that points the probe at tests/fixtures/mi300x
 * and the fake HIP / ROCm SMI libraries, and editing a KFD properties file in a copy of the fixture
 * (tbt_fixture_copy(AMD_FIXTURE)). */
#ifndef TB_TEST_AMD_TREE_H
#define TB_TEST_AMD_TREE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

#define AMD_MI300X_VRAM 206158430208ull
#define AMD_ROCM_ONLY (1u << TB_BACKEND_ROCM)
#define AMD_FIXTURE "mi300x"

/* Fixture mi300x, fake HIP and ROCm SMI in their default (working) modes, no other vendor library. */
static inline void amd_use_fakes(void) {
  tbt_clear_env();
  tbt_no_vendor_libs();
  unsetenv("FAKE_HIP_MODE");
  unsetenv("FAKE_HIP_DEVICES");
  unsetenv("FAKE_RSMI_MODE");
  setenv("TB_HIP_LIB", tbt_fake("fake_hip"), 1);
  setenv("TB_ROCM_SMI_LIB", tbt_fake("fake_rocm_smi"), 1);
  tbt_use_fixture(AMD_FIXTURE);
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
  tbt_tree_write(root, rel, out);
}

#endif
