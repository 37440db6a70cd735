/* AMD rows of the capability table, keyed by gfx target, and their lookup.
 *
 * A gfx target is "gfx" + major (decimal) + minor (one hex digit) + stepping (one hex digit):
 * gfx90a is 9.0.a, gfx942 is 9.4.2, gfx1032 is 10.3.2. Anything after a ':' (":sramecc+:xnack-")
 * is ignored. A row covers one major.minor and a range of steppings, so gfx1032 finds the RDNA2
 * row (10.3, steppings 0-6). An id outside every range is not in the table (NULL).
 *
 * dtypes: every AMD GPU here has hardware f64, f32, packed f16 and i32, and int8 dot products
 * (v_dot4 on gfx908 and gfx10.3+, MFMA/WMMA int8 on CDNA and RDNA3+). bf16 arithmetic needs MFMA
 * (CDNA) or WMMA/dot2 bf16 (RDNA3+): RDNA2 has none. CDNA3's fp8 is the FNUZ variant (no infinities,
 * no negative zero, NaN encoded as 0x80, exponent bias one higher), which is not the OCP e4m3fn/e5m2
 * our fp8 dtypes mean: a tensor would need converting, so gfx942 does not get the fp8 dtype bits
 * and the matrix-unit text says "fp8 FNUZ". CDNA4 and RDNA4 use the OCP formats. */
#include <stdbool.h>
#include <string.h>
#include <strings.h>
#include "discover/capability.h"

#define DT(x) TB_DTYPE_BIT(TB_DTYPE_##x)
#define FT(x) TB_FEATURE_BIT(TB_FEATURE_##x)

#define AMD_BASE (DT(F64) | DT(F32) | DT(F16) | DT(I32) | DT(I8) | DT(U8) | DT(BOOL))
#define AMD_BF16 (AMD_BASE | DT(BF16))
#define AMD_OCP_FP8 (AMD_BF16 | DT(FP8_E4M3FN) | DT(FP8_E5M2))

#define PRECISION "AMD ROCm data types and precision support, matrix core table"
#define FA2_CK "FlashAttention-2 README (ROCm composable_kernel backend: MI200, MI300, MI355)"
#define FA2_TRITON "FlashAttention-2 README (ROCm Triton backend: CDNA and RDNA GPUs; marked for RDNA3 and newer, " \
                   "which have WMMA)"

