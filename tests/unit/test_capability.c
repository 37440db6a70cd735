/* The capability table: completeness of every row, lookups by compute capability, gfx target, Intel
 * PCI id and TPU generation (with their fallbacks and bad ids), key dtype/feature facts, applying a
 * row to a device, CPU dtypes, the public accessor, and docs/capabilities.md matching the code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "discover/capability.h"
#include "test_util.h"

#define DT(x) TB_DTYPE_BIT(TB_DTYPE_##x)
#define FT(x) TB_FEATURE_BIT(TB_FEATURE_##x)

static const uint64_t accelerator_features = FT(TENSOR_CORES) | FT(MATRIX_CORES) | FT(XMX) | FT(MXU) | FT(TF32) |
                                             FT(FLASH_ATTENTION) | FT(UNIFIED_MEMORY) | FT(FP64);

static void every_row_is_complete(void **state) {
  (void)state;
  size_t count = tb_capability_count();
  assert_true(count >= 30);
  for (size_t i = 0; i < count; i++) {
    const tb_capability *row = tb_capability_at(i);
    assert_non_null(row);
    if (!row->vendor[0] || !row->key[0] || !row->architecture[0] || !row->source[0])
      fail_msg("row %zu (%s) has an empty vendor, key, architecture or source", i, row->key);
    assert_non_null(row->matrix_unit);
    assert_non_null(row->memory_type);
    if (!(row->dtypes & DT(F32))) fail_msg("row %s lacks f32", row->key);
    if (!(row->dtypes & DT(I32))) fail_msg("row %s lacks i32", row->key);
    if (row->features & ~accelerator_features) fail_msg("row %s has a CPU feature bit", row->key);
    if (row->dtypes >> TB_DTYPE_COUNT) fail_msg("row %s has a dtype bit out of range", row->key);
    assert_true(strcmp(row->vendor, "NVIDIA") == 0 || strcmp(row->vendor, "AMD") == 0 ||
                strcmp(row->vendor, "Intel") == 0 || strcmp(row->vendor, "Google") == 0);
    /* a matrix-unit feature goes with a matrix-unit description, and the other way round */
    bool has_unit = row->features & (FT(TENSOR_CORES) | FT(MATRIX_CORES) | FT(XMX) | FT(MXU));
    if (has_unit != (row->matrix_unit[0] != '\0')) fail_msg("row %s: matrix unit text and bits disagree", row->key);
    for (size_t j = 0; j < i; j++)
      if (strcmp(tb_capability_at(j)->key, row->key) == 0) fail_msg("key %s appears twice", row->key);
  }
  assert_null(tb_capability_at(count));
  assert_null(tb_capability_at((size_t)-1));
}

static void expect_nvidia(int major, int minor, const char *key, const char *arch) {
  const tb_capability *row = tb_capability_nvidia(major, minor);
  if (!row) fail_msg("compute capability %d.%d: no row, expected %s", major, minor, key);
  assert_string_equal(row->key, key);
  assert_string_equal(row->architecture, arch);
  assert_string_equal(row->vendor, "NVIDIA");
}

static void nvidia_lookups(void **state) {
  (void)state;
  expect_nvidia(7, 0, "sm_70", "Volta");
  expect_nvidia(7, 2, "sm_72", "Volta (Xavier)");
  expect_nvidia(7, 5, "sm_75", "Turing");
  expect_nvidia(8, 0, "sm_80", "Ampere");
  expect_nvidia(8, 6, "sm_86", "Ampere");
  expect_nvidia(8, 7, "sm_87", "Ampere (Orin)");
  expect_nvidia(8, 9, "sm_89", "Ada Lovelace");
  expect_nvidia(9, 0, "sm_90", "Hopper");
  expect_nvidia(10, 0, "sm_100", "Blackwell");
  expect_nvidia(10, 3, "sm_103", "Blackwell Ultra");
  expect_nvidia(12, 0, "sm_120", "Blackwell");
  expect_nvidia(12, 1, "sm_121", "Blackwell (GB10)");
  /* fallback: same major, highest minor below */
  expect_nvidia(8, 8, "sm_87", "Ampere (Orin)");
  expect_nvidia(9, 5, "sm_90", "Hopper");
  expect_nvidia(10, 1, "sm_100", "Blackwell");
  expect_nvidia(7, 1, "sm_70", "Volta");
  /* not in the table */
  assert_null(tb_capability_nvidia(6, 1)); /* Pascal */
  assert_null(tb_capability_nvidia(5, 2));
  assert_null(tb_capability_nvidia(11, 0)); /* no row of major 11 */
  assert_null(tb_capability_nvidia(0, 0));
  assert_null(tb_capability_nvidia(-1, 0));
  assert_null(tb_capability_nvidia(9, -1));
  assert_null(tb_capability_nvidia(9, 10));
  assert_null(tb_capability_nvidia(99, 0));
}

