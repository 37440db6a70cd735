/* The KFD topology reader of the ROCm probe: gfx target decoding, the recorded MI300X node, and garbage
 * in every file it reads (each must name the file and the value, never crash or guess). */
#include <string.h>
#include <sys/stat.h>
#include "discover/amd_ids.h"
#include "discover/amd_kfd.h"
#include "test_amd_tree.h"

static void gfx_names(void **state) {
  (void)state;
  static const struct {
    uint64_t version;
    const char *name;
  } cases[] = {{90402, "gfx942"}, {90010, "gfx90a"}, {110000, "gfx1100"}, {100300, "gfx1030"},
               {90012, "gfx90c"}, {90008, "gfx908"}, {90500, "gfx950"}, {120001, "gfx1201"},
               {110501, "gfx1151"}, {80003, "gfx803"}};
  char name[16];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_true(tb_amd_gfx_name(cases[i].version, name, sizeof name));
    assert_string_equal(name, cases[i].name);
  }
  /* Not targets: zero, no major, a minor or stepping that is not one hex digit, hex-packed 0x090402. */
  static const uint64_t bad[] = {0, 904, 91600, 90016, 590850, 100000000};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_false(tb_amd_gfx_name(bad[i], name, sizeof name));
    assert_string_equal(name, "");
  }
  /* A buffer too small for the name is a failure, not a cut name. */
  assert_false(tb_amd_gfx_name(110000, name, 6));
}

static void product_names_and_apus(void **state) {
  (void)state;
  assert_string_equal(tb_amd_product_name(0x74a1), "AMD Instinct MI300X");
  assert_string_equal(tb_amd_product_name(0x740f), "AMD Instinct MI210");
  assert_string_equal(tb_amd_product_name(0x744c), "AMD Radeon RX 7900 XTX/XT");
  assert_null(tb_amd_product_name(0x1234));
  assert_string_equal(tb_amd_memory_type(0x74a5), "HBM3E");
  assert_null(tb_amd_memory_type(0x74a1));
  assert_false(tb_amd_is_apu(0x74a1, "gfx942", 0));
  assert_true(tb_amd_is_apu(0x74a0, "gfx942", 0));  /* MI300A */
  assert_true(tb_amd_is_apu(0x1506, "gfx1151", 0)); /* Strix Halo */
  assert_true(tb_amd_is_apu(0, "gfx90a", 8));        /* CPU cores on the GPU node */
  assert_false(tb_amd_is_apu(0, "", 0));
}

static void reads_mi300x_topology(void **state) {
  (void)state;
  tbt_clear_env();
  tbt_use_fixture("mi300x");
  tb_kfd_topology t;
  assert_true(tb_kfd_read(&t));
  assert_true(t.present);
  assert_int_equal(t.nodes, 10);
  assert_int_equal(t.cpu_nodes, 2);
  assert_int_equal(t.gpu_count, 8);
  static const char *const buses[] = {"0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
                                      "0000:85:00.0", "0000:a6:00.0", "0000:c6:00.0", "0000:e5:00.0"};
  for (unsigned i = 0; i < 8; i++) {
    const tb_kfd_gpu *g = &t.gpus[i];
    assert_false(g->broken);
    assert_int_equal(g->node, i + 2);
    assert_string_equal(g->gfx, "gfx942");
    assert_int_equal(g->gfx_major, 9);
    assert_int_equal(g->gfx_minor, 4);
    assert_int_equal(g->gfx_stepping, 2);
    assert_int_equal(g->compute_units, 304);
    assert_true(g->memory_known);
    assert_int_equal(g->memory_total, AMD_MI300X_VRAM);
    assert_int_equal(g->device_id, 0x74a1);
    assert_int_equal(g->vendor_id, 0x1002);
    assert_string_equal(g->bus_id, buses[i]);
    assert_true(g->has_render_minor);
    assert_int_equal(g->render_minor, 128 + i);
    assert_int_equal(g->num_xcc, 8);
    assert_int_equal(g->cpu_cores, 0);
    assert_string_equal(g->name, "ip discovery");
    assert_int_equal(g->capability & TB_KFD_CAP_COHERENT_HOST_ACCESS, 0);
  }
  assert_int_equal(t.gpus[0].gpu_id, 28851);
  assert_int_equal(t.gpus[0].unique_id, 0x9c8d1f2a3b4c5d01ull);
  tb_kfd_free(&t);
  assert_null(t.gpus);
}

