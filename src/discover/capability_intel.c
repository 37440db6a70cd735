/* Intel GPU rows of the capability table, keyed by architecture, and the PCI device id -> architecture
 * sub-table that the lookup uses.
 *
 * The ids come from the Linux kernel's include/drm/intel/pciids.h (the same lists Mesa's
 * include/pci_ids/iris_pci_ids.h carries). A range may span ids Intel has not used yet; those are
 * taken to be the same family. An id in no range is not in the table (NULL): older Gen9/Gen11
 * graphics, DG1 (0x4905-0x4909) and Xe3 (Panther Lake) are not listed.
 *
 * dtypes: fp64 hardware exists on Xe-HPC, Xe-LPG/LPG+ (through the math pipe) and Xe2 (Mesa
 * intel_device_info: has_64bit_float); Xe-LP and Xe-HPG have none. int8 comes from DP4a (Xe-LP and
 * newer) and XMX; bf16 arithmetic only from XMX (DPAS). TF32 is an Xe-HPC XMX type only. */
#include "discover/capability.h"
#include <string.h>

#define DT(x) TB_DTYPE_BIT(TB_DTYPE_##x)
#define FT(x) TB_FEATURE_BIT(TB_FEATURE_##x)

#define XE_BASE (DT(F32) | DT(F16) | DT(I32) | DT(I8) | DT(U8) | DT(BOOL))
#define XE_XMX (XE_BASE | DT(BF16))

#define PCIIDS "Linux include/drm/intel/pciids.h"
#define MESA "Mesa src/intel/dev/intel_device_info.c"
#define SYCL_MATRIX "SYCL joint_matrix extension spec, Intel XMX supported combinations"

const tb_capability tb_capability_rows_intel[] = {
    {.vendor = "Intel", .key = "xe-hpc", .architecture = "Xe-HPC",
     .dtypes = XE_XMX | DT(F64),
     .features = FT(XMX) | FT(TF32) | FT(FP64),
     .matrix_unit = "XMX (DPAS: tf32, fp16, bf16, int8)",
     .memory_type = "HBM2e",
     .source = "Intel oneAPI GPU optimization guide (XMX); Intel Data Center GPU Max Series product brief (fp64 at "
               "the fp32 rate, tf32 XMX, HBM2e); " PCIIDS " (Ponte Vecchio)"},
    {.vendor = "Intel", .key = "xe-hpg", .architecture = "Xe-HPG",
     .dtypes = XE_XMX,
     .features = FT(XMX),
     .matrix_unit = "XMX (DPAS: fp16, bf16, int8, int4)",
     .memory_type = "",
     .source = "Intel oneAPI GPU optimization guide (XMX); " SYCL_MATRIX " (dg2: no tf32); " MESA
               " (no fp64 on DG2); " PCIIDS " (Alchemist DG2, Flex ATS-M)"},
    {.vendor = "Intel", .key = "xe2", .architecture = "Xe2",
     .dtypes = XE_XMX | DT(F64),
     .features = FT(XMX),
     .matrix_unit = "XMX (DPAS: fp16, bf16, int8, int4)",
     .memory_type = "",
     .source = "Intel oneAPI GPU optimization guide (XMX); " SYCL_MATRIX " (bmg, lnl); " MESA
               " (Xe2 has fp64); " PCIIDS " (Battlemage, Lunar Lake)"},
    {.vendor = "Intel", .key = "xe-lpg-plus", .architecture = "Xe-LPG+",
     .dtypes = XE_XMX | DT(F64),
     .features = FT(XMX) | FT(UNIFIED_MEMORY),
     .matrix_unit = "XMX (DPAS: fp16, bf16, int8)",
     .memory_type = "",
     .source = SYCL_MATRIX " (arl_h has XMX); " MESA " (fp64 through the math pipe); " PCIIDS
               " (Arrow Lake-H, graphics IP 12.74; integrated)"},
    {.vendor = "Intel", .key = "xe-lpg", .architecture = "Xe-LPG",
     .dtypes = XE_BASE | DT(F64),
     .features = FT(UNIFIED_MEMORY),
     .matrix_unit = "",
     .memory_type = "",
     .source = "Intel oneAPI GPU optimization guide (no XMX on Xe-LPG: DP4a only); " MESA
               " (fp64 through the math pipe); " PCIIDS " (Meteor Lake, Arrow Lake-U/S; integrated)"},
    {.vendor = "Intel", .key = "xe-lp", .architecture = "Xe-LP",
     .dtypes = XE_BASE,
     .features = FT(UNIFIED_MEMORY),
     .matrix_unit = "",
     .memory_type = "",
     .source = "Intel oneAPI GPU optimization guide (Xe-LP: DP4a int8, no XMX); " MESA " (no fp64 on Gen12); " PCIIDS
               " (Tiger Lake, Rocket Lake, Alder Lake, Raptor Lake; integrated)"},
};
const size_t tb_capability_rows_intel_count = sizeof tb_capability_rows_intel / sizeof tb_capability_rows_intel[0];

