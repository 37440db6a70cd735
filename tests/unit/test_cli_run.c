/* `tb run`: the bundled CNN and encoder run on the reference inputs and match ONNX Runtime through
 * --compare-dir; the printed SHA-256 is that of the bytes --output-dir writes; random inputs are
 * deterministic per seed; symbolic dims come from --dim or default to 1 with a note; --json holds the same
 * facts; the prepare result is printed per level; --output-dir is made with its parents (a part that is a
 * file, or no permission: an error naming it); --device-only refuses a CPU fallback, and the placement of
 * each node is printed; and every bad argument or file is an error line with the CLI's exit code
 * (docs/cli.md). */
#include <sys/stat.h>
#include "core/sha256.h"
#include "test_cli_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"
#define CNN MODELS "cnn_small.onnx"
#define ENCODER MODELS "encoder_small.onnx"
#define CNN_IN "--input input=" MODELS "cnn_small/inputs/input.npy"
#define ENC_IN "--input x=" MODELS "encoder_small/inputs/x.npy"

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  return 0;
}

/* The value after "prefix" on the line that starts with it (leading spaces of the line skipped). */
static void field(const char *text, const char *prefix, char *buf, size_t size) {
  const char *p = strstr(text, prefix);
  if (!p) fail_msg("\"%s\" not in:\n%s", prefix, text);
  p += strlen(prefix);
  size_t n = strcspn(p, "\n");
  if (n >= size) n = size - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
}

static void cnn_matches_reference_at_each_level(void **state) {
  (void)state;
  const char *levels[] = {"O0", "O1", "none", "conservative"};
  for (size_t i = 0; i < 4; i++) {
    char args[2048];
    snprintf(args, sizeof args, "run %s --backend cpu --level %s %s --compare-dir %scnn_small/outputs", CNN, levels[i],
             CNN_IN, MODELS);
    tcli_run r = tcli(args);
    TCLI_ASSERT_EXIT(r, 0);
    TB_ASSERT_CONTAINS(r.out, "backend:  cpu:0");
    TB_ASSERT_CONTAINS(r.out, i % 2 ? "prepare:  level O1, precision fp32" : "prepare:  level O0, precision fp32");
    TB_ASSERT_CONTAINS(r.out, i % 2 ? "  pass:    conv_bn_folding" : "  passes:  none");
    TB_ASSERT_CONTAINS(r.out, "nodes 15 -> ");
    TB_ASSERT_CONTAINS(r.out, "output probs: f32 [1, 10]");
    TB_ASSERT_CONTAINS(r.out, "compare: ok: 0 of 10 elements differ (rtol 0.0001, atol 1e-05)");
    TB_ASSERT_CONTAINS(r.out, "run:      ");
    /* softmax: the sum of the probabilities is 1 */
    char sum[64];
    field(r.out, "  sum:    ", sum, sizeof sum);
    assert_float_equal(strtod(sum, NULL), 1.0, 1e-5);
    assert_string_equal(r.err, "");
    tcli_free(&r);
  }
}

static void output_dir_and_sha256(void **state) {
  (void)state;
  char dir[] = "/tmp/tb-run-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char args[2048];
  snprintf(args, sizeof args, "run %s --level O1 %s --output-dir %s", ENCODER, ENC_IN, dir);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "output y: f32 [2, 16, 64]");
  char written[512], sha[128];
  snprintf(written, sizeof written, "  wrote:  %s/y.npy", dir);
  TB_ASSERT_CONTAINS(r.out, written);
  field(r.out, "  sha256: ", sha, sizeof sha);
  /* the digest is of the output's bytes: the data part of the .npy just written */
  char path[512];
  snprintf(path, sizeof path, "%s/y.npy", dir);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  static unsigned char file[65536];
  size_t len = fread(file, 1, sizeof file, f);
  fclose(f);
  assert_int_equal(len, 128 + 2 * 16 * 64 * 4);
  char want[65];
  tb_sha256_hex(file + 128, len - 128, want);
  assert_string_equal(sha, want);
  /* and the file is what --compare-dir accepts */
  snprintf(args, sizeof args, "run %s --level O0 %s --compare-dir %s", ENCODER, ENC_IN, dir);
  tcli_run r2 = tcli(args);
  TCLI_ASSERT_EXIT(r2, 0);
  TB_ASSERT_CONTAINS(r2.out, "compare: ok: 0 of 2048 elements differ");
  tcli_free(&r2);
  unlink(path);
  rmdir(dir);
  tcli_free(&r);
}

