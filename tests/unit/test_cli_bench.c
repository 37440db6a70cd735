/* `tb bench`: the table and the JSON keys for the bundled CNN on the CPU; samples/s for the encoder's
 * symbolic batch; the chart is well-formed XML with one bar per successful configuration whose labels
 * are the JSON's medians; the cost column's arithmetic; a backend that fails (CUDA, forced absent) keeps
 * its row and makes the exit code 1; bad arguments are usage errors. The statistics and the chart are
 * also checked on numbers made up here (cli/bench_stats.c and cli/bench_svg.c are compiled in). */
#include <math.h>
#include "test_cli_util.h"
#include "../../cli/bench_stats.c"
#include "../../cli/bench_svg.c"
#include "../../cli/json_out.c"
#include "../../cli/utf8.c"

#define MODELS TB_TEST_FIXTURES "/../../models/"
#define CNN MODELS "cnn_small.onnx"
#define ENCODER MODELS "encoder_small.onnx"
#define QUICK "--iters 3 --warmup 1"

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_CUDA_LIB", "/nonexistent/libcuda.so.1", 1); /* CUDA fails here and on any CI machine */
  return 0;
}

static const cJSON *item(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!v) fail_msg("JSON key \"%s\" is missing", key);
  return v;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = item(o, key);
  if (!cJSON_IsNumber(v)) fail_msg("JSON key \"%s\" is not a number", key);
  return v->valuedouble;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot open %s", path);
  char *text = tcli_slurp(f);
  fclose(f);
  return text;
}

/* Every element opened is closed in order, one root <svg>; returns the number of elements. */
static size_t check_xml_balance(const char *svg) {
  char stack[64][32];
  size_t depth = 0, elements = 0, roots = 0;
  for (const char *p = strchr(svg, '<'); p; p = strchr(p + 1, '<')) {
    if (p[1] == '?') continue;
    const char *end = strchr(p, '>');
    assert_non_null(end);
    bool closing = p[1] == '/', self_closing = end[-1] == '/';
    const char *name = p + (closing ? 2 : 1);
    size_t len = strcspn(name, " />");
    assert_true(len > 0 && len < 32);
    if (closing) {
      if (depth == 0) fail_msg("</%.*s> closes nothing", (int)len, name);
      depth--;
      if (strlen(stack[depth]) != len || strncmp(stack[depth], name, len) != 0)
        fail_msg("</%.*s> closes <%s>", (int)len, name, stack[depth]);
      continue;
    }
    elements++;
    if (depth == 0) roots++;
    if (self_closing) continue;
    assert_true(depth < 64);
    memcpy(stack[depth], name, len);
    stack[depth++][len] = '\0';
  }
  if (depth) fail_msg("<%s> is never closed", stack[depth - 1]);
  assert_int_equal(roots, 1);
  return elements;
}

static size_t count(const char *text, const char *part) {
  size_t n = 0;
  for (const char *p = strstr(text, part); p; p = strstr(p + 1, part)) n++;
  return n;
}

/* The table's header line (the line that starts with "DEVICE") has these words, separated by spaces. */
static void assert_header(const char *out, const char *words) {
  const char *line = strstr(out, "\nDEVICE ");
  if (!line) fail_msg("no header line in:\n%s", out);
  char got[512];
  size_t n = 0;
  for (const char *p = line + 1; *p && *p != '\n' && n + 1 < sizeof got; p++)
    if (*p != ' ' || (n && got[n - 1] != ' ')) got[n++] = *p;
  got[n] = '\0';
  assert_string_equal(got, words);
}

/* ---- the tool -------------------------------------------------------------------------------------- */

static void cnn_on_cpu_table(void **state) {
  (void)state;
  tcli_run r = tcli("bench " CNN " --backends cpu --levels O0,O1 " QUICK);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "model:    " CNN " (sha256 84964a2e5ba363ac...)");
  TB_ASSERT_CONTAINS(r.out, "runs:     1 warm-up, 3 timed");
  TB_ASSERT_CONTAINS(r.out, "options:  precision auto, threads 0 (the backend's default), seed 0");
  assert_header(r.out, "DEVICE LEVEL PRECISION PREPARE_MS MEDIAN_MS P10_MS P90_MS MEAN_MS STDDEV_MS MIN_MS INFER/S "
                       "SAMPLES/S DEV_PEAK RSS_PEAK STATUS");
  TB_ASSERT_CONTAINS(r.out, "\ncpu:0   O0     fp32  ");
  TB_ASSERT_CONTAINS(r.out, "\ncpu:0   O1     fp32  ");
  assert_int_equal(count(r.out, "  ok\n"), 2);
  TB_ASSERT_CONTAINS(r.out, "note:     inputs are random (seed 0)\n");
  assert_null(strstr(r.out, "batch:")); /* the CNN's input [1, 3, 32, 32] declares no symbolic batch */
  assert_null(strstr(r.out, "USD"));
  assert_string_equal(r.err, "");
  tcli_free(&r);
}