static void missing_topology_is_not_an_error(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_FSROOT", "/nonexistent/tb-amd-root", 1);
  tb_kfd_topology t;
  assert_true(tb_kfd_read(&t));
  assert_false(t.present);
  assert_int_equal(t.gpu_count, 0);
  tb_kfd_free(&t);
}

/* Read the tree after one change and return the problem of the GPU at KFD node `node`. */
static void expect_problem(const char *root, unsigned node, const char *part1, const char *part2) {
  (void)root;
  tb_kfd_topology t;
  assert_true(tb_kfd_read(&t));
  const tb_kfd_gpu *g = NULL;
  for (size_t i = 0; i < t.gpu_count; i++)
    if (t.gpus[i].node == node) g = &t.gpus[i];
  assert_non_null(g);
  assert_true(g->broken);
  TB_ASSERT_CONTAINS(g->problem, part1);
  TB_ASSERT_CONTAINS(g->problem, part2);
  /* The other GPUs are untouched. */
  size_t fine = 0;
  for (size_t i = 0; i < t.gpu_count; i++) fine += !t.gpus[i].broken;
  assert_int_equal(fine, t.gpu_count - 1);
  tb_kfd_free(&t);
}

#define NODE(n, file) "sys/class/kfd/kfd/topology/nodes/" #n "/" file

static void garbage_in_properties(void **state) {
  (void)state;
  tbt_clear_env();
  char *root = tbt_fixture_copy(AMD_FIXTURE);

  amd_tree_set_prop(root, NODE(2, "properties"), "gfx_target_version", "gfx942");
  expect_problem(root, 2, "nodes/2/properties", "gfx_target_version 'gfx942' is not a number");
  amd_tree_set_prop(root, NODE(2, "properties"), "gfx_target_version", "90402");

  amd_tree_set_prop(root, NODE(3, "properties"), "simd_count", "abc");
  expect_problem(root, 3, "nodes/3/properties", "simd_count 'abc' is not a number");
  amd_tree_set_prop(root, NODE(3, "properties"), "simd_count", "1216");

  amd_tree_set_prop(root, NODE(4, "properties"), "gfx_target_version", "0");
  expect_problem(root, 4, "nodes/4/properties", "gfx_target_version 0 is not a gfx target");
  amd_tree_set_prop(root, NODE(4, "properties"), "gfx_target_version", "90402");

  amd_tree_set_prop(root, NODE(5, "properties"), "simd_per_cu", "0");
  expect_problem(root, 5, "nodes/5/properties", "simd_per_cu is 0");
  amd_tree_set_prop(root, NODE(5, "properties"), "simd_per_cu", "4");

  amd_tree_set_prop(root, NODE(6, "properties"), "location_id", "70000");
  expect_problem(root, 6, "nodes/6/properties", "location_id 70000");
  tbt_tree_restore(root, AMD_FIXTURE, NODE(6, "properties"));

  /* Truncated: the kernel's buffer cut after the fourth line. */
  tbt_tree_write(root, NODE(7, "properties"), "cpu_cores_count 0\nsimd_count 1216\nmem_banks_count 1\ncaches_co");
  expect_problem(root, 7, "nodes/7/properties", "has no location_id line (file truncated?)");
  tbt_tree_restore(root, AMD_FIXTURE, NODE(7, "properties"));

  /* Empty properties but a GPU id: still a GPU, and broken. */
  tbt_tree_write(root, NODE(8, "properties"), "");
  expect_problem(root, 8, "nodes/8/properties", "missing, unreadable or empty");
  tbt_tree_remove(root);
}

