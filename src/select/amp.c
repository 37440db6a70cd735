/* The mixed-precision (AMP) policy of a device, from its capabilities rather than its backend name:
 * bf16 where the hardware does bf16 arithmetic (no loss scaling needed), else fp16 with a gradient
 * scaler on a GPU with fp16 arithmetic, else off (f32). Why this differs from seed 004: docs/selection.md. */
#include <string.h>
#include <tensorbridge/policy.h>
#include "core/error.h"

static bool has_native_bf16(const tb_device_info *d) {
  if (d->type == TB_DEVICE_CPU)
    return (d->features & (TB_FEATURE_BIT(TB_FEATURE_AVX512BF16) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16))) != 0 ||
           (d->backend == TB_BACKEND_CPU && (d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16)) != 0);
  return (d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16)) != 0;
}

static bool is_accelerator(const tb_device_info *d) { return d->type != TB_DEVICE_CPU; }

/* Fill `policy` for a usable device (the caller checked). */
static void decide(const tb_device_info *d, tb_amp_policy *policy) {
  if (has_native_bf16(d)) {
    policy->enabled = true;
    policy->dtype = TB_DTYPE_BF16;
    policy->use_grad_scaler = false;
    policy->reason = d->type == TB_DEVICE_CPU
                         ? "bf16 autocast: this CPU does bf16 arithmetic (AVX512-BF16 or AMX-BF16), and bf16 keeps the "
                           "f32 exponent range, so no gradient scaler is needed"
                         : "bf16 autocast: the device does bf16 arithmetic, and bf16 keeps the f32 exponent range, so no "
                           "gradient scaler is needed";
  } else if (is_accelerator(d) && (d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F16))) {
    policy->enabled = true;
    policy->dtype = TB_DTYPE_F16;
    policy->use_grad_scaler = true;
    policy->reason = "fp16 autocast with a gradient scaler: the device does fp16 but not bf16 arithmetic, and fp16's "
                     "narrow exponent range needs loss scaling to keep small gradients from flushing to zero";
  } else {
    policy->enabled = false;
    policy->dtype = TB_DTYPE_F32;
    policy->use_grad_scaler = false;
    policy->reason = d->type == TB_DEVICE_CPU
                         ? "autocast off (f32): this CPU has neither AVX512-BF16 nor AMX-BF16, so reduced precision "
                           "would be emulated and slower than f32"
                         : "autocast off (f32): the device has neither bf16 nor fp16 arithmetic";
  }
}

tb_status tb_amp_policy_for_device(const tb_device_info *device, tb_amp_policy *out) {
  if (!device || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_amp_policy_for_device: device and out must not be NULL");
  if (out->size < sizeof *out)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_amp_policy_for_device: out->size is %zu; set it to sizeof(tb_amp_policy)",
                    out->size);
  if (!device->usable)
    return tb_error(TB_ERR_UNAVAILABLE, "no AMP policy for %s: the device is not usable: %s", device->device,
                    device->reason[0] ? device->reason : "marked unusable by discovery");
  tb_amp_policy policy = {.size = sizeof policy};
  decide(device, &policy);
  memcpy(out, &policy, sizeof policy);
  return TB_OK;
}
