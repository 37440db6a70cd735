/* `tb` fed bad input on purpose (issue 17, item 9), each case checked for its exit code (docs/cli.md's
 * table), its sentence and what it printed: outputs whose names come to the same file, model names that
 * are not UTF-8 or hold control characters, a stdout that cannot be written, files and folders that cannot
 * be written, a missing --compare-dir, an unknown backend in a list, numbers out of range, a directory as
 * --input. The models are built here byte by byte (test_onnx_pbw.h), so their names can hold any byte. */
#include <iconv.h>
#include <sys/stat.h>
#include "test_cli_util.h"
#include "test_onnx_pbw.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"
#define CNN MODELS "cnn_small.onnx"

static char dir[64];        /* the model and its input, readable by everyone */
static char model[128];     /* x -> Identity -> out1, x -> Neg -> out2 */
static char input_npy[128]; /* x = [1.5, -2] */

/* Write the model with input `in` (f32 [2]) and the outputs out1 = in, out2 = -in, named as given. */
static void write_model(const char *in, const char *out1, const char *out2) {
  pbw g = {0};
  int64_t dims[1] = {2};
  pbw_node(&g, "copy", "Identity", in, out1, NULL);
  pbw_node(&g, "negate", "Neg", in, out2, NULL);
  pbw_str(&g, 2, "bad_names");
  pbw_value_info(&g, 11, in, 1, dims, 1);
  pbw_value_info(&g, 12, out1, 1, dims, 1);
  pbw_value_info(&g, 12, out2, 1, dims, 1);
  pbw m = pbw_model(&g);
  FILE *f = fopen(model, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(m.data, 1, m.len, f), m.len);
  assert_int_equal(fclose(f), 0);
  free(m.data);
}

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  snprintf(dir, sizeof dir, "/tmp/tb-bad-input-XXXXXX");
  assert_non_null(mkdtemp(dir));
  assert_int_equal(chmod(dir, 0755), 0); /* the cases run as nobody read from here */
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  snprintf(input_npy, sizeof input_npy, "%s/x.npy", dir);
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  tb_tensor *t = NULL;
  int64_t shape[1] = {2};
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, shape, &t));
  float *v = tb_tensor_host_data(t);
  v[0] = 1.5f;
  v[1] = -2.0f;
  TB_ASSERT_OK(tb_npy_save(input_npy, t));
  assert_int_equal(chmod(input_npy, 0644), 0);
  tb_tensor_destroy(t);
  tb_backend_destroy(b);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
  return 0;
}

/* A folder of its own under dir, made with `mode`. */
static void sub_dir(const char *name, mode_t mode, char *path, size_t size) {
  snprintf(path, size, "%s/%s", dir, name);
  assert_int_equal(mkdir(path, 0700), 0);
  assert_int_equal(chmod(path, mode), 0);
}

static void load_f32x2(const char *path, float want0, float want1) {
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_npy_load(path, b, &t));
  assert_int_equal(tb_tensor_numel(t), 2);
  const float *v = tb_tensor_host_data(t);
  assert_float_equal(v[0], want0, 0);
  assert_float_equal(v[1], want1, 0);
  tb_tensor_destroy(t);
  tb_backend_destroy(b);
}

/* true when text is well-formed UTF-8, by iconv (an independent decoder) */
static bool is_utf8(const char *text) {
  iconv_t cd = iconv_open("UTF-32LE", "UTF-8");
  assert_true(cd != (iconv_t)-1);
  size_t in_left = strlen(text), out_size = 4 * in_left + 4, out_left = out_size;
  char *out = malloc(out_size), *in = (char *)text, *o = out;
  assert_non_null(out);
  bool ok = iconv(cd, &in, &in_left, &o, &out_left) != (size_t)-1 && in_left == 0;
  free(out);
  iconv_close(cd);
  return ok;
}

/* "a/b" and "a_b" both come to a_b.npy: the later one is written to a_b_2.npy, a note says so, the wrote:
 * lines name each file, each file holds its own output, and --compare-dir reads them back the same way. */