/* --output-dir makes the folder and its missing parents, as `mkdir -p` does; a trailing '/' and "//" are fine. */
static void output_dir_made_with_parents(void **state) {
  (void)state;
  char base[] = "/tmp/tb-run-XXXXXX";
  assert_non_null(mkdtemp(base));
  char dir[256], args[2048], path[512];
  snprintf(dir, sizeof dir, "%s/a//b/c/", base);
  snprintf(args, sizeof args, "run %s --level O0 %s --output-dir %s", ENCODER, ENC_IN, dir);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  assert_string_equal(r.err, "");
  snprintf(path, sizeof path, "%s/a/b/c/y.npy", base);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_size, 128 + 2 * 16 * 64 * 4);
  tcli_free(&r);
  /* the folder exists now: a second run writes into it */
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  tcli_free(&r);
  unlink(path);
  const char *dirs[] = {"/a/b/c", "/a/b", "/a", ""};
  for (size_t i = 0; i < 4; i++) {
    snprintf(path, sizeof path, "%s%s", base, dirs[i]);
    assert_int_equal(rmdir(path), 0);
  }
}

/* A part of the path that is a file: an error naming it, exit 4 (a folder that cannot be made), nothing made. */
static void output_dir_part_is_a_file(void **state) {
  (void)state;
  char base[] = "/tmp/tb-run-XXXXXX";
  assert_non_null(mkdtemp(base));
  char file[256], args[2048], want[1024];
  snprintf(file, sizeof file, "%s/file", base);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  snprintf(args, sizeof args, "run %s --level O0 %s --output-dir %s/sub/deeper", ENCODER, ENC_IN, file);
  snprintf(want, sizeof want,
           "tb: error: --output-dir %s/sub/deeper: %s is a file, not a folder; give a folder path whose parts are "
           "folders\n",
           file, file);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 4);
  assert_string_equal(r.err, want);
  tcli_free(&r);
  /* the folder itself a file */
  snprintf(args, sizeof args, "run %s --level O0 %s --output-dir %s", ENCODER, ENC_IN, file);
  tcli_expect_err(args, 4, "is a file, not a folder");
  assert_int_equal(unlink(file), 0);
  assert_int_equal(rmdir(base), 0);
}

/* No permission to make the folder: an error naming the folder that could not be made, with the exit code
 * of writing an output into a folder without permission (both are failed output writes). Root runs tb as
 * nobody (tcli_unprivileged). */
static void output_dir_without_permission(void **state) {
  (void)state;
  char base[] = "/tmp/tb-run-XXXXXX";
  assert_non_null(mkdtemp(base));
  assert_int_equal(chmod(base, 0555), 0);
  char args[2048], want[1024];
  snprintf(args, sizeof args, "run %s --level O0 %s --output-dir %s/new/sub", ENCODER, ENC_IN, base);
  tcli_run made = tcli_unprivileged(args);
  snprintf(want, sizeof want,
           "tb: error: --output-dir %s/new/sub: cannot create the folder %s/new: Permission denied; give a folder "
           "you can write to\n",
           base, base);
  assert_string_equal(made.err, want);
  snprintf(args, sizeof args, "run %s --level O0 %s --output-dir %s", ENCODER, ENC_IN, base);
  tcli_run written = tcli_unprivileged(args);
  TB_ASSERT_CONTAINS(written.err, "cannot create the .npy file");
  assert_int_not_equal(made.code, 0);
  assert_int_equal(made.code, written.code);
  tcli_free(&made);
  tcli_free(&written);
  assert_int_equal(rmdir(base), 0);
}

