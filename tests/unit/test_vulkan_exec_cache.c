/* The Vulkan backend's pipeline cache on disk and its failure paths, on vulkan:0 (lavapipe) with the
 * validation layer on: a first prepare misses and saves the VkPipelineCache at close; a second prepare in
 * a fresh backend loads it (a hit); a corrupted entry (a flipped byte, a truncated file, garbage, a valid
 * wrapper around another device's header) is rejected before the driver sees it, the node still runs and
 * the entry is rewritten; TB_CACHE_DIR=off writes nothing; a pipeline creation failure is a status and a
 * sentence naming the device, the node, the call and the driver's code, and so is a failed submit (a lost
 * device, simulated); steady-state runs allocate no
 * descriptor pools or pipelines and the dispatches of consecutive kernels go in one submit. */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/vulkan_device_api.h"
#include "core/sha256.h"
#include "test_vulkan_exec_util.h"

static char cache_dir[256];

static int fresh_cache_dir(void **state) {
  (void)state;
  tbt_clear_env();
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tb-vkcache-XXXXXX");
  assert_non_null(mkdtemp(cache_dir));
  setenv("TB_CACHE_DIR", cache_dir, 1);
  return 0;
}

static int remove_cache_dir(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
  assert_int_equal(system(cmd), 0);
  unsetenv("TB_CACHE_DIR");
  return 0;
}

/* The one entry file in the cache folder ("" when none); returns the number of entries. */
static int entry_path(char *path, size_t cap) {
  char dir[280];
  snprintf(dir, sizeof dir, "%s/vulkan", cache_dir);
  path[0] = '\0';
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strncmp(e->d_name, "pipelines-", 10) == 0 && !strchr(e->d_name, '.') && !strstr(e->d_name, "tmp")) {
      snprintf(path, cap, "%s/%s", dir, e->d_name);
      n++;
    }
  closedir(d);
  return n;
}

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc((size_t)n + 1);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void write_all(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  fclose(f);
}

/* Prepare and run a Relu and a Softmax (so two pipelines) on a fresh vulkan:0; returns its stats. */
static tb_vk_compute_stats prepare_in_fresh_backend(void) {
  tb_backend *vk = vkx_open();
  float x[40];
  vkx_fill(x, 40, 3, -2, 2);
  const char *ops[2] = {"Relu", "Softmax"};
  for (int i = 0; i < 2; i++) {
    toh t;
    toh_begin(&t, NULL);
    toh_add(&t, ops[i], 13, 1, 0, 1, 0, NULL, 0);
    toh_input(&t, 0, TB_DTYPE_F32, 2, (const int64_t[]){4, 10}, x);
    vkx_check(&t, vk, true, VKX_RTOL, VKX_ATOL);
    toh_teardown(&t);
  }
  tb_vk_compute_stats stats;
  TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &stats));
  vkx_close(vk);
  return stats;
}

static void second_prepare_loads_the_cache(void **state) {
  (void)state;
  char path[600];
  assert_int_equal(entry_path(path, sizeof path), 0);
  tb_vk_compute_stats first = prepare_in_fresh_backend();
  assert_true(first.cache_enabled);
  assert_int_equal(first.cache_misses, 1);
  assert_int_equal(first.cache_hits, 0);
  assert_int_equal(first.pipelines_created, 2);
  assert_int_equal(entry_path(path, sizeof path), 1); /* saved at close */
  assert_non_null(strstr(path, "pipelines-10005-0000-")); /* Mesa's vendor id, lavapipe's device id 0 */
  tb_vk_compute_stats second = prepare_in_fresh_backend();
  assert_int_equal(second.cache_hits, 1);
  assert_int_equal(second.cache_misses, 0);
  assert_int_equal(second.cache_rejected, 0);
  assert_true(second.cache_bytes_loaded >= 32); /* lavapipe's data may be its header alone */
  assert_int_equal(second.pipelines_created, 2);
}

/* Damage the saved entry with `damage`, then check a fresh backend rejects it, runs anyway and rewrites it. */
static void check_rejected(void (*damage)(unsigned char *data, size_t *size)) {
  char path[600];
  prepare_in_fresh_backend();
  assert_int_equal(entry_path(path, sizeof path), 1);
  size_t size;
  unsigned char *data = read_all(path, &size);
  damage(data, &size);
  write_all(path, data, size);
  free(data);
  tb_vk_compute_stats stats = prepare_in_fresh_backend();
  assert_int_equal(stats.cache_rejected, 1);
  assert_int_equal(stats.cache_hits, 0);
  stats = prepare_in_fresh_backend(); /* rebuilt and saved again */
  assert_int_equal(stats.cache_hits, 1);
  assert_int_equal(stats.cache_rejected, 0);
}

