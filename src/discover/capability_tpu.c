/* Google TPU rows of the capability table, keyed by generation ("v2" ... "v7"), and their lookup.
 *
 * Every TPU multiplies bf16 in its MXUs (with f32 accumulation) and computes f32 and i32 in its
 * vector unit; none has fp64 or f16 arithmetic. int8 MXU throughput is listed for v5e, v5p and v6e
 * (v4's "275 TFLOPS bf16 or int8" is the bf16 rate, and JAX lists no int8 rate for it); v7 (Ironwood)
 * lists fp8 at twice the bf16 rate and no int8 rate. v6e accepts fp8 only at the bf16 rate, so it
 * does not get the fp8 dtype bits. */
#include <string.h>
#include <strings.h>
#include "discover/capability.h"

#define DT(x) TB_DTYPE_BIT(TB_DTYPE_##x)
#define FT(x) TB_FEATURE_BIT(TB_FEATURE_##x)

#define TPU_BASE (DT(F32) | DT(BF16) | DT(I32) | DT(BOOL))

#define JAX "JAX Pallas TPU hardware reference, tpu_info peak rates"

const tb_capability tb_capability_rows_tpu[] = {
    {.vendor = "Google", .key = "v2", .architecture = "TPU v2",
     .dtypes = TPU_BASE, .features = FT(MXU),
     .matrix_unit = "MXU 128x128 (bf16)", .memory_type = "HBM",
     .source = "Cloud TPU system architecture docs (TPU v2, 16 GB HBM per chip); " JAX},
    {.vendor = "Google", .key = "v3", .architecture = "TPU v3",
     .dtypes = TPU_BASE, .features = FT(MXU),
     .matrix_unit = "MXU 128x128 (bf16)", .memory_type = "HBM2",
     .source = "Cloud TPU v3 docs (2 MXUs per TensorCore, 123 TFLOPS bf16, HBM2); " JAX},
    {.vendor = "Google", .key = "v4", .architecture = "TPU v4",
     .dtypes = TPU_BASE, .features = FT(MXU),
     .matrix_unit = "MXU 128x128 (bf16; int8 at the bf16 rate)", .memory_type = "HBM2",
     .source = "Cloud TPU v4 docs (4 MXUs per TensorCore, 275 TFLOPS bf16 or int8, HBM2); " JAX
               ": no separate int8 rate"},
    {.vendor = "Google", .key = "v5e", .architecture = "TPU v5e",
     .dtypes = TPU_BASE | DT(I8), .features = FT(MXU),
     .matrix_unit = "MXU 128x128 (bf16, int8, int4)", .memory_type = "HBM2",
     .source = "Cloud TPU v5e docs (197 TFLOPS bf16, 393 TOPS int8, HBM2); " JAX},
    {.vendor = "Google", .key = "v5p", .architecture = "TPU v5p",
     .dtypes = TPU_BASE | DT(I8), .features = FT(MXU),
     .matrix_unit = "MXU 128x128 (bf16, int8, int4)", .memory_type = "HBM2e",
     .source = "Cloud TPU v5p docs (459 TFLOPS bf16, HBM2e); " JAX ": 918 TOPS int8"},
    {.vendor = "Google", .key = "v6e", .architecture = "TPU v6e (Trillium)",
     .dtypes = TPU_BASE | DT(I8), .features = FT(MXU),
     .matrix_unit = "MXU 256x256 (bf16, int8, int4; fp8 at the bf16 rate)", .memory_type = "HBM",
     .source = "Cloud TPU v6e docs (918 TFLOPS bf16, 1836 TOPS int8); " JAX},
    {.vendor = "Google", .key = "v7", .architecture = "TPU7x (Ironwood)",
     .dtypes = TPU_BASE | DT(FP8_E4M3FN) | DT(FP8_E5M2), .features = FT(MXU),
     .matrix_unit = "MXU 256x256 (bf16, fp8)", .memory_type = "HBM",
     .source = "Cloud TPU7x (Ironwood) docs (2307 TFLOPS bf16, 4614 TFLOPS fp8, 192 GiB HBM) and Ironwood "
               "performance guide (hardware fp8); " JAX ": no int8 rate"},
};
const size_t tb_capability_rows_tpu_count = sizeof tb_capability_rows_tpu / sizeof tb_capability_rows_tpu[0];

/* Other names the same generations go by (Cloud accelerator types, code names). */
static const struct {
  const char *alias, *key;
} tpu_aliases[] = {
    {"v5litepod", "v5e"}, {"v5lite", "v5e"}, {"trillium", "v6e"},
    {"tpu7x", "v7"},      {"v7x", "v7"},     {"ironwood", "v7"},
};

/* Case-insensitive generation or alias, optionally followed by "-<chips>" as in "v5p-8". */
const tb_capability *tb_capability_tpu(const char *generation) {
  if (!generation) return NULL;
  size_t len = strcspn(generation, "-");
  if (generation[len] == '-') {
    const char *count = generation + len + 1;
    if (*count == '\0' || strspn(count, "0123456789") != strlen(count)) return NULL;
  }
  const char *key = NULL;
  for (size_t i = 0; i < sizeof tpu_aliases / sizeof tpu_aliases[0] && !key; i++)
    if (strlen(tpu_aliases[i].alias) == len && strncasecmp(generation, tpu_aliases[i].alias, len) == 0)
      key = tpu_aliases[i].key;
  for (size_t i = 0; i < tb_capability_rows_tpu_count; i++) {
    const tb_capability *row = &tb_capability_rows_tpu[i];
    if (key ? strcmp(row->key, key) == 0
            : strlen(row->key) == len && strncasecmp(generation, row->key, len) == 0)
      return row;
  }
  return NULL;
}
