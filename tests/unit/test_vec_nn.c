/* The level-2 vectorised Softmax, LogSoftmax, LayerNormalization (ONNX and tb::), BatchNormalization,
 * ReduceMean / ReduceSum and MaxPool / AveragePool / GlobalAveragePool kernels (src/backend/cpu/kernels/fast/vec/vec_*.c)
 * on their AVX-512, AVX2 and portable entries, without and with a 2-thread pool, against the level-0
 * reference kernels: odd sizes, every axis, NaN / inf rows, a large mean offset, the optional outputs,
 * pads / strides / ceil_mode / auto_pad / count_include_pad, and the cases each kernel declines (picked:
 * the reference) or hands back at run time (the results still match the reference). Every MaxPool case
 * runs the AVX2 separable path too (vec_pool_avx2.c: strides 1, 2 and 3, kernels up to 13 x 13, NaN rows
 * handed back to the row loop, signed zeros), and one over its 64 taps a row the row loop. The AVX-512
 * entry takes the same AVX2 plane for every MaxPool its own separable path (3x3/2, 2x2/2) does not.
 *
 * Tolerances, each against a reference that computes in double and rounds once:
 *   Softmax rtol 1e-5, atol 1e-40: exp within 2 ulp, the blocked sum and the scale add about 2 more.
 *   LogSoftmax rtol 1e-5, atol 1e-6.
 *   LayerNormalization rtol 1e-5, atol 1e-5: y is O(1..10); a few fp32 roundings of (x - mean) * inv * scale
 *     + B leave ~1e-6 absolute where y itself is near 0 (Mean and InvStdDev: rtol 1e-5).
 *   BatchNormalization rtol 1e-5, atol 1e-6: (x - mean) * k + B in fp32 with k rounded once; where the
 *     terms cancel only the absolute error of O(1) terms is meaningful.
 *   ReduceMean / ReduceSum rtol 1e-6, atol 1e-5: fp32 partial sums of 1024 values (or column sums of 256
 *   rows) joined in double.
 *   MaxPool exact (it only selects); AveragePool / GlobalAveragePool rtol 1e-5, atol 1e-6 (an fp32 sum of
 *     the window and one division). */
#include "test_vec_util.h"

/* ---- Softmax ---- */

typedef struct sm_case {
  size_t ndim;
  int64_t shape[4];
  int opset;
  int64_t axis;
} sm_case;

static void softmax_every_axis(void **state) {
  (void)state;
  static const sm_case cases[] = {
      {2, {3, 17}, 13, -1},    {3, {2, 5, 33}, 13, 1},    {3, {4, 3, 7}, 13, 0}, {3, {2, 3, 5}, 11, 1},
      {2, {128, 1000}, 13, 1}, {4, {2, 3, 4, 19}, 13, 2}, {1, {1}, 13, 0}, {2, {600, 5}, 13, 0},
  };
  const tb_kernel *entries[3] = VT_ENTRIES(softmax);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    toh t;
    toh_setup(&t, "Softmax", cases[c].opset, 1, 0, 1, (tb_attr[]){TOH_INT("axis", cases[c].axis)}, 1);
    tb_tensor *in[1] = {vt_random(&t, cases[c].ndim, cases[c].shape, c + 1, -8, 8)};
    vt_assert_picks(&t, in, entries);
    char what[128];
    snprintf(what, sizeof what, "Softmax case %zu", c);
    vt_check(&t, entries, in, 1e-5, 1e-40, what);
    toh_clear(in, 1);
    toh_teardown(&t);
  }
}

/* LogSoftmax: the last axis (opset 13) or the flattened rows (opset 11) on the fast rows, other axes handed
 * back to the reference; a NaN row, a +inf row, an all -inf row (NaN) and -inf entries (-inf there).
 * rtol 1e-5, atol 1e-6: x - max exact to a rounding, log(sum) in double rounded once. */
static void log_softmax_rows(void **state) {
  (void)state;
  static const sm_case cases[] = {
      {3, {64, 1, 97}, 13, -1}, {2, {3, 300}, 13, 1}, {3, {2, 3, 5}, 11, 1}, {3, {4, 3, 7}, 13, 0}, {1, {1}, 13, 0},
  };
  const tb_kernel *entries[3] = VT_ENTRIES(log_softmax);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    toh t;
    toh_setup(&t, "LogSoftmax", cases[c].opset, 1, 0, 1, (tb_attr[]){TOH_INT("axis", cases[c].axis)}, 1);
    tb_tensor *in[1] = {vt_random(&t, cases[c].ndim, cases[c].shape, c + 11, -8, 8)};
    vt_assert_picks(&t, in, entries);
    if (c == 0) {
      float *x = vt_data(in[0]);
      x[5 * 97 + 3] = NAN;
      x[7 * 97 + 1] = INFINITY;
      for (int64_t j = 0; j < 97; j++) x[2 * 97 + j] = -INFINITY;
      for (int64_t j = 1; j < 97; j += 2) x[3 * 97 + j] = -INFINITY;
    }
    char what[128];
    snprintf(what, sizeof what, "LogSoftmax case %zu", c);
    vt_check(&t, entries, in, 1e-5, 1e-6, what);
    if (c == 0) {
      tb_tensor *got[1];
      vt_run(&t, entries[2], in, got, NULL);
      const float *y = vt_data(got[0]);
      assert_true(isnan(y[2 * 97]) && isnan(y[5 * 97]) && isnan(y[7 * 97]) && y[3 * 97 + 1] == -INFINITY);
      assert_true(isfinite(y[3 * 97]) && y[3 * 97] <= 0);
      toh_clear(got, 1);
    }
    toh_clear(in, 1);
    toh_teardown(&t);
  }
}