static void flip_payload_byte(unsigned char *data, size_t *size) { data[*size - 5] ^= 0x5a; }
static void truncate_entry(unsigned char *data, size_t *size) {
  (void)data;
  *size /= 2;
}
static void garbage_entry(unsigned char *data, size_t *size) {
  memcpy(data, "hello, not a pipeline cache", 27);
  *size = 27;
}
/* A wrapper that is valid in itself around a driver header naming another vendor. */
static void other_device(unsigned char *data, size_t *size) {
  tb_vk_pipeline_cache_header hdr;
  memcpy(&hdr, data + 48, sizeof hdr);
  hdr.vendorID = 0x10de;
  memcpy(data + 48, &hdr, sizeof hdr);
  tb_sha256 h;
  tb_sha256_init(&h);
  tb_sha256_update(&h, data + 48, *size - 48);
  tb_sha256_final(&h, data + 16);
}

static void corrupted_entries_are_rejected_and_rebuilt(void **state) {
  (void)state;
  check_rejected(flip_payload_byte);
  check_rejected(truncate_entry);
  check_rejected(garbage_entry);
  check_rejected(other_device);
}

static void cache_off_writes_nothing(void **state) {
  (void)state;
  setenv("TB_CACHE_DIR", "off", 1);
  tb_vk_compute_stats stats = prepare_in_fresh_backend();
  assert_false(stats.cache_enabled);
  assert_int_equal(stats.cache_hits, 0);
  assert_int_equal(stats.cache_writes, 0);
  setenv("TB_CACHE_DIR", cache_dir, 1);
  char path[600];
  assert_int_equal(entry_path(path, sizeof path), 0);
}

