/* SHA-256 (src/core/sha256.c) against the FIPS 180-2 test vectors, fed whole and in odd pieces, its SHA-NI
 * block function against the portable one, and tb_model_sha256 against the sha256sum tool on model files (read and mapped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/sha256.h"
#include "core/sha256_impl.h"
#include "model/model_impl.h"
#include "test_onnx_pbw.h"
#include "test_util.h"

static void hex_of(tb_sha256 *h, char out[65]) {
  uint8_t d[32];
  tb_sha256_final(h, d);
  for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void test_fips_vectors(void **state) {
  (void)state;
  char hex[65];
  tb_sha256_hex("abc", 3, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  tb_sha256_hex(two, strlen(two), hex);
  assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  tb_sha256_hex("", 0, hex);
  assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  /* One million 'a', fed in pieces of 1..997 bytes that straddle block edges. */
  char *a = malloc(1000000);
  assert_non_null(a);
  memset(a, 'a', 1000000);
  tb_sha256 h;
  tb_sha256_init(&h);
  size_t done = 0, piece = 1;
  while (done < 1000000) {
    size_t n = piece < 1000000 - done ? piece : 1000000 - done;
    tb_sha256_update(&h, a + done, n);
    done += n;
    piece = piece % 997 + 13;
  }
  hex_of(&h, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  tb_sha256_hex(a, 1000000, hex);
  assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  /* 55, 56 and 64 bytes: the padding edge cases. */
  const struct { size_t n; const char *want; } edges[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
  };
  for (size_t i = 0; i < 3; i++) {
    tb_sha256_hex(a, edges[i].n, hex);
    assert_string_equal(hex, edges[i].want);
  }
  free(a);
}

/* The SHA-NI block function against the portable one: random states, runs of 1..33 blocks from unaligned
 * addresses. */
static void test_shani_matches_portable(void **state) {
  (void)state;
  if (!tb_sha256_shani_available()) {
    TBT_SKIP("this CPU has no SHA extensions: the portable path is the only one (test_fips_vectors)");
    return;
  }
  uint64_t seed = 0x9e3779b97f4a7c15u;
  uint8_t data[40 * 64];
  for (size_t i = 0; i < sizeof data; i++) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    data[i] = (uint8_t)(seed >> 56);
  }
  for (size_t blocks = 1; blocks <= 33; blocks++) {
    uint32_t a[8], b[8];
    for (int i = 0; i < 8; i++) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      a[i] = b[i] = (uint32_t)(seed >> 32);
    }
    tb_sha256_portable_blocks(a, data + blocks % 7, blocks);
    tb_sha256_shani_blocks(b, data + blocks % 7, blocks);
    assert_memory_equal(a, b, sizeof a);
  }
}

static void sha256sum_of(const char *path, char out[65]) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "sha256sum '%s'", path);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  assert_non_null(fgets(out, 65, p));
  pclose(p);
}

static void check_file(const char *path) {
  tb_model *model;
  TB_ASSERT_OK(tb_model_load(path, &model));
  char want[65];
  sha256sum_of(path, want);
  assert_string_equal(tb_model_sha256(model), want);
  assert_string_equal(tb_model_sha256(model), want); /* cached */
  tb_model_destroy(model);
}

static void test_model_hash_matches_sha256sum(void **state) {
  (void)state;
  /* Small (read) and large (mapped) files built here; a real one when the test data is installed. */
  for (size_t pad = 0; pad <= 9000; pad += 9000) {
    pbw g = {0}, m = {0};
    pbw_node(&g, "r", "Relu", "x", "y", NULL);
    pbw_str(&g, 2, "g");
    int64_t d[1] = {2};
    pbw_value_info(&g, 11, "x", 1, d, 1);
    pbw_value_info(&g, 12, "y", 1, d, 1);
    if (pad) {
      char *doc = calloc(1, pad);
      pbw_bytes(&m, 6, doc, pad);
      free(doc);
    }
    pbw body = pbw_model(&g);
    pbw_raw(&m, body.data, body.len);
    free(body.data);
    char path[] = "/tmp/tb_onnx_sha_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, m.data, m.len), (ssize_t)m.len);
    close(fd);
    check_file(path);
    /* The same bytes from memory hash the same. */
    tb_model *model;
    TB_ASSERT_OK(tb_model_load_memory(m.data, m.len, NULL, &model));
    char want[65];
    sha256sum_of(path, want);
    assert_string_equal(tb_model_sha256(model), want);
    tb_model_destroy(model);
    unlink(path);
    free(m.data);
  }
  const char *real = "/usr/share/libonnx-testdata/data/pytorch-operator/test_operator_conv/model.onnx";
  if (access(real, R_OK) == 0) check_file(real);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fips_vectors),
      cmocka_unit_test(test_shani_matches_portable),
      cmocka_unit_test(test_model_hash_matches_sha256sum),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
