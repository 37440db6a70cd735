/* The elementwise family's parse functions (ops/elementwise/ew_params.h): activation alphas and betas with
 * their ONNX defaults, Clip's attribute form, Cast's destination and saturate, Mod's fmod, BitShift's
 * direction, IsInf's switches, the legacy broadcast of the binary ops before opset 7, and every rejection. */
#include <float.h>
#include "ops/elementwise/ew_params.h"
#include "test_params_util.h"

#define PARSE(fn, op, opset, n_in, n_out, p, attrs) tpp_parse(fn, op, opset, n_in, n_out, attrs, &(p), sizeof(p))

static void test_activations(void **state) {
  (void)state;
  tb_act_params p;
  TB_ASSERT_OK(PARSE(tb_leakyrelu_parse, "LeakyRelu", 16, 1, 1, p, TPP_NO_ATTRS));
  assert_true(p.alpha == 0.01f);
  TB_ASSERT_OK(PARSE(tb_leakyrelu_parse, "LeakyRelu", 16, 1, 1, p, TPP_ATTRS(TOH_FLOAT("alpha", 0.25f))));
  assert_true(p.alpha == 0.25f);
  TB_ASSERT_OK(PARSE(tb_hardsigmoid_parse, "HardSigmoid", 6, 1, 1, p, TPP_ATTRS(TOH_FLOAT("beta", 0.75f))));
  assert_true(p.alpha == 0.2f && p.beta == 0.75f);
  TB_ASSERT_OK(PARSE(tb_alpha1_parse, "Elu", 6, 1, 1, p, TPP_NO_ATTRS));
  assert_true(p.alpha == 1.0f);
  TB_ASSERT_OK(PARSE(tb_alpha1_parse, "ThresholdedRelu", 10, 1, 1, p, TPP_ATTRS(TOH_FLOAT("alpha", 2.0f))));
  assert_true(p.alpha == 2.0f);
  TB_ASSERT_OK(PARSE(tb_selu_parse, "Selu", 6, 1, 1, p, TPP_ATTRS(TOH_FLOAT("gamma", 3.0f))));
  assert_true(p.alpha == 1.67326319217681884765625f && p.gamma == 3.0f);
  TB_ASSERT_OK(PARSE(tb_selu_parse, "Selu", 6, 1, 1, p, TPP_NO_ATTRS));
  assert_true(p.gamma == 1.05070102214813232421875f);
  TB_ASSERT_OK(PARSE(tb_shrink_parse, "Shrink", 9, 1, 1, p, TPP_ATTRS(TOH_FLOAT("bias", 1.5f))));
  assert_true(p.alpha == 1.5f && p.beta == 0.5f);
  TPP_REJECTS(TB_ERR_MODEL, "Celu", "attribute 'alpha' is of type int",
              PARSE(tb_alpha1_parse, "Celu", 12, 1, 1, p, TPP_ATTRS(TOH_INT("alpha", 1))));
}

static void test_clip_cast(void **state) {
  (void)state;
  tb_clip_params c;
  TB_ASSERT_OK(PARSE(tb_clip_parse, "Clip", 6, 1, 1, c, TPP_ATTRS(TOH_FLOAT("min", -1.0f))));
  assert_true(c.attr_form);
  assert_true(c.min == -1.0f && c.max == FLT_MAX);
  TB_ASSERT_OK(PARSE(tb_clip_parse, "Clip", 6, 1, 1, c, TPP_NO_ATTRS));
  assert_true(c.min == -FLT_MAX);
  TB_ASSERT_OK(PARSE(tb_clip_parse, "Clip", 13, 3, 1, c, TPP_NO_ATTRS));
  assert_false(c.attr_form);

  tb_cast_params k;
  TB_ASSERT_OK(PARSE(tb_cast_parse, "Cast", 13, 1, 1, k, TPP_ATTRS(TOH_INT("to", 10))));
  assert_int_equal(k.to, TB_DTYPE_F16);
  assert_true(k.saturate);
  TB_ASSERT_OK(PARSE(tb_cast_parse, "Cast", 19, 1, 1, k, TPP_ATTRS(TOH_INT("to", 17), TOH_INT("saturate", 0))));
  assert_int_equal(k.to, TB_DTYPE_FP8_E4M3FN);
  assert_false(k.saturate);
  TB_ASSERT_OK(PARSE(tb_cast_parse, "Cast", 5, 1, 1, k, TPP_ATTRS(TOH_STR("to", "int64"))));
  assert_int_equal(k.to, TB_DTYPE_I64);
  TB_ASSERT_OK(PARSE(tb_castlike_parse, "CastLike", 19, 2, 1, k, TPP_ATTRS(TOH_INT("saturate", 0))));
  assert_false(k.saturate);
  TPP_REJECTS(TB_ERR_MODEL, "Cast", "attribute 'to' is required", PARSE(tb_cast_parse, "Cast", 13, 1, 1, k, TPP_NO_ATTRS));
  TPP_REJECTS(TB_ERR_MODEL, "Cast", "attribute 'to' is 99, not an ONNX data type",
              PARSE(tb_cast_parse, "Cast", 13, 1, 1, k, TPP_ATTRS(TOH_INT("to", 99))));
  TPP_REJECTS(TB_ERR_UNSUPPORTED, "Cast", "casting to STRING is valid ONNX but TensorBridge has no STRING tensors",
              PARSE(tb_cast_parse, "Cast", 13, 1, 1, k, TPP_ATTRS(TOH_INT("to", 8))));
}