static void outputs_whose_names_collide(void **state) {
  (void)state;
  write_model("x", "a/b", "a_b");
  char out_dir[128], args[1024];
  sub_dir("out", 0755, out_dir, sizeof out_dir);
  snprintf(args, sizeof args, "run %s --backend cpu --input x=%s --output-dir %s", model, input_npy, out_dir);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  assert_string_equal(r.err, "");
  TB_ASSERT_CONTAINS(r.out, "note:     output 'a_b' is in a_b_2.npy: 'a/b' before it is in a_b.npy\n");
  char want[512];
  snprintf(want, sizeof want, "output a/b: f32 [2]\n  values: 1.5 -2\n  sum:    -0.5\n");
  TB_ASSERT_CONTAINS(r.out, want);
  const char *first = strstr(r.out, "output a/b:"), *second = strstr(r.out, "output a_b:");
  assert_non_null(first);
  assert_non_null(second);
  snprintf(want, sizeof want, "  wrote:  %s/a_b.npy\n", out_dir);
  assert_true(strstr(first, want) != NULL && strstr(first, want) < second);
  snprintf(want, sizeof want, "  wrote:  %s/a_b_2.npy\n", out_dir);
  assert_true(strstr(second, want) != NULL);
  tcli_free(&r);
  char path[256];
  snprintf(path, sizeof path, "%s/a_b.npy", out_dir);
  load_f32x2(path, 1.5f, -2.0f);
  snprintf(path, sizeof path, "%s/a_b_2.npy", out_dir);
  load_f32x2(path, -1.5f, 2.0f);

  /* the JSON names the files too */
  snprintf(args, sizeof args, "run %s --backend cpu --input x=%s --output-dir %s --json", model, input_npy, out_dir);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *j = tcli_json(r.out);
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(j, "outputs");
  assert_int_equal(cJSON_GetArraySize(outs), 2);
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(outs, 1), "name"), "a_b");
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(outs, 1), "written"), path);
  cJSON_Delete(j);
  tcli_free(&r);

  /* the same names for --compare-dir: both match */
  snprintf(args, sizeof args, "run %s --backend cpu --input x=%s --compare-dir %s", model, input_npy, out_dir);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  const char *ok = strstr(r.out, "compare: ok: 0 of 2 elements differ");
  assert_non_null(ok);
  assert_non_null(strstr(ok + 1, "compare: ok: 0 of 2 elements differ"));
  tcli_free(&r);

  /* a third output naming a_b_2 itself keeps it; the renamed one takes a_b_3 */
  write_model("x", "a_b", "a_b_2");
  snprintf(args, sizeof args, "run %s --backend cpu --input x=%s --output-dir %s", model, input_npy, out_dir);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  assert_null(strstr(r.out, "note:     output")); /* no two outputs collide here */
  snprintf(want, sizeof want, "  wrote:  %s/a_b_2.npy\n", out_dir);
  TB_ASSERT_CONTAINS(r.out, want);
  tcli_free(&r);
}

/* Names that are not UTF-8 become U+FFFD in --json: the whole output is UTF-8 and JSON; valid UTF-8 stays. */
static void json_is_always_utf8(void **state) {
  (void)state;
  write_model("x", "bad\xff\xfe", "ok\xc3\xa9\xc0\xaf\xed\xa0\x80");
  char args[1024];
  snprintf(args, sizeof args, "run %s --backend cpu --input x=%s --json", model, input_npy);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  assert_true(is_utf8(r.out));
  cJSON *j = tcli_json(r.out);
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(j, "outputs");
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(outs, 0), "name"), "bad\xef\xbf\xbd\xef\xbf\xbd");
  /* é is kept; an overlong '/' (C0 AF) and a surrogate (ED A0 80) are one U+FFFD per byte */
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(outs, 1), "name"),
                      "ok\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  cJSON_Delete(j);
  tcli_free(&r);
}

/* ESC, BEL, DEL, a newline and a byte that is not UTF-8 in a model's names: escaped in text output (stdout
 * and the error line), JSON-escaped in --json; well-formed UTF-8 (here U+009B) passes as it is. */
static void control_characters_are_escaped(void **state) {
  (void)state;
  write_model("in\x1b[2J\nz", "y\x1b[31m\x07\x7f\xc2\x9b", "p\nq\xff");
  char args[1024];
  snprintf(args, sizeof args, "run %s --backend cpu", model);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "output y\\x1b[31m\\x07\\x7f\xc2\x9b: f32 [2]\n");
  TB_ASSERT_CONTAINS(r.out, "output p\\nq\\xff: f32 [2]\n");
  assert_null(strchr(r.out, '\x1b'));
  assert_null(strchr(r.out, '\x07'));
  assert_true(is_utf8(r.out));
  tcli_free(&r);

  /* an error line that quotes the model's input name stays one line, without the ESC */
  snprintf(args, sizeof args, "run %s --backend cpu --input nosuch=%s", model, input_npy);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 2);
  assert_string_equal(r.err, "tb: error: the model has no input 'nosuch'; its inputs are 'in\\x1b[2J\\nz'\n");
  tcli_free(&r);

  /* the table of tb validate too */
  snprintf(args, sizeof args, "validate %s --levels O0", model);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, " p\\nq\\xff ");
  TB_ASSERT_CONTAINS(r.out, " y\\x1b[31m\\x07\\x7f\xc2\x9b ");
  assert_null(strchr(r.out, '\x1b'));
  tcli_free(&r);

  /* --json escapes them the JSON way, and nothing else */
  snprintf(args, sizeof args, "run %s --backend cpu --json", model);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "\"name\":\"y\\u001b[31m\\u0007\\u007f\xc2\x9b\"");
  TB_ASSERT_CONTAINS(r.out, "\"name\":\"p\\nq\\ufffd\"");
  assert_null(strstr(r.out, "\\x"));
  cJSON *j = tcli_json(r.out);
  cJSON_Delete(j);
  tcli_free(&r);
}

