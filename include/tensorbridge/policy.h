/* Selection: which device `auto` (or a name, or TB_BACKEND) picks, and why; and the policies derived
 * from a device: configuration presets, the mixed-precision (AMP) policy, and the ONNX Runtime
 * execution providers that match a backend request. */
#ifndef TENSORBRIDGE_POLICY_H
#define TENSORBRIDGE_POLICY_H
#include <stdbool.h>
#include <stddef.h>
#include "device.h"
#include "dtype.h"
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Selection ------------------------------------------------------------------------------ */

typedef struct tb_selection tb_selection;

/* One device considered by the selection, with its verdict. Candidates come ranked first (rank 1, 2,
 * ...), then the unranked ones: other routes to ranked hardware, CPU implementations of Vulkan/OpenCL
 * passed over by auto, and unusable devices. Owned by the selection. */
typedef struct tb_candidate {
  const tb_device_info *device; /* owned by the device list given to tb_select */
  int rank;                     /* 1 = best; 0 when not ranked */
  bool chosen;
  const char *verdict;          /* one sentence: "chosen: ...", "usable, rank 2; ...", "same hardware as cuda:0, ...",
                                   "rejected: <reason>" (docs/selection.md) */
} tb_candidate;

/* Where a backend request comes from: the API argument (the tool's --backend), the TB_BACKEND
 * environment variable, or the default "auto". */
typedef enum tb_request_source { TB_REQUEST_ARGUMENT = 0, TB_REQUEST_ENVIRONMENT, TB_REQUEST_DEFAULT } tb_request_source;

/* The backend request that tb_select and tb_backend_create read for `request`: `request` itself when
 * not NULL; else TB_BACKEND when it is set and not empty; else "auto". *out_text (out_text may be NULL)
 * points at `request`, at the environment's value (valid until the environment changes) or at "auto".
 * A TB_BACKEND of white space only comes back as TB_REQUEST_ENVIRONMENT and selects as auto
 * (tb_selection_source then says "default"). */
TB_API tb_request_source tb_request_effective(const char *request, const char **out_text);

/* Choose a device from `list`. Order and rules: docs/selection.md.
 * request: "auto", a backend name or alias ("cuda", "amd"; any case), or a device ("cuda:1");
 *          NULL means the TB_BACKEND environment variable, or "auto" when it is unset or empty.
 *          Auto considers every device; a backend name only that backend's devices.
 * Errors: TB_ERR_INVALID_ARGUMENT for NULL list/out_selection, an empty request or a malformed index
 *         ("cuda:x"); TB_ERR_NOT_FOUND for an unknown name or a device index that does not exist (the
 *         message lists the valid ones); TB_ERR_UNAVAILABLE when the named backend or device, or for
 *         auto the whole list, has nothing usable (the message has the reason and the fix).
 * A named backend is never silently replaced by another. `list` must outlive the selection.
 * On failure *out_selection is NULL. */
TB_API tb_status tb_select(const tb_device_list *list, const char *request, tb_selection **out_selection);
TB_API void tb_selection_destroy(tb_selection *selection);

TB_API const tb_device_info *tb_selection_device(const tb_selection *selection);
/* Where the request came from: "argument", "TB_BACKEND", or "default". */
TB_API const char *tb_selection_source(const tb_selection *selection);
/* The request as given ("auto" when defaulted). */
TB_API const char *tb_selection_request(const tb_selection *selection);
TB_API size_t tb_selection_candidate_count(const tb_selection *selection);
TB_API const tb_candidate *tb_selection_candidate(const tb_selection *selection, size_t i);
/* A human-readable explanation of the decision, several lines; owned by the selection. */
TB_API const char *tb_selection_explain(const tb_selection *selection);
/* The selection as JSON (keys in docs/selection.md); the caller frees *out_json with tb_free(). */
TB_API tb_status tb_selection_to_json(const tb_selection *selection, char **out_json);

