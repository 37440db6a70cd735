/* The tensor family's parse functions (ops/tensor/tensor_params.h, resize.h): the values read from the
 * attributes, the defaults when absent, the opset-dependent forms, and every rejection with its status and
 * message. */
#include "ops/tensor/resize.h"
#include "ops/tensor/tensor_params.h"
#include "test_params_util.h"

#define PARSE(fn, op, opset, n_in, n_out, p, attrs) tpp_parse(fn, op, opset, n_in, n_out, attrs, &(p), sizeof(p))

static void test_transpose_concat_axes(void **state) {
  (void)state;
  tb_transpose_params tp;
  TB_ASSERT_OK(PARSE(tb_transpose_parse, "Transpose", 13, 1, 1, tp, TPP_ATTRS(TOH_INTS("perm", 2, 0, 1))));
  assert_true(tp.has_perm);
  assert_int_equal(tp.n_perm, 3);
  assert_int_equal(tp.perm[0], 2);
  assert_int_equal(tp.perm[2], 1);
  TB_ASSERT_OK(PARSE(tb_transpose_parse, "Transpose", 13, 1, 1, tp, TPP_NO_ATTRS));
  assert_false(tp.has_perm);
  assert_int_equal(tp.n_perm, 0);
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Transpose", "attribute 'perm' has 9 entries; at most 8",
              PARSE(tb_transpose_parse, "Transpose", 13, 1, 1, tp, TPP_ATTRS(TOH_INTS("perm", 0, 1, 2, 3, 4, 5, 6, 7, 8))));

  tb_axis_params ap;
  TB_ASSERT_OK(PARSE(tb_concat_parse, "Concat", 13, 2, 1, ap, TPP_ATTRS(TOH_INT("axis", -2))));
  assert_int_equal(ap.axis, -2);
  TB_ASSERT_OK(PARSE(tb_concat_parse, "Concat", 1, 2, 1, ap, TPP_NO_ATTRS));
  assert_int_equal(ap.axis, 1); /* the opset-1 default */
  TPP_REJECTS(TB_ERR_MODEL, "Concat", "attribute 'axis' is required from opset 4",
              PARSE(tb_concat_parse, "Concat", 4, 2, 1, ap, TPP_NO_ATTRS));
  TPP_REJECTS(TB_ERR_MODEL, "Concat", "'axis'",
              PARSE(tb_concat_parse, "Concat", 13, 2, 1, ap, TPP_ATTRS(TOH_FLOAT("axis", 1.0f))));

  TB_ASSERT_OK(PARSE(tb_axis0_parse, "Gather", 13, 2, 1, ap, TPP_NO_ATTRS));
  assert_int_equal(ap.axis, 0);
  TB_ASSERT_OK(PARSE(tb_axis0_parse, "GatherElements", 13, 2, 1, ap, TPP_ATTRS(TOH_INT("axis", 3))));
  assert_int_equal(ap.axis, 3);
  TB_ASSERT_OK(PARSE(tb_flatten_parse, "Flatten", 13, 1, 1, ap, TPP_NO_ATTRS));
  assert_int_equal(ap.axis, 1);
  TB_ASSERT_OK(PARSE(tb_onehot_parse, "OneHot", 11, 3, 1, ap, TPP_NO_ATTRS));
  assert_int_equal(ap.axis, -1);

  tb_gather_nd_params gp;
  TB_ASSERT_OK(PARSE(tb_gather_nd_parse, "GatherND", 12, 2, 1, gp, TPP_ATTRS(TOH_INT("batch_dims", 1))));
  assert_int_equal(gp.batch_dims, 1);
  TB_ASSERT_OK(PARSE(tb_gather_nd_parse, "GatherND", 11, 2, 1, gp, TPP_ATTRS(TOH_INT("batch_dims", 1))));
  assert_int_equal(gp.batch_dims, 0); /* no batch_dims before opset 12 */
  TPP_REJECTS(TB_ERR_MODEL, "GatherND", "batch_dims is -1; it must be 0 or more",
              PARSE(tb_gather_nd_parse, "GatherND", 12, 2, 1, gp, TPP_ATTRS(TOH_INT("batch_dims", -1))));
}