/* A NaN, a +inf, an all -inf row (all NaN in the reference) and a row with some -inf (zeros there). */
static void softmax_special_rows(void **state) {
  (void)state;
  const tb_kernel *entries[3] = VT_ENTRIES(softmax);
  for (int axis = 0; axis < 2; axis++) {
    toh t;
    toh_setup(&t, "Softmax", 13, 1, 0, 1, (tb_attr[]){TOH_INT("axis", axis ? -1 : 0)}, 1);
    const int64_t shape[2] = {19, 19};
    tb_tensor *in[1] = {vt_random(&t, 2, shape, 7, -4, 4)};
    float *x = vt_data(in[0]);
    int64_t step = axis ? 1 : 19, line = axis ? 19 : 1; /* element j of line l: x[l * line + j * step] */
    x[5 * line] = NAN;
    x[7 * line + step] = INFINITY;
    for (int64_t j = 0; j < 19; j++) x[2 * line + j * step] = -INFINITY;
    for (int64_t j = 1; j < 19; j += 2) x[3 * line + j * step] = -INFINITY;
    vt_check(&t, entries, in, 1e-5, 1e-40, axis ? "Softmax special rows" : "Softmax special columns");
    /* the all -inf row (or column) is NaN, the row with -inf entries has exact zeros there */
    tb_tensor *got[1];
    vt_run(&t, entries[2], in, got, NULL);
    const float *y = vt_data(got[0]);
    assert_true(isnan(y[2 * line]) && isnan(y[2 * line + 18 * step]) && isnan(y[5 * line + 3 * step]));
    assert_true(y[3 * line + 1 * step] == 0 && y[3 * line + 0 * step] > 0);
    toh_clear(got, 1);
    toh_clear(in, 1);
    toh_teardown(&t);
  }
}

/* ---- LayerNormalization ---- */

typedef struct ln_case {
  size_t ndim;
  int64_t shape[4];
  int64_t axis;
  size_t ns, nb; /* scale and bias ranks (nb 0: no bias) */
  int64_t s[4], b[4];
  float offset;
  bool accepted_at_run; /* false: run() hands it to the reference */
} ln_case;

static void layernorm_check(bool tb_domain) {
  static const ln_case cases[] = {
      {2, {4, 37}, -1, 1, 1, {37}, {37}, 0, true},
      {3, {2, 3, 20}, 1, 2, 0, {3, 20}, {0}, 0, true},
      {2, {3, 1001}, -1, 1, 1, {1001}, {1001}, 100, true}, /* mean 100, std 0.6: the corrected mean */
      {3, {2, 3, 20}, 1, 1, 2, {20}, {3, 20}, 0, false},   /* scale broadcasts: the reference */
      {3, {2, 3, 20}, 1, 2, 2, {1, 20}, {3, 1}, 0, false}, /* both broadcast: the reference */
      {2, {256, 768}, -1, 1, 1, {768}, {768}, 1, true},    /* split over the pool */
      {1, {1}, 0, 1, 1, {1}, {1}, 0, true},
  };
  const tb_kernel *onnx[3] = VT_ENTRIES(layernorm), *tbk[3] = VT_ENTRIES(tb_layernorm);
  const tb_kernel *const *entries = tb_domain ? tbk : onnx;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const ln_case *lc = &cases[c];
    size_t n_in = lc->nb ? 3 : 2, n_out = tb_domain ? 1 : 3;
    toh t;
    toh_begin(&t, NULL);
    tb_attr attrs[2] = {TOH_INT("axis", lc->axis), TOH_FLOAT("epsilon", 1e-5f)};
    if (tb_domain)
      vt_add_tb(&t, "LayerNormalization", n_in, n_out, attrs, 2);
    else
      toh_add(&t, "LayerNormalization", 17, n_in, 0, n_out, 0, attrs, 2);
    tb_tensor *in[3] = {vt_random(&t, lc->ndim, lc->shape, c + 1, lc->offset - 1, lc->offset + 1),
                        vt_random(&t, lc->ns, lc->s, c + 20, 0.5f, 2),
                        lc->nb ? vt_random(&t, lc->nb, lc->b, c + 40, -1, 1) : NULL};
    vt_assert_picks(&t, in, entries);
    char what[128];
    snprintf(what, sizeof what, "%sLayerNormalization case %zu", tb_domain ? "tb::" : "", c);
    vt_check(&t, entries, in, 1e-5, 1e-5, what);
    toh_clear(in, 3);
    toh_teardown(&t);
  }
}

static void layernorm_onnx_with_stats(void **state) {
  (void)state;
  layernorm_check(false);
}
static void layernorm_tb_domain(void **state) {
  (void)state;
  layernorm_check(true);
}

/* NaN in a row makes that row's outputs NaN, the other rows stay exact. */
static void layernorm_nan_row(void **state) {
  (void)state;
  const tb_kernel *entries[3] = VT_ENTRIES(layernorm);
  toh t;
  toh_setup(&t, "LayerNormalization", 17, 2, 0, 1, NULL, 0);
  const int64_t xs[2] = {3, 21}, ss[1] = {21};
  tb_tensor *in[2] = {vt_random(&t, 2, xs, 1, -1, 1), vt_random(&t, 1, ss, 2, 1, 2)};
  vt_data(in[0])[21 + 4] = NAN;
  vt_data(in[0])[42 + 6] = INFINITY;
  vt_check(&t, entries, in, 1e-5, 1e-5, "LayerNormalization with NaN and inf rows");
  toh_clear(in, 2);
  toh_teardown(&t);
}