static void cnn_on_cpu_json(void **state) {
  (void)state;
  tcli_run r = tcli("bench " CNN " --backends cpu --levels O0,O1 --threads 2 " QUICK " --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *j = tcli_json(r.out);
  assert_string_equal(tcli_json_str(j, "model"), CNN);
  assert_int_equal(strlen(tcli_json_str(j, "model_sha256")), 64);
  assert_true(strlen(tcli_json_str(j, "machine")) > 0);
  assert_string_equal(tcli_json_str(j, "precision"), "auto");
  assert_int_equal((int)num(j, "threads"), 2);
  assert_int_equal((int)num(j, "warmup"), 1);
  assert_int_equal((int)num(j, "iterations"), 3);
  assert_int_equal((int)num(j, "seed"), 0);
  assert_true(cJSON_IsNull(item(j, "batch")));
  assert_true(cJSON_IsNull(item(j, "cost_per_hour_usd")));
  assert_true(cJSON_IsNull(item(j, "cheapest")));
  assert_int_equal(cJSON_GetArraySize(item(j, "notes")), 1);
  assert_string_equal(cJSON_GetArrayItem(item(j, "notes"), 0)->valuestring, "inputs are random (seed 0)");
  const cJSON *results = item(j, "results");
  assert_int_equal(cJSON_GetArraySize(results), 2);
  for (int i = 0; i < 2; i++) {
    const cJSON *row = cJSON_GetArrayItem(results, i);
    assert_string_equal(tcli_json_str(row, "device"), "cpu:0");
    assert_string_equal(tcli_json_str(row, "backend"), "cpu");
    assert_string_equal(tcli_json_str(row, "level"), i ? "O1" : "O0");
    assert_string_equal(tcli_json_str(row, "precision"), "fp32");
    assert_true(cJSON_IsTrue(item(row, "ok")));
    assert_int_equal((int)num(row, "iterations"), 3);
    double min = num(row, "min_ms"), p10 = num(row, "p10_ms"), median = num(row, "median_ms"),
           p90 = num(row, "p90_ms"), max = num(row, "max_ms"), mean = num(row, "mean_ms");
    assert_true(min > 0 && min <= p10 && p10 <= median && median <= p90 && p90 <= max);
    assert_true(mean >= min && mean <= max && num(row, "stddev_ms") >= 0);
    assert_float_equal(num(row, "inferences_per_s"), 1000.0 / median, 1e-3 * (1000.0 / median));
    assert_true(cJSON_IsNull(item(row, "samples_per_s")));
    assert_true(num(row, "prepare_ms") > 0);
    assert_true(num(row, "prepare_wall_ms") >= num(row, "prepare_ms") * 0.99);
    /* the CNN's weights (96936 bytes) are on the backend */
    assert_true(num(row, "device_peak_reserved_bytes") >= 96936);
    assert_true(num(row, "process_peak_rss_bytes") > 1e6);
    assert_null(cJSON_GetObjectItemCaseSensitive(row, "cost_per_million_usd"));
  }
  cJSON_Delete(j);
  tcli_free(&r);
}

static void encoder_batch_gives_samples_per_second(void **state) {
  (void)state;
  tcli_run r = tcli("bench " ENCODER " --backends cpu --levels O1 --dim batch=3 " QUICK " --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *j = tcli_json(r.out);
  const cJSON *batch = item(j, "batch");
  assert_string_equal(tcli_json_str(batch, "input"), "x");
  assert_string_equal(tcli_json_str(batch, "dim"), "batch");
  assert_int_equal((int)num(batch, "size"), 3);
  const cJSON *row = cJSON_GetArrayItem(item(j, "results"), 0);
  assert_float_equal(num(row, "samples_per_s"), 3 * num(row, "inferences_per_s"), 1e-3 * num(row, "samples_per_s"));
  cJSON_Delete(j);
  tcli_free(&r);
  r = tcli("bench " ENCODER " --backends cpu --levels O1 --dim batch=3 " QUICK);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "batch:    3 (input 'x' dimension 0 'batch')");
  tcli_free(&r);
}

static void cost_column(void **state) {
  (void)state;
  /* at $3.60 per hour a millisecond costs $1e-6: the cost per million inferences is the median in ms */
  tcli_run r = tcli("bench " CNN " --backends cpu --levels O0,O1 " QUICK " --cost-per-hour 3.6 --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *j = tcli_json(r.out);
  assert_float_equal(num(j, "cost_per_hour_usd"), 3.6, 1e-9);
  const cJSON *results = item(j, "results");
  double best = 1e300;
  int cheapest_rows = 0;
  for (int i = 0; i < 2; i++) {
    const cJSON *row = cJSON_GetArrayItem(results, i);
    double median = num(row, "median_ms"), cost = num(row, "cost_per_million_usd");
    assert_float_equal(cost, median, 1e-5 + 1e-6 * median);
    if (median < best) best = median;
    cheapest_rows += cJSON_IsTrue(item(row, "cheapest"));
  }
  assert_int_equal(cheapest_rows, 1);
  assert_float_equal(num(item(j, "cheapest"), "cost_per_million_usd"), best, 1e-5 + 1e-6 * best);
  assert_string_equal(tcli_json_str(item(j, "cheapest"), "device"), "cpu:0");
  cJSON_Delete(j);
  tcli_free(&r);
  r = tcli("bench " CNN " --backends cpu --levels O0,O1 " QUICK " --cost-per-hour 3.6");
  TCLI_ASSERT_EXIT(r, 0);
  assert_header(r.out, "DEVICE LEVEL PRECISION PREPARE_MS MEDIAN_MS P10_MS P90_MS MEAN_MS STDDEV_MS MIN_MS INFER/S "
                       "SAMPLES/S DEV_PEAK RSS_PEAK USD/1M_INFER STATUS");
  TB_ASSERT_CONTAINS(r.out, "cost per million inferences = USD per hour / 3600 * median seconds * 1e6, at $3.6000 per hour");
  TB_ASSERT_CONTAINS(r.out, "cheapest per inference: cpu:0 O");
  TB_ASSERT_CONTAINS(r.out, "x as much ($");
  tcli_free(&r);
}

static void failing_backend_keeps_its_row(void **state) {
  (void)state;
  tcli_run r = tcli("bench " CNN " --backends cpu,cuda --levels O0 " QUICK);
  TCLI_ASSERT_EXIT(r, 1);
  TB_ASSERT_CONTAINS(r.out, "\ncpu:0   O0     fp32  ");
  TB_ASSERT_CONTAINS(r.out, "\ncuda    O0     -     ");
  TB_ASSERT_CONTAINS(r.out, "FAILED\n  error: request 'cuda' requested, but CUDA is unavailable");
  TB_ASSERT_CONTAINS(r.err, "tb: error: cuda O0 failed: request 'cuda' requested, but CUDA is unavailable");
  tcli_free(&r);
  r = tcli("bench " CNN " --backends cpu,cuda --levels O0 " QUICK " --json");
  TCLI_ASSERT_EXIT(r, 1);
  cJSON *j = tcli_json(r.out);
  const cJSON *results = item(j, "results");
  assert_int_equal(cJSON_GetArraySize(results), 2);
  assert_true(cJSON_IsTrue(item(cJSON_GetArrayItem(results, 0), "ok")));
  const cJSON *cuda = cJSON_GetArrayItem(results, 1);
  assert_true(cJSON_IsFalse(item(cuda, "ok")));
  assert_string_equal(tcli_json_str(cuda, "backend"), "cuda");
  TB_ASSERT_CONTAINS(tcli_json_str(cuda, "error"), "CUDA is unavailable");
  assert_null(cJSON_GetObjectItemCaseSensitive(cuda, "median_ms"));
  cJSON_Delete(j);
  tcli_free(&r);
}

static void chart_is_wellformed_and_matches_json(void **state) {
  (void)state;
  char path[] = "/tmp/tb-bench-chart-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  char args[1024];
  snprintf(args, sizeof args, "bench %s --backends cpu,cuda --levels O0,O1 %s --json --chart %s", CNN, QUICK, path);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 1);
  cJSON *j = tcli_json(r.out);
  char *svg = read_text(path);
  unlink(path);
  assert_true(check_xml_balance(svg) > 20);
  TB_ASSERT_CONTAINS(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"");
  assert_int_equal(count(svg, "class=\"bar\""), 2);      /* cpu:0 at O0 and O1 */
  assert_int_equal(count(svg, "class=\"whisker\""), 2);
  assert_int_equal(count(svg, ">failed (see"), 2);       /* cuda at O0 and O1 */
  char title[512];
  snprintf(title, sizeof title, ">Median latency of cnn_small.onnx on %s</text>", tcli_json_str(j, "machine"));
  TB_ASSERT_CONTAINS(svg, title);
  TB_ASSERT_CONTAINS(svg, ">latency per inference (ms)</text>");
  TB_ASSERT_CONTAINS(svg, ">cpu:0 O0</text>");
  TB_ASSERT_CONTAINS(svg, ">cuda O1</text>");
  assert_int_equal(count(svg, "class=\"legend\""), 1); /* cpu only: cuda has no bar */
  /* the value labels, in order, are the JSON's medians */
  const char *p = svg;
  for (int i = 0; i < 2; i++) {
    p = strstr(p, "class=\"value\">");
    assert_non_null(p);
    p += strlen("class=\"value\">");
    double shown = strtod(p, NULL);
    double median = num(cJSON_GetArrayItem(item(j, "results"), i), "median_ms");
    /* label to 3 decimals, JSON to 6; compared in double (cmocka's assert_float_equal rounds both to float,
     * 1.5e-5 apart at 150 ms: a median like 153.0185004 then failed its 0.0005 bound) */
    if (fabs(shown - median) > 0.0005 + 1e-9) fail_msg("chart label %.6f for a median of %.6f ms", shown, median);
  }
  assert_null(strstr(p, "class=\"value\">"));
  free(svg);
  cJSON_Delete(j);
  tcli_free(&r);
}

static void bad_arguments(void **state) {
  (void)state;
  tcli_expect_err("bench " CNN " --iters 0", 2, "'tb bench --iters' takes a whole number from 1 to 1000000, not '0'");
  tcli_expect_err("bench " CNN " --warmup -1", 2, "'tb bench --warmup' takes a whole number from 0 to 1000000, not '-1'");
  tcli_expect_err("bench " CNN " --threads x", 2, "'tb bench --threads' takes a whole number");
  tcli_expect_err("bench " CNN " --levels O0,O7", 2, "unknown optimization level 'O7'; valid levels are O0");
  tcli_expect_err("bench " CNN " --levels O0,,O1", 2, "'tb bench --levels' takes a comma-separated list");
  tcli_expect_err("bench " CNN " --backends cpu,nvidiaa", 2, "'nvidiaa' is not a backend; valid names are");
  tcli_expect_err("bench " CNN " --frobnicate", 2, "unknown option '--frobnicate' for 'tb bench'; see 'tb bench --help'");
  tcli_expect_err("bench " CNN " --iters", 2, "'tb bench --iters' needs a value");
  tcli_expect_err("bench " CNN " --cost-per-hour cheap", 2, "'tb bench --cost-per-hour' takes a price");
  tcli_expect_err("bench " CNN " --precision fp12", 2, "fp12");
  tcli_expect_err("bench " CNN " --dim batch", 2, "'tb bench --dim' takes NAME=VALUE, not 'batch'");
  tcli_expect_err("bench", 2, "'tb bench' needs a MODEL file");
  tcli_expect_err("bench " CNN " --backends cpu --input image=x.npy", 2, "the model has no input 'image'; its inputs are 'input'");
  /* the table is printed, then the chart cannot be written: the I/O exit code */
  tcli_expect_err("bench " CNN " --backends cpu --levels O0 --iters 1 --warmup 0 --chart /nonexistent/dir/c.svg", 4,
                  "could not write the chart to '/nonexistent/dir/c.svg': No such file or directory");
  tcli_run r = tcli("bench --help");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "Usage: tb bench MODEL [--backends LIST|all]");
  tcli_free(&r);
  r = tcli("--help");
  TB_ASSERT_CONTAINS(r.out, "  bench     time a model on backends");
  tcli_free(&r);
}