/* A stdout that cannot be written: exit 4 with the reason, not 0. */
static void stdout_that_cannot_be_written(void **state) {
  (void)state;
  tcli_run r = tcli("--version >/dev/full");
  TCLI_ASSERT_EXIT(r, 4);
  assert_string_equal(r.err, "tb: error: could not write the output to stdout: No space left on device; make room on "
                             "the disk, or send the output somewhere writable\n");
  tcli_free(&r);
  char args[1024];
  write_model("x", "y", "z");
  snprintf(args, sizeof args, "run %s --backend cpu --json >/dev/full", model);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 4);
  TB_ASSERT_CONTAINS(r.err, "could not write the output to stdout: No space left on device");
  tcli_free(&r);
  r = tcli("devices >&-");
  TCLI_ASSERT_EXIT(r, 4);
  assert_string_equal(r.err, "tb: error: stdout is closed, so nothing tb prints could be read; run it with stdout open "
                             "(to discard the output, redirect it to /dev/null)\n");
  tcli_free(&r);
  /* a command that failed keeps its own code */
  r = tcli("run /tmp/tb-no-such-model.onnx >/dev/full");
  TCLI_ASSERT_EXIT(r, 2);
  tcli_free(&r);
}

/* An output file on a full disk (a link to /dev/full): exit 4 with the reason, not "Success". */
static void output_file_on_a_full_disk(void **state) {
  (void)state;
  write_model("x", "y", "z");
  char out_dir[128], link[256], args[1024], want[512];
  sub_dir("full", 0755, out_dir, sizeof out_dir);
  snprintf(link, sizeof link, "%s/y.npy", out_dir);
  assert_int_equal(symlink("/dev/full", link), 0);
  snprintf(args, sizeof args, "run %s --backend cpu --input x=%s --output-dir %s", model, input_npy, out_dir);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 4);
  snprintf(want, sizeof want, "tb: error: --output-dir: writing the .npy file %s failed: No space left on device\n", link);
  assert_string_equal(r.err, want);
  tcli_free(&r);
}

/* Permission denied on --output-dir, --record, --export-weights: the I/O exit code 4, not 3. */
static void permission_denied_is_an_io_error(void **state) {
  (void)state;
  write_model("x", "y", "z");
  char locked[128], args[1024], want[512];
  sub_dir("locked", 0500, locked, sizeof locked);
  const char *cases[][2] = {{"--output-dir", ""}, {"--record", "/run.safetensors"}, {"--export-weights", "/w.safetensors"}};
  for (size_t i = 0; i < 3; i++) {
    snprintf(args, sizeof args, "run %s --backend cpu --input x=%s %s %s%s", model, input_npy, cases[i][0], locked,
             cases[i][1]);
    tcli_run r = tcli_unprivileged(args);
    TCLI_ASSERT_EXIT(r, 4);
    snprintf(want, sizeof want, "%s/", locked);
    TB_ASSERT_CONTAINS(r.err, want);
    TB_ASSERT_CONTAINS(r.err, "Permission denied");
    if (i == 0) {
      snprintf(want, sizeof want, "tb: error: --output-dir: cannot create the .npy file %s/y.npy: Permission denied",
               locked);
      TB_ASSERT_CONTAINS(r.err, want);
    }
    tcli_free(&r);
  }
}

static void compare_dir_that_is_missing(void **state) {
  (void)state;
  write_model("x", "y", "z");
  char args[1024], want[512];
  snprintf(args, sizeof args, "run %s --backend cpu --compare-dir %s/nosuch", model, dir);
  snprintf(want, sizeof want,
           "tb: error: 'tb run --compare-dir %s/nosuch': there is no such folder; give the folder that 'tb run "
           "--output-dir' wrote the references to; see 'tb run --help'\n",
           dir);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 2);
  assert_string_equal(r.err, want);
  assert_string_equal(r.out, ""); /* refused before anything ran */
  tcli_free(&r);
  snprintf(args, sizeof args, "run %s --backend cpu --compare-dir %s", model, input_npy);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 2);
  TB_ASSERT_CONTAINS(r.err, "it is a file, not a folder");
  tcli_free(&r);
  /* a folder without the reference of one output */
  char refs[128];
  sub_dir("refs", 0755, refs, sizeof refs);
  snprintf(args, sizeof args, "run %s --backend cpu --input x=%s --compare-dir %s", model, input_npy, refs);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 2);
  snprintf(want, sizeof want, "tb: error: a reference file is missing in %s (see the compare lines)", refs);
  TB_ASSERT_CONTAINS(r.err, want);
  snprintf(want, sizeof want, "compare: FAILED: cannot open the .npy file %s/y.npy", refs);
  TB_ASSERT_CONTAINS(r.out, want);
  tcli_free(&r);
}