/* ---- Presets -------------------------------------------------------------------------------- */

typedef enum tb_preset { TB_PRESET_TRAINING = 0, TB_PRESET_INFERENCE, TB_PRESET_DEVELOPMENT } tb_preset;

typedef enum tb_opt_level { TB_LEVEL_O0 = 0, TB_LEVEL_O1, TB_LEVEL_O2, TB_LEVEL_O3 } tb_opt_level;

/* Parse "O0".."O3" (any case), "0".."3", or the aliases none, conservative, balanced, aggressive.
 * Unknown is TB_ERR_NOT_FOUND listing the valid names. */
TB_API tb_status tb_opt_level_parse(const char *name, tb_opt_level *out);
TB_API const char *tb_opt_level_name(tb_opt_level level);

typedef struct tb_config {
  size_t size;              /* sizeof(tb_config) */
  tb_preset preset;
  tb_opt_level level;       /* optimization level for model preparation */
  tb_dtype precision;       /* compute precision the preset asks for */
  bool deterministic;       /* prefer reproducible kernels over faster nondeterministic ones */
  bool validate;            /* check results against the CPU O0 reference after prepare */
  double memory_fraction;   /* share of device memory the caching allocator may hold, (0, 1] */
  const char *rationale;    /* one sentence: why these values for this device (static storage) */
} tb_config;

/* "training" (train), "inference" (infer), "development" (dev), any case. */
TB_API tb_status tb_preset_parse(const char *name, tb_preset *out);
TB_API const char *tb_preset_name(tb_preset preset);
/* Fill *out with the preset's recommended settings for this device (consumed by model preparation).
 * out->size must be set by the caller to at least sizeof(tb_config); the library sets it to the size
 * it filled. An unusable device is TB_ERR_UNAVAILABLE with its reason. */
TB_API tb_status tb_config_for_preset(tb_preset preset, const tb_device_info *device, tb_config *out);

/* ---- Mixed precision (AMP) policy ----------------------------------------------------------- */

typedef struct tb_amp_policy {
  size_t size;           /* sizeof(tb_amp_policy) */
  bool enabled;          /* autocast worth enabling on this device */
  tb_dtype dtype;        /* TB_DTYPE_BF16 or TB_DTYPE_F16 when enabled; TB_DTYPE_F32 otherwise */
  bool use_grad_scaler;  /* loss scaling needed (fp16 has a narrow exponent; bf16 does not) */
  const char *reason;    /* one sentence (static storage) */
} tb_amp_policy;

/* out->size as for tb_config_for_preset. An unusable device is TB_ERR_UNAVAILABLE with its reason. */
TB_API tb_status tb_amp_policy_for_device(const tb_device_info *device, tb_amp_policy *out);

/* ---- ONNX Runtime execution providers ------------------------------------------------------ */

/* Map a backend request ("auto", "cuda", "rocm", "xpu", "cpu", "coreml", or an alias, any case) to the
 * ordered list of ONNX Runtime execution providers to pass to a session, given the providers that
 * onnxruntime reports as available (`available` may be NULL when available_count is 0). The CPU
 * provider is always last as the fallback, even when `available` omits it. A named backend whose
 * providers are all missing is TB_ERR_UNAVAILABLE naming them; an unknown request TB_ERR_NOT_FOUND;
 * tpu, vulkan, opencl (no ONNX Runtime provider) TB_ERR_UNSUPPORTED. out_providers receives pointers
 * to static strings; *out_count is set to the number written. When `capacity` is too small the call
 * writes nothing, fails with TB_ERR_INVALID_ARGUMENT and sets *out_count to the capacity needed
 * (8 is always enough). */
TB_API tb_status tb_ort_providers(const char *request, const char *const *available, size_t available_count,
                                  const char **out_providers, size_t capacity, size_t *out_count);

#ifdef __cplusplus
}
#endif
#endif