static void nvidia_facts(void **state) {
  (void)state;
  const tb_capability *volta = tb_capability_nvidia(7, 0);
  assert_true(volta->dtypes & DT(F16));
  assert_false(volta->dtypes & DT(BF16));
  assert_false(volta->dtypes & DT(FP8_E4M3FN));
  assert_true(volta->features & FT(TENSOR_CORES));
  assert_true(volta->features & FT(FP64));
  assert_false(volta->features & FT(TF32));
  assert_false(volta->features & FT(FLASH_ATTENTION));
  assert_string_equal(volta->memory_type, "HBM2");

  const tb_capability *turing = tb_capability_nvidia(7, 5);
  assert_false(turing->dtypes & DT(BF16));
  assert_true(turing->dtypes & DT(I8));
  TB_ASSERT_CONTAINS(turing->matrix_unit, "int8");
  assert_false(turing->features & FT(FP64));
  assert_string_equal(turing->memory_type, "");

  const tb_capability *ampere = tb_capability_nvidia(8, 0);
  assert_true(ampere->dtypes & DT(BF16));
  assert_true(ampere->features & FT(TF32));
  assert_true(ampere->features & FT(FP64));
  assert_true(ampere->features & FT(FLASH_ATTENTION));
  assert_false(ampere->dtypes & DT(FP8_E4M3FN));
  TB_ASSERT_CONTAINS(ampere->source, "FlashAttention-2");
  TB_ASSERT_CONTAINS(ampere->source, "Ampere and newer");

  const tb_capability *ga102 = tb_capability_nvidia(8, 6);
  assert_false(ga102->features & FT(FP64));
  assert_true(ga102->features & FT(FLASH_ATTENTION));

  const tb_capability *orin = tb_capability_nvidia(8, 7);
  assert_true(orin->features & FT(UNIFIED_MEMORY));
  assert_string_equal(orin->memory_type, "LPDDR5");

  const tb_capability *ada = tb_capability_nvidia(8, 9);
  assert_true(ada->dtypes & DT(FP8_E4M3FN));
  assert_true(ada->dtypes & DT(FP8_E5M2));

  const tb_capability *hopper = tb_capability_nvidia(9, 0);
  assert_int_equal(hopper->dtypes, DT(F64) | DT(F32) | DT(F16) | DT(BF16) | DT(FP8_E4M3FN) | DT(FP8_E5M2) |
                                       DT(I32) | DT(I8) | DT(U8) | DT(BOOL));
  assert_int_equal(hopper->features, FT(TENSOR_CORES) | FT(TF32) | FT(FP64) | FT(FLASH_ATTENTION));
  TB_ASSERT_CONTAINS(hopper->matrix_unit, "Tensor Memory Accelerator");
  TB_ASSERT_CONTAINS(hopper->source, "CUDA C++ Programming Guide");

  const tb_capability *b200 = tb_capability_nvidia(10, 0), *b300 = tb_capability_nvidia(10, 3);
  TB_ASSERT_CONTAINS(b200->matrix_unit, "fp4");
  assert_true(b200->features & FT(FP64));
  assert_false(b300->features & FT(FP64));
  assert_string_equal(b300->memory_type, "HBM3e");

  const tb_capability *rtx50 = tb_capability_nvidia(12, 0), *spark = tb_capability_nvidia(12, 1);
  assert_true(rtx50->dtypes & DT(FP8_E4M3FN));
  assert_false(rtx50->features & FT(UNIFIED_MEMORY));
  assert_true(spark->features & FT(UNIFIED_MEMORY));
}

static void expect_amd(const char *target, const char *key, const char *arch) {
  const tb_capability *row = tb_capability_amd(target);
  if (!row) fail_msg("gfx target %s: no row, expected %s", target, key);
  assert_string_equal(row->key, key);
  assert_string_equal(row->architecture, arch);
  assert_string_equal(row->vendor, "AMD");
}

