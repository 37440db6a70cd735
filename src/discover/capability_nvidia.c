/* NVIDIA rows of the capability table, keyed by CUDA compute capability ("sm_XY"), and their lookup.
 *
 * dtypes: every CUDA GPU here has hardware f64, f32 and f16 arithmetic, i32, and int8 dot products
 * (dp4a, compute capability 6.1 and up); bf16 arithmetic and TF32 start with 8.0, fp8 with 8.9.
 * FP64 (the feature) means double precision at HPC rate, at least half the fp32 rate. */
#include <stdio.h>
#include "discover/capability.h"

#define DT(x) TB_DTYPE_BIT(TB_DTYPE_##x)
#define FT(x) TB_FEATURE_BIT(TB_FEATURE_##x)

#define CUDA_BASE (DT(F64) | DT(F32) | DT(F16) | DT(I32) | DT(I8) | DT(U8) | DT(BOOL))
#define CUDA_BF16 (CUDA_BASE | DT(BF16))
#define CUDA_FP8 (CUDA_BF16 | DT(FP8_E4M3FN) | DT(FP8_E5M2))

#define GUIDE "CUDA C++ Programming Guide, Compute Capabilities table"
#define THROUGHPUT "CUDA C++ Programming Guide, arithmetic instruction throughput table"
#define FA2 "FlashAttention-2 README and setup.py: Ampere and newer (sm_80, sm_90, sm_100, sm_120 kernels)"
#define TE "Transformer Engine datatype support matrix (bf16 from 8.0, fp8 from 8.9)"

