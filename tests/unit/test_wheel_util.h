/* Tests of the NVIDIA library search (runtime/nvidia_lib_search.c: NVRTC, cuBLASLt, cuDNN): a scratch HOME
 * with the Python variables that name site-packages folders cleared and restored, and a fake library linked
 * into a pip wheel's place under such a folder. */
#ifndef TB_TEST_WHEEL_UTIL_H
#define TB_TEST_WHEEL_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

/* The variables the search reads to find site-packages folders, HOME last (set to the scratch root). */
#define TBT_PYTHON_VAR_COUNT 6
static const char *const tbt_python_vars[TBT_PYTHON_VAR_COUNT] = {"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHOME",
                                                                  "PYTHONPATH", "PYTHONUSERBASE", "HOME"};

typedef struct tbt_python_env {
  char root[64];                          /* the scratch HOME, a fresh folder under /tmp */
  char *saved[TBT_PYTHON_VAR_COUNT];      /* the variables' values before, restored by tbt_python_env_leave */
} tbt_python_env;

/* Clears the Python variables and points HOME at a fresh folder /tmp/<prefix>XXXXXX. */
static inline void tbt_python_env_enter(tbt_python_env *env, const char *prefix) {
  snprintf(env->root, sizeof env->root, "/tmp/%sXXXXXX", prefix);
  assert_non_null(mkdtemp(env->root));
  for (int i = 0; i < TBT_PYTHON_VAR_COUNT; i++) {
    env->saved[i] = getenv(tbt_python_vars[i]) ? strdup(getenv(tbt_python_vars[i])) : NULL;
    unsetenv(tbt_python_vars[i]);
  }
  setenv("HOME", env->root, 1);
}

/* Restores the variables and removes the scratch folder. */
static inline void tbt_python_env_leave(tbt_python_env *env) {
  for (int i = 0; i < TBT_PYTHON_VAR_COUNT; i++) {
    if (env->saved[i]) setenv(tbt_python_vars[i], env->saved[i], 1);
    else unsetenv(tbt_python_vars[i]);
    free(env->saved[i]);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", env->root);
  assert_int_equal(system(cmd), 0);
}

/* Links the fake library `fake` (tbt_fake's name) as site/wheel_file, making its folders. */
static inline void tbt_plant_wheel(const char *site, const char *wheel_file, const char *fake) {
  char path[1024], cmd[2400];
  snprintf(path, sizeof path, "%s/%s", site, wheel_file);
  snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\" && ln -s '%s' '%s'", path, tbt_fake(fake), path);
  assert_int_equal(system(cmd), 0);
}

#endif