static void pipeline_failure_is_a_clear_status(void **state) {
  (void)state;
  tb_backend *vk = vkx_open();
  toh t;
  toh_begin(&t, NULL);
  toh_add(&t, "Relu", 14, 1, 0, 1, 0, NULL, 0);
  int64_t dims[1] = {8};
  tb_value_type f = toh_type(TB_DTYPE_F32, 1, dims);
  const tb_value_type *in[1] = {&f};
  const tb_kernel *k = tbt_backend_kernel_find(vk, t.graph, toh_node(&t), in);
  assert_non_null(k);
  tb_vk_fail_next_pipeline(vk->state, TB_VK_ERROR_INITIALIZATION_FAILED);
  tb_tensor *none[1] = {NULL};
  tb_kernel_ctx ctx = {t.graph, toh_node(&t), 1, none, 1, NULL, vk, NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
  void *node_state = NULL;
  assert_int_equal(k->prepare(&ctx, &node_state), TB_ERR_DRIVER);
  assert_null(node_state);
  const char *msg = tb_last_error();
  TB_ASSERT_CONTAINS(msg, "vulkan:0");
  TB_ASSERT_CONTAINS(msg, "node 'n0' (Relu)");
  TB_ASSERT_CONTAINS(msg, "vkCreateComputePipelines");
  TB_ASSERT_CONTAINS(msg, "-3 VK_ERROR_INITIALIZATION_FAILED");
  TB_ASSERT_CONTAINS(msg, "shader 'unary'");
  /* the device goes on: the next prepare succeeds */
  TB_ASSERT_OK(k->prepare(&ctx, &node_state));
  k->release(node_state);
  toh_teardown(&t);
  vkx_close(vk);
}

/* A Relu node on vulkan:0 with its kernel prepared, and two device tensors a (holding x) and b of n floats. */
typedef struct relu_node {
  tb_backend *vk;
  toh t;
  const tb_kernel *k;
  void *state;
  tb_tensor *a, *b;
} relu_node;

static void relu_open(relu_node *r, int64_t n, const float *x) {
  r->vk = vkx_open();
  toh_begin(&r->t, NULL);
  toh_add(&r->t, "Relu", 14, 1, 0, 1, 0, NULL, 0);
  int64_t dims[1] = {n};
  tb_value_type f = toh_type(TB_DTYPE_F32, 1, dims);
  const tb_value_type *in[1] = {&f};
  r->k = tbt_backend_kernel_find(r->vk, r->t.graph, toh_node(&r->t), in);
  assert_non_null(r->k);
  tb_tensor *none[1] = {NULL};
  tb_kernel_ctx pctx = {r->t.graph, toh_node(&r->t), 1, none, 1, NULL, r->vk, NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&pctx, r->t.graph, toh_node(&r->t), NULL);
  r->state = NULL;
  TB_ASSERT_OK(r->k->prepare(&pctx, &r->state));
  r->a = r->b = NULL;
  TB_ASSERT_OK(tb_tensor_create(r->vk, TB_DTYPE_F32, 1, dims, &r->a));
  TB_ASSERT_OK(tb_tensor_create(r->vk, TB_DTYPE_F32, 1, dims, &r->b));
  TB_ASSERT_OK(tb_tensor_copy_from_host(r->a, x, (size_t)n * sizeof *x));
}

/* One run of the node from `in` into `out`. */
static tb_status relu_run(relu_node *r, tb_tensor *in, tb_tensor *out) {
  tb_tensor *ins[1] = {in}, *outs[1] = {out};
  tb_kernel_ctx ctx = {r->t.graph, toh_node(&r->t), 1, ins, 1, outs, r->vk, NULL, NULL, 1, NULL, r->state, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&ctx, r->t.graph, toh_node(&r->t), NULL);
  return r->k->run(&ctx);
}

static void relu_close(relu_node *r) {
  tb_tensor_destroy(r->a);
  tb_tensor_destroy(r->b);
  r->k->release(r->state);
  toh_teardown(&r->t);
  vkx_close(r->vk);
}

/* Ten Relu runs in a row: one descriptor pool (made at prepare), one pipeline, and the ten dispatches
 * submitted together when the result is read. */
static void steady_state_allocates_nothing(void **state) {
  (void)state;
  float x[1000], y[1000];
  vkx_fill(x, 1000, 9, -1, 1);
  relu_node r;
  relu_open(&r, 1000, x);
  tb_vk_compute_stats before, after;
  TB_ASSERT_OK(tb_vk_compute_stats_get(r.vk->state, &before));
  tb_vk_memory_counters mem_before, mem_after;
  tb_vk_memory_counters_get(r.vk->state, &mem_before);
  for (int i = 0; i < 10; i++) TB_ASSERT_OK(relu_run(&r, i % 2 ? r.b : r.a, i % 2 ? r.a : r.b));
  TB_ASSERT_OK(tb_tensor_copy_to_host(r.a, y, sizeof y)); /* submits: the copy sees all ten */
  TB_ASSERT_OK(tb_vk_compute_stats_get(r.vk->state, &after));
  tb_vk_memory_counters_get(r.vk->state, &mem_after);
  for (int i = 0; i < 1000; i++)
    if (y[i] != (x[i] > 0 ? x[i] : 0.0f)) fail_msg("element %d: %g for relu(%g)", i, y[i], x[i]);
  assert_int_equal(after.dispatches - before.dispatches, 10);
  assert_int_equal(after.descriptor_pools, before.descriptor_pools);
  assert_int_equal(after.pipelines_created, before.pipelines_created);
  assert_int_equal(mem_after.allocate_calls, mem_before.allocate_calls);
  /* the set is rewritten only after its batch was submitted: one submit per run here (same node) */
  assert_int_equal(after.submits - before.submits, 10);
  relu_close(&r);
}

/* A submit that fails (a lost device, simulated) makes the read that needed it fail with the call and the
 * code; the next run and read work. */
static void failed_submit_is_a_clear_status(void **state) {
  (void)state;
  float x[64], y[64];
  vkx_fill(x, 64, 5, -1, 1);
  relu_node r;
  relu_open(&r, 64, x);
  TB_ASSERT_OK(relu_run(&r, r.a, r.b));
  tb_vk_fail_next_submit(r.vk->state, TB_VK_ERROR_DEVICE_LOST);
  assert_int_equal(tb_tensor_copy_to_host(r.b, y, sizeof y), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "vulkan:0");
  TB_ASSERT_CONTAINS(tb_last_error(), "vkQueueSubmit (kernels) failed with -4 VK_ERROR_DEVICE_LOST");
  TB_ASSERT_OK(relu_run(&r, r.a, r.b));
  TB_ASSERT_OK(tb_tensor_copy_to_host(r.b, y, sizeof y));
  for (int i = 0; i < 64; i++) assert_true(y[i] == (x[i] > 0 ? x[i] : 0.0f));
  relu_close(&r);
}

static void device_features_are_reported(void **state) {
  (void)state;
  tb_backend *vk = vkx_open();
  tb_vk_compute_stats stats;
  TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &stats));
  assert_true(stats.subgroup_arithmetic);
  assert_true(stats.subgroup_size >= 4 && stats.subgroup_size <= 64);
  assert_false(stats.cooperative_matrix); /* lavapipe has no cooperative matrices (docs/vulkan.md) */
  vkx_close(vk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(second_prepare_loads_the_cache, fresh_cache_dir, remove_cache_dir),
      cmocka_unit_test_setup_teardown(corrupted_entries_are_rejected_and_rebuilt, fresh_cache_dir, remove_cache_dir),
      cmocka_unit_test_setup_teardown(cache_off_writes_nothing, fresh_cache_dir, remove_cache_dir),
      cmocka_unit_test_setup_teardown(pipeline_failure_is_a_clear_status, fresh_cache_dir, remove_cache_dir),
      cmocka_unit_test_setup_teardown(steady_state_allocates_nothing, fresh_cache_dir, remove_cache_dir),
      cmocka_unit_test_setup_teardown(failed_submit_is_a_clear_status, fresh_cache_dir, remove_cache_dir),
      cmocka_unit_test_setup_teardown(device_features_are_reported, fresh_cache_dir, remove_cache_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
