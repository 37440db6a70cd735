/* Configuration presets (training, inference, development): recommended settings for a device, which
 * model preparation consumes later. The rules and their reasons are in docs/selection.md. */
#include <string.h>
#include <strings.h>
#include <tensorbridge/policy.h>
#include "core/error.h"

static const struct { const char *name; const char *alias; } presets[] = {
    {"training", "train"}, {"inference", "infer"}, {"development", "dev"}};

const char *tb_preset_name(tb_preset preset) {
  return (unsigned)preset < sizeof presets / sizeof presets[0] ? presets[preset].name : "?";
}

tb_status tb_preset_parse(const char *name, tb_preset *out) {
  if (!name || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_preset_parse: name and out must not be NULL");
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
    if (strcasecmp(name, presets[i].name) == 0 || strcasecmp(name, presets[i].alias) == 0) {
      *out = (tb_preset)i;
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_NOT_FOUND, "unknown preset '%.100s'; valid presets are training (train), inference (infer), development (dev)",
                  name);
}

/* Matrix units that multiply bf16: the precondition for O3's reduced precision to pay off. */
static bool has_bf16_matrix_units(const tb_device_info *d) {
  const uint64_t units = TB_FEATURE_BIT(TB_FEATURE_TENSOR_CORES) | TB_FEATURE_BIT(TB_FEATURE_MATRIX_CORES) |
                         TB_FEATURE_BIT(TB_FEATURE_XMX) | TB_FEATURE_BIT(TB_FEATURE_MXU);
  if (d->features & TB_FEATURE_BIT(TB_FEATURE_AMX_BF16)) return true;
  return (d->features & units) && (d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
}

static void training(const tb_device_info *d, tb_config *c) {
  c->level = TB_LEVEL_O1;
  c->deterministic = false;
  c->validate = false;
  c->memory_fraction = 0.9;
  if (d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16)) {
    c->precision = TB_DTYPE_BF16;
    c->rationale = "training: O1 applies only exact rewrites, bf16 because the device does bf16 arithmetic (f32 "
                   "exponent range, no loss scaling), fast nondeterministic kernels, 90% of memory for the allocator";
  } else {
    c->precision = TB_DTYPE_F32;
    c->rationale = "training: O1 applies only exact rewrites, f32 because the device has no bf16 arithmetic, fast "
                   "nondeterministic kernels, 90% of memory for the allocator";
  }
}

static void inference(const tb_device_info *d, tb_config *c) {
  tb_amp_policy amp = {.size = sizeof amp};
  c->precision = tb_amp_policy_for_device(d, &amp) == TB_OK ? amp.dtype : TB_DTYPE_F32;
  c->deterministic = false;
  c->memory_fraction = 0.9;
  if (has_bf16_matrix_units(d)) {
    c->level = TB_LEVEL_O3;
    c->validate = true;
    c->rationale = "inference: O3 because the device has bf16 matrix units (tensor cores, matrix cores, XMX, MXU or "
                   "AMX-BF16), precision from the AMP policy, validated against the CPU O0 reference since O3 "
                   "reduces precision, 90% of memory for the allocator";
  } else {
    c->level = TB_LEVEL_O2;
    c->validate = false;
    c->rationale = "inference: O2 (fast kernels, f32 numerics kept) because the device has no bf16 matrix units, "
                   "precision from the AMP policy, 90% of memory for the allocator";
  }
}

static void development(tb_config *c) {
  c->level = TB_LEVEL_O0;
  c->precision = TB_DTYPE_F32;
  c->deterministic = true;
  c->validate = true;
  c->memory_fraction = 0.5;
  c->rationale = "development: O0 reference kernels in f32, deterministic and validated, so results are reproducible "
                 "and easy to debug; half of memory for the allocator leaves room for other processes";
}

tb_status tb_config_for_preset(tb_preset preset, const tb_device_info *device, tb_config *out) {
  if (!device || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_config_for_preset: device and out must not be NULL");
  if (out->size < sizeof *out)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_config_for_preset: out->size is %zu; set it to sizeof(tb_config)", out->size);
  if ((unsigned)preset >= sizeof presets / sizeof presets[0])
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_config_for_preset: preset %d is not a tb_preset value", (int)preset);
  if (!device->usable)
    return tb_error(TB_ERR_UNAVAILABLE, "no %s preset for %s: the device is not usable: %s", presets[preset].name,
                    device->device, device->reason[0] ? device->reason : "marked unusable by discovery");
  tb_config config = {.size = sizeof config, .preset = preset};
  switch (preset) {
    case TB_PRESET_TRAINING: training(device, &config); break;
    case TB_PRESET_INFERENCE: inference(device, &config); break;
    case TB_PRESET_DEVELOPMENT: development(&config); break;
  }
  memcpy(out, &config, sizeof config);
  return TB_OK;
}
