/* Internal: what an optimization level means for the kernels (levels.c): which kernel level
 * (backend/kernel.h) a prepare runs at, and whether it asks for bf16. */
#ifndef TB_MODEL_LEVELS_H
#define TB_MODEL_LEVELS_H
#include <stdbool.h>
#include <stdint.h>
#include <tensorbridge/model.h>
#include "backend/kernel.h"

/* Whether these options ask for bf16: precision bf16, or auto at O3. */
bool tb_opt_wants_bf16(const tb_prepare_options *o);
/* Whether the CPU with these features (TB_FEATURE_BIT set) computes bf16 natively (AVX512-BF16). */
bool tb_cpu_has_bf16(uint64_t features);
/* O0 and O1: the reference kernels; O2: the fast fp32 ones; bf16 (TB_KERNEL_REDUCED) where the options ask
 * for it and the CPU has AVX512-BF16. */
tb_kernel_level tb_opt_kernel_level(const tb_prepare_options *o, uint64_t features);
/* What a device backend's kernels may compute in (backend/kernel.h): fp32 at O0 and O1 and with precision fp32;
 * the precision asked for at O2 and O3; with auto, bf16 at O3 and fp32 below. */
tb_device_precision tb_opt_device_precision(const tb_prepare_options *o);

#endif
