/* External data: tensors whose bytes are in another file next to the model. The happy paths (mapped in
 * place when aligned, copied when not, shared mappings, a folder below the model's) and every refusal:
 * "..", absolute paths, a missing file, an offset or length past the end, a symlink leading out, a NUL
 * inside the location, a FIFO in place of the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "model/model_impl.h"
#include "test_onnx_pbw.h"
#include "test_util.h"

static char dir[64];
static char outside[64];

static void write_file(const char *folder, const char *name, const void *data, size_t len) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", folder, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, len, f), len);
  fclose(f);
}

static const float weights[4] = {1.0f, -2.0f, 3.5f, 4.25f};

static int setup(void **state) {
  (void)state;
  strcpy(dir, "/tmp/tb_onnx_ext_XXXXXX");
  strcpy(outside, "/tmp/tb_onnx_out_XXXXXX");
  assert_non_null(mkdtemp(dir));
  assert_non_null(mkdtemp(outside));
  unsigned char blob[64] = {0};
  memcpy(blob + 16, weights, sizeof weights); /* aligned at 16 */
  memcpy(blob + 34, weights, sizeof weights); /* misaligned at 34 */
  write_file(dir, "weights.bin", blob, sizeof blob);
  char sub[128];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  mkdir(sub, 0755);
  write_file(sub, "w.bin", weights, sizeof weights);
  write_file(outside, "secret.bin", weights, sizeof weights);
  char link[256], target[256];
  snprintf(link, sizeof link, "%s/escape.bin", dir);
  snprintf(target, sizeof target, "%s/secret.bin", outside);
  assert_int_equal(symlink(target, link), 0);
  snprintf(link, sizeof link, "%s/inside.bin", dir);
  assert_int_equal(symlink("sub/w.bin", link), 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, outside);
  return system(cmd) == 0 ? 0 : -1;
}

/* A model whose initializer "w" (float[4]) is at location/offset/length (offset/length < 0: left out). */
static void write_model_n(const char *location, size_t location_len, long offset, long length) {
  pbw t = {0}, kv = {0}, extra = {0}, g = {0};
  int64_t d4[1] = {4};
  pbw_tensor_head(&t, "w", 1, d4, 1);
  pbw_str(&kv, 1, "location");
  pbw_bytes(&kv, 2, location, location_len);
  pbw_msg(&t, 13, &kv);
  char num[32];
  if (offset >= 0) {
    snprintf(num, sizeof num, "%ld", offset);
    pbw_str(&kv, 1, "offset");
    pbw_str(&kv, 2, num);
    pbw_msg(&t, 13, &kv);
  }
  if (length >= 0) {
    snprintf(num, sizeof num, "%ld", length);
    pbw_str(&kv, 1, "length");
    pbw_str(&kv, 2, num);
    pbw_msg(&t, 13, &kv);
  }
  pbw_int(&t, 14, 1);
  pbw_msg(&extra, 5, &t);
  pbw_node(&g, "add", "Add", "x", "y", NULL);
  pbw_str(&g, 2, "ext");
  pbw_raw(&g, extra.data, extra.len);
  free(extra.data);
  int64_t d[1] = {4};
  pbw_value_info(&g, 11, "x", 1, d, 1);
  pbw_value_info(&g, 12, "y", 1, d, 1);
  pbw m = pbw_model(&g);
  write_file(dir, "model.onnx", m.data, m.len);
  free(m.data);
}

static void write_model(const char *location, long offset, long length) {
  write_model_n(location, strlen(location), offset, length);
}

static tb_model *load_ok(const char *location, long offset, long length) {
  write_model(location, offset, length);
  char path[128];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  tb_model *model;
  TB_ASSERT_OK(tb_model_load(path, &model));
  return model;
}

static const tb_ir_tensor *weight(const tb_model *model) {
  const tb_graph *g = model->ir->graph;
  int v = tb_graph_find(g, "w");
  assert_true(v >= 0);
  assert_non_null(g->values[v].constant);
  return g->values[v].constant;
}

static void test_mapped_in_place_when_aligned(void **state) {
  (void)state;
  tb_model *model = load_ok("weights.bin", 16, 16);
  const tb_ir_tensor *w = weight(model);
  assert_memory_equal(w->data, weights, sizeof weights);
  assert_int_equal(model->external.count, 1);
  assert_ptr_equal(w->data, (const unsigned char *)model->external.items[0].addr + 16); /* zero-copy */
  TB_ASSERT_CONTAINS(model->external.items[0].path, "/weights.bin");
  assert_string_equal(tb_model_property(model, "weight_bytes"), "16");
  tb_model_destroy(model);
}