static void test_mod_bitshift_isinf(void **state) {
  (void)state;
  tb_mod_params m;
  TB_ASSERT_OK(PARSE(tb_mod_parse, "Mod", 13, 2, 1, m, TPP_NO_ATTRS));
  assert_false(m.fmod);
  TB_ASSERT_OK(PARSE(tb_mod_parse, "Mod", 13, 2, 1, m, TPP_ATTRS(TOH_INT("fmod", 1))));
  assert_true(m.fmod);
  TPP_REJECTS(TB_ERR_MODEL, "Mod", "attribute 'fmod' is 2; it must be 0 or 1",
              PARSE(tb_mod_parse, "Mod", 13, 2, 1, m, TPP_ATTRS(TOH_INT("fmod", 2))));

  tb_bitshift_params b;
  TB_ASSERT_OK(PARSE(tb_bitshift_parse, "BitShift", 11, 2, 1, b, TPP_ATTRS(TOH_STR("direction", "LEFT"))));
  assert_true(b.left);
  TB_ASSERT_OK(PARSE(tb_bitshift_parse, "BitShift", 11, 2, 1, b, TPP_ATTRS(TOH_STR("direction", "RIGHT"))));
  assert_false(b.left);
  TPP_REJECTS(TB_ERR_MODEL, "BitShift", "attribute 'direction' is required (LEFT or RIGHT)",
              PARSE(tb_bitshift_parse, "BitShift", 11, 2, 1, b, TPP_NO_ATTRS));
  TPP_REJECTS(TB_ERR_MODEL, "BitShift", "attribute 'direction' is \"left\"; it must be LEFT or RIGHT",
              PARSE(tb_bitshift_parse, "BitShift", 11, 2, 1, b, TPP_ATTRS(TOH_STR("direction", "left"))));

  tb_isinf_params f;
  TB_ASSERT_OK(PARSE(tb_isinf_parse, "IsInf", 10, 1, 1, f, TPP_NO_ATTRS));
  assert_true(f.detect_negative && f.detect_positive);
  TB_ASSERT_OK(PARSE(tb_isinf_parse, "IsInf", 10, 1, 1, f, TPP_ATTRS(TOH_INT("detect_positive", 0))));
  assert_true(f.detect_negative);
  assert_false(f.detect_positive);
}

static void test_binary_legacy(void **state) {
  (void)state;
  tb_binary_params p;
  TB_ASSERT_OK(PARSE(tb_binary_parse, "Add", 6, 2, 1, p, TPP_ATTRS(TOH_INT("broadcast", 1), TOH_INT("axis", 1))));
  assert_true(p.legacy && p.broadcast && p.has_axis);
  assert_int_equal(p.axis, 1);
  TB_ASSERT_OK(PARSE(tb_binary_parse, "Mul", 6, 2, 1, p, TPP_ATTRS(TOH_INT("broadcast", 1))));
  assert_true(p.broadcast);
  assert_false(p.has_axis);
  TB_ASSERT_OK(PARSE(tb_binary_parse, "Sub", 1, 2, 1, p, TPP_NO_ATTRS));
  assert_true(p.legacy);
  assert_false(p.broadcast);
  TB_ASSERT_OK(PARSE(tb_binary_parse, "Add", 7, 2, 1, p, TPP_ATTRS(TOH_INT("broadcast", 1))));
  assert_false(p.legacy || p.broadcast); /* numpy broadcasting from opset 7 */
  TPP_REJECTS(TB_ERR_MODEL, "Div", "attribute 'broadcast' is of type string",
              PARSE(tb_binary_parse, "Div", 6, 2, 1, p, TPP_ATTRS(TOH_STR("broadcast", "yes"))));
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_activations), cmocka_unit_test(test_clip_cast), cmocka_unit_test(test_mod_bitshift_isinf),
      cmocka_unit_test(test_binary_legacy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
