/* Typed parameters of the nn and fused families (ops/nn/nn_params.h, ops/fused/fused_params.h): nodes built
 * with attributes, parsed once; the parsed values, the defaults, every rejection (status and message), and
 * the shape-time helpers (window.h, reduce.h) that resolve what the attributes leave to the shapes. */
#include <math.h>
#include <stddef.h>
#include "ops/fused/fused_params.h"
#include "ops/nn/reduce.h"
#include "ops/nn/window.h"
#include "test_op_harness.h"

typedef tb_status (*parse_fn)(const tb_graph *, const tb_node *, void *);

/* Parse node n0 (`op` of `domain` at `opset`, n_out outputs, omitted where omit_out has bit i) into params
 * (zeroed first, params_size bytes). */
static tb_status parse_with(const char *domain, const char *op, int opset, size_t n_in, size_t n_out, unsigned omit_out,
                            const tb_attr *attrs, size_t n_attrs, parse_fn parse, void *params, size_t params_size) {
  toh t;
  toh_begin(&t, NULL);
  toh_add_op(&t, domain, op, opset, n_in, 0, n_out, omit_out, attrs, n_attrs);
  memset(params, 0, params_size);
  tb_status st = parse(t.graph, toh_node(&t), params);
  toh_teardown(&t);
  return st;
}

#define PARSE(op, opset, attrs, n_attrs, parse, p) parse_with("", op, opset, 3, 1, 0, attrs, n_attrs, parse, p, sizeof *(p))
#define PARSE_TB(op, attrs, n_attrs, parse, p) parse_with("tb", op, 1, 3, 1, 0, attrs, n_attrs, parse, p, sizeof *(p))

static void assert_rejected(tb_status st, tb_status want, const char *op, const char *message) {
  assert_int_equal(st, want);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0'");
  TB_ASSERT_CONTAINS(tb_last_error(), op);
  TB_ASSERT_CONTAINS(tb_last_error(), message);
}