static void garbage_in_mem_banks(void **state) {
  (void)state;
  tbt_clear_env();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  /* Larger than 2^64-1. */
  amd_tree_set_prop(root, NODE(9, "mem_banks/0/properties"), "size_in_bytes", "99999999999999999999999");
  expect_problem(root, 9, "nodes/9/mem_banks/0/properties", "size_in_bytes '99999999999999999999999' is not a number");
  amd_tree_set_prop(root, NODE(9, "mem_banks/0/properties"), "size_in_bytes", "206158430208");

  /* Two banks whose sum overflows 64 bits. */
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", root, NODE(2, "mem_banks/1"));
  assert_int_equal(mkdir(dir, 0755), 0);
  tbt_tree_write(root, NODE(2, "mem_banks/1/properties"),
                 "heap_type 2\nsize_in_bytes 18446744073709551615\nflags 0\nwidth 8192\nmem_clk_max 1300\n");
  expect_problem(root, 2, "nodes/2/mem_banks/1/properties", "overflow 64 bits");

  /* A private frame-buffer bank adds to the public one; other heap types do not. */
  tbt_tree_write(root, NODE(2, "mem_banks/1/properties"), "heap_type 2\nsize_in_bytes 1073741824\n");
  snprintf(dir, sizeof dir, "%s/%s", root, NODE(2, "mem_banks/2"));
  assert_int_equal(mkdir(dir, 0755), 0);
  tbt_tree_write(root, NODE(2, "mem_banks/2/properties"), "heap_type 5\nsize_in_bytes 65536\n");
  tb_kfd_topology t;
  assert_true(tb_kfd_read(&t));
  assert_false(t.gpus[0].broken);
  assert_int_equal(t.gpus[0].mem_banks, 3);
  assert_int_equal(t.gpus[0].memory_total, AMD_MI300X_VRAM + 1073741824ull);
  tb_kfd_free(&t);

  tbt_tree_write(root, NODE(3, "mem_banks/0/properties"), "heap_type one\nsize_in_bytes 4096\n");
  expect_problem(root, 3, "nodes/3/mem_banks/0/properties", "heap_type 'one' is not a number");
  tbt_tree_remove(root);
}

/* A CPU node with unreadable properties is still recognised as a CPU by its gpu_id 0, and skipped. */
static void cpu_node_with_garbage_is_skipped(void **state) {
  (void)state;
  tbt_clear_env();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  tbt_tree_write(root, NODE(1, "properties"), "cpu_cores_count 96\nsimd_count ???\n");
  tb_kfd_topology t;
  assert_true(tb_kfd_read(&t));
  assert_int_equal(t.cpu_nodes, 2);
  assert_int_equal(t.gpu_count, 8);
  for (size_t i = 0; i < t.gpu_count; i++) assert_false(t.gpus[i].broken);
  tb_kfd_free(&t);
  tbt_tree_remove(root);
}

/* Through the whole probe: the broken GPU is listed, unusable, with the file and value in its reason;
 * the other seven stay usable. */
static void probe_reports_garbage(void **state) {
  (void)state;
  amd_use_fakes();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  amd_tree_set_prop(root, NODE(3, "properties"), "simd_count", "abc");
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8);
  size_t usable = 0;
  const tb_device_info *broken = NULL;
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_ROCM, i);
    if (d->usable) usable++;
    else broken = d;
  }
  assert_int_equal(usable, 7);
  assert_non_null(broken);
  assert_int_equal(broken->index, -1);
  assert_string_equal(broken->device, "pci:0000:26:00.0");
  TB_ASSERT_CONTAINS(broken->reason, "AMD Instinct MI300X (gfx942) at 0000:26:00.0");
  TB_ASSERT_CONTAINS(broken->reason, "nodes/3/properties: simd_count 'abc' is not a number");
  TB_ASSERT_CONTAINS(broken->fix, "dmesg");
  /* The usable ones keep their HIP ordinals even though one in the middle is broken. */
  const tb_device_info *d;
  assert_int_equal(tb_device_list_find(list, "rocm:2", &d), TB_OK);
  assert_string_equal(d->pci_bus_id, "0000:46:00.0");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_ROCM);
  assert_true(tbt_report_has(r, "nodes/3", "simd_count 'abc'"));
  TB_ASSERT_CONTAINS(r->summary, "8 AMD GPUs found, 7 usable");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gfx_names),
      cmocka_unit_test(product_names_and_apus),
      cmocka_unit_test(reads_mi300x_topology),
      cmocka_unit_test(missing_topology_is_not_an_error),
      cmocka_unit_test(garbage_in_properties),
      cmocka_unit_test(garbage_in_mem_banks),
      cmocka_unit_test(cpu_node_with_garbage_is_skipped),
      cmocka_unit_test(probe_reports_garbage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
