/* The on/off switches of the convolution paths read from the environment (TB_CONV_DIRECT in
 * conv_direct.c, TB_CONV_WINOGRAD in conv_winograd.c): below the convolution driver (conv_fast.c) and the
 * paths it picks from, so that they use it without including the driver. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "core/env.h"

bool tb_conv_env_switch(const char *name, const char *runs, _Atomic bool *warned, char *why, size_t why_cap) {
  const char *mode = tb_env(name);
  char scratch[200];
  if (!why || !why_cap) why = scratch, why_cap = sizeof scratch;
  why[0] = '\0';
  if (!mode || strcmp(mode, "on") == 0 || strcmp(mode, "1") == 0) return true;
  if (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0) {
    snprintf(why, why_cap, "%s=%s", name, mode);
    return false;
  }
  /* a typo must not silently pick one of the two: the default, and the log says so */
  snprintf(why, why_cap, "%s='%.100s' is not one of on, 1, off, 0; %s", name, mode, runs);
  if (!atomic_exchange(warned, true)) tb_log(TB_LOG_WARN, "CPU: %s", why);
  return true;
}