/* Order matters only for listing; the lookup searches by compute capability. */
const tb_capability tb_capability_rows_nvidia[] = {
    {.vendor = "NVIDIA", .key = "sm_70", .architecture = "Volta",
     .dtypes = CUDA_BASE,
     .features = FT(TENSOR_CORES) | FT(FP64),
     .matrix_unit = "1st-gen Tensor Cores (fp16)",
     .memory_type = "HBM2",
     .source = GUIDE " (fp16 tensor cores, no bf16); " THROUGHPUT " (fp64 at half the fp32 rate); "
               "NVIDIA V100 datasheet (HBM2)"},
    {.vendor = "NVIDIA", .key = "sm_72", .architecture = "Volta (Xavier)",
     .dtypes = CUDA_BASE,
     .features = FT(TENSOR_CORES) | FT(UNIFIED_MEMORY),
     .matrix_unit = "1st-gen Tensor Cores (fp16, int8)",
     .memory_type = "LPDDR4x",
     .source = GUIDE "; CUDA C++ Programming Guide, warp matrix functions (integer fragments need 7.2); "
               "NVIDIA Jetson AGX Xavier / Xavier NX module datasheets (integrated GPU sharing LPDDR4x)"},
    {.vendor = "NVIDIA", .key = "sm_75", .architecture = "Turing",
     .dtypes = CUDA_BASE,
     .features = FT(TENSOR_CORES),
     .matrix_unit = "2nd-gen Tensor Cores (fp16, int8, int4)",
     .memory_type = "",
     .source = GUIDE "; NVIDIA Turing architecture whitepaper (int8/int4 tensor cores); " THROUGHPUT
               " (fp64 at 1/32 of fp32)"},
    {.vendor = "NVIDIA", .key = "sm_80", .architecture = "Ampere",
     .dtypes = CUDA_BF16,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FP64) | FT(FLASH_ATTENTION),
     .matrix_unit = "3rd-gen Tensor Cores (fp16, bf16, tf32, fp64, int8, int4)",
     .memory_type = "HBM",
     .source = GUIDE "; NVIDIA A100 Tensor Core GPU architecture whitepaper (bf16, tf32, fp64 tensor cores, "
               "HBM2/HBM2e); " TE "; " FA2},
    {.vendor = "NVIDIA", .key = "sm_86", .architecture = "Ampere",
     .dtypes = CUDA_BF16,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FLASH_ATTENTION),
     .matrix_unit = "3rd-gen Tensor Cores (fp16, bf16, tf32, int8, int4)",
     .memory_type = "",
     .source = GUIDE "; NVIDIA GA102 (Ampere) architecture whitepaper; " THROUGHPUT " (fp64 at 1/64 of fp32); "
               TE "; " FA2},
    {.vendor = "NVIDIA", .key = "sm_87", .architecture = "Ampere (Orin)",
     .dtypes = CUDA_BF16,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FLASH_ATTENTION) | FT(UNIFIED_MEMORY),
     .matrix_unit = "3rd-gen Tensor Cores (fp16, bf16, tf32, int8, int4)",
     .memory_type = "LPDDR5",
     .source = GUIDE "; NVIDIA Jetson AGX Orin / Orin NX / Orin Nano module datasheets (integrated GPU sharing "
               "LPDDR5); " FA2},
    {.vendor = "NVIDIA", .key = "sm_89", .architecture = "Ada Lovelace",
     .dtypes = CUDA_FP8,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FLASH_ATTENTION),
     .matrix_unit = "4th-gen Tensor Cores (fp8 e4m3/e5m2, fp16, bf16, tf32, int8, int4)",
     .memory_type = "",
     .source = GUIDE "; NVIDIA Ada Lovelace architecture whitepaper (fp8 tensor cores); " TE "; " FA2},
    {.vendor = "NVIDIA", .key = "sm_90", .architecture = "Hopper",
     .dtypes = CUDA_FP8,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FP64) | FT(FLASH_ATTENTION),
     .matrix_unit = "4th-gen Tensor Cores (fp8 e4m3/e5m2, fp16, bf16, tf32, fp64, int8), Tensor Memory Accelerator",
     .memory_type = "HBM",
     .source = GUIDE " (TMA from 9.0); NVIDIA H100 Tensor Core GPU architecture whitepaper (fp8, HBM2e/HBM3); "
               TE "; " FA2},
    {.vendor = "NVIDIA", .key = "sm_100", .architecture = "Blackwell",
     .dtypes = CUDA_FP8,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FP64) | FT(FLASH_ATTENTION),
     .matrix_unit = "5th-gen Tensor Cores (fp4 NVFP4/MXFP4, fp6, fp8, fp16, bf16, tf32, fp64, int8), TMA",
     .memory_type = "HBM3e",
     .source = GUIDE "; NVIDIA Blackwell architecture technical brief and B200/GB200 datasheets (fp4/fp6/fp8, "
               "HBM3e); " TE "; " FA2},
    {.vendor = "NVIDIA", .key = "sm_103", .architecture = "Blackwell Ultra",
     .dtypes = CUDA_FP8,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FLASH_ATTENTION),
     .matrix_unit = "5th-gen Tensor Cores (NVFP4, fp6, fp8, fp16, bf16, tf32; fp64 and int8 at a small fraction of "
                    "B200), TMA",
     .memory_type = "HBM3e",
     .source = GUIDE "; NVIDIA Inside Blackwell Ultra technical blog and B300/GB300 datasheets (fp64 cut to about "
               "1.25 TFLOPS, HBM3e); " TE "; " FA2 ", sm_100 code runs on 10.3"},
    {.vendor = "NVIDIA", .key = "sm_120", .architecture = "Blackwell",
     .dtypes = CUDA_FP8,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FLASH_ATTENTION),
     .matrix_unit = "5th-gen Tensor Cores (fp4, fp6, fp8, fp16, bf16, tf32, int8)",
     .memory_type = "",
     .source = GUIDE "; NVIDIA RTX Blackwell GPU architecture whitepaper; TensorRT-RTX support matrix (fp8, fp4 "
               "on 12.0); " THROUGHPUT " (fp64 at 1/64 of fp32); " FA2},
    {.vendor = "NVIDIA", .key = "sm_121", .architecture = "Blackwell (GB10)",
     .dtypes = CUDA_FP8,
     .features = FT(TENSOR_CORES) | FT(TF32) | FT(FLASH_ATTENTION) | FT(UNIFIED_MEMORY),
     .matrix_unit = "5th-gen Tensor Cores (fp4, fp6, fp8, fp16, bf16, tf32, int8)",
     .memory_type = "LPDDR5x",
     .source = GUIDE "; NVIDIA DGX Spark (GB10 superchip) datasheet (GPU shares LPDDR5x with the CPU); " FA2
               ", sm_120 code runs on 12.1"},
};
const size_t tb_capability_rows_nvidia_count = sizeof tb_capability_rows_nvidia / sizeof tb_capability_rows_nvidia[0];

/* "sm_87" -> 87; -1 when the key is not of that form. */
static int row_compute_capability(const tb_capability *row) {
  int value = -1;
  if (sscanf(row->key, "sm_%d", &value) != 1) return -1;
  return value;
}

/* Exact match; else the row of the same major with the highest minor below; else NULL. */
const tb_capability *tb_capability_nvidia(int cc_major, int cc_minor) {
  if (cc_major <= 0 || cc_minor < 0 || cc_minor > 9) return NULL;
  const tb_capability *nearest = NULL;
  int nearest_minor = -1;
  for (size_t i = 0; i < tb_capability_rows_nvidia_count; i++) {
    const tb_capability *row = &tb_capability_rows_nvidia[i];
    int cc = row_compute_capability(row);
    if (cc < 0 || cc / 10 != cc_major) continue;
    int minor = cc % 10;
    if (minor == cc_minor) return row;
    if (minor < cc_minor && minor > nearest_minor) {
      nearest = row;
      nearest_minor = minor;
    }
  }
  return nearest;
}
