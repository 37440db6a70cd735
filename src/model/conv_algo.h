/* Internal: the convolution algorithm prepare option's default, from the environment. */
#ifndef TB_MODEL_CONV_ALGO_H
#define TB_MODEL_CONV_ALGO_H
#include <tensorbridge/model.h>

/* What TB_CONV_DIRECT and TB_CONV_WINOGRAD choose, read now: each unset, "on" or "1" allows its method,
 * "off" or "0" rules it out; any other value allows it and is logged as a warning naming the variable and
 * the value (once per process). Both allowed: auto; one: that one; none: the implicit GEMM. Never
 * TB_CONV_ALGO_DEFAULT. */
tb_conv_algo tb_conv_algo_from_env(void);

#endif