static void test_scatter(void **state) {
  (void)state;
  tb_scatter_params sp;
  TB_ASSERT_OK(PARSE(tb_scatter_parse, "ScatterElements", 18, 3, 1, sp,
                     TPP_ATTRS(TOH_INT("axis", 1), TOH_STR("reduction", "max"))));
  assert_int_equal(sp.axis, 1);
  assert_int_equal(sp.reduction, TB_SCATTER_MAX);
  TB_ASSERT_OK(PARSE(tb_scatter_parse, "ScatterND", 16, 3, 1, sp, TPP_ATTRS(TOH_STR("reduction", "mul"))));
  assert_int_equal(sp.reduction, TB_SCATTER_MUL);
  TB_ASSERT_OK(PARSE(tb_scatter_parse, "ScatterElements", 13, 3, 1, sp, TPP_ATTRS(TOH_STR("reduction", "add"))));
  assert_int_equal(sp.reduction, TB_SCATTER_NONE); /* no reduction before opset 16 */
  TB_ASSERT_OK(PARSE(tb_scatter_parse, "ScatterElements", 18, 3, 1, sp, TPP_NO_ATTRS));
  assert_int_equal(sp.axis, 0);
  assert_int_equal(sp.reduction, TB_SCATTER_NONE);
  TPP_REJECTS(TB_ERR_MODEL, "ScatterElements", "unknown reduction 'max' (none, add, mul)",
              PARSE(tb_scatter_parse, "ScatterElements", 16, 3, 1, sp, TPP_ATTRS(TOH_STR("reduction", "max"))));
  TPP_REJECTS(TB_ERR_MODEL, "ScatterND", "unknown reduction 'sum' (none, add, mul, min, max)",
              PARSE(tb_scatter_parse, "ScatterND", 18, 3, 1, sp, TPP_ATTRS(TOH_STR("reduction", "sum"))));
}

static void test_split(void **state) {
  (void)state;
  tpp t;
  tpp_begin(&t);
  tb_split_params sp = {0};
  const tb_node *n = tpp_node(&t, "Split", 11, 1, 2, TPP_ATTRS(TOH_INT("axis", 1), TOH_INTS("split", 2, 3)));
  TB_ASSERT_OK(tb_split_parse(t.graph, n, &sp));
  assert_int_equal(sp.axis, 1);
  assert_false(sp.split_input);
  assert_int_equal(sp.n_split, 2);
  assert_int_equal(sp.split[0], 2);
  assert_int_equal(sp.split[1], 3);
  tpp_end(&t);

  TB_ASSERT_OK(PARSE(tb_split_parse, "Split", 13, 2, 3, sp, TPP_NO_ATTRS));
  assert_true(sp.split_input);
  assert_null(sp.split);
  assert_int_equal(sp.axis, 0);
  assert_int_equal(sp.num_outputs, 0);
  TB_ASSERT_OK(PARSE(tb_split_parse, "Split", 18, 1, 3, sp, TPP_ATTRS(TOH_INT("num_outputs", 3))));
  assert_int_equal(sp.num_outputs, 3);
  TPP_REJECTS(TB_ERR_MODEL, "Split", "num_outputs is 2 but the node has 3 outputs",
              PARSE(tb_split_parse, "Split", 18, 1, 3, sp, TPP_ATTRS(TOH_INT("num_outputs", 2))));
  TPP_REJECTS(TB_ERR_MODEL, "Split", "num_outputs is -1; it must be positive",
              PARSE(tb_split_parse, "Split", 18, 1, 3, sp, TPP_ATTRS(TOH_INT("num_outputs", -1))));
  TPP_REJECTS(TB_ERR_MODEL, "Split", "split has the negative size -1",
              PARSE(tb_split_parse, "Split", 2, 1, 2, sp, TPP_ATTRS(TOH_INTS("split", 3, -1))));
}

