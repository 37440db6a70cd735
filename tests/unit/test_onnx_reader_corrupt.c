/* Broken ONNX files never crash the reader: every truncation of a small model is TB_ERR_MODEL, every
 * single-byte corruption gives TB_OK or an error with a sentence (run under ASan in CI), and every input
 * the fuzzer once crashed on (tests/fuzz/regressions/) now loads as TB_ERR_MODEL. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "model/model_impl.h"
#include "test_onnx_pbw.h"
#include "test_util.h"

#define TESTDATA "/usr/share/libonnx-testdata/data"
#define REGRESSIONS TB_TEST_FIXTURES "/../fuzz/regressions"

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  assert_non_null(buf);
  *size = fread(buf, 1, (size_t)n, f);
  fclose(f);
  return buf;
}

/* A model with a bit of everything: initializers (raw and typed), attributes, an If with subgraphs. */
static pbw rich_model(void) {
  pbw g = {0}, t = {0}, attrs = {0}, a = {0}, sub = {0};
  int64_t d2[2] = {2, 2}, d1[1] = {2};
  float w[4] = {1, 2, 3, 4};
  pbw_tensor_head(&t, "w", 1, d2, 2);
  pbw_bytes(&t, 9, w, sizeof w);
  pbw_msg(&g, 5, &t);
  int64_t one[1] = {1};
  pbw_tensor_head(&t, "shape", 7, one, 1);
  pbw_packed_ints(&t, 7, d1, 1);
  pbw_msg(&g, 5, &t);
  pbw_str(&a, 1, "alpha");
  pbw_int(&a, 20, 1);
  pbw_float(&a, 2, 0.5f);
  pbw_msg(&attrs, 5, &a);
  pbw_node(&g, "lrelu", "LeakyRelu", "x", "h", &attrs);
  pbw_node(&sub, "n", "Neg", "h", "s", NULL);
  pbw_str(&sub, 2, "branch");
  pbw_value_info(&sub, 12, "s", 1, d2, 2);
  pbw_str(&a, 1, "then_branch");
  pbw_int(&a, 20, 5);
  pbw_msg(&a, 6, &sub);
  pbw_msg(&attrs, 5, &a);
  pbw_node(&g, "if", "If", "c", "y", &attrs);
  pbw_str(&g, 2, "rich");
  int64_t dn[2] = {-1, 2};
  pbw_value_info(&g, 11, "x", 1, dn, 2);
  pbw_value_info(&g, 12, "y", 1, d2, 2);
  return pbw_model(&g);
}

static void check_truncations(const unsigned char *data, size_t size, const char *what) {
  assert_true(size > 8);
  tb_model *model;
  TB_ASSERT_OK(tb_model_load_memory(data, size, NULL, &model));
  tb_model_destroy(model);
  for (size_t n = 1; n < size; n++) {
    model = (tb_model *)0x1;
    tb_status st = tb_model_load_memory(data, n, NULL, &model);
    if (st != TB_ERR_MODEL)
      fail_msg("%s cut to %zu of %zu bytes: %s (%s)", what, n, size, tb_status_str(st), tb_last_error());
    assert_null(model);
    assert_true(strlen(tb_last_error()) > 20);
  }
}

static void test_every_truncation_is_a_model_error(void **state) {
  (void)state;
  pbw m = rich_model();
  check_truncations(m.data, m.len, "the rich model");
  free(m.data);
  size_t size;
  unsigned char *relu = read_all(TESTDATA "/node/test_relu/model.onnx", &size);
  if (!relu) skip();
  check_truncations(relu, size, "test_relu/model.onnx");
  free(relu);
}

/* A truncated file large enough to be mapped rather than read. */
static void test_truncated_mapped_file(void **state) {
  (void)state;
  pbw m = rich_model(), doc = {0};
  char pad[6000];
  memset(pad, 'd', sizeof pad);
  pbw_bytes(&doc, 6, pad, sizeof pad); /* doc_string first: the graph lands past the first page */
  pbw_raw(&doc, m.data, m.len);
  char path[] = "/tmp/tb_onnx_trunc_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, doc.data, doc.len - 7), (ssize_t)(doc.len - 7));
  close(fd);
  tb_model *model;
  assert_int_equal(tb_model_load(path, &model), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), path);
  TB_ASSERT_CONTAINS(tb_last_error(), "malformed protobuf");
  unlink(path);
  free(m.data);
  free(doc.data);
}

static size_t flip_every_byte(const unsigned char *data, size_t size) {
  static const unsigned char masks[] = {0xff, 0x80, 0x01, 0x7f};
  unsigned char *copy = malloc(size);
  assert_non_null(copy);
  size_t loaded = 0;
  for (size_t i = 0; i < size; i++)
    for (size_t k = 0; k < sizeof masks; k++) {
      memcpy(copy, data, size);
      copy[i] ^= masks[k];
      tb_model *model;
      tb_status st = tb_model_load_memory(copy, size, NULL, &model);
      if (st == TB_OK) {
        /* Still a model: everything about it must be readable. */
        loaded++;
        for (size_t j = 0; j < tb_model_input_count(model); j++) {
          tb_model_io io = {.size = sizeof io};
          TB_ASSERT_OK(tb_model_input(model, j, &io));
          assert_non_null(io.name);
        }
        assert_non_null(tb_model_property(model, "nodes"));
        tb_model_destroy(model);
      } else {
        if (st != TB_ERR_MODEL && st != TB_ERR_UNSUPPORTED)
          fail_msg("byte %zu ^ 0x%02x: %s (%s)", i, masks[k], tb_status_str(st), tb_last_error());
        assert_true(strlen(tb_last_error()) > 20);
      }
    }
  free(copy);
  return loaded;
}

