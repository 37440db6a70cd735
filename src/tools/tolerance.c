/* The tolerance table: how far each (backend, precision, level) may stand from the CPU O0 fp32 reference.
 * Each entry says whether its numbers were measured (and on what) or assumed (and why). docs/validation.md
 * prints the table with the measurements behind it. */
#include <tensorbridge/validate.h>
#include "core/error.h"

#define ANY TB_TOLERANCE_ANY
#define ROW(backend, precision, level, rtol, atol, source, note) \
  {sizeof(tb_tolerance), backend, precision, level, rtol, atol, source, note}

static const char exact[] = "the reference's own kernels and order: bit-identical (0 ULP) on the bundled models";
static const char o1[] = "exact rewrites (Conv+BN folding, fusion): worst seen max abs 7.2e-07, 9481 ULP (encoder), "
                         "3.0e-08 (CNN), seeds 0-7 and the bundled inputs; 0 on 744 conformance models";
static const char o2[] = "fast kernels (blocked GEMM, implicit-GEMM convolution, vectorised exp/erf/tanh): worst seen max "
                         "abs 1.5e-06 (encoder), seeds 0-3 on the bundled models; bound kept loose for blocking orders";
static const char device[] = "OpenCL (PoCL) and Vulkan (lavapipe) kernels, their own summation orders and exp/erf: worst seen "
                             "max abs 1.4e-06 (encoder), 1.2e-06 at O0, seeds 0-3 on the bundled models";
static const char bf16[] = "MatMul/Gemm/Conv/LSTM in bf16 (8 significant bits) with fp32 accumulation: worst seen max abs "
                           "8.2e-03 (encoder), 1.2e-03 (CNN), seeds 0-3 on the bundled models";
static const tb_tolerance table[] = {
    ROW(TB_BACKEND_CPU, TB_PRECISION_FP32, TB_LEVEL_O0, 0, 0, "measured", exact),
    ROW(TB_BACKEND_CPU, TB_PRECISION_FP32, TB_LEVEL_O1, 1e-5, 1e-6, "measured", o1),
    ROW(TB_BACKEND_CPU, TB_PRECISION_FP32, TB_LEVEL_O2, 1e-4, 1e-5, "measured", o2),
    ROW(TB_BACKEND_CPU, TB_PRECISION_FP32, TB_LEVEL_O3, 1e-4, 1e-5, "measured", o2),
    ROW(TB_BACKEND_CPU, TB_PRECISION_BF16, ANY, 1e-2, 1e-2, "measured", bf16),
    ROW(TB_BACKEND_OPENCL, TB_PRECISION_FP32, ANY, 1e-4, 1e-5, "measured", device),
    ROW(TB_BACKEND_VULKAN, TB_PRECISION_FP32, ANY, 1e-4, 1e-5, "measured", device),
    ROW(TB_BACKEND_CUDA, TB_PRECISION_TF32, ANY, 2e-3, 2e-3, "assumed",
        "CUDA products on TF32 tensor cores (11 significant bits of the inputs, fp32 accumulation); assumed until "
        "measured on a GPU"),
    ROW(TB_BACKEND_CUDA, TB_PRECISION_BF16, ANY, 1e-2, 1e-2, "assumed",
        "CUDA products with bf16 inputs, fp32 accumulation and outputs (cuBLASLt or the own kernel): the CPU's bf16 "
        "numbers on the emulator; assumed until measured on a GPU"),
    ROW(TB_BACKEND_CUDA, TB_PRECISION_FP16, ANY, 5e-3, 5e-3, "assumed",
        "CUDA products with fp16 inputs (11 significant bits, 2^-11 = 4.9e-4 per rounding), fp32 accumulation; "
        "sums over long rows need more than one rounding's bound; assumed until measured on a GPU"),
    ROW(TB_BACKEND_CUDA, TB_PRECISION_FP8, ANY, 1.5e-1, 2e-1, "assumed",
        "CUDA products and convolutions (through cuDNN) with fp8 e4m3 inputs and per-tensor scales (4 significant "
        "bits), fp32 accumulation: 0.13 absolute worst seen on the emulated cuda:0 (a 32-long product of values about "
        "1), 0.022 on cnn_small's fp8 convolutions through the fake cuDNN; assumed: the convolutions not measured on a "
        "GPU, nor the products"),
    ROW(ANY, TB_PRECISION_FP32, ANY, 1e-4, 1e-5, "assumed",
        "GPU fp32 kernels (CUDA, ROCm, XPU, TPU) not run here: other summation orders, TF32 off"),
    ROW(ANY, TB_PRECISION_BF16, ANY, 1e-2, 1e-2, "assumed",
        "bf16 keeps 8 significant bits (2^-8 = 3.9e-3 per rounding), fp32 accumulation; not run here but on the CPU"),
    ROW(ANY, TB_PRECISION_FP16, ANY, 1e-3, 1e-3, "assumed",
        "fp16 keeps 11 significant bits (2^-11 = 4.9e-4 per rounding), fp32 accumulation; no fp16 kernels run here yet"),
    ROW(ANY, TB_PRECISION_FP8, ANY, 1.5e-1, 1e-1, "assumed",
        "fp8 e4m3 keeps 4 significant bits (2^-4 = 6.3e-2 per rounding); no fp8 kernels run here yet"),
    ROW(ANY, TB_PRECISION_TF32, ANY, 2e-3, 2e-3, "assumed",
        "tf32 changes only CUDA's products (11 significant bits of the inputs); elsewhere fp32 is computed"),
};

size_t tb_tolerance_count(void) { return sizeof table / sizeof table[0]; }

const tb_tolerance *tb_tolerance_entry(size_t i) { return i < tb_tolerance_count() ? &table[i] : NULL; }

static const tb_tolerance *find(int backend, int precision, int level) {
  for (size_t i = 0; i < tb_tolerance_count(); i++)
    if (table[i].backend == backend && table[i].precision == precision && table[i].level == level) return &table[i];
  return NULL;
}

tb_status tb_tolerance_lookup(tb_backend_kind backend, tb_precision precision, tb_opt_level level, tb_tolerance *out) {
  if (!out || out->size < sizeof *out)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tolerance_lookup: out must not be NULL and out->size must be sizeof(tb_tolerance)");
  if ((unsigned)backend >= TB_BACKEND_COUNT || (unsigned)level > TB_LEVEL_O3 || precision == TB_PRECISION_AUTO ||
      (unsigned)precision > TB_PRECISION_TF32)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_tolerance_lookup: no tolerance for backend %d, precision %d, level %d; give a backend kind, "
                    "a precision other than auto (fp32, bf16, fp16, fp8, tf32) and a level O0..O3",
                    (int)backend, (int)precision, (int)level);
  const tb_tolerance *t = find((int)backend, (int)precision, (int)level);
  if (!t) t = find((int)backend, (int)precision, ANY);
  if (!t) t = find(ANY, (int)precision, (int)level);
  if (!t) t = find(ANY, (int)precision, ANY);
  if (!t) return tb_error(TB_ERR_INTERNAL, "tb_tolerance_lookup: the table has no entry for precision %d", (int)precision);
  *out = *t;
  return TB_OK;
}