static void test_reshape_squeeze_shape_slice(void **state) {
  (void)state;
  tb_reshape_params rp;
  TB_ASSERT_OK(PARSE(tb_reshape_parse, "Reshape", 1, 1, 1, rp, TPP_ATTRS(TOH_INTS("shape", 0, -1))));
  assert_true(rp.shape_attr);
  assert_int_equal(rp.n_shape, 2);
  assert_int_equal(rp.shape[1], -1);
  TB_ASSERT_OK(PARSE(tb_reshape_parse, "Reshape", 14, 2, 1, rp, TPP_ATTRS(TOH_INT("allowzero", 1))));
  assert_false(rp.shape_attr);
  assert_true(rp.allowzero);
  TB_ASSERT_OK(PARSE(tb_reshape_parse, "Reshape", 13, 2, 1, rp, TPP_ATTRS(TOH_INT("allowzero", 1))));
  assert_false(rp.allowzero); /* allowzero is opset 14 */
  TPP_REJECTS(TB_ERR_MODEL, "Reshape", "attribute 'shape' is required before opset 5",
              PARSE(tb_reshape_parse, "Reshape", 1, 1, 1, rp, TPP_NO_ATTRS));

  tb_squeeze_params qp;
  TB_ASSERT_OK(PARSE(tb_squeeze_parse, "Squeeze", 11, 1, 1, qp, TPP_ATTRS(TOH_INTS("axes", 0, -1))));
  assert_false(qp.axes_input);
  assert_true(qp.has_axes);
  assert_int_equal(qp.n_axes, 2);
  assert_int_equal(qp.axes[1], -1);
  TB_ASSERT_OK(PARSE(tb_squeeze_parse, "Squeeze", 11, 1, 1, qp, TPP_NO_ATTRS));
  assert_false(qp.has_axes);
  TB_ASSERT_OK(PARSE(tb_squeeze_parse, "Unsqueeze", 13, 2, 1, qp, TPP_NO_ATTRS));
  assert_true(qp.axes_input);
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Unsqueeze", "attribute 'axes' has 9 entries",
              PARSE(tb_squeeze_parse, "Unsqueeze", 11, 1, 1, qp, TPP_ATTRS(TOH_INTS("axes", 0, 1, 2, 3, 4, 5, 6, 7, 8))));

  tb_shape_params hp;
  TB_ASSERT_OK(PARSE(tb_shape_parse, "Shape", 15, 1, 1, hp, TPP_ATTRS(TOH_INT("start", 1), TOH_INT("end", -1))));
  assert_int_equal(hp.start, 1);
  assert_int_equal(hp.end, -1);
  TB_ASSERT_OK(PARSE(tb_shape_parse, "Shape", 13, 1, 1, hp, TPP_ATTRS(TOH_INT("start", 1))));
  assert_int_equal(hp.start, 0); /* start/end are opset 15 */
  assert_int_equal(hp.end, INT64_MAX);

  tb_slice_params lp;
  TB_ASSERT_OK(PARSE(tb_slice_parse, "Slice", 1, 1, 1, lp,
                     TPP_ATTRS(TOH_INTS("starts", 1, 0), TOH_INTS("ends", 3, -1), TOH_INTS("axes", 2, 0))));
  assert_false(lp.from_inputs);
  assert_int_equal(lp.n, 2);
  assert_true(lp.has_axes);
  assert_int_equal(lp.starts[0], 1);
  assert_int_equal(lp.ends[1], -1);
  assert_int_equal(lp.axes[0], 2);
  TB_ASSERT_OK(PARSE(tb_slice_parse, "Slice", 10, 3, 1, lp, TPP_NO_ATTRS));
  assert_true(lp.from_inputs);
  TPP_REJECTS(TB_ERR_MODEL, "Slice", "attributes 'starts' and 'ends' are required before opset 10",
              PARSE(tb_slice_parse, "Slice", 1, 1, 1, lp, TPP_ATTRS(TOH_INTS("starts", 1))));
  TPP_REJECTS(TB_ERR_MODEL, "Slice", "starts (2), ends (1) and axes (0) differ in length",
              PARSE(tb_slice_parse, "Slice", 1, 1, 1, lp, TPP_ATTRS(TOH_INTS("starts", 1, 2), TOH_INTS("ends", 3))));
}