static void amd_lookups(void **state) {
  (void)state;
  expect_amd("gfx908", "gfx908", "CDNA1");
  expect_amd("gfx90a", "gfx90a", "CDNA2");
  expect_amd("gfx90a:sramecc+:xnack-", "gfx90a", "CDNA2");
  expect_amd("gfx940", "gfx942", "CDNA3");
  expect_amd("gfx942", "gfx942", "CDNA3");
  expect_amd("GFX942", "gfx942", "CDNA3");
  expect_amd("gfx950", "gfx950", "CDNA4");
  expect_amd("gfx1030", "gfx103x", "RDNA2");
  expect_amd("gfx1032", "gfx103x", "RDNA2");
  expect_amd("gfx1036", "gfx103x", "RDNA2");
  expect_amd("gfx1100", "gfx110x", "RDNA3");
  expect_amd("gfx1103", "gfx110x", "RDNA3");
  expect_amd("gfx1150", "gfx115x", "RDNA3.5");
  expect_amd("gfx1151", "gfx115x", "RDNA3.5");
  expect_amd("gfx1200", "gfx120x", "RDNA4");
  expect_amd("gfx1201", "gfx120x", "RDNA4");
  static const char *const unknown[] = {"gfx",     "",        "gfx99999", "gfx906",  "gfx1010", "gfx1037",
                                        "gfx1104", "gfx1202", "gfx9x2",   "gfx1",    "gfx90",   "942",
                                        "gpu942",  "gfx943",  "gfx-942",  "gfx94g",  ":gfx942", "gfx123456"};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    if (tb_capability_amd(unknown[i])) fail_msg("gfx target \"%s\" should not be in the table", unknown[i]);
  assert_null(tb_capability_amd(NULL));
}

static void amd_facts(void **state) {
  (void)state;
  const tb_capability *cdna1 = tb_capability_amd("gfx908"), *cdna2 = tb_capability_amd("gfx90a");
  const tb_capability *cdna3 = tb_capability_amd("gfx942"), *cdna4 = tb_capability_amd("gfx950");
  const tb_capability *rdna2 = tb_capability_amd("gfx1031"), *rdna3 = tb_capability_amd("gfx1100");
  const tb_capability *rdna35 = tb_capability_amd("gfx1151"), *rdna4 = tb_capability_amd("gfx1201");
  assert_false(cdna1->features & FT(FLASH_ATTENTION));
  assert_true(cdna1->features & FT(MATRIX_CORES));
  assert_false(cdna2->dtypes & (DT(FP8_E4M3FN) | DT(FP8_E5M2)));
  assert_true(cdna2->dtypes & DT(BF16));
  assert_true(cdna2->features & FT(FP64));
  assert_true(cdna2->features & FT(FLASH_ATTENTION));
  assert_string_equal(cdna2->memory_type, "HBM2e");
  /* CDNA3's fp8 is FNUZ: no OCP fp8 bits, said in the text */
  assert_false(cdna3->dtypes & (DT(FP8_E4M3FN) | DT(FP8_E5M2)));
  TB_ASSERT_CONTAINS(cdna3->matrix_unit, "FNUZ");
  assert_true(cdna3->features & FT(TF32));
  assert_string_equal(cdna3->memory_type, "HBM3");
  assert_true(cdna4->dtypes & DT(FP8_E4M3FN));
  assert_true(cdna4->dtypes & DT(FP8_E5M2));
  assert_false(cdna4->features & FT(TF32));
  assert_string_equal(cdna4->memory_type, "HBM3E");
  assert_int_equal(rdna2->features, 0);
  assert_false(rdna2->dtypes & DT(BF16));
  assert_true(rdna2->dtypes & DT(I8));
  assert_string_equal(rdna2->matrix_unit, "");
  assert_true(rdna3->features & FT(MATRIX_CORES));
  assert_true(rdna3->dtypes & DT(BF16));
  assert_false(rdna3->dtypes & DT(FP8_E4M3FN));
  assert_false(rdna3->features & FT(UNIFIED_MEMORY));
  assert_true(rdna35->features & FT(UNIFIED_MEMORY));
  assert_true(rdna4->dtypes & DT(FP8_E4M3FN));
  assert_string_equal(rdna4->memory_type, "");
}