/* ---- BatchNormalization ---- */

static void batchnorm_inference(void **state) {
  (void)state;
  static const int64_t shapes[][4] = {{2, 3, 5, 7}, {4, 6, 1, 1}, {1, 16, 3, 3}, {2, 64, 32, 32}};
  static const size_t ranks[] = {4, 2, 4, 4};
  const tb_kernel *entries[3] = VT_ENTRIES(batchnorm);
  for (size_t c = 0; c < 4; c++) {
    toh t;
    toh_setup(&t, "BatchNormalization", 15, 5, 0, 1, (tb_attr[]){TOH_FLOAT("epsilon", 1e-3f)}, 1);
    const int64_t ch[1] = {shapes[c][1]};
    tb_tensor *in[5] = {vt_random(&t, ranks[c], shapes[c], c + 1, -3, 3), vt_random(&t, 1, ch, c + 2, 0.5f, 2),
                        vt_random(&t, 1, ch, c + 3, -1, 1), vt_random(&t, 1, ch, c + 4, -1, 1),
                        vt_random(&t, 1, ch, c + 5, 0.1f, 2)};
    if (c == 0) vt_data(in[0])[3] = NAN;
    vt_assert_picks(&t, in, entries);
    char what[128];
    snprintf(what, sizeof what, "BatchNormalization case %zu", c);
    vt_check(&t, entries, in, 1e-5, 1e-6, what);
    toh_clear(in, 5);
    toh_teardown(&t);
  }
}

/* training_mode=1 and the running-statistics outputs are declined; per-element parameters ([C, H, W],
 * the pre-opset-9 form) are handed to the reference at run time. */
static void batchnorm_declines(void **state) {
  (void)state;
  const int64_t xs[4] = {2, 3, 4, 5}, ch[1] = {3}, full[3] = {3, 4, 5};
  toh t;
  /* training is refused when the node's parameters are parsed: no kernel is found */
  toh_setup(&t, "BatchNormalization", 15, 5, 0, 1, (tb_attr[]){TOH_INT("training_mode", 1)}, 1);
  tb_tensor *in[5] = {vt_random(&t, 4, xs, 1, -1, 1), vt_random(&t, 1, ch, 2, 1, 2), vt_random(&t, 1, ch, 3, -1, 1),
                      vt_random(&t, 1, ch, 4, -1, 1), vt_random(&t, 1, ch, 5, 1, 2)};
  assert_null(vt_pick(&t, in, 2, NULL));
  TB_ASSERT_CONTAINS(tb_last_error(), "training_mode=1 is not supported (inference only)");
  toh_teardown(&t);
  toh_begin(&t, NULL);
  toh_add(&t, "BatchNormalization", 15, 5, 0, 3, 0, NULL, 0);
  assert_null(vt_pick(&t, in, 2, NULL));
  TB_ASSERT_CONTAINS(tb_last_error(), "training outputs");
  toh_teardown(&t);
  toh_setup(&t, "BatchNormalization", 15, 5, 0, 1, NULL, 0);
  tb_tensor_destroy(in[1]);
  in[1] = vt_random(&t, 3, full, 9, 1, 2);
  tb_tensor_destroy(in[2]);
  in[2] = vt_random(&t, 3, full, 10, -1, 1);
  tb_tensor_destroy(in[3]);
  in[3] = vt_random(&t, 3, full, 11, -1, 1);
  tb_tensor_destroy(in[4]);
  in[4] = vt_random(&t, 3, full, 12, 1, 2);
  const tb_kernel *entries[3] = VT_ENTRIES(batchnorm);
  vt_check(&t, entries, in, 1e-5, 1e-6, "BatchNormalization with per-element parameters (fallback)");
  toh_clear(in, 5);
  toh_teardown(&t);
}

/* ---- ReduceMean / ReduceSum ---- */

static void reduce_case(const char *op, int opset, const tb_attr *attrs, size_t n_attrs, size_t ndim,
                        const int64_t *shape, const int64_t *axes, size_t n_axes, bool picked_fast,
                        const tb_kernel *const *entries, const char *what) {
  toh t;
  toh_setup(&t, op, opset, axes ? 2 : 1, 0, 1, attrs, n_attrs);
  const int64_t an[1] = {(int64_t)n_axes};
  tb_tensor *in[2] = {vt_random(&t, ndim, shape, ndim + 3, -2, 3),
                      axes ? toh_host_tensor(t.cpu, TB_DTYPE_I64, 1, an, axes) : NULL};
  vt_data(in[0])[1] = NAN;
  const tb_kernel *k = vt_pick(&t, in, 2, NULL);
  if (picked_fast)
    vt_assert_picks(&t, in, entries);
  else
    assert_int_equal(k->level, 0);
  vt_check(&t, entries, in, 1e-6, 1e-5, what);
  toh_clear(in, 2);
  toh_teardown(&t);
}