static void test_constant(void **state) {
  (void)state;
  tpp t;
  tpp_begin(&t);
  void *bytes;
  tb_ir_tensor *value = tb_graph_new_tensor(t.graph, "v", TB_DTYPE_I32, 1, (const int64_t[]){1}, &bytes);
  assert_non_null(value);
  *(int32_t *)bytes = 7;
  tb_constant_params cp = {0};
  TB_ASSERT_OK(tb_constant_parse(t.graph, tpp_node(&t, "Constant", 13, 0, 1, TPP_ATTRS(TOH_TENSOR("value", value))), &cp));
  assert_int_equal(cp.kind, TB_CONSTANT_TENSOR);
  assert_int_equal(cp.tensor->dtype, TB_DTYPE_I32);
  assert_int_equal(*(const int32_t *)cp.tensor->data, 7);
  memset(&cp, 0, sizeof cp);
  TB_ASSERT_OK(tb_constant_parse(t.graph, tpp_node(&t, "Constant", 13, 0, 1, TPP_ATTRS(TOH_INTS("value_ints", 4, 5))), &cp));
  assert_int_equal(cp.kind, TB_CONSTANT_INTS);
  assert_int_equal(cp.count, 2);
  assert_int_equal(cp.ints[1], 5);
  memset(&cp, 0, sizeof cp);
  TB_ASSERT_OK(tb_constant_parse(t.graph, tpp_node(&t, "Constant", 13, 0, 1, TPP_ATTRS(TOH_FLOATS("value_floats", 0.5f))), &cp));
  assert_int_equal(cp.kind, TB_CONSTANT_FLOATS);
  assert_true(cp.floats[0] == 0.5f);
  tb_constant_of_shape_params op = {0};
  TB_ASSERT_OK(tb_constant_of_shape_parse(t.graph, tpp_node(&t, "ConstantOfShape", 9, 1, 1, TPP_ATTRS(TOH_TENSOR("value", value))), &op));
  assert_ptr_equal(op.value, value);
  tpp_end(&t);

  TB_ASSERT_OK(PARSE(tb_constant_parse, "Constant", 13, 0, 1, cp, TPP_ATTRS(TOH_FLOAT("value_float", 2.5f))));
  assert_int_equal(cp.kind, TB_CONSTANT_FLOAT);
  assert_true(cp.f == 2.5f);
  TB_ASSERT_OK(PARSE(tb_constant_parse, "Constant", 13, 0, 1, cp, TPP_ATTRS(TOH_INT("value_int", -3))));
  assert_int_equal(cp.kind, TB_CONSTANT_INT);
  assert_int_equal(cp.i, -3);
  TB_ASSERT_OK(PARSE(tb_constant_of_shape_parse, "ConstantOfShape", 9, 1, 1, op, TPP_NO_ATTRS));
  assert_null(op.value);
  TPP_REJECTS(TB_ERR_MODEL, "Constant", "has no value attribute",
              PARSE(tb_constant_parse, "Constant", 13, 0, 1, cp, TPP_NO_ATTRS));
  TPP_REJECTS(TB_ERR_MODEL, "Constant", "has both 'value_float' and 'value_int'",
              PARSE(tb_constant_parse, "Constant", 13, 0, 1, cp, TPP_ATTRS(TOH_FLOAT("value_float", 1), TOH_INT("value_int", 1))));
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Constant", "string constants ('value_string') are not supported",
              PARSE(tb_constant_parse, "Constant", 13, 0, 1, cp, TPP_ATTRS(TOH_STR("value_string", "x"))));
}

static void test_pad(void **state) {
  (void)state;
  tb_pad_params pp;
  TB_ASSERT_OK(PARSE(tb_pad_parse, "Pad", 2, 1, 1, pp,
                     TPP_ATTRS(TOH_STR("mode", "reflect"), TOH_INTS("pads", 1, 2, 3, 4), TOH_FLOAT("value", 1.5f))));
  assert_int_equal(pp.mode, TB_PAD_REFLECT);
  assert_true(pp.pads_attr);
  assert_int_equal(pp.n_pads, 4);
  assert_int_equal(pp.pads[3], 4);
  assert_true(pp.value == 1.5f);
  TB_ASSERT_OK(PARSE(tb_pad_parse, "Pad", 18, 4, 1, pp, TPP_ATTRS(TOH_STR("mode", "edge"))));
  assert_int_equal(pp.mode, TB_PAD_EDGE);
  assert_false(pp.pads_attr);
  assert_true(pp.axes_input);
  TB_ASSERT_OK(PARSE(tb_pad_parse, "Pad", 13, 2, 1, pp, TPP_NO_ATTRS));
  assert_int_equal(pp.mode, TB_PAD_CONSTANT);
  assert_false(pp.axes_input);
  assert_string_equal(tb_pad_mode_name(TB_PAD_REFLECT), "reflect");
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Pad", "mode 'wrap' is not supported",
              PARSE(tb_pad_parse, "Pad", 19, 2, 1, pp, TPP_ATTRS(TOH_STR("mode", "wrap"))));
  TPP_REJECTS(TB_ERR_MODEL, "Pad", "unknown mode 'mirror' (constant, reflect or edge)",
              PARSE(tb_pad_parse, "Pad", 13, 2, 1, pp, TPP_ATTRS(TOH_STR("mode", "mirror"))));
  TPP_REJECTS(TB_ERR_MODEL, "Pad", "attribute 'pads' is required before opset 11",
              PARSE(tb_pad_parse, "Pad", 2, 1, 1, pp, TPP_NO_ATTRS));
}