static void expect_intel(uint16_t id, const char *key) {
  const tb_capability *row = tb_capability_intel(id);
  if (!row) fail_msg("Intel device 0x%04x: no row, expected %s", id, key);
  if (strcmp(row->key, key) != 0) fail_msg("Intel device 0x%04x: got %s, expected %s", id, row->key, key);
  assert_string_equal(row->vendor, "Intel");
}

static void intel_lookups(void **state) {
  (void)state;
  expect_intel(0x0bd5, "xe-hpc");
  expect_intel(0x0bd0, "xe-hpc");
  expect_intel(0x0bdb, "xe-hpc");
  expect_intel(0x0b69, "xe-hpc");
  expect_intel(0x56a0, "xe-hpg");
  expect_intel(0x5690, "xe-hpg");
  expect_intel(0x56c1, "xe-hpg");
  expect_intel(0xe20b, "xe2");
  expect_intel(0xe202, "xe2");
  expect_intel(0xe20d, "xe2");
  expect_intel(0x6420, "xe2");
  expect_intel(0x64a0, "xe2");
  expect_intel(0x64b0, "xe2");
  expect_intel(0x7d55, "xe-lpg");
  expect_intel(0x7d40, "xe-lpg");
  expect_intel(0x7d67, "xe-lpg");
  expect_intel(0x7d51, "xe-lpg-plus");
  expect_intel(0x7dd1, "xe-lpg-plus");
  expect_intel(0xa7a0, "xe-lp");
  expect_intel(0xa780, "xe-lp");
  expect_intel(0xa720, "xe-lp");
  expect_intel(0x9a49, "xe-lp");
  expect_intel(0x9a40, "xe-lp");
  expect_intel(0x46a6, "xe-lp");
  expect_intel(0x4628, "xe-lp");
  expect_intel(0x4c8a, "xe-lp");
  static const uint16_t unknown[] = {0x1234, 0x0000, 0xffff, 0x4905 /* DG1 */, 0x3e92 /* Coffee Lake */,
                                     0x0bcf, 0x0bdc, 0x568f, 0x56c3, 0x6421, 0x7d42, 0xe201, 0xe224, 0xb080};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    if (tb_capability_intel(unknown[i])) fail_msg("Intel device 0x%04x should not be in the table", unknown[i]);
}

static void intel_facts(void **state) {
  (void)state;
  const tb_capability *pvc = tb_capability_intel(0x0bd5);
  assert_string_equal(pvc->architecture, "Xe-HPC");
  assert_true(pvc->features & FT(XMX));
  assert_true(pvc->features & FT(TF32));
  assert_true(pvc->features & FT(FP64));
  assert_true(pvc->dtypes & DT(BF16));
  assert_true(pvc->dtypes & DT(F64));
  assert_string_equal(pvc->memory_type, "HBM2e");
  const tb_capability *dg2 = tb_capability_intel(0x56a0);
  assert_true(dg2->features & FT(XMX));
  assert_false(dg2->features & FT(TF32));
  assert_false(dg2->dtypes & DT(F64));
  const tb_capability *bmg = tb_capability_intel(0xe20b);
  assert_true(bmg->dtypes & DT(F64));
  assert_false(bmg->features & FT(UNIFIED_MEMORY)); /* Battlemage is discrete */
  const tb_capability *mtl = tb_capability_intel(0x7d55), *arl_h = tb_capability_intel(0x7d51);
  assert_false(mtl->features & FT(XMX));
  assert_false(mtl->dtypes & DT(BF16));
  assert_true(mtl->features & FT(UNIFIED_MEMORY));
  assert_true(arl_h->features & FT(XMX));
  const tb_capability *rpl = tb_capability_intel(0xa7a0);
  assert_string_equal(rpl->architecture, "Xe-LP");
  assert_false(rpl->dtypes & DT(F64));
  assert_true(rpl->dtypes & DT(I8));
  assert_string_equal(rpl->matrix_unit, "");
}