static void reduce_last_axis(void **state) {
  (void)state;
  const tb_kernel *mean[3] = VT_ENTRIES(reduce_mean), *sum[3] = VT_ENTRIES(reduce_sum);
  const int64_t s2[2] = {5, 37}, big[2] = {1000, 999}, s1[1] = {37}, s3[3] = {2, 3, 1025}, last[1] = {-1},
                first[1] = {0};
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", -1)}, 1, 2, s2, NULL, 0, true, mean,
              "ReduceMean axes=[-1]");
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", 1), TOH_INT("keepdims", 0)}, 2, 2, s2, NULL, 0, true, mean,
              "ReduceMean axes=[1] keepdims=0");
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", 2)}, 1, 3, s3, NULL, 0, true, mean, "ReduceMean rank 3");
  reduce_case("ReduceMean", 13, NULL, 0, 1, s1, NULL, 0, true, mean, "ReduceMean rank 1, every axis");
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", -1)}, 1, 2, big, NULL, 0, true, mean, "ReduceMean large");
  reduce_case("ReduceMean", 18, NULL, 0, 2, s2, last, 1, true, mean, "ReduceMean opset 18 axes input [-1]");
  reduce_case("ReduceSum", 13, NULL, 0, 3, s3, last, 1, true, sum, "ReduceSum axes input [-1]");
  reduce_case("ReduceSum", 13, (tb_attr[]){TOH_INT("keepdims", 0)}, 1, 2, big, last, 1, true, sum, "ReduceSum large");
  /* a middle or leading block of axes: column sums ([outer, R, inner]), column chunks of 1024 and flushes
   * every 256 rows */
  const int64_t crnn[4] = {1, 512, 2, 64}, wide[3] = {2, 300, 1100}, s4[4] = {3, 4, 5, 6};
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", 2), TOH_INT("keepdims", 0)}, 2, 4, crnn, NULL, 0, true, mean,
              "ReduceMean CRNN height axis");
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", 1)}, 1, 3, wide, NULL, 0, true, mean,
              "ReduceMean middle axis, 1100 columns, 300 rows");
  reduce_case("ReduceSum", 13, (tb_attr[]){TOH_INTS("axes", 1, 2)}, 1, 4, s4, NULL, 0, true, sum, "ReduceSum axes 1, 2");
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", 0)}, 1, 2, s2, NULL, 0, true, mean,
              "ReduceMean axes=[0]");
  reduce_case("ReduceMean", 13, NULL, 0, 2, s2, NULL, 0, true, mean, "ReduceMean every axis of rank 2");
  reduce_case("ReduceSum", 13, NULL, 0, 3, s3, first, 1, true, sum, "ReduceSum axes input [0]");
  /* declined: axes that are not one block by attribute; by input, run() hands them back; noop with empty axes */
  reduce_case("ReduceMean", 13, (tb_attr[]){TOH_INTS("axes", 0, 2)}, 1, 4, s4, NULL, 0, false, mean,
              "ReduceMean axes=[0, 2]");
  const int64_t gap[2] = {1, 3};
  reduce_case("ReduceSum", 13, NULL, 0, 4, s4, gap, 2, true, sum, "ReduceSum axes input [1, 3] (fallback)");
  reduce_case("ReduceSum", 13, (tb_attr[]){TOH_INT("noop_with_empty_axes", 1)}, 1, 2, s2, NULL, 0, true, sum,
              "ReduceSum noop (fallback)");
}

/* ---- pools ---- */

static void pool_case(const char *op, int opset, const tb_attr *attrs, size_t n_attrs, const int64_t *shape,
                      uint64_t seed, double rtol, double atol, const char *what) {
  const tb_kernel *mx[3] = VT_ENTRIES(maxpool), *av[3] = VT_ENTRIES(averagepool);
  const tb_kernel *const *entries = strcmp(op, "MaxPool") == 0 ? mx : av;
  toh t;
  toh_setup(&t, op, opset, 1, 0, 1, attrs, n_attrs);
  tb_tensor *in[1] = {vt_random(&t, 4, shape, seed, -5, 5)};
  vt_assert_picks(&t, in, entries);
  vt_check(&t, entries, in, rtol, atol, what);
  toh_clear(in, 1);
  toh_teardown(&t);
}

