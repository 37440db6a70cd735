/* The capability table as one list (NVIDIA, AMD, Intel, Google rows from capability_<vendor>.c),
 * applying a row to a device, the CPU's dtypes, and the public accessor for `tb info --capabilities`.
 * docs/capabilities.md lists every row; a unit test keeps the two in step. */
#include "discover/capability.h"
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"

/* Defined in capability_nvidia.c, capability_amd.c, capability_intel.c and capability_tpu.c. */
extern const tb_capability tb_capability_rows_nvidia[], tb_capability_rows_amd[], tb_capability_rows_intel[],
    tb_capability_rows_tpu[];
extern const size_t tb_capability_rows_nvidia_count, tb_capability_rows_amd_count, tb_capability_rows_intel_count,
    tb_capability_rows_tpu_count;

#define UNKNOWN_SOURCE "unknown architecture: not in the capability table"

static const struct {
  const tb_capability *rows;
  const size_t *count;
} vendor_tables[] = {
    {tb_capability_rows_nvidia, &tb_capability_rows_nvidia_count},
    {tb_capability_rows_amd, &tb_capability_rows_amd_count},
    {tb_capability_rows_intel, &tb_capability_rows_intel_count},
    {tb_capability_rows_tpu, &tb_capability_rows_tpu_count},
};

size_t tb_capability_count(void) {
  size_t total = 0;
  for (size_t v = 0; v < sizeof vendor_tables / sizeof vendor_tables[0]; v++) total += *vendor_tables[v].count;
  return total;
}

const tb_capability *tb_capability_at(size_t i) {
  for (size_t v = 0; v < sizeof vendor_tables / sizeof vendor_tables[0]; v++) {
    if (i < *vendor_tables[v].count) return &vendor_tables[v].rows[i];
    i -= *vendor_tables[v].count;
  }
  return NULL;
}

/* An NVIDIA row found by falling back to a lower minor ("sm_87" for a device of compute capability
 * 8.8): the architecture's dtypes and units carry over, the product's memory facts do not. */
static bool is_nearest_lower_match(const tb_device_info *dev, const tb_capability *row) {
  int cc = 0;
  if (strcmp(row->vendor, "NVIDIA") != 0 || dev->compute_major <= 0) return false;
  if (sscanf(row->key, "sm_%d", &cc) != 1) return false;
  return cc != dev->compute_major * 10 + dev->compute_minor;
}

void tb_capability_apply(tb_device_list *list, tb_device_info *dev, const tb_capability *row) {
  if (!dev) return;
  if (!row) {
    dev->capability_source = UNKNOWN_SOURCE;
    dev->dtypes = TB_DTYPE_BIT(TB_DTYPE_F32); /* the one dtype every compute API guarantees */
    return;
  }
  bool nearest = is_nearest_lower_match(dev, row);
  dev->architecture = row->architecture;
  if (!dev->arch_id || !dev->arch_id[0]) dev->arch_id = row->key;
  dev->dtypes = row->dtypes;
  uint64_t features = row->features;
  if (nearest) features &= ~TB_FEATURE_BIT(TB_FEATURE_UNIFIED_MEMORY);
  dev->features |= features;
  if (!nearest && row->memory_type[0] && (!dev->memory_type || !dev->memory_type[0]))
    dev->memory_type = row->memory_type;
  dev->capability_source = row->source;
  if (!list) return;
  if (nearest)
    tb_dev_set(list, &dev->capability_source,
               "%s; compute capability %d.%d is not in the table: using %s, the nearest lower one of the same "
               "major, without its memory type or unified memory",
               row->source, dev->compute_major, dev->compute_minor, row->key);
  tb_dev_prop(list, dev, "matrix_unit", "%s", row->matrix_unit[0] ? row->matrix_unit : "none");
  tb_dev_prop(list, dev, "capability_key", "%s", row->key);
}

tb_dtype_set tb_capability_cpu_dtypes(uint64_t features) {
  tb_dtype_set set = TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_I64) |
                     TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_I16) | TB_DTYPE_BIT(TB_DTYPE_I8) |
                     TB_DTYPE_BIT(TB_DTYPE_U8) | TB_DTYPE_BIT(TB_DTYPE_BOOL);
  if (features & (TB_FEATURE_BIT(TB_FEATURE_AVX512BF16) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16)))
    set |= TB_DTYPE_BIT(TB_DTYPE_BF16);
  /* x86: AVX512-FP16. aarch64: half-precision arithmetic is FEAT_FP16 (Armv8.2), for which there is no
   * feature bit; NEON stands in for it, which overstates Armv8.0 cores (Cortex-A53/A72). */
  if (features & (TB_FEATURE_BIT(TB_FEATURE_AVX512FP16) | TB_FEATURE_BIT(TB_FEATURE_NEON)))
    set |= TB_DTYPE_BIT(TB_DTYPE_F16);
  return set;
}

size_t tb_capability_table_count(void) { return tb_capability_count(); }

tb_status tb_capability_table_get(size_t i, tb_capability_row *out) {
  if (!out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_capability_table_get: out must not be NULL");
  if (out->size < sizeof(tb_capability_row))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_capability_table_get: out->size is %zu but tb_capability_row needs %zu; set out->size = "
                    "sizeof(tb_capability_row) before the call",
                    out->size, sizeof(tb_capability_row));
  const tb_capability *row = tb_capability_at(i);
  if (!row)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_capability_table_get: row %zu does not exist; the table has %zu rows",
                    i, tb_capability_count());
  out->vendor = row->vendor;
  out->key = row->key;
  out->architecture = row->architecture;
  out->dtypes = row->dtypes;
  out->features = row->features;
  out->matrix_unit = row->matrix_unit;
  out->memory_type = row->memory_type;
  out->source = row->source;
  return TB_OK;
}