static void test_copied_when_misaligned(void **state) {
  (void)state;
  tb_model *model = load_ok("weights.bin", 34, -1); /* no length: numel * 4 */
  const tb_ir_tensor *w = weight(model);
  assert_memory_equal(w->data, weights, sizeof weights);
  const unsigned char *map = model->external.items[0].addr;
  const unsigned char *p = w->data;
  assert_true(p < map || p >= map + model->external.items[0].size); /* an aligned copy */
  assert_int_equal((uintptr_t)p % 4, 0);
  tb_model_destroy(model);
}

static void test_subfolder_and_inner_symlink(void **state) {
  (void)state;
  tb_model *model = load_ok("sub/w.bin", -1, -1);
  assert_memory_equal(weight(model)->data, weights, sizeof weights);
  tb_model_destroy(model);
  model = load_ok("inside.bin", 0, 16);
  assert_memory_equal(weight(model)->data, weights, sizeof weights);
  TB_ASSERT_CONTAINS(model->external.items[0].path, "/sub/w.bin");
  tb_model_destroy(model);
}

static void test_load_memory_with_base_dir(void **state) {
  (void)state;
  write_model("weights.bin", 16, 16);
  char path[128];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  FILE *f = fopen(path, "rb");
  unsigned char buf[4096];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  tb_model *model;
  TB_ASSERT_OK(tb_model_load_memory(buf, n, dir, &model));
  assert_memory_equal(weight(model)->data, weights, sizeof weights);
  tb_model_destroy(model);
  assert_int_equal(tb_model_load_memory(buf, n, NULL, &model), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "initializer 'w': has external data 'weights.bin'");
}

static void expect_refused(const char *location, long offset, long length, const char *needle) {
  write_model(location, offset, length);
  char path[128];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  tb_model *model = (tb_model *)0x1;
  tb_status st = tb_model_load(path, &model);
  if (st != TB_ERR_MODEL) fail_msg("%s: want TB_ERR_MODEL, got %s: %s", location, tb_status_str(st), tb_last_error());
  assert_null(model);
  TB_ASSERT_CONTAINS(tb_last_error(), "graph 'ext': initializer 'w'");
  TB_ASSERT_CONTAINS(tb_last_error(), needle);
}

static void test_refusals(void **state) {
  (void)state;
  char rel[128], abs[128];
  snprintf(rel, sizeof rel, "../%s/secret.bin", strrchr(outside, '/') + 1);
  expect_refused(rel, -1, -1, "contains '..'");
  expect_refused("sub/../weights.bin", -1, -1, "'sub/../weights.bin' contains '..'");
  snprintf(abs, sizeof abs, "%s/secret.bin", outside);
  expect_refused(abs, -1, -1, "is absolute");
  expect_refused("missing.bin", -1, -1, "'missing.bin' (in '");
  expect_refused("missing.bin", -1, -1, "cannot be found");
  expect_refused("weights.bin", 1000, -1, "offset 1000 is beyond the end of 'weights.bin' (64 bytes)");
  expect_refused("weights.bin", 56, -1, "'weights.bin' has 8 bytes after offset 56, 16 needed");
  expect_refused("weights.bin", 0, 12, "external_data length 12, 16 expected for float[4]");
  expect_refused("escape.bin", -1, -1, "'escape.bin' resolves to");
  expect_refused("escape.bin", -1, -1, "outside the model's folder");
  expect_refused("sub", -1, -1, "'sub' is not a regular file");
  expect_refused("", -1, -1, "location is empty");
}

/* A location with a NUL inside would name another file than the model says: refused. */
static void test_nul_in_location(void **state) {
  (void)state;
  static const char location[] = "weights.bin\0/../../secret.bin";
  write_model_n(location, sizeof location - 1, -1, -1);
  char path[128];
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  tb_model *model = (tb_model *)0x1;
  assert_int_equal(tb_model_load(path, &model), TB_ERR_MODEL);
  assert_null(model);
  TB_ASSERT_CONTAINS(tb_last_error(), "graph 'ext': initializer: an external_data value has a NUL byte at position 11 of "
                                      "its 29 ('weights.bin' then more); it would cut the text short: remove the NUL from the model");
}

/* A FIFO as the external data file is refused at once; opening it for reading would wait for a writer. */
static void test_fifo_location(void **state) {
  (void)state;
  char fifo[128];
  snprintf(fifo, sizeof fifo, "%s/pipe.bin", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  alarm(30); /* a hang fails the test (SIGALRM) instead of stalling the suite */
  expect_refused("pipe.bin", -1, -1, "external data 'pipe.bin' is not a regular file (the external data file ");
  expect_refused("pipe.bin", -1, -1, "/pipe.bin is a FIFO (named pipe), not a regular file; give the path of a file)");
  alarm(0);
  unlink(fifo);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mapped_in_place_when_aligned),
      cmocka_unit_test(test_copied_when_misaligned),
      cmocka_unit_test(test_subfolder_and_inner_symlink),
      cmocka_unit_test(test_load_memory_with_base_dir),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_nul_in_location),
      cmocka_unit_test(test_fifo_location),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