static void maxpool_geometries(void **state) {
  (void)state;
  const int64_t a[4] = {1, 2, 11, 13}, b[4] = {2, 3, 8, 9}, c[4] = {1, 1, 7, 33}, d[4] = {1, 1, 5, 5},
                big[4] = {2, 64, 56, 56};
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 1, 1)}, 3, a,
            1, 0, 0, "MaxPool 3x3 s2 p1");
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 2, 2), TOH_INTS("strides", 2, 2), TOH_INT("ceil_mode", 1)}, 3, b, 2, 0,
            0, "MaxPool 2x2 s2 ceil_mode");
  pool_case("MaxPool", 12, (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_STR("auto_pad", "SAME_UPPER")}, 2, c, 3, 0,
            0, "MaxPool SAME_UPPER");
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 5, 2), TOH_INTS("strides", 1, 3), TOH_INTS("pads", 2, 0, 2, 1)}, 3, d,
            4, 0, 0, "MaxPool 5x2 s(1,3) uneven pads");
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 1, 1)}, 3,
            big, 5, 0, 0, "MaxPool ResNet stem size");
  const int64_t wide[4] = {1, 3, 9, 77}, one[4] = {1, 1, 3, 2};
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 1, 1)}, 3,
            wide, 6, 0, 0, "MaxPool 3x3 s2 p1, 39 outputs a row (vector tails)");
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 2, 4), TOH_INTS("strides", 1, 2), TOH_INTS("pads", 0, 3, 0, 2)}, 3,
            wide, 7, 0, 0, "MaxPool 2x4 s(1,2) pads wider than a tap");
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 2, 2), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 1, 1)}, 3, one,
            8, 0, 0, "MaxPool s2 on a 3x2 plane (one-lane runs)");
  /* the AVX2 separable path's strides 1, 2 and 3, a kernel wider than the row's vectors, and one over its
   * 64 taps a row (the row loop) */
  const int64_t sppf[4] = {1, 4, 20, 20}, odd[4] = {2, 3, 17, 29}, long_row[4] = {1, 2, 3, 70};
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 5, 5), TOH_INTS("strides", 1, 1), TOH_INTS("pads", 2, 2, 2, 2)}, 3,
            sppf, 9, 0, 0, "MaxPool 5x5 s1 p2 (YOLO's SPPF)");
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 13, 13), TOH_INTS("strides", 1, 1), TOH_INTS("pads", 6, 6, 6, 6)},
            3, odd, 10, 0, 0, "MaxPool 13x13 s1 p6 (SPP), 29 columns");
  pool_case("MaxPool", 12,
            (tb_attr[]){TOH_INTS("kernel_shape", 4, 5), TOH_INTS("strides", 2, 3), TOH_INTS("pads", 1, 2, 3, 4),
                        TOH_INT("ceil_mode", 1)},
            4, odd, 11, 0, 0, "MaxPool 4x5 s(2,3) uneven pads ceil_mode");
  pool_case("MaxPool", 12, (tb_attr[]){TOH_INTS("kernel_shape", 2, 65), TOH_INTS("pads", 0, 1, 0, 1)}, 2, long_row,
            12, 0, 0, "MaxPool 2x65 (over the separable path's 64 taps)");
}

/* Stride 2 (the AVX-512 permute path) with NaNs scattered over the input: the same NaN rule. */
static void maxpool_stride2_nan_rule(void **state) {
  (void)state;
  const tb_kernel *entries[3] = VT_ENTRIES(maxpool);
  toh t;
  toh_setup(&t, "MaxPool", 12, 1, 0, 1,
            (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 1, 1)}, 3);
  const int64_t shape[4] = {1, 2, 11, 70};
  tb_tensor *in[1] = {vt_random(&t, 4, shape, 9, -5, 5)};
  float *x = tb_tensor_host_data(in[0]);
  for (int64_t i = 0; i < tb_tensor_numel(in[0]); i += 7) x[i] = NAN;
  vt_check(&t, entries, in, 0, 0, "MaxPool 3x3 s2 with NaN taps");
  tb_tensor *got[1];
  vt_run(&t, vt_fastest(entries), in, got, NULL);
  const float *y = vt_data(got[0]); /* 6 x 35 per plane */
  assert_true(isnan(y[0]) == isnan(x[0]) && y[1] >= x[2]);
  size_t nans = 0;
  for (int64_t i = 0; i < tb_tensor_numel(got[0]); i++) nans += isnan(y[i]) != 0;
  assert_true(nans > 0 && nans < (size_t)tb_tensor_numel(got[0]) / 2); /* some first taps are NaN, most are not */
  toh_clear(got, 1);
  toh_clear(in, 1);
  toh_teardown(&t);
}

/* Column stride 2 with 2 or 3 kernel columns (the AVX-512 separable path) over odd and even widths, pads
 * 0, 1 and 2, ceil_mode, row strides 1..3 and kernel heights up to 5 (above 4: the AVX2 separable plane,
 * on the AVX-512 entry too). */
static void maxpool_stride2_widths(void **state) {
  (void)state;
  static const int64_t widths[] = {1, 2, 15, 17, 33, 112, 113};
  static const struct {
    int64_t kh, kw, sh, pad, ceil;
  } geo[] = {{3, 3, 2, 1, 0}, {3, 3, 2, 0, 0}, {3, 3, 2, 0, 1}, {3, 3, 2, 1, 1}, {2, 2, 2, 0, 1},
             {2, 2, 2, 1, 0}, {4, 3, 1, 1, 0}, {1, 3, 3, 0, 0}, {5, 3, 2, 2, 0}, {3, 2, 2, 1, 1},
             {3, 3, 2, 2, 0}, {4, 3, 2, 2, 1}};
  for (size_t g = 0; g < sizeof geo / sizeof geo[0]; g++)
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
      if (geo[g].kw > widths[w] + 2 * geo[g].pad) continue;
      const int64_t shape[4] = {1, 3, 9, widths[w]};
      char what[128];
      snprintf(what, sizeof what, "MaxPool %lldx%lld s(%lld,2) pad %lld ceil %lld width %lld", (long long)geo[g].kh,
               (long long)geo[g].kw, (long long)geo[g].sh, (long long)geo[g].pad, (long long)geo[g].ceil,
               (long long)widths[w]);
      int64_t p = geo[g].pad;
      pool_case("MaxPool", 12,
                (tb_attr[]){TOH_INTS("kernel_shape", geo[g].kh, geo[g].kw), TOH_INTS("strides", geo[g].sh, 2),
                            TOH_INTS("pads", p, p, p, p), TOH_INT("ceil_mode", geo[g].ceil)},
                4, shape, g * 16 + w, 0, 0, what);
    }
}

/* Planes of a 3x3/2 MaxPool input, 9 rows of `w` columns: plane t < 9 has one NaN at tap t (window
 * order) of output (1, o1); plane 9 a NaN at x(0, 0), the first tap inside the input of output (0, 0)
 * under pad 1; plane 10 +inf at tap 4 and -inf at tap 0 of output (1, o1); plane 11 all -inf; plane 12
 * random signed zeros; plane 13 plain values. */