const tb_capability tb_capability_rows_amd[] = {
    {.vendor = "AMD", .key = "gfx908", .architecture = "CDNA1",
     .dtypes = AMD_BF16,
     .features = FT(MATRIX_CORES) | FT(FP64),
     .matrix_unit = "Matrix Cores (MFMA: fp32, fp16, bf16, int8)",
     .memory_type = "HBM2",
     .source = "AMD Instinct MI100 CDNA1 ISA reference guide (MFMA); " PRECISION ": no fp64 or fp8 MFMA on CDNA1; "
               "AMD Instinct MI100 datasheet (fp64 at half the fp32 rate, HBM2)"},
    {.vendor = "AMD", .key = "gfx90a", .architecture = "CDNA2",
     .dtypes = AMD_BF16,
     .features = FT(MATRIX_CORES) | FT(FP64) | FT(FLASH_ATTENTION),
     .matrix_unit = "Matrix Cores (MFMA: fp64, fp32, fp16, bf16, int8)",
     .memory_type = "HBM2e",
     .source = "AMD Instinct MI200 CDNA2 ISA reference guide; " PRECISION ": fp64 MFMA, no fp8; "
               "AMD Instinct MI210/MI250/MI250X datasheets (HBM2e); " FA2_CK},
    {.vendor = "AMD", .key = "gfx942", .architecture = "CDNA3",
     .dtypes = AMD_BF16,
     .features = FT(MATRIX_CORES) | FT(FP64) | FT(TF32) | FT(FLASH_ATTENTION),
     .matrix_unit = "Matrix Cores (MFMA: fp8 FNUZ e4m3fnuz/e5m2fnuz, xf32, fp64, fp32, fp16, bf16, int8)",
     .memory_type = "HBM3",
     .source = "AMD Instinct MI300 CDNA3 ISA reference guide (xf32 and FNUZ fp8 MFMA); " PRECISION
               ": CDNA3 fp8 is FNUZ, not our OCP fp8 dtypes; AMD Instinct MI300X/MI300A datasheets (HBM3; "
               "MI325X, also gfx942, has HBM3E); " FA2_CK},
    {.vendor = "AMD", .key = "gfx950", .architecture = "CDNA4",
     .dtypes = AMD_OCP_FP8,
     .features = FT(MATRIX_CORES) | FT(FP64) | FT(FLASH_ATTENTION),
     .matrix_unit = "Matrix Cores (MFMA: fp4, fp6, OCP fp8 e4m3/e5m2, fp64, fp16, bf16, int8)",
     .memory_type = "HBM3E",
     .source = "AMD Instinct MI350 CDNA4 ISA reference guide; LLVM AMDGPU backend (xf32 MFMA on gfx942 only, so "
               "no TF32 here); " PRECISION
               ": OCP fp8, fp6, fp4; AMD Instinct MI350X/MI355X datasheets (HBM3E); " FA2_CK},
    {.vendor = "AMD", .key = "gfx103x", .architecture = "RDNA2",
     .dtypes = AMD_BASE,
     .features = 0,
     .matrix_unit = "",
     .memory_type = "",
     .source = "AMD RDNA2 ISA reference guide; LLVM AMDGPU target features of gfx1030-gfx1036 (dot1, dot2, dot5-7: "
               "packed fp16 and int8 dot products; no WMMA, no bf16 arithmetic)"},
    {.vendor = "AMD", .key = "gfx110x", .architecture = "RDNA3",
     .dtypes = AMD_BF16,
     .features = FT(MATRIX_CORES) | FT(FLASH_ATTENTION),
     .matrix_unit = "AI Accelerators (WMMA: fp16, bf16, int8, int4)",
     .memory_type = "",
     .source = "AMD RDNA3 ISA reference guide (WMMA, no fp8); " PRECISION "; " FA2_TRITON},
    {.vendor = "AMD", .key = "gfx115x", .architecture = "RDNA3.5",
     .dtypes = AMD_BF16,
     .features = FT(MATRIX_CORES) | FT(FLASH_ATTENTION) | FT(UNIFIED_MEMORY),
     .matrix_unit = "AI Accelerators (WMMA: fp16, bf16, int8, int4)",
     .memory_type = "",
     .source = "AMD RDNA3.5 ISA reference guide (WMMA as RDNA3); LLVM AMDGPU processor table (gfx1150-gfx1153, "
               "APU graphics only: Strix Point, Strix Halo, Krackan Point); " PRECISION "; " FA2_TRITON},
    {.vendor = "AMD", .key = "gfx120x", .architecture = "RDNA4",
     .dtypes = AMD_OCP_FP8,
     .features = FT(MATRIX_CORES) | FT(FLASH_ATTENTION),
     .matrix_unit = "AI Accelerators (WMMA: OCP fp8 e4m3/e5m2, fp16, bf16, int8, int4)",
     .memory_type = "",
     .source = "AMD RDNA4 ISA reference guide (WMMA with OCP fp8); " PRECISION ": RDNA4 fp8 is OCP; "
               FA2_TRITON},
};
const size_t tb_capability_rows_amd_count = sizeof tb_capability_rows_amd / sizeof tb_capability_rows_amd[0];

/* Which gfx targets each row covers: major.minor and a stepping range (index into the rows above). */
static const struct {
  int major, minor, step_lo, step_hi;
  size_t row;
} amd_spans[] = {
    {9, 0, 0x8, 0x8, 0},  /* gfx908 */
    {9, 0, 0xa, 0xa, 1},  /* gfx90a */
    {9, 4, 0x0, 0x2, 2},  /* gfx940, gfx941, gfx942 */
    {9, 5, 0x0, 0x0, 3},  /* gfx950 */
    {10, 3, 0x0, 0x6, 4}, /* gfx1030 - gfx1036 */
    {11, 0, 0x0, 0x3, 5}, /* gfx1100 - gfx1103 */
    {11, 5, 0x0, 0x3, 6}, /* gfx1150 - gfx1153 */
    {12, 0, 0x0, 0x1, 7}, /* gfx1200, gfx1201 */
};

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Split "gfx90a" into 9, 0, 0xa. False for anything that is not of that form. */
static bool parse_gfx_target(const char *target, int *major, int *minor, int *stepping) {
  if (!target || strncasecmp(target, "gfx", 3) != 0) return false;
  const char *digits = target + 3;
  size_t len = strcspn(digits, ":");
  if (len < 3 || len > 5) return false; /* 1-3 major digits, then minor and stepping */
  int value = 0;
  for (size_t i = 0; i + 2 < len; i++) {
    if (digits[i] < '0' || digits[i] > '9') return false;
    value = value * 10 + (digits[i] - '0');
  }
  *major = value;
  *minor = hex_digit(digits[len - 2]);
  *stepping = hex_digit(digits[len - 1]);
  return *minor >= 0 && *stepping >= 0;
}

const tb_capability *tb_capability_amd(const char *gfx_target) {
  int major, minor, stepping;
  if (!parse_gfx_target(gfx_target, &major, &minor, &stepping)) return NULL;
  for (size_t i = 0; i < sizeof amd_spans / sizeof amd_spans[0]; i++) {
    if (amd_spans[i].major == major && amd_spans[i].minor == minor && stepping >= amd_spans[i].step_lo &&
        stepping <= amd_spans[i].step_hi)
      return &tb_capability_rows_amd[amd_spans[i].row];
  }
  return NULL;
}