static void random_inputs_follow_the_seed(void **state) {
  (void)state;
  char sha[3][128];
  const char *seeds[] = {"", "--seed 0", "--seed 7"};
  for (int i = 0; i < 3; i++) {
    char args[1024];
    snprintf(args, sizeof args, "run %s --level O0 %s", CNN, seeds[i]);
    tcli_run r = tcli(args);
    TCLI_ASSERT_EXIT(r, 0);
    TB_ASSERT_CONTAINS(r.out, i == 2 ? "note:     inputs are random (seed 7)" : "note:     inputs are random (seed 0)");
    field(r.out, "  sha256: ", sha[i], sizeof sha[i]);
    tcli_free(&r);
  }
  assert_string_equal(sha[0], sha[1]);
  assert_string_not_equal(sha[0], sha[2]);
}

static void symbolic_dims(void **state) {
  (void)state;
  tcli_run r = tcli("run " ENCODER " --level O0");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "note:     input 'x' dimension 0 'batch' is symbolic: using 1 (set it with --dim batch=N)");
  TB_ASSERT_CONTAINS(r.out, "output y: f32 [1, 16, 64]");
  tcli_free(&r);
  r = tcli("run " ENCODER " --level O1 --dim batch=3");
  TCLI_ASSERT_EXIT(r, 0);
  assert_null(strstr(r.out, "is symbolic"));
  TB_ASSERT_CONTAINS(r.out, "output y: f32 [3, 16, 64]");
  tcli_free(&r);
}

static void json_output(void **state) {
  (void)state;
  tcli_run r = tcli("run " CNN " --level O1 --json --repeat 3 " CNN_IN " --compare-dir " MODELS "cnn_small/outputs");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *j = tcli_json(r.out);
  assert_string_equal(tcli_json_str(j, "model"), CNN);
  assert_int_equal(strlen(tcli_json_str(j, "model_sha256")), 64);
  assert_string_equal(tcli_json_str(j, "device"), "cpu:0");
  const cJSON *prep = cJSON_GetObjectItemCaseSensitive(j, "prepare");
  assert_true(cJSON_IsObject(prep));
  assert_string_equal(tcli_json_str(prep, "level"), "O1");
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "runs")->valueint, 3);
  const cJSON *median = cJSON_GetObjectItemCaseSensitive(j, "run_ms_median");
  assert_true(cJSON_IsNumber(median) && median->valuedouble > 0);
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(j, "outputs");
  assert_int_equal(cJSON_GetArraySize(outs), 1);
  const cJSON *o = cJSON_GetArrayItem(outs, 0);
  assert_string_equal(tcli_json_str(o, "name"), "probs");
  assert_string_equal(tcli_json_str(o, "dtype"), "f32");
  const cJSON *shape = cJSON_GetObjectItemCaseSensitive(o, "shape");
  assert_int_equal(cJSON_GetArraySize(shape), 2);
  assert_int_equal(cJSON_GetArrayItem(shape, 1)->valueint, 10);
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "first_values")), 8);
  assert_float_equal(cJSON_GetObjectItemCaseSensitive(o, "sum")->valuedouble, 1.0, 1e-5);
  assert_int_equal(strlen(tcli_json_str(o, "sha256")), 64);
  const cJSON *cmp = cJSON_GetObjectItemCaseSensitive(o, "compare");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cmp, "ok")));
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(cmp, "mismatches")->valueint, 0);
  cJSON_Delete(j);
  tcli_free(&r);
}

/* --profile: the time per operator and the slowest nodes, with the kernel that ran; the same per node in
 * the JSON; the encoder on opencl:0 shows its nodes on the device. */
