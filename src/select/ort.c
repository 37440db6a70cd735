/* ONNX Runtime execution providers for a backend request (seed 004), given the providers that
 * onnxruntime reports as available. Providers of one vendor form a family (TensorRT then CUDA; MIGraphX
 * then ROCm; OpenVINO; CoreML); the CPU provider always ends the list, since every ONNX Runtime build
 * has it, even when the caller's `available` leaves it out. */
#include <string.h>
#include <strings.h>
#include <tensorbridge/policy.h>
#include "core/error.h"

#define TB_ORT_CPU "CPUExecutionProvider"
#define TB_ORT_VALID_REQUESTS "auto, cuda (nvidia), rocm (amd, hip), xpu (intel, level_zero), coreml, cpu"

typedef struct family {
  const char *request; /* the backend name it serves */
  const char *providers[2];
  const char *install; /* what to install when none is available */
} family;

/* In the order `auto` tries them. */
static const family families[] = {
    {"cuda", {"TensorrtExecutionProvider", "CUDAExecutionProvider"}, "install onnxruntime-gpu (CUDA build) and the NVIDIA driver"},
    {"rocm", {"MIGraphXExecutionProvider", "ROCMExecutionProvider"}, "install an onnxruntime build with ROCm/MIGraphX (onnxruntime-rocm)"},
    {"xpu", {"OpenVINOExecutionProvider", NULL}, "install onnxruntime-openvino"},
    {"coreml", {"CoreMLExecutionProvider", NULL}, "CoreML exists only in the macOS builds of onnxruntime"},
};
enum { FAMILY_COUNT = sizeof families / sizeof families[0], MAX_PROVIDERS = 2 * FAMILY_COUNT + 1 };

static bool is_available(const char *provider, const char *const *available, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (available[i] && strcasecmp(available[i], provider) == 0) return true;
  return false;
}

/* Append the available members of `f`; returns how many. */
static size_t add_family(const family *f, const char *const *available, size_t count, const char **list, size_t *n) {
  size_t added = 0;
  for (size_t p = 0; p < 2 && f->providers[p]; p++) {
    if (is_available(f->providers[p], available, count)) {
      list[(*n)++] = f->providers[p];
      added++;
    }
  }
  return added;
}

static tb_status family_missing(const family *f, const char *request, const char *const *available, size_t count) {
  char have[512] = "";
  size_t used = 0;
  for (size_t i = 0; i < count; i++) {
    if (!available[i]) continue;
    size_t len = strlen(available[i]);
    if (used + len + 3 >= sizeof have) break;
    if (used) memcpy(have + used, ", ", 2), used += 2;
    memcpy(have + used, available[i], len + 1);
    used += len;
  }
  return tb_error(TB_ERR_UNAVAILABLE, "ONNX Runtime request '%.60s' needs %s%s%s, but onnxruntime reports %s%s; %s", request,
                  f->providers[0], f->providers[1] ? " or " : "", f->providers[1] ? f->providers[1] : "",
                  used ? "only: " : "no providers", have, f->install);
}

/* Which family a request names: index into families, FAMILY_COUNT for cpu, -1 for auto. */
static tb_status parse_request(const char *request, int *out_family) {
  if (strcasecmp(request, "auto") == 0) return *out_family = -1, TB_OK;
  if (strcasecmp(request, "coreml") == 0) return *out_family = 3, TB_OK;
  tb_backend_kind kind;
  if (tb_backend_parse(request, &kind, NULL) != TB_OK)
    return tb_error(TB_ERR_NOT_FOUND, "unknown ONNX Runtime request '%.60s'; valid requests are " TB_ORT_VALID_REQUESTS,
                    request);
  switch (kind) {
    case TB_BACKEND_CUDA: return *out_family = 0, TB_OK;
    case TB_BACKEND_ROCM: return *out_family = 1, TB_OK;
    case TB_BACKEND_XPU: return *out_family = 2, TB_OK;
    case TB_BACKEND_CPU: return *out_family = FAMILY_COUNT, TB_OK;
    default: break;
  }
  return tb_error(TB_ERR_UNSUPPORTED,
                  "ONNX Runtime has no execution provider for %s; use cpu or auto (valid requests are " TB_ORT_VALID_REQUESTS ")",
                  tb_backend_name(kind));
}

tb_status tb_ort_providers(const char *request, const char *const *available, size_t available_count,
                           const char **out_providers, size_t capacity, size_t *out_count) {
  if (!request || !out_providers || !out_count || (!available && available_count))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_ort_providers: request, out_providers and out_count must not be NULL, nor available when "
                    "available_count > 0");
  *out_count = 0;
  int which = 0;
  tb_status st = parse_request(request, &which);
  if (st != TB_OK) return st;
  const char *list[MAX_PROVIDERS];
  size_t n = 0;
  if (which < 0) {
    for (size_t f = 0; f < FAMILY_COUNT; f++)
      if (add_family(&families[f], available, available_count, list, &n)) break;
  } else if (which < FAMILY_COUNT && !add_family(&families[which], available, available_count, list, &n)) {
    return family_missing(&families[which], request, available, available_count);
  }
  list[n++] = TB_ORT_CPU;
  if (capacity < n) {
    *out_count = n;
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_ort_providers: capacity %zu is too small for %zu providers; pass at least %zu",
                    capacity, n, n);
  }
  memcpy(out_providers, list, n * sizeof *list);
  *out_count = n;
  return TB_OK;
}