/* ---- the parts ------------------------------------------------------------------------------------- */

static void statistics(void **state) {
  (void)state;
  double ms[10] = {7, 3, 10, 1, 5, 9, 2, 8, 4, 6};
  tbc_bench_stats s;
  tbc_bench_stats_compute(ms, 10, &s);
  assert_int_equal(s.n, 10);
  assert_float_equal(ms[0], 1, 0); /* sorted in place */
  assert_float_equal(s.min, 1, 0);
  assert_float_equal(s.max, 10, 0);
  assert_float_equal(s.median, 5.5, 1e-12);
  assert_float_equal(s.p10, 1.9, 1e-12); /* numpy.percentile(range(1, 11), 10) */
  assert_float_equal(s.p90, 9.1, 1e-12);
  assert_float_equal(s.mean, 5.5, 1e-12);
  assert_float_equal(s.stddev, 2.8722813232690143, 1e-12); /* numpy.std */
  double one[1] = {4.25};
  tbc_bench_stats_compute(one, 1, &s);
  assert_true(s.median == 4.25 && s.p10 == 4.25 && s.p90 == 4.25 && s.stddev == 0);
  assert_float_equal(tbc_bench_sqrt(2), 1.4142135623730951, 1e-15);
  assert_float_equal(tbc_bench_sqrt(1e-8), 1e-4, 1e-18);
  assert_float_equal(tbc_bench_sqrt(0), 0, 0);
}