static void profile(void **state) {
  (void)state;
  tcli_run r = tcli("run " CNN " --backend cpu --level O2 --repeat 3 --profile " CNN_IN);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "over 2 timed runs\n"); /* the first of 3 is warm-up */
  TB_ASSERT_CONTAINS(r.out, "  operator                     where     nodes     ms/run   share\n");
  TB_ASSERT_CONTAINS(r.out, "  tb.FusedConv                 cpu           3 ");
  TB_ASSERT_CONTAINS(r.out, "  slowest nodes:\n");
  TB_ASSERT_CONTAINS(r.out, "fast fp32 (");
  /* the method each convolution's prepared state runs, after the kernel */
  if (__builtin_cpu_supports("avx512f")) {
    TB_ASSERT_CONTAINS(r.out, "fast fp32 (fma,avx512f), winograd  /block0/conv/Conv\n"); /* 3x3 stride 1 */
    assert_null(strstr(r.out, "implicit GEMM"));
  }
  tcli_free(&r);
  setenv("TB_CONV_WINOGRAD", "off", 1);
  r = tcli("run " CNN " --backend cpu --level O2 --repeat 2 --profile " CNN_IN);
  unsetenv("TB_CONV_WINOGRAD");
  TCLI_ASSERT_EXIT(r, 0);
  if (__builtin_cpu_supports("avx512f")) TB_ASSERT_CONTAINS(r.out, "fast fp32 (fma,avx512f), direct  /block0/conv/Conv\n");
  assert_null(strstr(r.out, "winograd"));
  tcli_free(&r);
  /* --conv-algo (tb_prepare_options.conv_algo) picks the method and wins over the environment's default */
  setenv("TB_CONV_WINOGRAD", "off", 1);
  r = tcli("run " CNN " --backend cpu --level O2 --repeat 2 --conv-algo winograd --profile " CNN_IN);
  unsetenv("TB_CONV_WINOGRAD");
  TCLI_ASSERT_EXIT(r, 0);
  if (__builtin_cpu_supports("avx512f")) TB_ASSERT_CONTAINS(r.out, "fast fp32 (fma,avx512f), winograd  /block0/conv/Conv\n");
  assert_null(strstr(r.out, ", direct"));
  tcli_free(&r);
  r = tcli("run " CNN " --backend cpu --level O2 --repeat 2 --conv-algo direct --profile " CNN_IN);
  TCLI_ASSERT_EXIT(r, 0);
  if (__builtin_cpu_supports("avx512f")) TB_ASSERT_CONTAINS(r.out, "fast fp32 (fma,avx512f), direct  /block0/conv/Conv\n");
  assert_null(strstr(r.out, "winograd"));
  tcli_free(&r);
  r = tcli("run " CNN " --backend cpu --level O2 --repeat 2 --conv-algo GEMM --profile " CNN_IN);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "), implicit GEMM  /block0/conv/Conv\n");
  assert_null(strstr(r.out, "winograd"));
  assert_null(strstr(r.out, ", direct"));
  tcli_free(&r);
  r = tcli("run " CNN " --backend cpu --conv-algo fastest " CNN_IN);
  TCLI_ASSERT_EXIT(r, 2);
  TB_ASSERT_CONTAINS(r.err, "unknown convolution algorithm 'fastest'; valid ones are default, auto, winograd, direct, gemm");
  tcli_free(&r);
  setenv("TB_CPU_FEATURES", "-avx512f", 1); /* the AVX2 path: Winograd and the direct convolution as on AVX-512 */
  r = tcli("run " CNN " --backend cpu --level O2 --repeat 2 --profile " CNN_IN);
  unsetenv("TB_CPU_FEATURES");
  TCLI_ASSERT_EXIT(r, 0);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    TB_ASSERT_CONTAINS(r.out, "fast fp32 (avx2,fma), winograd  /block0/conv/Conv\n");
    TB_ASSERT_CONTAINS(r.out, "fast fp32 (avx2,fma), direct  /block2/conv/Conv\n");
  } else {
    TB_ASSERT_CONTAINS(r.out, "), implicit GEMM  /block0/conv/Conv\n");
    assert_null(strstr(r.out, ", direct"));
  }
  tcli_free(&r);
  setenv("TB_CPU_FEATURES", "-avx512f,-avx2", 1); /* the portable path: the implicit GEMM */
  r = tcli("run " CNN " --backend cpu --level O2 --repeat 2 --profile " CNN_IN);
  unsetenv("TB_CPU_FEATURES");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "), implicit GEMM  /block0/conv/Conv\n");
  assert_null(strstr(r.out, "winograd"));
  assert_null(strstr(r.out, ", direct"));
  tcli_free(&r);

  r = tcli("run " CNN " --backend cpu --level O0 --json --profile " CNN_IN);
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *j = tcli_json(r.out);
  const cJSON *prof = cJSON_GetObjectItemCaseSensitive(j, "profile");
  assert_int_equal(cJSON_GetArraySize(prof), 15); /* every node of the model at O0 */
  const cJSON *first = cJSON_GetArrayItem(prof, 0);
  assert_string_equal(tcli_json_str(first, "op"), "Conv");
  assert_string_equal(tcli_json_str(first, "placement"), "cpu");
  assert_string_equal(tcli_json_str(first, "kernel"), "reference");
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(first, "runs")->valueint, 1);
  assert_true(cJSON_GetObjectItemCaseSensitive(first, "ms_per_run")->valuedouble > 0);
  cJSON_Delete(j);
  tcli_free(&r);

  /* --cpu-fallback is accepted and changes nothing where every kernel builds (test_exec_device covers a failing one) */
  r = tcli("run " CNN " --backend cpu --cpu-fallback " CNN_IN);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "0 on the CPU fallback");
  tcli_free(&r);

  r = tcli("run " ENCODER " --backend opencl:0 --level O1 --repeat 2 --profile " ENC_IN " --dim batch=2");
  if (r.code == 3) { /* no OpenCL platform here */
    tcli_free(&r);
    return;
  }
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "tb.Attention                 opencl");
  assert_null(strstr(r.out, " cpu  ")); /* every node on the device */
  tcli_free(&r);
}