static void test_conv(void **state) {
  (void)state;
  tb_conv_params p;
  TB_ASSERT_OK(PARSE("Conv", 11, NULL, 0, tb_conv_parse, &p));
  assert_int_equal(p.group, 1);
  assert_int_equal(p.win.n_kernel + p.win.n_strides + p.win.n_dilations + p.win.n_pads, 0);
  assert_int_equal(p.win.auto_pad, TB_AUTO_PAD_NOTSET);
  assert_false(p.win.ceil_mode);

  tb_attr full[] = {TOH_INT("group", 2),           TOH_INTS("kernel_shape", 3, 2), TOH_INTS("strides", 2, 1),
                    TOH_INTS("dilations", 1, 3),   TOH_INTS("pads", 1, 0, 2, 0),   TOH_INT("ceil_mode", 1)};
  TB_ASSERT_OK(PARSE("Conv", 11, full, 6, tb_conv_parse, &p));
  assert_int_equal(p.group, 2);
  assert_int_equal(p.win.n_kernel, 2);
  assert_int_equal(p.win.kernel[0], 3);
  assert_int_equal(p.win.kernel[1], 2);
  assert_int_equal(p.win.strides[0], 2);
  assert_int_equal(p.win.dilations[1], 3);
  assert_int_equal(p.win.n_pads, 4);
  assert_int_equal(p.win.pads[2], 2);
  assert_false(p.win.ceil_mode); /* a pool attribute: Conv does not read it */

  tb_attr same[] = {TOH_INTS("pads", 1, 1), TOH_STR("auto_pad", "SAME_LOWER")};
  TB_ASSERT_OK(PARSE("Conv", 11, same, 2, tb_conv_parse, &p));
  assert_int_equal(p.win.auto_pad, TB_AUTO_PAD_SAME_LOWER);
  assert_int_equal(p.win.pads[0] + p.win.pads[1], 0); /* auto_pad decides the pads */

  tb_attr tr[] = {TOH_INTS("output_padding", 1, 0), TOH_INTS("output_shape", 1, 4, 9, 10)};
  TB_ASSERT_OK(PARSE("ConvTranspose", 11, tr, 2, tb_conv_transpose_parse, &p));
  assert_int_equal(p.n_output_padding, 2);
  assert_int_equal(p.output_padding[0], 1);
  assert_int_equal(p.n_output_shape, 4);
  const int64_t *spatial = NULL;
  size_t count = 0;
  TB_ASSERT_OK(tb_nn_conv_output_shape(&p, 4, &spatial, &count));
  assert_int_equal(count, 2);
  assert_int_equal(spatial[0], 9);
  assert_int_equal(spatial[1], 10);
  assert_int_equal(tb_nn_conv_output_shape(&p, 5, &spatial, &count), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute output_shape has 4 values; it needs 3");
}

static void test_conv_rejections(void **state) {
  (void)state;
  tb_conv_params p;
  tb_attr group0[] = {TOH_INT("group", 0)};
  assert_rejected(PARSE("Conv", 11, group0, 1, tb_conv_parse, &p), TB_ERR_MODEL, "(Conv)", "attribute group is 0; it must be >= 1");
  tb_attr stride0[] = {TOH_INTS("strides", 1, 0)};
  assert_rejected(PARSE("Conv", 11, stride0, 1, tb_conv_parse, &p), TB_ERR_MODEL, "(Conv)",
                  "attribute strides[1] is 0; it must be >= 1");
  tb_attr dil0[] = {TOH_INTS("dilations", 0)};
  assert_rejected(PARSE("Conv", 11, dil0, 1, tb_conv_parse, &p), TB_ERR_MODEL, "(Conv)", "attribute dilations[0] is 0");
  tb_attr kernel0[] = {TOH_INTS("kernel_shape", 3, -1)};
  assert_rejected(PARSE("Conv", 11, kernel0, 1, tb_conv_parse, &p), TB_ERR_MODEL, "(Conv)", "attribute kernel_shape[1] is -1");
  tb_attr pad_neg[] = {TOH_INTS("pads", 0, -2)};
  assert_rejected(PARSE("Conv", 11, pad_neg, 1, tb_conv_parse, &p), TB_ERR_MODEL, "(Conv)",
                  "attribute pads[1] is -2; it must be >= 0");
  tb_attr auto_bad[] = {TOH_STR("auto_pad", "SAME")};
  assert_rejected(PARSE("Conv", 11, auto_bad, 1, tb_conv_parse, &p), TB_ERR_MODEL, "(Conv)",
                  "attribute auto_pad is 'SAME'; it must be NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  tb_attr nine[] = {TOH_INTS("strides", 1, 1, 1, 1, 1, 1, 1, 1, 1)};
  assert_rejected(PARSE("Conv", 11, nine, 1, tb_conv_parse, &p), TB_ERR_UNSUPPORTED, "(Conv)",
                  "attribute strides has 9 values; at most 8 are supported");
  tb_attr group_float[] = {TOH_FLOAT("group", 2.0f)};
  assert_rejected(PARSE("Conv", 11, group_float, 1, tb_conv_parse, &p), TB_ERR_MODEL, "(Conv)", "group");
  tb_attr out_neg[] = {TOH_INTS("output_shape", 4, -1)};
  assert_rejected(PARSE("ConvTranspose", 11, out_neg, 1, tb_conv_transpose_parse, &p), TB_ERR_MODEL, "(ConvTranspose)",
                  "attribute output_shape[1] is -1; it must be >= 0");
  tb_attr opad_neg[] = {TOH_INTS("output_padding", -1)};
  assert_rejected(PARSE("ConvTranspose", 11, opad_neg, 1, tb_conv_transpose_parse, &p), TB_ERR_MODEL, "(ConvTranspose)",
                  "attribute output_padding[0] is -1");
}

/* The window resolved for shapes: defaults, counts against the rank, SAME pads, transposed sizes. */
static void test_window_resolve(void **state) {
  (void)state;
  tb_conv_params p;
  memset(&p, 0, sizeof p);
  nn_window w;
  int64_t weight[2] = {3, 3}, out = 0;
  TB_ASSERT_OK(tb_nn_window_init(&p.win, 2, weight, &w));
  assert_int_equal(w.kernel[1], 3);
  assert_int_equal(w.stride[0], 1);
  assert_int_equal(w.dilation[1], 1);
  TB_ASSERT_OK(tb_nn_window_out(&w, 0, 7, &out));
  assert_int_equal(out, 5);

  p.win.n_strides = 3;
  p.win.strides[0] = p.win.strides[1] = p.win.strides[2] = 2;
  assert_int_equal(tb_nn_window_init(&p.win, 2, weight, &w), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute strides has 3 values; it needs 2");
  p.win.n_strides = 2;
  p.win.auto_pad = TB_AUTO_PAD_SAME_UPPER;
  TB_ASSERT_OK(tb_nn_window_init(&p.win, 2, weight, &w));
  TB_ASSERT_OK(tb_nn_window_out(&w, 1, 8, &out)); /* ceil(8 / 2) = 4, total pad 1: 0 before, 1 after */
  assert_int_equal(out, 4);
  assert_int_equal(w.pad_begin[1], 0);
  assert_int_equal(w.pad_end[1], 1);

  p.win.n_kernel = 2;
  p.win.kernel[0] = 5;
  p.win.kernel[1] = 3;
  assert_int_equal(tb_nn_window_init(&p.win, 2, weight, &w), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute kernel_shape[0] is 5; it differs from the weight's spatial size");
  tb_window_params none;
  memset(&none, 0, sizeof none);
  assert_int_equal(tb_nn_window_init(&none, 1, NULL, &w), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute kernel_shape is required");

  /* ConvTranspose: in 3, stride 2, kernel 3, output_padding 1 -> 2 * 2 + 1 + 3 = 8 */
  memset(&p, 0, sizeof p);
  p.win.n_strides = 1;
  p.win.strides[0] = 2;
  p.n_output_padding = 1;
  p.output_padding[0] = 1;
  TB_ASSERT_OK(tb_nn_window_init(&p.win, 1, weight, &w));
  TB_ASSERT_OK(tb_nn_window_init_transpose(&p, &w));
  TB_ASSERT_OK(tb_nn_window_out_transpose(&w, 0, 3, -1, &out));
  assert_int_equal(out, 8);
  p.output_padding[0] = 2;
  assert_int_equal(tb_nn_window_init_transpose(&p, &w), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute output_padding[0] is 2; it must be smaller than the stride or the dilation");
}

static void test_pool(void **state) {
  (void)state;
  tb_pool_params p;
  tb_attr max[] = {TOH_INTS("kernel_shape", 2, 2), TOH_INT("storage_order", 1), TOH_INT("ceil_mode", 1)};
  TB_ASSERT_OK(parse_with("", "MaxPool", 12, 1, 2, 0, max, 3, tb_pool_parse, &p, sizeof p));
  assert_int_equal(p.kind, TB_POOL_MAX);
  assert_false(p.global);
  assert_int_equal(p.storage_order, 1);
  assert_true(p.win.ceil_mode);
  assert_int_equal(p.win.n_kernel, 2);
  assert_true(p.indices);
  TB_ASSERT_OK(parse_with("", "MaxPool", 12, 1, 2, 2u, max, 3, tb_pool_parse, &p, sizeof p));
  assert_false(p.indices); /* the Indices output omitted */

  tb_attr avg[] = {TOH_INTS("kernel_shape", 3), TOH_INT("count_include_pad", 1)};
  TB_ASSERT_OK(PARSE("AveragePool", 11, avg, 2, tb_pool_parse, &p));
  assert_int_equal(p.kind, TB_POOL_AVERAGE);
  assert_true(p.count_include_pad);
  TB_ASSERT_OK(PARSE("AveragePool", 11, avg, 1, tb_pool_parse, &p));
  assert_false(p.count_include_pad);

  tb_attr lp[] = {TOH_INTS("kernel_shape", 3), TOH_INT("p", 3)};
  TB_ASSERT_OK(PARSE("LpPool", 11, lp, 2, tb_pool_parse, &p));
  assert_int_equal(p.kind, TB_POOL_LP);
  assert_int_equal(p.p, 3);
  TB_ASSERT_OK(PARSE("GlobalLpPool", 2, NULL, 0, tb_pool_parse, &p));
  assert_true(p.global);
  assert_int_equal(p.kind, TB_POOL_LP);
  assert_int_equal(p.p, 2);
  TB_ASSERT_OK(PARSE("GlobalMaxPool", 1, NULL, 0, tb_pool_parse, &p));
  assert_true(p.global);
  assert_int_equal(p.kind, TB_POOL_MAX);

  tb_attr order2[] = {TOH_INTS("kernel_shape", 2), TOH_INT("storage_order", 2)};
  assert_rejected(PARSE("MaxPool", 12, order2, 2, tb_pool_parse, &p), TB_ERR_MODEL, "(MaxPool)",
                  "attribute storage_order is 2; it must be 0 or 1");
  tb_attr p0[] = {TOH_INTS("kernel_shape", 2), TOH_INT("p", 0)};
  assert_rejected(PARSE("LpPool", 11, p0, 2, tb_pool_parse, &p), TB_ERR_MODEL, "(LpPool)", "attribute p is 0; it must be >= 1");
  tb_attr stride0[] = {TOH_INTS("kernel_shape", 2), TOH_INTS("strides", 0)};
  assert_rejected(PARSE("AveragePool", 11, stride0, 2, tb_pool_parse, &p), TB_ERR_MODEL, "(AveragePool)",
                  "attribute strides[0] is 0; it must be >= 1");
}

static void test_gemm_softmax(void **state) {
  (void)state;
  tb_gemm_params g;
  TB_ASSERT_OK(PARSE("Gemm", 13, NULL, 0, tb_gemm_parse, &g));
  assert_false(g.trans_a);
  assert_false(g.trans_b);
  assert_true(g.alpha == 1.0f && g.beta == 1.0f);
  tb_attr gemm[] = {TOH_INT("transA", 1), TOH_INT("transB", 1), TOH_FLOAT("alpha", 0.5f), TOH_FLOAT("beta", -2.0f)};
  TB_ASSERT_OK(PARSE("Gemm", 13, gemm, 4, tb_gemm_parse, &g));
  assert_true(g.trans_a && g.trans_b);
  assert_true(g.alpha == 0.5f && g.beta == -2.0f);
  tb_attr alpha_int[] = {TOH_INT("alpha", 2)};
  assert_rejected(PARSE("Gemm", 13, alpha_int, 1, tb_gemm_parse, &g), TB_ERR_MODEL, "(Gemm)", "alpha");

  tb_softmax_params s;
  TB_ASSERT_OK(PARSE("Softmax", 11, NULL, 0, tb_softmax_parse, &s));
  assert_int_equal(s.kind, TB_SOFTMAX);
  assert_int_equal(s.axis, 1);
  assert_true(s.flatten);
  TB_ASSERT_OK(PARSE("LogSoftmax", 13, NULL, 0, tb_softmax_parse, &s));
  assert_int_equal(s.kind, TB_LOG_SOFTMAX);
  assert_int_equal(s.axis, -1);
  assert_false(s.flatten);
  tb_attr axis0[] = {TOH_INT("axis", 0)};
  TB_ASSERT_OK(PARSE("Hardmax", 13, axis0, 1, tb_softmax_parse, &s));
  assert_int_equal(s.kind, TB_HARDMAX);
  assert_int_equal(s.axis, 0);
}

static void test_norms(void **state) {
  (void)state;
  tb_norm_params p;
  TB_ASSERT_OK(parse_with("", "BatchNormalization", 15, 5, 1, 0, NULL, 0, tb_norm_parse, &p, sizeof p));
  assert_int_equal(p.kind, TB_NORM_BATCH);
  assert_true(p.epsilon == 1e-5f);
  assert_true(p.spatial);
  tb_attr old[] = {TOH_INT("spatial", 0), TOH_FLOAT("epsilon", 1e-3f)};
  TB_ASSERT_OK(parse_with("", "BatchNormalization", 7, 5, 1, 0, old, 2, tb_norm_parse, &p, sizeof p));
  assert_false(p.spatial);
  assert_true(p.epsilon == 1e-3f);
  tb_attr training[] = {TOH_INT("training_mode", 1)};
  assert_rejected(parse_with("", "BatchNormalization", 15, 5, 1, 0, training, 1, tb_norm_parse, &p, sizeof p),
                  TB_ERR_UNSUPPORTED, "(BatchNormalization)", "training_mode=1 is not supported (inference only)");
  assert_rejected(parse_with("", "BatchNormalization", 15, 5, 3, 0, NULL, 0, tb_norm_parse, &p, sizeof p), TB_ERR_UNSUPPORTED,
                  "(BatchNormalization)", "training outputs");

  TB_ASSERT_OK(parse_with("", "InstanceNormalization", 6, 3, 1, 0, NULL, 0, tb_norm_parse, &p, sizeof p));
  assert_int_equal(p.kind, TB_NORM_INSTANCE);
  assert_true(p.epsilon == 1e-5f);

  tb_attr ln[] = {TOH_INT("axis", 1), TOH_FLOAT("epsilon", 1e-6f)};
  TB_ASSERT_OK(parse_with("", "LayerNormalization", 17, 3, 3, 2u, ln, 2, tb_norm_parse, &p, sizeof p));
  assert_int_equal(p.kind, TB_NORM_LAYER);
  assert_int_equal(p.axis, 1);
  assert_true(p.epsilon == 1e-6f);
  assert_int_equal(p.stash_type, 1);
  assert_false(p.mean_output); /* output 1 omitted */
  assert_true(p.inv_std_output);
  TB_ASSERT_OK(parse_with("tb", "LayerNormalization", 1, 3, 1, 0, NULL, 0, tb_norm_parse, &p, sizeof p));
  assert_int_equal(p.kind, TB_NORM_LAYER);
  assert_int_equal(p.axis, -1);
  tb_attr stash[] = {TOH_INT("stash_type", 7)};
  assert_rejected(parse_with("", "LayerNormalization", 17, 3, 1, 0, stash, 1, tb_norm_parse, &p, sizeof p), TB_ERR_MODEL,
                  "(LayerNormalization)", "attribute stash_type is 7; it must be a float type");

  tb_lrn_params l;
  tb_attr lrn[] = {TOH_INT("size", 3)};
  TB_ASSERT_OK(PARSE("LRN", 13, lrn, 1, tb_lrn_parse, &l));
  assert_int_equal(l.size, 3);
  assert_true(l.alpha == 1e-4f && l.beta == 0.75f && l.bias == 1.0f);
  assert_rejected(PARSE("LRN", 13, NULL, 0, tb_lrn_parse, &l), TB_ERR_MODEL, "(LRN)", "attribute size is 0; it must be >= 1");
}

static void test_reduce(void **state) {
  (void)state;
  tb_reduce_params p;
  tb_attr attr_axes[] = {TOH_INTS("axes", -1, 0), TOH_INT("keepdims", 0)};
  TB_ASSERT_OK(PARSE("ReduceMean", 13, attr_axes, 2, tb_reduce_parse, &p));
  assert_int_equal(p.op, TB_REDUCE_MEAN);
  assert_false(p.axes_from_input);
  assert_false(p.keepdims);
  assert_int_equal(p.n_axes, 2);
  assert_int_equal(p.axes[0], -1);
  nn_reduce_axes ax;
  TB_ASSERT_OK(tb_nn_reduce_axes_resolve(&p, 3, false, NULL, 0, &ax));
  assert_true(ax.known && ax.reduce[0] && !ax.reduce[1] && ax.reduce[2]);

  TB_ASSERT_OK(PARSE("ReduceSum", 13, NULL, 0, tb_reduce_parse, &p));
  assert_int_equal(p.op, TB_REDUCE_SUM);
  assert_true(p.axes_from_input);
  assert_true(p.keepdims);
  assert_false(p.noop_with_empty_axes);
  TB_ASSERT_OK(tb_nn_reduce_axes_resolve(&p, 2, true, NULL, 0, &ax));
  assert_false(ax.known); /* the axes input's value is not known yet */
  const int64_t twice[2] = {1, -1};
  assert_int_equal(tb_nn_reduce_axes_resolve(&p, 2, true, twice, 2, &ax), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "axis -1 is listed twice");
  const int64_t far[1] = {2};
  assert_int_equal(tb_nn_reduce_axes_resolve(&p, 2, true, far, 1, &ax), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "axis 2 is out of range for rank 2");

  tb_attr noop[] = {TOH_INT("noop_with_empty_axes", 1)};
  TB_ASSERT_OK(PARSE("ReduceLogSumExp", 18, noop, 1, tb_reduce_parse, &p));
  assert_int_equal(p.op, TB_REDUCE_LOG_SUM_EXP);
  assert_true(p.axes_from_input && p.noop_with_empty_axes);
  TB_ASSERT_OK(tb_nn_reduce_axes_resolve(&p, 2, false, NULL, 0, &ax));
  assert_true(ax.known && ax.noop && !ax.reduce[0]);
  TB_ASSERT_OK(PARSE("ReduceSumSquare", 13, NULL, 0, tb_reduce_parse, &p));
  assert_int_equal(p.op, TB_REDUCE_SUM_SQUARE);
  assert_false(p.axes_from_input); /* the attribute until opset 18 */

  tb_argreduce_params a;
  TB_ASSERT_OK(PARSE("ArgMin", 13, NULL, 0, tb_argreduce_parse, &a));
  assert_false(a.is_max);
  assert_int_equal(a.axis, 0);
  assert_true(a.keepdims);
  assert_false(a.select_last_index);
  tb_attr arg[] = {TOH_INT("axis", -1), TOH_INT("keepdims", 0), TOH_INT("select_last_index", 1)};
  TB_ASSERT_OK(PARSE("ArgMax", 13, arg, 3, tb_argreduce_parse, &a));
  assert_true(a.is_max && !a.keepdims && a.select_last_index);
  assert_int_equal(a.axis, -1);
}

static void test_quant_einsum(void **state) {
  (void)state;
  tb_quant_params q;
  TB_ASSERT_OK(PARSE("QuantizeLinear", 10, NULL, 0, tb_quant_parse, &q));
  assert_false(q.per_axis);
  assert_int_equal(q.axis, 1);
  tb_attr axis0[] = {TOH_INT("axis", 0)};
  TB_ASSERT_OK(PARSE("DequantizeLinear", 13, axis0, 1, tb_quant_parse, &q));
  assert_true(q.per_axis);
  assert_int_equal(q.axis, 0);

  tb_einsum_params e;
  tb_attr eq[] = {TOH_STR("equation", "ij,jk->ik")};
  toh t; /* the equation is borrowed from the graph: read it before the graph goes */
  toh_begin(&t, NULL);
  toh_add_op(&t, "", "Einsum", 12, 3, 0, 1, 0, eq, 1);
  memset(&e, 0, sizeof e);
  TB_ASSERT_OK(tb_einsum_params_parse(t.graph, toh_node(&t), &e));
  assert_non_null(e.equation);
  assert_string_equal(e.equation, "ij,jk->ik");
  toh_teardown(&t);
  assert_rejected(PARSE("Einsum", 12, NULL, 0, tb_einsum_params_parse, &e), TB_ERR_MODEL, "(Einsum)",
                  "attribute equation is required");
}

static void test_fused(void **state) {
  (void)state;
  tb_fused_conv_params c;
  TB_ASSERT_OK(PARSE_TB("FusedConv", NULL, 0, tb_fused_conv_parse, &c));
  assert_int_equal(c.act.kind, TB_FUSED_ACT_NONE);
  assert_int_equal(c.conv.group, 1);
  assert_true(c.act.alpha == 0.01f && c.act.beta == 0.5f);
  assert_true(isinf(c.act.min) && c.act.min < 0 && isinf(c.act.max) && c.act.max > 0);
  tb_attr leaky[] = {TOH_INT("group", 4), TOH_STR("activation", "LeakyRelu"), TOH_FLOAT("activation_alpha", 0.2f)};
  TB_ASSERT_OK(PARSE_TB("FusedConv", leaky, 3, tb_fused_conv_parse, &c));
  assert_int_equal(c.conv.group, 4);
  assert_int_equal(c.act.kind, TB_FUSED_ACT_LEAKY_RELU);
  assert_true(c.act.alpha == 0.2f);
  tb_attr clip[] = {TOH_STR("activation", "Clip"), TOH_FLOAT("activation_min", 0.0f), TOH_FLOAT("activation_max", 6.0f)};
  TB_ASSERT_OK(PARSE_TB("FusedConv", clip, 3, tb_fused_conv_parse, &c));
  assert_int_equal(c.act.kind, TB_FUSED_ACT_CLIP);
  assert_true(c.act.min == 0.0f && c.act.max == 6.0f);
  tb_attr gelu[] = {TOH_STR("activation", "Gelu")};
  assert_rejected(PARSE_TB("FusedConv", gelu, 1, tb_fused_conv_parse, &c), TB_ERR_MODEL, "(FusedConv)",
                  "(Gelu is fused only into MatMul and Gemm)");
  tb_attr unknown[] = {TOH_STR("activation", "Swish")};
  assert_rejected(PARSE_TB("FusedConv", unknown, 1, tb_fused_conv_parse, &c), TB_ERR_MODEL, "(FusedConv)",
                  "attribute activation is 'Swish'; expected Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, "
                  "HardSwish, Silu, or Mish");
  tb_attr silu[] = {TOH_STR("activation", "Silu")}, mish[] = {TOH_STR("activation", "Mish")};
  TB_ASSERT_OK(PARSE_TB("FusedConv", silu, 1, tb_fused_conv_parse, &c));
  assert_int_equal(c.act.kind, TB_FUSED_ACT_SILU);
  TB_ASSERT_OK(PARSE_TB("FusedConv", mish, 1, tb_fused_conv_parse, &c));
  assert_int_equal(c.act.kind, TB_FUSED_ACT_MISH);
  tb_attr bad_group[] = {TOH_INT("group", -1), TOH_STR("activation", "Relu")};
  assert_rejected(PARSE_TB("FusedConv", bad_group, 2, tb_fused_conv_parse, &c), TB_ERR_MODEL, "(FusedConv)",
                  "attribute group is -1");

  tb_fused_matmul_params m;
  tb_attr tanh_gelu[] = {TOH_STR("activation", "Gelu"), TOH_STR("activation_approximate", "tanh")};
  TB_ASSERT_OK(PARSE_TB("FusedMatMul", tanh_gelu, 2, tb_fused_matmul_parse, &m));
  assert_int_equal(m.act.kind, TB_FUSED_ACT_GELU_TANH);
  TB_ASSERT_OK(PARSE_TB("FusedMatMul", tanh_gelu, 1, tb_fused_matmul_parse, &m));
  assert_int_equal(m.act.kind, TB_FUSED_ACT_GELU);
  tb_attr approx_bad[] = {TOH_STR("activation", "Gelu"), TOH_STR("activation_approximate", "fast")};
  assert_rejected(PARSE_TB("FusedMatMul", approx_bad, 2, tb_fused_matmul_parse, &m), TB_ERR_MODEL, "(FusedMatMul)",
                  "attribute activation_approximate is 'fast'; expected 'none' or 'tanh'");

  tb_fused_gemm_params g;
  tb_attr gemm[] = {TOH_INT("transB", 1), TOH_FLOAT("alpha", 2.0f), TOH_STR("activation", "HardSigmoid"),
                    TOH_FLOAT("activation_alpha", 0.3f), TOH_FLOAT("activation_beta", 0.4f)};
  TB_ASSERT_OK(PARSE_TB("FusedGemm", gemm, 5, tb_fused_gemm_parse, &g));
  assert_true(g.gemm.trans_b && !g.gemm.trans_a && g.gemm.alpha == 2.0f && g.gemm.beta == 1.0f);
  assert_int_equal(g.act.kind, TB_FUSED_ACT_HARD_SIGMOID);
  assert_true(g.act.alpha == 0.3f && g.act.beta == 0.4f);

  tb_gelu_params gl;
  TB_ASSERT_OK(PARSE_TB("Gelu", NULL, 0, tb_gelu_parse, &gl));
  assert_false(gl.tanh);
  tb_attr approx[] = {TOH_STR("approximate", "tanh")};
  TB_ASSERT_OK(PARSE_TB("Gelu", approx, 1, tb_gelu_parse, &gl));
  assert_true(gl.tanh);
  tb_attr approx_x[] = {TOH_STR("approximate", "erf")};
  assert_rejected(PARSE_TB("Gelu", approx_x, 1, tb_gelu_parse, &gl), TB_ERR_MODEL, "(Gelu)",
                  "attribute approximate is 'erf'; expected 'none' or 'tanh'");

  tb_attention_params at;
  TB_ASSERT_OK(PARSE_TB("Attention", NULL, 0, tb_attention_parse, &at));
  assert_false(at.has_scale);
  assert_false(at.scale_divide);
  assert_true(at.scale == 1.0f);
  tb_attr scaled[] = {TOH_FLOAT("scale", 8.0f), TOH_INT("scale_divide", 1)};
  TB_ASSERT_OK(PARSE_TB("Attention", scaled, 2, tb_attention_parse, &at));
  assert_true(at.has_scale && at.scale_divide && at.scale == 8.0f);
}

/* Every op of the two families is registered with its parse and struct size (the executor parses with
 * them at prepare); the ops without attributes have none. */
static void test_registered(void **state) {
  (void)state;
  static const struct {
    const char *domain, *op;
    int opset;
    parse_fn parse;
    size_t size;
  } ops[] = {
      {"", "Conv", 11, tb_conv_parse, sizeof(tb_conv_params)},
      {"", "ConvTranspose", 11, tb_conv_transpose_parse, sizeof(tb_conv_params)},
      {"", "ConvInteger", 10, tb_conv_parse, sizeof(tb_conv_params)},
      {"", "QLinearConv", 10, tb_conv_parse, sizeof(tb_conv_params)},
      {"", "MaxPool", 12, tb_pool_parse, sizeof(tb_pool_params)},
      {"", "GlobalLpPool", 2, tb_pool_parse, sizeof(tb_pool_params)},
      {"", "Gemm", 13, tb_gemm_parse, sizeof(tb_gemm_params)},
      {"", "Gemm", 9, tb_gemm_parse, sizeof(tb_gemm_params)},
      {"", "Softmax", 11, tb_softmax_parse, sizeof(tb_softmax_params)},
      {"", "Hardmax", 13, tb_softmax_parse, sizeof(tb_softmax_params)},
      {"", "BatchNormalization", 15, tb_norm_parse, sizeof(tb_norm_params)},
      {"", "InstanceNormalization", 6, tb_norm_parse, sizeof(tb_norm_params)},
      {"", "LayerNormalization", 17, tb_norm_parse, sizeof(tb_norm_params)},
      {"", "LRN", 13, tb_lrn_parse, sizeof(tb_lrn_params)},
      {"", "ReduceSum", 13, tb_reduce_parse, sizeof(tb_reduce_params)},
      {"", "ReduceL2", 18, tb_reduce_parse, sizeof(tb_reduce_params)},
      {"", "ArgMin", 13, tb_argreduce_parse, sizeof(tb_argreduce_params)},
      {"", "QuantizeLinear", 13, tb_quant_parse, sizeof(tb_quant_params)},
      {"", "DequantizeLinear", 10, tb_quant_parse, sizeof(tb_quant_params)},
      {"", "Einsum", 12, tb_einsum_params_parse, sizeof(tb_einsum_params)},
      {"tb", "FusedConv", 1, tb_fused_conv_parse, sizeof(tb_fused_conv_params)},
      {"tb", "FusedGemm", 1, tb_fused_gemm_parse, sizeof(tb_fused_gemm_params)},
      {"tb", "FusedMatMul", 1, tb_fused_matmul_parse, sizeof(tb_fused_matmul_params)},
      {"tb", "Gelu", 1, tb_gelu_parse, sizeof(tb_gelu_params)},
      {"tb", "Attention", 1, tb_attention_parse, sizeof(tb_attention_params)},
      {"tb", "LayerNormalization", 1, tb_norm_parse, sizeof(tb_norm_params)},
      {"", "MatMul", 13, NULL, 0},
      {"", "MatMulInteger", 10, NULL, 0},
      {"", "QLinearMatMul", 10, NULL, 0},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    const tb_op_def *def = tb_op_find(ops[i].domain, ops[i].op, ops[i].opset);
    if (!def) fail_msg("no definition of %s at opset %d", ops[i].op, ops[i].opset);
    if (def->parse != ops[i].parse || def->params_size != ops[i].size)
      fail_msg("%s%s%s at opset %d: another parse, or params_size %zu where %zu is expected", ops[i].domain,
               ops[i].domain[0] ? "::" : "", ops[i].op, ops[i].opset, def->params_size, ops[i].size);
  }
  /* a fused op's parameters start with the ONNX op's it extends (the reference fused kernel relies on it) */
  assert_int_equal(offsetof(tb_fused_conv_params, conv), 0);
  assert_int_equal(offsetof(tb_fused_gemm_params, gemm), 0);
}

/* Infer reads the same parameters: a rejection surfaces from infer with the parse's sentence. */
static void test_infer_uses_parse(void **state) {
  (void)state;
  toh t;
  tb_attr stride0[] = {TOH_INTS("strides", 0, 1)};
  toh_setup(&t, "Conv", 11, 2, 0, 1, stride0, 1);
  tb_value_type x = toh_type(TB_DTYPE_F32, 4, (int64_t[]){1, 1, 5, 5}), w = toh_type(TB_DTYPE_F32, 4, (int64_t[]){1, 1, 3, 3});
  const tb_value_type *in[2] = {&x, &w};
  tb_value_type out[1];
  assert_rejected(toh_infer(&t, in, out), TB_ERR_MODEL, "(Conv)", "attribute strides[0] is 0; it must be >= 1");
  toh_teardown(&t);
  tb_attr three[] = {TOH_INTS("strides", 1, 1, 1)};
  toh_setup(&t, "Conv", 11, 2, 0, 1, three, 1);
  assert_rejected(toh_infer(&t, in, out), TB_ERR_MODEL, "(Conv)", "attribute strides has 3 values; it needs 2");
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv),    cmocka_unit_test(test_conv_rejections), cmocka_unit_test(test_window_resolve),
      cmocka_unit_test(test_pool),    cmocka_unit_test(test_gemm_softmax),    cmocka_unit_test(test_norms),
      cmocka_unit_test(test_reduce),  cmocka_unit_test(test_quant_einsum),    cmocka_unit_test(test_fused),
      cmocka_unit_test(test_infer_uses_parse), cmocka_unit_test(test_registered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
