/* Names of the public enums (backends, device types, dtypes, features) and their parsers. */
#include <string.h>
#include <strings.h>
#include <tensorbridge/device.h>
#include <tensorbridge/dtype.h>
#include "core/error.h"
#include "core/names.h"

static const char *const backend_names[TB_BACKEND_COUNT] = {"cpu", "cuda", "rocm", "xpu", "tpu", "vulkan", "opencl"};

const char *tb_backend_name(tb_backend_kind kind) {
  return (unsigned)kind < TB_BACKEND_COUNT ? backend_names[kind] : "?";
}

static const struct { const char *alias; tb_backend_kind kind; } backend_aliases[] = {
    {"cpu", TB_BACKEND_CPU},       {"cuda", TB_BACKEND_CUDA},      {"nvidia", TB_BACKEND_CUDA},
    {"rocm", TB_BACKEND_ROCM},     {"amd", TB_BACKEND_ROCM},       {"hip", TB_BACKEND_ROCM},
    {"xpu", TB_BACKEND_XPU},       {"intel", TB_BACKEND_XPU},      {"level_zero", TB_BACKEND_XPU},
    {"tpu", TB_BACKEND_TPU},       {"xla", TB_BACKEND_TPU},        {"vulkan", TB_BACKEND_VULKAN},
    {"opencl", TB_BACKEND_OPENCL},
};

#define TB_BACKEND_VALID_NAMES \
  "auto, cpu, cuda (nvidia), rocm (amd, hip), xpu (intel, level_zero), tpu (xla), vulkan, opencl"

bool tb_backend_lookup(const char *name, tb_backend_kind *out_kind, bool *out_is_auto) {
  *out_is_auto = strcasecmp(name, "auto") == 0;
  if (*out_is_auto) return true;
  for (size_t i = 0; i < sizeof backend_aliases / sizeof backend_aliases[0]; i++) {
    if (strcasecmp(name, backend_aliases[i].alias) == 0) {
      *out_kind = backend_aliases[i].kind;
      return true;
    }
  }
  return false;
}

tb_status tb_backend_parse(const char *name, tb_backend_kind *out_kind, bool *out_is_auto) {
  if (!name || !out_kind) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_backend_parse: name and out_kind must not be NULL");
  bool is_auto = false;
  bool known = tb_backend_lookup(name, out_kind, &is_auto);
  if (out_is_auto) *out_is_auto = is_auto;
  if (is_auto && !out_is_auto)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "backend 'auto' is not allowed here; name one of: " TB_BACKEND_VALID_NAMES);
  if (known) return TB_OK;
  return tb_error(TB_ERR_NOT_FOUND, "unknown backend '%s'; valid names are: " TB_BACKEND_VALID_NAMES, name);
}

const char *tb_device_type_name(tb_device_type type) {
  static const char *const names[] = {"cpu", "discrete_gpu", "integrated_gpu", "virtual_gpu", "tpu", "other"};
  return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "?";
}

static const char *const feature_names[TB_FEATURE_COUNT] = {
    "sse4_2",       "avx2",         "fma",         "f16c",        "avx512f",         "avx512bw",
    "avx512vl",     "avx512vnni",   "avx512bf16",  "avx512fp16",  "amx_tile",        "amx_bf16",
    "amx_int8",     "neon",         "sve",         "sme",         "tensor_cores",    "matrix_cores",
    "xmx",          "mxu",          "tf32",        "flash_attention", "cooperative_matrix",
    "subgroups",    "unified_memory", "fp64"};

const char *tb_feature_name(tb_feature feature) {
  return (unsigned)feature < TB_FEATURE_COUNT ? feature_names[feature] : "?";
}

tb_status tb_feature_parse(const char *name, tb_feature *out) {
  if (!name || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_feature_parse: name and out must not be NULL");
  for (int i = 0; i < TB_FEATURE_COUNT; i++) {
    if (strcasecmp(name, feature_names[i]) == 0) {
      *out = (tb_feature)i;
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_NOT_FOUND,
                  "unknown feature '%s'; valid names are: sse4_2, avx2, fma, f16c, avx512f, avx512bw, avx512vl, "
                  "avx512vnni, avx512bf16, avx512fp16, amx_tile, amx_bf16, amx_int8, neon, sve, sme, tensor_cores, "
                  "matrix_cores, xmx, mxu, tf32, flash_attention, cooperative_matrix, subgroups, unified_memory, fp64",
                  name);
}

static const struct { const char *name; size_t size; } dtype_info[TB_DTYPE_COUNT] = {
    {"f64", 8}, {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"fp8_e4m3fn", 1}, {"fp8_e5m2", 1},
    {"i64", 8}, {"i32", 4}, {"i16", 2}, {"i8", 1},   {"u8", 1},         {"bool", 1}};

const char *tb_dtype_name(tb_dtype dtype) {
  return (unsigned)dtype < TB_DTYPE_COUNT ? dtype_info[dtype].name : "?";
}

size_t tb_dtype_size(tb_dtype dtype) {
  return (unsigned)dtype < TB_DTYPE_COUNT ? dtype_info[dtype].size : 0;
}

tb_status tb_dtype_parse(const char *name, tb_dtype *out) {
  static const struct { const char *alias; tb_dtype dtype; } aliases[] = {
      {"float64", TB_DTYPE_F64}, {"double", TB_DTYPE_F64},  {"float32", TB_DTYPE_F32}, {"float", TB_DTYPE_F32},
      {"fp32", TB_DTYPE_F32},    {"float16", TB_DTYPE_F16}, {"half", TB_DTYPE_F16},    {"fp16", TB_DTYPE_F16},
      {"bfloat16", TB_DTYPE_BF16}, {"e4m3fn", TB_DTYPE_FP8_E4M3FN}, {"float8_e4m3fn", TB_DTYPE_FP8_E4M3FN},
      {"e5m2", TB_DTYPE_FP8_E5M2}, {"float8_e5m2", TB_DTYPE_FP8_E5M2}, {"int64", TB_DTYPE_I64},
      {"int32", TB_DTYPE_I32},   {"int16", TB_DTYPE_I16},   {"int8", TB_DTYPE_I8},     {"uint8", TB_DTYPE_U8}};
  if (!name || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_dtype_parse: name and out must not be NULL");
  for (int i = 0; i < TB_DTYPE_COUNT; i++) {
    if (strcasecmp(name, dtype_info[i].name) == 0) {
      *out = (tb_dtype)i;
      return TB_OK;
    }
  }
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
    if (strcasecmp(name, aliases[i].alias) == 0) {
      *out = aliases[i].dtype;
      return TB_OK;
    }
  }
  return tb_error(TB_ERR_NOT_FOUND,
                  "unknown dtype '%s'; valid names are: f64, f32, f16, bf16, fp8_e4m3fn, fp8_e5m2, i64, i32, i16, i8, u8, bool",
                  name);
}