/* A reference that differs: exit 1 and the compare line says how much. */
/* A model whose work is inside a Scan body (libonnx-testdata's test_scan9_sum: Add in the body): no
 * reference-only warning at O2, and the profile lists the body's nodes with their kernels and per-iteration
 * runs, the run count taken from the model's own nodes. */
static void profile_inside_subgraphs(void **state) {
  (void)state;
  const char *model = "/usr/share/libonnx-testdata/data/node/test_scan9_sum/model.onnx";
  if (access(model, R_OK) != 0) {
    print_message("skipped: %s is missing (Debian's libonnx-testdata)\n", model);
    skip();
  }
  char args[1024];
  snprintf(args, sizeof args, "run %s --backend cpu --level O2 --repeat 2 --profile", model);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  assert_null(strstr(r.out, "no faster CPU kernel"));
  TB_ASSERT_CONTAINS(r.out, "over 1 timed run\n");
  TB_ASSERT_CONTAINS(r.out, "  Add                          cpu           1 ");
  TB_ASSERT_CONTAINS(r.out, "  #0/body/(no name)\n");
  const char *add = strstr(r.out, "  slowest nodes:\n");
  assert_non_null(add);
  add = strstr(add, "  Add ");
  assert_non_null(add);
  TB_ASSERT_CONTAINS(add, "fast fp32 (");
  tcli_free(&r);
  snprintf(args, sizeof args, "run %s --backend cpu --level O2 --profile --json", model);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  const cJSON *entry, *profile = cJSON_GetObjectItemCaseSensitive(root, "profile");
  assert_int_equal(cJSON_GetArraySize(profile), 3);
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(profile, 0), "op"), "Scan");
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(profile, 0), "graph"), "");
  bool body_add = false;
  cJSON_ArrayForEach(entry, profile) {
    if (strcmp(tcli_json_str(entry, "op"), "Add") != 0) continue;
    assert_string_equal(tcli_json_str(entry, "graph"), "#0/body");
    TB_ASSERT_CONTAINS(tcli_json_str(entry, "kernel"), "fast fp32 (");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(entry, "runs")->valueint, 3); /* one per scanned row */
    body_add = true;
  }
  assert_true(body_add);
  cJSON_Delete(root);
  tcli_free(&r);
}