static void tpu_lookups_and_facts(void **state) {
  (void)state;
  static const char *const generations[] = {"v2", "v3", "v4", "v5e", "v5p", "v6e", "v7"};
  for (size_t i = 0; i < sizeof generations / sizeof generations[0]; i++) {
    const tb_capability *row = tb_capability_tpu(generations[i]);
    if (!row) fail_msg("TPU %s: no row", generations[i]);
    assert_string_equal(row->key, generations[i]);
    assert_string_equal(row->vendor, "Google");
    assert_true(row->features & FT(MXU));
    assert_true(row->dtypes & DT(BF16));
    assert_false(row->dtypes & (DT(F64) | DT(F16)));
    assert_int_equal(strncmp(row->memory_type, "HBM", 3), 0);
    bool int8 = strcmp(row->key, "v5e") == 0 || strcmp(row->key, "v5p") == 0 || strcmp(row->key, "v6e") == 0;
    if (int8 != !!(row->dtypes & DT(I8))) fail_msg("TPU %s: int8 expected %d", row->key, int8);
    bool fp8 = strcmp(row->key, "v7") == 0;
    if (fp8 != !!(row->dtypes & DT(FP8_E4M3FN))) fail_msg("TPU %s: fp8 expected %d", row->key, fp8);
  }
  assert_string_equal(tb_capability_tpu("V5E")->key, "v5e");
  assert_string_equal(tb_capability_tpu("v5p-8")->key, "v5p");
  assert_string_equal(tb_capability_tpu("v5litepod-16")->key, "v5e");
  assert_string_equal(tb_capability_tpu("trillium")->key, "v6e");
  assert_string_equal(tb_capability_tpu("tpu7x")->key, "v7");
  assert_string_equal(tb_capability_tpu("Ironwood")->key, "v7");
  assert_string_equal(tb_capability_tpu("v7")->architecture, "TPU7x (Ironwood)");
  static const char *const unknown[] = {"v9", "v1", "", "v", "v5", "v5p-", "v5p-x", "v5p-8-1", "v5e ", "-8", "tpu"};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
    if (tb_capability_tpu(unknown[i])) fail_msg("TPU generation \"%s\" should not be in the table", unknown[i]);
  assert_null(tb_capability_tpu(NULL));
}

static void apply_sets_fields_and_properties(void **state) {
  (void)state;
  tb_device_list *list = tb_devlist_new();
  assert_non_null(list);
  tb_device_info *h100 = tb_devlist_add(list, TB_BACKEND_CUDA);
  assert_non_null(h100);
  h100->compute_major = 9;
  h100->compute_minor = 0;
  tb_dev_set(list, &h100->arch_id, "sm_90");
  h100->features = FT(SUBGROUPS); /* something the probe found: kept */
  const tb_capability *hopper = tb_capability_nvidia(9, 0);
  tb_capability_apply(list, h100, hopper);
  assert_string_equal(h100->architecture, "Hopper");
  assert_string_equal(h100->arch_id, "sm_90");
  assert_int_equal(h100->dtypes, hopper->dtypes);
  assert_int_equal(h100->features, hopper->features | FT(SUBGROUPS));
  assert_string_equal(h100->memory_type, "HBM");
  assert_string_equal(h100->capability_source, hopper->source);
  TB_ASSERT_CONTAINS(tb_device_property(h100, "matrix_unit"), "4th-gen Tensor Cores");
  assert_string_equal(tb_device_property(h100, "capability_key"), "sm_90");

  /* a memory type the probe already knows stays */
  tb_device_info *mi300 = tb_devlist_add(list, TB_BACKEND_ROCM);
  tb_dev_set(list, &mi300->memory_type, "HBM3E");
  tb_dev_set(list, &mi300->arch_id, "gfx942");
  tb_capability_apply(list, mi300, tb_capability_amd("gfx942"));
  assert_string_equal(mi300->memory_type, "HBM3E");
  assert_string_equal(mi300->architecture, "CDNA3");
  assert_string_equal(mi300->arch_id, "gfx942");
  assert_string_equal(tb_device_property(mi300, "capability_key"), "gfx942");

  /* a row without a matrix unit; arch_id left empty by the probe is filled with the key */
  tb_device_info *navi = tb_devlist_add(list, TB_BACKEND_ROCM);
  tb_capability_apply(list, navi, tb_capability_amd("gfx1032"));
  assert_string_equal(navi->architecture, "RDNA2");
  assert_string_equal(navi->arch_id, "gfx103x");
  assert_string_equal(navi->memory_type, "");
  assert_string_equal(tb_device_property(navi, "matrix_unit"), "none");
  assert_string_equal(tb_device_property(navi, "capability_key"), "gfx103x");

  /* not in the table: f32 only, arch_id kept, source says so */
  tb_device_info *unknown = tb_devlist_add(list, TB_BACKEND_ROCM);
  tb_dev_set(list, &unknown->arch_id, "gfx1037");
  unknown->dtypes = DT(F16) | DT(F32);
  tb_capability_apply(list, unknown, tb_capability_amd("gfx1037"));
  assert_int_equal(unknown->dtypes, DT(F32));
  assert_string_equal(unknown->arch_id, "gfx1037");
  assert_string_equal(unknown->capability_source, "unknown architecture: not in the capability table");
  assert_null(tb_device_property(unknown, "capability_key"));

  /* 8.8 falls back to sm_87: the architecture's dtypes, not Orin's memory or unified memory */
  tb_device_info *cc88 = tb_devlist_add(list, TB_BACKEND_CUDA);
  cc88->compute_major = 8;
  cc88->compute_minor = 8;
  const tb_capability *orin = tb_capability_nvidia(8, 8);
  tb_capability_apply(list, cc88, orin);
  assert_int_equal(cc88->dtypes, orin->dtypes);
  assert_true(cc88->features & FT(TENSOR_CORES));
  assert_false(cc88->features & FT(UNIFIED_MEMORY));
  assert_string_equal(cc88->memory_type, "");
  TB_ASSERT_CONTAINS(cc88->capability_source, "compute capability 8.8 is not in the table");
  TB_ASSERT_CONTAINS(cc88->capability_source, "sm_87");
  assert_string_equal(tb_device_property(cc88, "capability_key"), "sm_87");

  /* an exact Orin keeps its memory facts */
  tb_device_info *jetson = tb_devlist_add(list, TB_BACKEND_CUDA);
  jetson->compute_major = 8;
  jetson->compute_minor = 7;
  tb_capability_apply(list, jetson, orin);
  assert_true(jetson->features & FT(UNIFIED_MEMORY));
  assert_string_equal(jetson->memory_type, "LPDDR5");
  assert_string_equal(jetson->capability_source, orin->source);

  tb_capability_apply(list, NULL, hopper); /* no device: nothing happens */
  assert_false(list->arena.failed);
  tb_device_list_destroy(list);
}