static void unknown_backend_in_a_list(void **state) {
  (void)state;
  tcli_run r = tcli("validate " CNN " --backends cpu,nosuch --levels O0");
  TCLI_ASSERT_EXIT(r, 2);
  TB_ASSERT_CONTAINS(r.err, "tb: error: 'tb validate --backends cpu,nosuch': ");
  TB_ASSERT_CONTAINS(r.err, "'nosuch'");
  TB_ASSERT_CONTAINS(r.err, "opencl"); /* the valid names */
  TB_ASSERT_CONTAINS(r.err, "; see 'tb validate --help'\n");
  assert_string_equal(r.out, ""); /* refused before anything ran */
  tcli_free(&r);
}

/* A number too long for 64 bits, or outside its range, is refused wherever the CLI parses one. */
static void numbers_out_of_range(void **state) {
  (void)state;
  write_model("x", "y", "z");
  char args[1024], want[512];
  const char *big = "12345678901234567890123";
  const char *commands[] = {"run", "validate", "bench"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(args, sizeof args, "%s %s --dim batch=%s", commands[i], CNN, big);
    snprintf(want, sizeof want,
             "tb: error: 'tb %s --dim batch' takes a whole number from 0 to 1099511627776, not '%s'; see 'tb %s "
             "--help'\n",
             commands[i], big, commands[i]);
    tcli_run r = tcli(args);
    TCLI_ASSERT_EXIT(r, 2);
    assert_string_equal(r.err, want);
    tcli_free(&r);
    snprintf(args, sizeof args, "%s %s --seed %s", commands[i], CNN, big);
    snprintf(want, sizeof want, "'tb %s --seed' takes a whole number from 0 to 9007199254740992, not '%s'", commands[i],
             big);
    tcli_expect_err(args, 2, want);
  }
  tcli_expect_err("run " CNN " --repeat 99999999999999999999", 2,
                  "'tb run --repeat' takes a whole number from 1 to 100000, not '99999999999999999999'");
  tcli_expect_err("run " CNN " --threads 1.5", 2, "'tb run --threads' takes a whole number from 0 to 4096, not '1.5'");
  tcli_expect_err("run " CNN " --dim batch=' 3'", 2, "'tb run --dim batch' takes a whole number from 0 to");
  tcli_expect_err("run " CNN " --rtol 1e999", 2, "'tb run --rtol' takes a number from 0 to 1e+300, not '1e999'");
  tcli_expect_err("validate " CNN " --rtol nan --atol 0", 2, "'tb validate --rtol' takes a number from 0 to 1e+300, not 'nan'");
  tcli_expect_err("bench " CNN " --iters 99999999999999999999", 2,
                  "'tb bench --iters' takes a whole number from 1 to 1000000, not '99999999999999999999'");
}

static void directory_as_input(void **state) {
  (void)state;
  write_model("x", "y", "z");
  char args[1024], want[512];
  const char *commands[] = {"run", "validate", "bench"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(args, sizeof args, "%s %s --input x=%s", commands[i], model, dir);
    snprintf(want, sizeof want,
             "tb: error: 'tb %s --input x=%s': %s is a directory, not a .npy file; give the path of a .npy file; see "
             "'tb %s --help'\n",
             commands[i], dir, dir, commands[i]);
    tcli_run r = tcli(args);
    TCLI_ASSERT_EXIT(r, 2);
    assert_string_equal(r.err, want);
    tcli_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(outputs_whose_names_collide, setup, teardown),
      cmocka_unit_test_setup_teardown(json_is_always_utf8, setup, teardown),
      cmocka_unit_test_setup_teardown(control_characters_are_escaped, setup, teardown),
      cmocka_unit_test_setup_teardown(stdout_that_cannot_be_written, setup, teardown),
      cmocka_unit_test_setup_teardown(output_file_on_a_full_disk, setup, teardown),
      cmocka_unit_test_setup_teardown(permission_denied_is_an_io_error, setup, teardown),
      cmocka_unit_test_setup_teardown(compare_dir_that_is_missing, setup, teardown),
      cmocka_unit_test_setup_teardown(unknown_backend_in_a_list, setup, teardown),
      cmocka_unit_test_setup_teardown(numbers_out_of_range, setup, teardown),
      cmocka_unit_test_setup_teardown(directory_as_input, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