/* --device-only: a node the device (PoCL here) and no other route to it can run (RNN: OpenCL has no kernel for it;
 * Scan, used here before, now runs on opencl:0 with its body) fails the run with the node, its op and why (exit 1); without it the node runs on the CPU and the text and JSON say where each
 * node ran and why. */
static void device_only(void **state) {
  (void)state;
  const char *model = "/usr/share/libonnx-testdata/data/node/test_simple_rnn_defaults/model.onnx";
  if (access(model, R_OK) != 0) {
    print_message("skipped: %s is missing (Debian's libonnx-testdata)\n", model);
    skip();
  }
  char args[1024];
  snprintf(args, sizeof args, "run %s --backend opencl:0 --device-only", model);
  tcli_run r = tcli(args);
  if (r.code == 3) { /* no OpenCL platform here */
    tcli_free(&r);
    skip();
  }
  TCLI_ASSERT_EXIT(r, 1);
  TB_ASSERT_CONTAINS(r.err, "device_only: 1 of 1 nodes would fall back to the CPU from opencl:0: RNN (#0): no opencl kernel for "
                            "RNN with inputs (f32, f32, f32); no other route reaches this device; ran on cpu:0; turn device_only "
                            "off (tb run without --device-only) to let them run there");
  assert_string_equal(r.out, "");
  tcli_free(&r);
  snprintf(args, sizeof args, "run %s --backend opencl:0", model);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "0 on the device, 0 on other routes to it, 1 on the CPU fallback");
  TB_ASSERT_CONTAINS(r.out, "  placement: 1 node on cpu:0\n");
  TB_ASSERT_CONTAINS(r.out, "  fallback: RNN (#0): no opencl kernel for RNN with inputs (f32, f32, f32); no other route reaches "
                            "this device; ran on cpu:0\n");
  tcli_free(&r);
  snprintf(args, sizeof args, "run %s --backend opencl:0 --json", model);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "prepare"), "metrics");
  const cJSON *placements = cJSON_GetObjectItemCaseSensitive(metrics, "placements");
  assert_int_equal(cJSON_GetArraySize(placements), 1);
  const cJSON *rnn = cJSON_GetArrayItem(placements, 0);
  assert_string_equal(tcli_json_str(rnn, "node"), "RNN (#0)");
  assert_string_equal(tcli_json_str(rnn, "device"), "cpu:0");
  TB_ASSERT_CONTAINS(tcli_json_str(rnn, "reason"), "no other route reaches this device; ran on cpu:0");
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(metrics, "route_nodes")->valueint, 0);
  cJSON_Delete(root);
  tcli_free(&r);
}