static void test_every_byte_flip_is_handled(void **state) {
  (void)state;
  pbw m = rich_model();
  size_t loaded = flip_every_byte(m.data, m.len);
  assert_true(loaded > 0); /* flips inside names and float values still give a model */
  assert_true(loaded < m.len * 4);
  free(m.data);
  static const char *const models[] = {TESTDATA "/node/test_relu/model.onnx", TESTDATA "/node/test_if/model.onnx",
                                       TESTDATA "/pytorch-operator/test_operator_conv/model.onnx"};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    size_t size;
    unsigned char *data = read_all(models[i], &size);
    if (!data) continue;
    flip_every_byte(data, size);
    free(data);
  }
}

static void test_fuzzer_regressions(void **state) {
  (void)state;
  DIR *d = opendir(REGRESSIONS);
  assert_non_null(d);
  struct dirent *e;
  size_t files = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", REGRESSIONS, e->d_name);
    size_t size;
    unsigned char *data = read_all(path, &size);
    assert_non_null(data);
    tb_model *model = NULL;
    tb_status st = tb_model_load_memory(data, size, NULL, &model);
    if (st != TB_ERR_MODEL) fail_msg("%s: %s (%s)", e->d_name, tb_status_str(st), tb_last_error());
    assert_null(model);
    free(data);
    files++;
  }
  closedir(d);
  print_message("%zu fuzzer regression inputs rejected cleanly\n", files);
}

/* A model file of more than a page whose float raw_data starts `shift` bytes past a 4-byte boundary. */
static char *write_padded_model(int shift, const float *w, size_t n) {
  for (size_t pad = 6000; pad < 6008; pad++) {
    pbw g = {0}, t = {0}, m = {0};
    int64_t dims[1] = {(int64_t)n};
    pbw_tensor_head(&t, "w", 1, dims, 1);
    pbw_bytes(&t, 9, w, n * sizeof *w);
    pbw_msg(&g, 5, &t);
    pbw_node(&g, "add", "Add", "x", "y", NULL);
    pbw_str(&g, 2, "padded");
    pbw_value_info(&g, 11, "x", 1, dims, 1);
    pbw_value_info(&g, 12, "y", 1, dims, 1);
    char *doc = malloc(pad);
    memset(doc, 'd', pad);
    pbw_bytes(&m, 6, doc, pad);
    free(doc);
    pbw body = pbw_model(&g);
    pbw_raw(&m, body.data, body.len);
    free(body.data);
    const unsigned char *at = memmem(m.data, m.len, w, n * sizeof *w);
    assert_non_null(at);
    if ((size_t)(at - m.data) % 4 != (size_t)shift) {
      free(m.data);
      continue;
    }
    char *path = strdup("/tmp/tb_onnx_zc_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, m.data, m.len), (ssize_t)m.len);
    close(fd);
    free(m.data);
    return path;
  }
  fail_msg("no padding put the weights at shift %d", shift);
  return NULL;
}

/* raw_data is used in place (a pointer into the mapped file) when aligned for its type; otherwise the
 * model owns one aligned copy with the same bytes. */
static void test_raw_data_is_zero_copy(void **state) {
  (void)state;
  const float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int shift = 0; shift < 4; shift += 2) {
    char *path = write_padded_model(shift, w, 8);
    tb_model *model;
    TB_ASSERT_OK(tb_model_load(path, &model));
    const tb_ir_model *m = model->ir;
    assert_non_null(m->mapping); /* more than a page: mapped, not read */
    const tb_graph *g = m->graph;
    const tb_ir_tensor *t = g->values[tb_graph_find(g, "w")].constant;
    const unsigned char *p = t->data, *lo = m->file;
    bool inside = p >= lo && p < lo + m->file_size;
    assert_int_equal(inside, shift == 0);
    assert_int_equal((uintptr_t)p % 4, 0);
    assert_memory_equal(p, w, sizeof w);
    tb_model_destroy(model);
    unlink(path);
    free(path);
  }
}

/* The same on a real export: the weights' bytes are exactly the file's, wherever they live. */
static void test_real_model_weights(void **state) {
  (void)state;
  const char *path = TESTDATA "/pytorch-operator/test_operator_conv/model.onnx";
  size_t size;
  unsigned char *file = read_all(path, &size);
  if (!file) skip();
  tb_model *model;
  TB_ASSERT_OK(tb_model_load(path, &model));
  const tb_graph *g = model->ir->graph;
  size_t found = 0;
  for (size_t v = 0; v < g->n_values; v++) {
    const tb_ir_tensor *t = g->values[v].constant;
    if (!t || !t->nbytes) continue;
    assert_int_equal((uintptr_t)t->data % tb_dtype_size(t->dtype), 0);
    assert_non_null(memmem(file, size, t->data, t->nbytes));
    found++;
  }
  assert_int_equal(found, 1);
  assert_string_equal(tb_model_property(model, "weight_bytes"), "7488");
  tb_model_destroy(model);
  free(file);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_truncation_is_a_model_error),
      cmocka_unit_test(test_truncated_mapped_file),
      cmocka_unit_test(test_every_byte_flip_is_handled),
      cmocka_unit_test(test_fuzzer_regressions),
      cmocka_unit_test(test_raw_data_is_zero_copy),
      cmocka_unit_test(test_real_model_weights),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