enum { SPECIAL_PLANES = 14 };
static void special_planes(float *x, int64_t w, int64_t pad, int64_t o1) {
  for (int64_t t = 0; t < 9; t++) x[t * 9 * w + (2 - pad + t / 3) * w + 2 * o1 - pad + t % 3] = NAN;
  x[9 * 9 * w] = NAN;
  x[10 * 9 * w + (2 - pad + 1) * w + 2 * o1 - pad + 1] = INFINITY;
  x[10 * 9 * w + (2 - pad) * w + 2 * o1 - pad] = -INFINITY;
  for (int64_t i = 0; i < 9 * w; i++) x[11 * 9 * w + i] = -INFINITY;
  for (int64_t i = 0; i < 9 * w; i++) x[12 * 9 * w + i] = (i * 7 + i / 3) % 5 < 2 ? -0.0f : 0.0f;
}

/* The NaN rule at every tap position, infinities and signed zeros on the separable path and the others,
 * pads 0 and 1, at a middle output column and the last (c >= 2; at widths 33 and 65 under pad 0 its third
 * tap is the 33rd column of its row block): exact against the reference (sign of zeros included), and the
 * NaN planes' output (1, o1) is NaN only when the NaN is its first tap. */
static void maxpool_stride2_special_values(void **state) {
  (void)state;
  static const int64_t widths[] = {7, 15, 17, 33, 65, 112, 113};
  const tb_kernel *entries[3] = VT_ENTRIES(maxpool);
  for (int64_t c = 0; c < 4; c++)
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
      int64_t pad = c & 1, w = widths[wi], ow = (w + 2 * pad - 3) / 2 + 1, o1 = c < 2 ? ow / 2 : ow - 1;
      toh t;
      const tb_attr attrs[3] = {TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2),
                                TOH_INTS("pads", pad, pad, pad, pad)};
      toh_setup(&t, "MaxPool", 12, 1, 0, 1, attrs, 3);
      const int64_t shape[4] = {1, SPECIAL_PLANES, 9, w};
      tb_tensor *in[1] = {vt_random(&t, 4, shape, 40 + (uint64_t)w, -5, 5)};
      special_planes(vt_data(in[0]), w, pad, o1);
      char what[128];
      snprintf(what, sizeof what, "MaxPool 3x3 s2 pad %lld width %lld special values at output column %lld",
               (long long)pad, (long long)w, (long long)o1);
      vt_check(&t, entries, in, 0, 0, what);
      tb_tensor *ref[1], *got[1];
      TB_ASSERT_OK(toh_run_tensors(&t, in, ref, false));
      for (int p = 0; p < 3; p++) {
        if (!vt_runnable(entries[p])) continue;
        vt_run(&t, entries[p], in, got, NULL);
        const float *y = vt_data(got[0]), *r = vt_data(ref[0]);
        int64_t oh = (9 + 2 * pad - 3) / 2 + 1, plane = oh * ow;
        for (int64_t i = 0; i < SPECIAL_PLANES * plane; i++)
          if (!isnan(r[i]) && signbit(y[i]) != signbit(r[i]))
            fail_msg("%s on %s: element %lld is %g, reference %g", what, vt_path_names[p], (long long)i, y[i], r[i]);
        for (int64_t tap = 0; tap < 9; tap++)
          assert_true((isnan(y[tap * plane + ow + o1]) != 0) == (tap == 0));
        if (pad) assert_true(isnan(y[9 * plane]));
        assert_true(y[10 * plane + ow + o1] == INFINITY);
        assert_true(y[11 * plane] == -INFINITY && y[11 * plane + plane - 1] == -INFINITY);
        toh_clear(got, 1);
      }
      toh_clear(ref, 1);
      toh_clear(in, 1);
      toh_teardown(&t);
    }
}

/* The 5x5 stride-1 pool of YOLO's SPPF (the AVX2 separable path at stride 1) on planes with NaNs
 * scattered (their output rows go back to the row loop, the others stay separable), random signed zeros,
 * and -inf with one +inf: exact against the reference, zeros' signs included, on every path. */
static void maxpool_stride1_special_values(void **state) {
  (void)state;
  const tb_kernel *entries[3] = VT_ENTRIES(maxpool);
  toh t;
  toh_setup(&t, "MaxPool", 12, 1, 0, 1,
            (tb_attr[]){TOH_INTS("kernel_shape", 5, 5), TOH_INTS("strides", 1, 1), TOH_INTS("pads", 2, 2, 2, 2)}, 3);
  enum { H = 23, W = 21 };
  const int64_t shape[4] = {1, 3, H, W};
  tb_tensor *in[1] = {vt_random(&t, 4, shape, 77, -5, 5)};
  float *x = vt_data(in[0]);
  for (int64_t i = 0; i < 2 * W; i += 13) x[3 * W + i] = NAN; /* rows 3 and 4 of plane 0 */
  for (int64_t i = 0; i < H * W; i++) x[H * W + i] = (i * 7 + i / 3) % 5 < 2 ? -0.0f : 0.0f;
  for (int64_t i = 0; i < H * W; i++) x[2 * H * W + i] = i == 100 ? INFINITY : -INFINITY;
  vt_check(&t, entries, in, 0, 0, "MaxPool 5x5 s1 p2 with NaN, signed zeros and infinities");
  tb_tensor *ref[1], *got[1];
  TB_ASSERT_OK(toh_run_tensors(&t, in, ref, false));
  for (int p = 0; p < 3; p++) {
    if (!vt_runnable(entries[p])) continue;
    vt_run(&t, entries[p], in, got, NULL);
    const float *y = vt_data(got[0]), *r = vt_data(ref[0]);
    size_t nans = 0;
    for (int64_t i = 0; i < 3 * H * W; i++) {
      nans += isnan(y[i]) != 0;
      if (isnan(r[i]) != isnan(y[i]) || (!isnan(r[i]) && (y[i] != r[i] || signbit(y[i]) != signbit(r[i]))))
        fail_msg("MaxPool 5x5 s1 on %s: element %lld is %g, reference %g", vt_path_names[p], (long long)i, y[i], r[i]);
    }
    assert_true(nans > 0 && y[2 * H * W + 100] == INFINITY && y[3 * H * W - 1] == -INFINITY);
    toh_clear(got, 1);
  }
  toh_clear(ref, 1);
  toh_clear(in, 1);
  toh_teardown(&t);
}