static void compare_mismatch(void **state) {
  (void)state;
  char dir[] = "/tmp/tb-run-XXXXXX";
  assert_non_null(mkdtemp(dir));
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  tb_tensor *ref = NULL;
  TB_ASSERT_OK(tb_npy_load(MODELS "cnn_small/outputs/probs.npy", b, &ref));
  float *v = tb_tensor_host_data(ref);
  v[3] += 0.01f;
  char path[512], args[2048];
  snprintf(path, sizeof path, "%s/probs.npy", dir);
  TB_ASSERT_OK(tb_npy_save(path, ref));
  tb_tensor_destroy(ref);
  tb_backend_destroy(b);
  snprintf(args, sizeof args, "run %s --level O0 %s --compare-dir %s", CNN, CNN_IN, dir);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 1);
  TB_ASSERT_CONTAINS(r.out, "compare: MISMATCH: 1 of 10 elements differ");
  TB_ASSERT_CONTAINS(r.err, "tb: error: outputs differ from the references in");
  tcli_free(&r);
  /* a reference that is missing: a file not found, exit 2 */
  unlink(path);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 2);
  TB_ASSERT_CONTAINS(r.out, "compare: FAILED: cannot open the .npy file");
  tcli_free(&r);
  rmdir(dir);
}

static void errors_and_exit_codes(void **state) {
  (void)state;
  tcli_expect_err("run", 2, "tb: error: 'tb run' needs a MODEL file; see 'tb run --help'");
  tcli_expect_err("run " CNN " --levle O1", 2, "unknown option '--levle' for 'tb run'");
  tcli_expect_err("run " CNN " --level O9", 2, "unknown optimization level 'O9'");
  tcli_expect_err("run " CNN " --precision fp7", 2, "fp7");
  tcli_expect_err("run " CNN " --level", 2, "'tb run --level' needs a value");
  tcli_expect_err("run " CNN " --repeat 0", 2, "'tb run --repeat' takes a whole number from 1 to 100000, not '0'");
  tcli_expect_err("run " CNN " --dim batch", 2, "'tb run --dim' takes NAME=VALUE, not 'batch'");
  tcli_expect_err("run " CNN " --dim batch=-2", 2, "'tb run --dim batch' takes a whole number from 0 to 1099511627776, not '-2'");
  tcli_expect_err("run " CNN " --input nosuch=x.npy", 2, "the model has no input 'nosuch'; its inputs are 'input'");
  tcli_expect_err("run " CNN " --input input=/tmp/tb-no-such.npy", 2, "cannot open the .npy file /tmp/tb-no-such.npy");
  tcli_expect_err("run " CNN " " CNN, 2, "unexpected argument");
  tcli_expect_err("run /tmp/tb-no-such-model.onnx", 2, "/tmp/tb-no-such-model.onnx");
  tcli_expect_err("run " CNN " --backend nosuch", 2, "nosuch");
  /* a model of the wrong shape's input: the encoder's input given to the CNN */
  tcli_expect_err("run " CNN " --input input=" MODELS "encoder_small/inputs/x.npy", 2, "input");
  /* a file that is not a model */
  tcli_expect_err("run " MODELS "cnn_small/inputs/input.npy", 1, "tb: error: ");
  tcli_run r = tcli("help run");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "Usage: tb run MODEL [--backend B] [--level L]");
  tcli_free(&r);
  r = tcli("--help");
  TB_ASSERT_CONTAINS(r.out, "  run       run an ONNX model");
  tcli_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(cnn_matches_reference_at_each_level, setup),
      cmocka_unit_test_setup(output_dir_and_sha256, setup),
      cmocka_unit_test_setup(output_dir_made_with_parents, setup),
      cmocka_unit_test_setup(output_dir_part_is_a_file, setup),
      cmocka_unit_test_setup(output_dir_without_permission, setup),
      cmocka_unit_test_setup(random_inputs_follow_the_seed, setup),
      cmocka_unit_test_setup(symbolic_dims, setup),
      cmocka_unit_test_setup(json_output, setup),
      cmocka_unit_test_setup(profile, setup),
      cmocka_unit_test_setup(profile_inside_subgraphs, setup),
      cmocka_unit_test_setup(device_only, setup),
      cmocka_unit_test_setup(compare_mismatch, setup),
      cmocka_unit_test_setup(errors_and_exit_codes, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