static void cpu_dtypes(void **state) {
  (void)state;
  const tb_dtype_set base =
      DT(F64) | DT(F32) | DT(I64) | DT(I32) | DT(I16) | DT(I8) | DT(U8) | DT(BOOL);
  assert_int_equal(tb_capability_cpu_dtypes(0), base);
  /* this machine's kind: AVX-512 with BF16, no AMX, no FP16 */
  uint64_t zen5 = FT(SSE4_2) | FT(AVX2) | FT(FMA) | FT(F16C) | FT(AVX512F) | FT(AVX512BW) | FT(AVX512VL) |
                  FT(AVX512VNNI) | FT(AVX512BF16);
  assert_int_equal(tb_capability_cpu_dtypes(zen5), base | DT(BF16));
  assert_int_equal(tb_capability_cpu_dtypes(FT(AVX512F) | FT(AVX2)), base);
  assert_int_equal(tb_capability_cpu_dtypes(FT(AMX_TILE) | FT(AMX_BF16) | FT(AMX_INT8)), base | DT(BF16));
  assert_int_equal(tb_capability_cpu_dtypes(FT(AMX_TILE) | FT(AMX_INT8)), base);
  assert_int_equal(tb_capability_cpu_dtypes(FT(AVX512FP16)), base | DT(F16));
  assert_int_equal(tb_capability_cpu_dtypes(FT(F16C)), base); /* conversions only */
  uint64_t sapphire_rapids = zen5 | FT(AVX512FP16) | FT(AMX_TILE) | FT(AMX_BF16) | FT(AMX_INT8);
  assert_int_equal(tb_capability_cpu_dtypes(sapphire_rapids), base | DT(BF16) | DT(F16));
  assert_int_equal(tb_capability_cpu_dtypes(FT(NEON)), base | DT(F16));
  assert_int_equal(tb_capability_cpu_dtypes(FT(NEON) | FT(SVE)), base | DT(F16));
  assert_false(tb_capability_cpu_dtypes(UINT64_MAX) & (DT(FP8_E4M3FN) | DT(FP8_E5M2)));
}