static void test_resize(void **state) {
  (void)state;
  tb_resize_params rp;
  TB_ASSERT_OK(PARSE(tb_resize_parse, "Resize", 13, 3, 1, rp,
                     TPP_ATTRS(TOH_STR("mode", "cubic"), TOH_STR("coordinate_transformation_mode", "align_corners"),
                               TOH_STR("nearest_mode", "ceil"), TOH_FLOAT("cubic_coeff_a", -0.5f),
                               TOH_INT("exclude_outside", 1), TOH_FLOAT("extrapolation_value", 2.0f))));
  assert_int_equal(rp.mode, TB_RESIZE_CUBIC);
  assert_int_equal(rp.coord, TB_COORD_ALIGN_CORNERS);
  assert_int_equal(rp.nearest, TB_NEAREST_CEIL);
  assert_true(rp.cubic_a == -0.5);
  assert_true(rp.exclude_outside);
  assert_true(rp.extrapolation == 2.0);
  assert_int_equal(rp.source, TB_RESIZE_INPUTS);
  TB_ASSERT_OK(PARSE(tb_resize_parse, "Resize", 13, 3, 1, rp, TPP_NO_ATTRS));
  assert_int_equal(rp.mode, TB_RESIZE_NEAREST);
  assert_int_equal(rp.coord, TB_COORD_HALF_PIXEL);
  assert_int_equal(rp.nearest, TB_NEAREST_ROUND_PREFER_FLOOR);
  assert_true(rp.cubic_a == -0.75);
  TB_ASSERT_OK(PARSE(tb_resize_parse, "Resize", 11, 3, 1, rp,
                     TPP_ATTRS(TOH_STR("coordinate_transformation_mode", "tf_half_pixel_for_nn"))));
  assert_int_equal(rp.coord, TB_COORD_TF_HALF_PIXEL_FOR_NEAREST);
  TB_ASSERT_OK(PARSE(tb_resize_parse, "Resize", 10, 2, 1, rp, TPP_ATTRS(TOH_STR("mode", "linear"))));
  assert_int_equal(rp.mode, TB_RESIZE_LINEAR);
  assert_int_equal(rp.coord, TB_COORD_ASYMMETRIC);
  assert_int_equal(rp.nearest, TB_NEAREST_SIMPLE);
  assert_int_equal(rp.source, TB_RESIZE_SCALES_INPUT1);
  TB_ASSERT_OK(PARSE(tb_resize_parse, "Upsample", 7, 1, 1, rp,
                     TPP_ATTRS(TOH_STR("mode", "bilinear"), TOH_FLOATS("scales", 1, 1, 2, 2))));
  assert_int_equal(rp.mode, TB_RESIZE_LINEAR);
  assert_int_equal(rp.source, TB_RESIZE_SCALES_ATTR);
  assert_int_equal(rp.n_scales, 4);
  assert_true(rp.scales[3] == 2.0);
  TPP_REJECTS(TB_ERR_MODEL, "Upsample", "attribute 'scales' is required",
              PARSE(tb_resize_parse, "Upsample", 7, 1, 1, rp, TPP_NO_ATTRS));
  TPP_REJECTS(TB_ERR_MODEL, "Resize", "unknown mode 'cubic' (nearest, linear)",
              PARSE(tb_resize_parse, "Resize", 10, 2, 1, rp, TPP_ATTRS(TOH_STR("mode", "cubic"))));
  TPP_REJECTS(TB_ERR_MODEL, "Resize", "unknown coordinate_transformation_mode 'centre'",
              PARSE(tb_resize_parse, "Resize", 13, 3, 1, rp, TPP_ATTRS(TOH_STR("coordinate_transformation_mode", "centre"))));
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Resize", "'half_pixel_symmetric' is not supported",
              PARSE(tb_resize_parse, "Resize", 19, 3, 1, rp,
                    TPP_ATTRS(TOH_STR("coordinate_transformation_mode", "half_pixel_symmetric"))));
  TPP_REJECTS(TB_ERR_MODEL, "Resize", "unknown nearest_mode 'round'",
              PARSE(tb_resize_parse, "Resize", 13, 3, 1, rp, TPP_ATTRS(TOH_STR("nearest_mode", "round"))));
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Resize", "antialias=1 is not supported",
              PARSE(tb_resize_parse, "Resize", 18, 3, 1, rp, TPP_ATTRS(TOH_INT("antialias", 1))));
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Resize", "keep_aspect_ratio_policy 'not_larger' is not supported",
              PARSE(tb_resize_parse, "Resize", 18, 3, 1, rp, TPP_ATTRS(TOH_STR("keep_aspect_ratio_policy", "not_larger"))));
}