static void cost_arithmetic(void **state) {
  (void)state;
  /* $0.70 per hour (the seeds' L4), 12.5 ms per inference: 0.70 / 3600 * 0.0125 * 1e6 = $2.430555... */
  assert_float_equal(tbc_bench_cost_per_million(0.70, 12.5), 2.4305555555555554, 1e-12);
  assert_float_equal(tbc_bench_cost_per_million(3.67, 1000), 1019.4444444444445, 1e-9);
  assert_float_equal(tbc_bench_cost_per_million(0, 5), 0, 0);
}

static void chart_of_made_up_rows(void **state) {
  (void)state;
  static tbc_bench_report r;
  memset(&r, 0, sizeof r);
  r.model = "dir/a&b<c>.onnx";
  snprintf(r.machine, sizeof r.machine, "Test CPU \"X\"");
  r.precision = "auto";
  r.iters = 20;
  r.warmup = 3;
  const char *devices[] = {"cpu:0", "vulkan:0", "opencl:0", "cuda"};
  const char *backends[] = {"cpu", "vulkan", "opencl", "cuda"};
  for (size_t i = 0; i < 4; i++) {
    tbc_bench_row *row = &r.rows[r.row_count++];
    snprintf(row->device, sizeof row->device, "%s", devices[i]);
    snprintf(row->backend, sizeof row->backend, "%s", backends[i]);
    row->level = TB_LEVEL_O1;
    row->ok = i < 3;
    row->stats = (tbc_bench_stats){.n = 20, .median = 10.0 * (double)(i + 1), .p10 = 9.0 * (double)(i + 1),
                                   .p90 = 12.0 * (double)(i + 1)};
  }
  tbc_buf b = {0};
  tbc_bench_svg(&r, &b);
  assert_false(b.failed);
  check_xml_balance(b.data);
  TB_ASSERT_CONTAINS(b.data, ">Median latency of a&amp;b&lt;c&gt;.onnx on Test CPU &quot;X&quot;</text>");
  assert_int_equal(count(b.data, "class=\"bar\""), 3);
  assert_int_equal(count(b.data, "class=\"legend\""), 3);
  /* one colour per backend */
  TB_ASSERT_CONTAINS(b.data, "fill=\"#0072B2\"/>");
  TB_ASSERT_CONTAINS(b.data, "fill=\"#E69F00\"/>");
  TB_ASSERT_CONTAINS(b.data, "fill=\"#CC79A7\"/>");
  TB_ASSERT_CONTAINS(b.data, ">30.000 ms</text>");
  /* the axis reaches past the largest p90 (36 ms) in steps of 5: ticks 0..40 */
  TB_ASSERT_CONTAINS(b.data, ">40</text>");
  assert_null(strstr(b.data, ">45</text>"));
  tbc_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(cnn_on_cpu_table, setup),
      cmocka_unit_test_setup(cnn_on_cpu_json, setup),
      cmocka_unit_test_setup(encoder_batch_gives_samples_per_second, setup),
      cmocka_unit_test_setup(cost_column, setup),
      cmocka_unit_test_setup(failing_backend_keeps_its_row, setup),
      cmocka_unit_test_setup(chart_is_wellformed_and_matches_json, setup),
      cmocka_unit_test_setup(bad_arguments, setup),
      cmocka_unit_test(statistics),
      cmocka_unit_test(cost_arithmetic),
      cmocka_unit_test(chart_of_made_up_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