static void public_accessor(void **state) {
  (void)state;
  size_t count = tb_capability_table_count();
  assert_int_equal(count, tb_capability_count());
  for (size_t i = 0; i < count; i++) {
    tb_capability_row row = {.size = sizeof row};
    TB_ASSERT_OK(tb_capability_table_get(i, &row));
    const tb_capability *cap = tb_capability_at(i);
    assert_int_equal(row.size, sizeof row);
    assert_string_equal(row.vendor, cap->vendor);
    assert_string_equal(row.key, cap->key);
    assert_string_equal(row.architecture, cap->architecture);
    assert_int_equal(row.dtypes, cap->dtypes);
    assert_int_equal(row.features, cap->features);
    assert_string_equal(row.matrix_unit, cap->matrix_unit);
    assert_string_equal(row.memory_type, cap->memory_type);
    assert_string_equal(row.source, cap->source);
  }
  tb_capability_row row = {.size = sizeof row - 1, .key = "untouched"};
  assert_int_equal(tb_capability_table_get(0, &row), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "out->size");
  assert_string_equal(row.key, "untouched");
  row.size = 0;
  assert_int_equal(tb_capability_table_get(0, &row), TB_ERR_INVALID_ARGUMENT);
  row.size = sizeof row;
  assert_int_equal(tb_capability_table_get(count, &row), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "does not exist");
  assert_int_equal(tb_capability_table_get(0, NULL), TB_ERR_INVALID_ARGUMENT);
  /* a caller built against a newer, larger struct still gets the fields it shares */
  struct {
    tb_capability_row row;
    int later_field;
  } bigger = {.row = {.size = sizeof bigger}, .later_field = 7};
  TB_ASSERT_OK(tb_capability_table_get(0, &bigger.row));
  assert_string_equal(bigger.row.key, tb_capability_at(0)->key);
  assert_int_equal(bigger.later_field, 7);
}

/* The markdown line docs/capabilities.md must have for a row. */
static void doc_line(const tb_capability *row, char *out, size_t size) {
  char dtypes[256] = "", features[256] = "";
  for (int d = 0; d < TB_DTYPE_COUNT; d++) {
    if (!(row->dtypes & TB_DTYPE_BIT(d))) continue;
    snprintf(dtypes + strlen(dtypes), sizeof dtypes - strlen(dtypes), "%s%s", dtypes[0] ? ", " : "",
             tb_dtype_name((tb_dtype)d));
  }
  for (int f = 0; f < TB_FEATURE_COUNT; f++) {
    if (!(row->features & TB_FEATURE_BIT(f))) continue;
    snprintf(features + strlen(features), sizeof features - strlen(features), "%s%s", features[0] ? ", " : "",
             tb_feature_name((tb_feature)f));
  }
  snprintf(out, size, "| %s | `%s` | %s | %s | %s | %s | %s | %s |", row->vendor, row->key, row->architecture, dtypes,
           features[0] ? features : "none", row->matrix_unit[0] ? row->matrix_unit : "none",
           row->memory_type[0] ? row->memory_type : "varies", row->source);
}

static void doc_matches_table(void **state) {
  (void)state;
  char path[1024];
  snprintf(path, sizeof path, "%s/../../docs/capabilities.md", TB_TEST_FIXTURES);
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  static char doc[256 * 1024];
  size_t n = fread(doc, 1, sizeof doc - 1, f);
  fclose(f);
  doc[n] = '\0';
  size_t table_lines = 0;
  for (const char *line = doc; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
    static const char *const vendors[] = {"| NVIDIA | `", "| AMD | `", "| Intel | `", "| Google | `"};
    for (size_t v = 0; v < 4; v++)
      if (strncmp(line, vendors[v], strlen(vendors[v])) == 0) table_lines++;
  }
  assert_int_equal(table_lines, tb_capability_count());
  for (size_t i = 0; i < tb_capability_count(); i++) {
    char expected[2048];
    doc_line(tb_capability_at(i), expected, sizeof expected);
    char with_newline[2050];
    snprintf(with_newline, sizeof with_newline, "%s\n", expected);
    if (!strstr(doc, with_newline)) fail_msg("docs/capabilities.md lacks the line:\n%s", expected);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_row_is_complete),
      cmocka_unit_test(nvidia_lookups),
      cmocka_unit_test(nvidia_facts),
      cmocka_unit_test(amd_lookups),
      cmocka_unit_test(amd_facts),
      cmocka_unit_test(intel_lookups),
      cmocka_unit_test(intel_facts),
      cmocka_unit_test(tpu_lookups_and_facts),
      cmocka_unit_test(apply_sets_fields_and_properties),
      cmocka_unit_test(cpu_dtypes),
      cmocka_unit_test(public_accessor),
      cmocka_unit_test(doc_matches_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