/* Rows wider than the AVX-512 row loop and separable path take (over 512 outputs): 3x3/2 and 5x5/1 on the
 * AVX2 separable plane on the AVX-512 entry too (before: the scalar row loop), with NaNs in some rows (those
 * output rows handed back) and signed zeros, exact against the reference on every path. */
static void maxpool_wide_rows(void **state) {
  (void)state;
  const tb_kernel *entries[3] = VT_ENTRIES(maxpool);
  static const struct {
    int64_t k, s, p;
  } geo[] = {{3, 2, 1}, {5, 1, 2}};
  for (size_t g = 0; g < 2; g++) {
    toh t;
    toh_setup(&t, "MaxPool", 12, 1, 0, 1,
              (tb_attr[]){TOH_INTS("kernel_shape", geo[g].k, geo[g].k), TOH_INTS("strides", geo[g].s, geo[g].s),
                          TOH_INTS("pads", geo[g].p, geo[g].p, geo[g].p, geo[g].p)},
              3);
    enum { H = 7, W = 1100 };
    const int64_t shape[4] = {1, 2, H, W};
    tb_tensor *in[1] = {vt_random(&t, 4, shape, 90 + g, -5, 5)};
    float *x = vt_data(in[0]);
    for (int64_t i = 0; i < W; i += 97) x[3 * W + i] = NAN; /* row 3 of plane 0: the first row of an output row */
    for (int64_t i = 0; i < H * W; i += 3) x[H * W + i] = i % 2 ? -0.0f : 0.0f;
    char what[64];
    snprintf(what, sizeof what, "MaxPool %lldx%lld/%lld over 1100 columns", (long long)geo[g].k, (long long)geo[g].k,
             (long long)geo[g].s);
    vt_check(&t, entries, in, 0, 0, what);
    tb_tensor *ref[1], *got[1];
    TB_ASSERT_OK(toh_run_tensors(&t, in, ref, false));
    int64_t n = tb_tensor_numel(ref[0]);
    for (int p = 0; p < 3; p++) {
      if (!vt_runnable(entries[p])) continue;
      vt_run(&t, entries[p], in, got, vt_pool);
      const float *y = vt_data(got[0]), *r = vt_data(ref[0]);
      size_t nans = 0;
      for (int64_t i = 0; i < n; i++) {
        nans += isnan(y[i]) != 0;
        if (!isnan(r[i]) && signbit(y[i]) != signbit(r[i]))
          fail_msg("%s on %s: element %lld is %g, reference %g", what, vt_path_names[p], (long long)i, y[i], r[i]);
      }
      assert_true(nans > 0 && nans < (size_t)n / 4); /* some first taps are NaN, most outputs are not */
      toh_clear(got, 1);
    }
    toh_clear(ref, 1);
    toh_clear(in, 1);
    toh_teardown(&t);
  }
}

/* The reference's NaN rule: a NaN first tap stays, a NaN later tap is skipped. */
static void maxpool_nan_rule(void **state) {
  (void)state;
  const tb_kernel *entries[3] = VT_ENTRIES(maxpool);
  toh t;
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2)}, 1);
  const int64_t shape[4] = {1, 1, 4, 4};
  const float x[16] = {NAN, 1, 2, 3, 4, 5, NAN, 7, 8, 9, 10, 11, 12, 13, 14, -INFINITY};
  tb_tensor *in[1] = {toh_host_tensor(t.cpu, TB_DTYPE_F32, 4, shape, x)};
  vt_check(&t, entries, in, 0, 0, "MaxPool with NaN taps");
  tb_tensor *got[1];
  vt_run(&t, vt_fastest(entries), in, got, NULL);
  const float *y = vt_data(got[0]); /* 3x3 */
  assert_true(isnan(y[0]));         /* window starts at the NaN */
  assert_true(y[1] == 5);           /* NaN at (1,2) is a later tap of output (0,1): skipped */
  assert_true(y[2] == 7 && y[4] == 10);
  assert_true(isnan(y[5])); /* output (1,2): its first tap is x(1,2) = NaN */
  toh_clear(got, 1);
  toh_clear(in, 1);
  toh_teardown(&t);
}

