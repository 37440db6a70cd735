/* Optimization levels (tb_opt_level, the levels tb_model_prepare runs at): names and parsing (O0..O3 and the
 * aliases of DESIGN.md §6). They live with the model because the levels are the prepare step's. */
#include <string.h>
#include <strings.h>
#include <tensorbridge/policy.h>
#include "core/error.h"
#include "model/levels.h"

static const struct { const char *name; const char *alias; } levels[] = {
    {"O0", "none"}, {"O1", "conservative"}, {"O2", "balanced"}, {"O3", "aggressive"}};

const char *tb_opt_level_name(tb_opt_level level) {
  return (unsigned)level < sizeof levels / sizeof levels[0] ? levels[level].name : "?";
}

tb_status tb_opt_level_parse(const char *name, tb_opt_level *out) {
  if (!name || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_opt_level_parse: name and out must not be NULL");
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    bool digit_only = name[0] == levels[i].name[1] && name[1] == '\0';
    if (digit_only || strcasecmp(name, levels[i].name) == 0 || strcasecmp(name, levels[i].alias) == 0) {
      *out = (tb_opt_level)i;
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_NOT_FOUND,
                  "unknown optimization level '%.100s'; valid levels are O0 (none), O1 (conservative), O2 (balanced), "
                  "O3 (aggressive), also written 0..3 or o0..o3",
                  name);
}

/* bf16 kernels run at O3 unless fp32 is asked for, and at O2 when bf16 is, on a CPU with AVX512-BF16 (every
 * fast bf16 kernel needs it; the AMX ones too, for their packing and their fallback): elsewhere bf16 would
 * only be emulated, slower than fp32, so the fp32 kernels run and prepare's warning says why. */
bool tb_opt_wants_bf16(const tb_prepare_options *o) {
  return o->precision == TB_PRECISION_BF16 || (o->level == TB_LEVEL_O3 && o->precision == TB_PRECISION_AUTO);
}

bool tb_cpu_has_bf16(uint64_t features) { return (features & TB_FEATURE_BIT(TB_FEATURE_AVX512BF16)) != 0; }

tb_kernel_level tb_opt_kernel_level(const tb_prepare_options *o, uint64_t features) {
  if (o->level <= TB_LEVEL_O1) return TB_KERNEL_REFERENCE;
  return tb_opt_wants_bf16(o) && tb_cpu_has_bf16(features) ? TB_KERNEL_REDUCED : TB_KERNEL_FAST;
}

tb_device_precision tb_opt_device_precision(const tb_prepare_options *o) {
  if (o->level <= TB_LEVEL_O1) return TB_DEVICE_FP32;
  switch (o->precision) {
    case TB_PRECISION_AUTO: return o->level == TB_LEVEL_O3 ? TB_DEVICE_BF16 : TB_DEVICE_FP32;
    case TB_PRECISION_BF16: return TB_DEVICE_BF16;
    case TB_PRECISION_FP16: return TB_DEVICE_FP16;
    case TB_PRECISION_FP8: return TB_DEVICE_FP8;
    case TB_PRECISION_TF32: return TB_DEVICE_TF32;
    default: return TB_DEVICE_FP32;
  }
}