static void test_misc(void **state) {
  (void)state;
  tb_topk_params kp;
  TB_ASSERT_OK(PARSE(tb_topk_parse, "TopK", 1, 1, 2, kp, TPP_ATTRS(TOH_INT("k", 3), TOH_INT("axis", 0))));
  assert_true(kp.k_attr);
  assert_int_equal(kp.k, 3);
  assert_int_equal(kp.axis, 0);
  assert_true(kp.largest && kp.sorted);
  TB_ASSERT_OK(PARSE(tb_topk_parse, "TopK", 11, 2, 2, kp, TPP_ATTRS(TOH_INT("largest", 0), TOH_INT("sorted", 0))));
  assert_false(kp.k_attr);
  assert_int_equal(kp.axis, -1);
  assert_false(kp.largest || kp.sorted);
  TPP_REJECTS(TB_ERR_MODEL, "TopK", "attribute 'k' is required before opset 10",
              PARSE(tb_topk_parse, "TopK", 1, 1, 2, kp, TPP_NO_ATTRS));

  tb_depth_space_params dp;
  TB_ASSERT_OK(PARSE(tb_depth_space_parse, "DepthToSpace", 13, 1, 1, dp,
                     TPP_ATTRS(TOH_INT("blocksize", 2), TOH_STR("mode", "CRD"))));
  assert_true(dp.to_space);
  assert_int_equal(dp.blocksize, 2);
  assert_true(dp.crd);
  TB_ASSERT_OK(PARSE(tb_depth_space_parse, "SpaceToDepth", 13, 1, 1, dp, TPP_ATTRS(TOH_INT("blocksize", 3))));
  assert_false(dp.to_space);
  assert_false(dp.crd);
  TPP_REJECTS(TB_ERR_MODEL, "SpaceToDepth", "attribute 'blocksize' must be given and at least 1 (got 0)",
              PARSE(tb_depth_space_parse, "SpaceToDepth", 13, 1, 1, dp, TPP_NO_ATTRS));
  TPP_REJECTS(TB_ERR_MODEL, "DepthToSpace", "unknown mode 'RDC' (DCR or CRD)",
              PARSE(tb_depth_space_parse, "DepthToSpace", 13, 1, 1, dp,
                    TPP_ATTRS(TOH_INT("blocksize", 2), TOH_STR("mode", "RDC"))));

  tb_trilu_params tp;
  TB_ASSERT_OK(PARSE(tb_trilu_parse, "Trilu", 14, 1, 1, tp, TPP_NO_ATTRS));
  assert_true(tp.upper);
  TB_ASSERT_OK(PARSE(tb_trilu_parse, "Trilu", 14, 1, 1, tp, TPP_ATTRS(TOH_INT("upper", 0))));
  assert_false(tp.upper);
  tb_cumsum_params cp;
  TB_ASSERT_OK(PARSE(tb_cumsum_parse, "CumSum", 14, 2, 1, cp, TPP_ATTRS(TOH_INT("reverse", 1))));
  assert_false(cp.exclusive);
  assert_true(cp.reverse);
  tb_reverse_sequence_params rp;
  TB_ASSERT_OK(PARSE(tb_reverse_sequence_parse, "ReverseSequence", 10, 2, 1, rp, TPP_NO_ATTRS));
  assert_int_equal(rp.batch_axis, 1);
  assert_int_equal(rp.time_axis, 0);
  TPP_REJECTS(TB_ERR_MODEL, "ReverseSequence", "batch_axis (1) and time_axis (1) must be 0 and 1 in some order",
              PARSE(tb_reverse_sequence_parse, "ReverseSequence", 10, 2, 1, rp, TPP_ATTRS(TOH_INT("time_axis", 1))));
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_transpose_concat_axes), cmocka_unit_test(test_scatter),  cmocka_unit_test(test_split),
      cmocka_unit_test(test_reshape_squeeze_shape_slice), cmocka_unit_test(test_constant), cmocka_unit_test(test_pad),
      cmocka_unit_test(test_resize), cmocka_unit_test(test_misc),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