/* PCI device id ranges (inclusive) -> row key. Exact ids come before the ranges they sit in. */
static const struct {
  uint16_t first, last;
  const char *key;
} intel_ids[] = {
    {0x0b69, 0x0b69, "xe-hpc"},      {0x0b6e, 0x0b6e, "xe-hpc"},      {0x0bd0, 0x0bdb, "xe-hpc"},
    {0x0be0, 0x0be5, "xe-hpc"},      /* Ponte Vecchio */
    {0x5690, 0x5697, "xe-hpg"},      {0x56a0, 0x56c2, "xe-hpg"},      /* DG2 mobile, desktop, Pro, ATS-M */
    {0xe202, 0xe216, "xe2"},         {0xe220, 0xe223, "xe2"},         /* Battlemage */
    {0x6420, 0x6420, "xe2"},         {0x64a0, 0x64a0, "xe2"},         {0x64b0, 0x64b0, "xe2"}, /* Lunar Lake */
    {0x7d51, 0x7d51, "xe-lpg-plus"}, {0x7dd1, 0x7dd1, "xe-lpg-plus"}, /* Arrow Lake-H */
    {0x7d40, 0x7d41, "xe-lpg"},      {0x7d45, 0x7d45, "xe-lpg"},      {0x7d55, 0x7d55, "xe-lpg"},
    {0x7d60, 0x7d60, "xe-lpg"},      {0x7d67, 0x7d67, "xe-lpg"},      {0x7dd5, 0x7dd5, "xe-lpg"},
    {0xb640, 0xb640, "xe-lpg"},      /* Meteor Lake, Arrow Lake-U/S */
    {0x9a40, 0x9aff, "xe-lp"},       /* Tiger Lake */
    {0x4c80, 0x4c9a, "xe-lp"},       /* Rocket Lake */
    {0x4626, 0x462a, "xe-lp"},       {0x4680, 0x46ff, "xe-lp"},       /* Alder Lake S/P/N */
    {0xa720, 0xa721, "xe-lp"},       {0xa780, 0xa7ff, "xe-lp"},       /* Raptor Lake S/P/U */
};

const tb_capability *tb_capability_intel(uint16_t pci_device_id) {
  for (size_t i = 0; i < sizeof intel_ids / sizeof intel_ids[0]; i++) {
    if (pci_device_id < intel_ids[i].first || pci_device_id > intel_ids[i].last) continue;
    for (size_t r = 0; r < tb_capability_rows_intel_count; r++)
      if (strcmp(tb_capability_rows_intel[r].key, intel_ids[i].key) == 0) return &tb_capability_rows_intel[r];
    return NULL; /* unreachable while every key above has a row; the unit test checks that */
  }
  return NULL;
}
