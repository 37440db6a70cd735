/* The convolution algorithm prepare option (tb_prepare_options.conv_algo): its names, and its default read
 * from the environment once per tb_model_prepare, so that the kernels only read the resolved value. */
#include "model/conv_algo.h"
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core/env.h"
#include "core/error.h"

static const char *const algo_names[] = {"default", "auto", "winograd", "direct", "gemm"};

const char *tb_conv_algo_name(tb_conv_algo algo) {
  return (unsigned)algo < sizeof algo_names / sizeof algo_names[0] ? algo_names[algo] : "?";
}

tb_status tb_conv_algo_parse(const char *name, tb_conv_algo *out) {
  if (!name || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_conv_algo_parse: name and out must not be NULL");
  for (size_t i = 0; i < sizeof algo_names / sizeof algo_names[0]; i++)
    if (strcasecmp(name, algo_names[i]) == 0) {
      *out = (tb_conv_algo)i;
      return TB_OK;
    }
  return tb_error(TB_ERR_NOT_FOUND,
                  "unknown convolution algorithm '%.100s'; valid ones are default, auto, winograd, direct, gemm", name);
}

/* One method's switch: unset, "on" or "1": allowed; "off" or "0": ruled out; any other value: allowed, and
 * a warning naming it the first time (*warned). */
static bool env_switch(const char *name, const char *runs, _Atomic bool *warned) {
  const char *mode = tb_env(name);
  if (!mode || strcmp(mode, "on") == 0 || strcmp(mode, "1") == 0) return true;
  if (strcmp(mode, "off") == 0 || strcmp(mode, "0") == 0) return false;
  /* a typo must not silently pick one of the two: the default, and the log says so */
  if (!atomic_exchange(warned, true))
    tb_log(TB_LOG_WARN, "CPU: %s='%.100s' is not one of on, 1, off, 0; %s", name, mode, runs);
  return true;
}

tb_conv_algo tb_conv_algo_from_env(void) {
  static _Atomic bool warned_direct, warned_winograd;
  bool direct = env_switch("TB_CONV_DIRECT", "the direct convolution runs where it fits", &warned_direct);
  bool winograd = env_switch("TB_CONV_WINOGRAD", "Winograd runs where it fits", &warned_winograd);
  return direct && winograd ? TB_CONV_ALGO_AUTO
         : winograd         ? TB_CONV_ALGO_WINOGRAD
         : direct           ? TB_CONV_ALGO_DIRECT
                            : TB_CONV_ALGO_GEMM;
}