static void maxpool_declines(void **state) {
  (void)state;
  const int64_t s4[4] = {1, 1, 6, 6}, s5[5] = {1, 1, 4, 4, 4};
  toh t;
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2), TOH_INTS("dilations", 2, 2)}, 2);
  tb_tensor *in[1] = {vt_random(&t, 4, s4, 1, -1, 1)};
  assert_int_equal(vt_pick(&t, in, 2, NULL)->level, 0);
  toh_teardown(&t);
  toh_begin(&t, NULL);
  toh_add(&t, "MaxPool", 12, 1, 0, 2, 0, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2)}, 1); /* with Indices */
  assert_int_equal(vt_pick(&t, in, 2, NULL)->level, 0);
  toh_teardown(&t);
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, (tb_attr[]){TOH_INTS("kernel_shape", 2, 2, 2)}, 1); /* 3-D */
  toh_clear(in, 1);
  in[0] = vt_random(&t, 5, s5, 2, -1, 1);
  assert_int_equal(vt_pick(&t, in, 2, NULL)->level, 0);
  const tb_kernel *entries[3] = VT_ENTRIES(maxpool);
  vt_check(&t, entries, in, 0, 0, "3-D MaxPool (fallback)");
  toh_clear(in, 1);
  toh_teardown(&t);
}

static void averagepool_geometries(void **state) {
  (void)state;
  const int64_t a[4] = {1, 2, 11, 13}, b[4] = {2, 3, 8, 9}, c[4] = {1, 1, 7, 7}, big[4] = {2, 64, 56, 56};
  for (int inc = 0; inc < 2; inc++) {
    pool_case(
        "AveragePool", 11,
        (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("pads", 1, 1, 1, 1), TOH_INT("count_include_pad", inc)}, 3,
        a, 1, 1e-5, 1e-6, inc ? "AveragePool 3x3 p1 count_include_pad" : "AveragePool 3x3 p1");
    pool_case("AveragePool", 11,
              (tb_attr[]){TOH_INTS("kernel_shape", 2, 2), TOH_INTS("strides", 2, 2), TOH_INT("ceil_mode", 1),
                          TOH_INT("count_include_pad", inc)},
              4, b, 2, 1e-5, 1e-6, inc ? "AveragePool ceil_mode count_include_pad" : "AveragePool ceil_mode");
    pool_case("AveragePool", 11,
              (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 0, 0),
                          TOH_INT("count_include_pad", inc)},
              4, c, 3, 1e-5, 1e-6, "AveragePool begin pads only");
    pool_case("AveragePool", 11,
              (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_STR("auto_pad", "SAME_LOWER"),
                          TOH_INT("count_include_pad", inc)},
              3, c, 4, 1e-5, 1e-6, "AveragePool SAME_LOWER");
  }
  pool_case("AveragePool", 11, (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("pads", 1, 1, 1, 1)}, 2, big, 5,
            1e-5, 1e-6, "AveragePool large");
  const int64_t wide[4] = {1, 3, 10, 77};
  pool_case("AveragePool", 11,
            (tb_attr[]){TOH_INTS("kernel_shape", 3, 3), TOH_INTS("strides", 2, 2), TOH_INTS("pads", 1, 1, 1, 1),
                        TOH_INT("count_include_pad", 1)},
            4, wide, 6, 1e-5, 1e-6, "AveragePool 3x3 s2 p1 count_include_pad, 39 outputs a row");
  pool_case("AveragePool", 11, (tb_attr[]){TOH_INTS("kernel_shape", 2, 3), TOH_INTS("strides", 3, 3)}, 2, wide, 7,
            1e-5, 1e-6, "AveragePool 2x3 s3 (scalar strided loop)");
}

static void global_averagepool(void **state) {
  (void)state;
  static const int64_t shapes[][4] = {{2, 3, 7, 9}, {4, 512, 7, 7}, {1, 3, 1, 1}, {2, 5}};
  static const size_t ranks[] = {4, 4, 4, 2};
  const tb_kernel *entries[3] = VT_ENTRIES(global_averagepool);
  for (size_t c = 0; c < 4; c++) {
    toh t;
    toh_setup(&t, "GlobalAveragePool", 1, 1, 0, 1, NULL, 0);
    tb_tensor *in[1] = {vt_random(&t, ranks[c], shapes[c], c + 1, -3, 3)};
    if (c == 0) vt_data(in[0])[5] = INFINITY;
    vt_assert_picks(&t, in, entries);
    char what[128];
    snprintf(what, sizeof what, "GlobalAveragePool case %zu", c);
    vt_check(&t, entries, in, 1e-5, 1e-6, what);
    toh_clear(in, 1);
    toh_teardown(&t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(softmax_every_axis),        cmocka_unit_test(softmax_special_rows),
      cmocka_unit_test(log_softmax_rows),
      cmocka_unit_test(layernorm_onnx_with_stats), cmocka_unit_test(layernorm_tb_domain),
      cmocka_unit_test(layernorm_nan_row),         cmocka_unit_test(batchnorm_inference),
      cmocka_unit_test(batchnorm_declines),        cmocka_unit_test(reduce_last_axis),
      cmocka_unit_test(maxpool_geometries),        cmocka_unit_test(maxpool_nan_rule),
      cmocka_unit_test(maxpool_stride2_nan_rule),  cmocka_unit_test(maxpool_stride2_widths),
      cmocka_unit_test(maxpool_stride2_special_values), cmocka_unit_test(maxpool_stride1_special_values),
      cmocka_unit_test(maxpool_wide_rows),
      cmocka_unit_test(maxpool_declines),          cmocka_unit_test(averagepool_geometries),
      cmocka_unit_test(global_averagepool),
  };
  return cmocka_run_group_tests(tests, vt_setup, vt_teardown);
}
