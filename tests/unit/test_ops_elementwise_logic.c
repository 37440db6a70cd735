/* Comparisons, bool logic, Where, Cast/CastLike, the variadic ops (Sum, Mean, Min, Max), Pow, Mod and
 * BitShift: inference and the reference kernels on hand-computed values. */
#include "test_ops_elementwise_util.h"

static void run2(toh *t, const char *op, int opset, const tb_attr *attrs, size_t n_attrs, const ewt_in *ins) {
  toh_setup(t, op, opset, 2, 0, 1, attrs, n_attrs);
  TB_ASSERT_OK(ewt_run(t, ins));
}

static void comparisons(void **state) {
  (void)state;
  float a[] = {1, 2, 3, NAN, 5, 6}, b[] = {2, 2, 2};
  ewt_in ins[] = {{TB_DTYPE_F32, 2, {2, 3}, a, false}, {TB_DTYPE_F32, 1, {3}, b, false}};
  struct {
    const char *op;
    uint8_t want[6];
  } cases[] = {{"Equal", {0, 1, 0, 0, 0, 0}},       {"Less", {1, 0, 0, 0, 0, 0}},
               {"Greater", {0, 0, 1, 0, 1, 1}},     {"LessOrEqual", {1, 1, 0, 0, 0, 0}},
               {"GreaterOrEqual", {0, 1, 1, 0, 1, 1}}};
  for (size_t k = 0; k < 5; k++) {
    toh t;
    run2(&t, cases[k].op, 16, NULL, 0, ins);
    toh_assert_tensor(t.out[0], TB_DTYPE_BOOL, 2, (int64_t[]){2, 3});
    ewt_assert_bytes(&t, 0, cases[k].want, 6);
    toh_teardown(&t);
  }
  /* int64 beyond 2^53 compares exactly; bool Equal. */
  int64_t la[] = {(1LL << 53) + 1}, lb[] = {(1LL << 53)};
  toh t;
  ewt_in lins[] = {{TB_DTYPE_I64, 1, {1}, la, false}, {TB_DTYPE_I64, 1, {1}, lb, false}};
  run2(&t, "Greater", 13, NULL, 0, lins);
  ewt_assert_bytes(&t, 0, (uint8_t[]){1}, 1);
  toh_teardown(&t);
  bool ba[] = {true, false}, bb[] = {true, true};
  ewt_in bins[] = {{TB_DTYPE_BOOL, 1, {2}, ba, false}, {TB_DTYPE_BOOL, 1, {2}, bb, false}};
  run2(&t, "Equal", 13, NULL, 0, bins);
  ewt_assert_bytes(&t, 0, (uint8_t[]){1, 0}, 2);
  /* Less on bool is not ONNX. */
  toh_teardown(&t);
  toh_setup(&t, "Less", 13, 2, 0, 1, NULL, 0);
  tb_value_type bt = toh_type(TB_DTYPE_BOOL, 1, (int64_t[]){2}), out;
  const tb_value_type *in[] = {&bt, &bt};
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  toh_teardown(&t);
}

static void bool_logic(void **state) {
  (void)state;
  bool a[] = {false, false, true, true}, b[] = {false, true};
  ewt_in ins[] = {{TB_DTYPE_BOOL, 2, {2, 2}, a, false}, {TB_DTYPE_BOOL, 1, {2}, b, false}};
  struct {
    const char *op;
    uint8_t want[4];
  } cases[] = {{"And", {0, 0, 0, 1}}, {"Or", {0, 1, 1, 1}}, {"Xor", {0, 1, 1, 0}}};
  for (size_t k = 0; k < 3; k++) {
    toh t;
    run2(&t, cases[k].op, 7, NULL, 0, ins);
    ewt_assert_bytes(&t, 0, cases[k].want, 4);
    tb_value_type ft = toh_type(TB_DTYPE_F32, 1, (int64_t[]){2}), out;
    const tb_value_type *in[] = {&ft, &ft};
    assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
    toh_teardown(&t);
  }
  toh t;
  toh_setup(&t, "Not", 1, 1, 0, 1, NULL, 0);
  ewt_in nins[] = {{TB_DTYPE_BOOL, 2, {2, 2}, a, true}};
  TB_ASSERT_OK(ewt_run(&t, nins));
  ewt_assert_bytes(&t, 0, (uint8_t[]){1, 1, 0, 0}, 4);
  toh_teardown(&t);
}

static void where_broadcasts_three(void **state) {
  (void)state;
  bool cond[] = {true, false};             /* [2] */
  int64_t x[] = {1, 2, 3, 4, 5, 6};        /* [3,2] */
  int64_t y[] = {-1, -2, -3};              /* [3,1] */
  toh t;
  toh_setup(&t, "Where", 16, 3, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_BOOL, 1, {2}, cond, false}, {TB_DTYPE_I64, 2, {3, 2}, x, false},
                  {TB_DTYPE_I64, 2, {3, 1}, y, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  int64_t want[] = {1, -1, 3, -2, 5, -3};
  toh_assert_tensor(t.out[0], TB_DTYPE_I64, 2, (int64_t[]){3, 2});
  ewt_assert_bytes(&t, 0, want, 6);
  int64_t cd[] = {2}, xd[] = {3, 2}, yd[] = {3, 1};
  tb_value_type ct = toh_type(TB_DTYPE_BOOL, 1, cd), xt = toh_type(TB_DTYPE_I64, 2, xd), yt = toh_type(TB_DTYPE_I64, 2, yd),
                yf = toh_type(TB_DTYPE_F32, 2, yd), out;
  const tb_value_type *in[] = {&ct, &xt, &yt}, *bad[] = {&ct, &xt, &yf}, *bad_cond[] = {&xt, &xt, &yt};
  TB_ASSERT_OK(toh_infer(&t, in, &out));
  toh_assert_dims(&out, 2, xd);
  assert_int_equal(out.dtype, TB_DTYPE_I64);
  assert_int_equal(toh_infer(&t, bad, &out), TB_ERR_MODEL);
  assert_int_equal(toh_infer(&t, bad_cond, &out), TB_ERR_MODEL);
  toh_teardown(&t);

  /* f16 values are copied bit for bit. */
  uint16_t hx[] = {0x3c00, 0x7e00}, hy[] = {0xc000, 0x0001};
  bool c2[] = {false, true};
  toh_setup(&t, "Where", 16, 3, 0, 1, NULL, 0);
  ewt_in hins[] = {{TB_DTYPE_BOOL, 1, {2}, c2, false}, {TB_DTYPE_F16, 1, {2}, hx, false}, {TB_DTYPE_F16, 1, {2}, hy, false}};
  TB_ASSERT_OK(ewt_run(&t, hins));
  ewt_assert_bytes(&t, 0, (uint16_t[]){0xc000, 0x7e00}, 2);
  toh_teardown(&t);
}

static void cast_and_castlike(void **state) {
  (void)state;
  float x[] = {1.5f, -2.7f, 300.0f, NAN};
  tb_attr to_i8[] = {TOH_INT("to", 3)};
  toh t;
  toh_setup(&t, "Cast", 13, 1, 0, 1, to_i8, 1);
  ewt_in ins[] = {{TB_DTYPE_F32, 1, {4}, x, true}};
  tb_value_type xt = toh_type(TB_DTYPE_F32, 1, (int64_t[]){4}), out;
  const tb_value_type *in[] = {&xt};
  TB_ASSERT_OK(toh_infer(&t, in, &out));
  assert_int_equal(out.dtype, TB_DTYPE_I8);
  TB_ASSERT_OK(ewt_run(&t, ins));
  int8_t want[] = {1, -2, 127, 0}; /* truncate, saturate, NaN -> 0 (tb_convert's rules) */
  ewt_assert_bytes(&t, 0, want, 4);
  toh_teardown(&t);

  /* Opset 1 names the type as a string. */
  tb_attr to_half[] = {TOH_STR("to", "FLOAT16")};
  toh_setup(&t, "Cast", 1, 1, 0, 1, to_half, 1);
  TB_ASSERT_OK(ewt_run(&t, ins));
  toh_assert_tensor(t.out[0], TB_DTYPE_F16, 1, (int64_t[]){4});
  ewt_assert_near(&t, 0, (double[]){1.5, -2.69921875, 300, NAN}, 4, 0);
  toh_teardown(&t);

  /* fp8 e4m3fn with saturate 0 (opset 19): 1000 -> NaN; with the default: 448. */
  tb_attr fp8_nosat[] = {TOH_INT("to", 17), TOH_INT("saturate", 0)}, fp8[] = {TOH_INT("to", 17)};
  float big[] = {1000.0f};
  ewt_in bins[] = {{TB_DTYPE_F32, 1, {1}, big, false}};
  toh_setup(&t, "Cast", 19, 1, 0, 1, fp8_nosat, 2);
  TB_ASSERT_OK(ewt_run(&t, bins));
  ewt_assert_bytes(&t, 0, (uint8_t[]){0x7f}, 1);
  toh_teardown(&t);
  toh_setup(&t, "Cast", 19, 1, 0, 1, fp8, 1);
  TB_ASSERT_OK(ewt_run(&t, bins));
  ewt_assert_bytes(&t, 0, (uint8_t[]){0x7e}, 1);
  toh_teardown(&t);

  /* Types we lack and codes that do not exist. */
  tb_attr to_str[] = {TOH_INT("to", 8)}, to_bad[] = {TOH_INT("to", 99)};
  toh_setup(&t, "Cast", 13, 1, 0, 1, to_str, 1);
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Cast): casting to STRING");
  toh_teardown(&t);
  toh_setup(&t, "Cast", 13, 1, 0, 1, to_bad, 1);
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "99");
  toh_teardown(&t);
  toh_setup(&t, "Cast", 13, 1, 0, 1, NULL, 0);
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "'to' is required");
  toh_teardown(&t);

  /* CastLike takes the type of input 1. */
  double like[] = {0};
  toh_setup(&t, "CastLike", 15, 2, 0, 1, NULL, 0);
  ewt_in lins[] = {{TB_DTYPE_F32, 1, {4}, x, false}, {TB_DTYPE_F64, 1, {1}, like, false}};
  TB_ASSERT_OK(ewt_run(&t, lins));
  toh_assert_tensor(t.out[0], TB_DTYPE_F64, 1, (int64_t[]){4});
  double dwant[] = {1.5, (double)-2.7f, 300, NAN};
  ewt_assert_near(&t, 0, dwant, 4, 0);
  toh_teardown(&t);
}

static void variadic_ops(void **state) {
  (void)state;
  float a[] = {1, 2, 3}, b[] = {10}, c[] = {100, 200, 300, 400, 500, 600};
  ewt_in ins[] = {{TB_DTYPE_F32, 1, {3}, a, false}, {TB_DTYPE_F32, 1, {1}, b, false},
                  {TB_DTYPE_F32, 2, {2, 3}, c, false}};
  struct {
    const char *op;
    float want[6];
  } cases[] = {{"Sum", {111, 212, 313, 411, 512, 613}},
               {"Mean", {37, 212.0f / 3, 313.0f / 3, 137, 512.0f / 3, 613.0f / 3}},
               {"Max", {100, 200, 300, 400, 500, 600}},
               {"Min", {1, 2, 3, 1, 2, 3}}};
  for (size_t k = 0; k < 4; k++) {
    toh t;
    toh_setup(&t, cases[k].op, 13, 3, 0, 1, NULL, 0);
    TB_ASSERT_OK(ewt_run(&t, ins));
    toh_assert_tensor(t.out[0], TB_DTYPE_F32, 2, (int64_t[]){2, 3});
    ewt_assert_bytes(&t, 0, cases[k].want, 6);
    toh_teardown(&t);
  }
  /* One input: a copy. NaN propagates through Max. Integer Max from opset 12. */
  float n[] = {NAN, 1};
  toh t;
  toh_setup(&t, "Max", 13, 2, 0, 1, NULL, 0);
  ewt_in nins[] = {{TB_DTYPE_F32, 1, {2}, n, false}, {TB_DTYPE_F32, 1, {2}, (float[]){0, NAN}, false}};
  TB_ASSERT_OK(ewt_run(&t, nins));
  ewt_assert_near(&t, 0, (double[]){NAN, NAN}, 2, 0);
  toh_teardown(&t);
  toh_setup(&t, "Sum", 13, 1, 0, 1, NULL, 0);
  TB_ASSERT_OK(ewt_run(&t, ins));
  ewt_assert_bytes(&t, 0, a, 3);
  toh_teardown(&t);
  int16_t ia[] = {-5, 7}, ib[] = {3, -9};
  toh_setup(&t, "Min", 12, 2, 0, 1, NULL, 0);
  ewt_in iins[] = {{TB_DTYPE_I16, 1, {2}, ia, false}, {TB_DTYPE_I16, 1, {2}, ib, true}};
  TB_ASSERT_OK(ewt_run(&t, iins));
  ewt_assert_bytes(&t, 0, (int16_t[]){-5, -9}, 2);
  toh_teardown(&t);

  /* Sum of f16 rounds once: 1 + 2^-11 + 2^-11 = 1 + 2^-10 exactly (per-step rounding would give 1). */
  uint16_t one = 0x3c00, tiny = 0x1000; /* 2^-11 */
  toh_setup(&t, "Sum", 13, 3, 0, 1, NULL, 0);
  ewt_in hins[] = {{TB_DTYPE_F16, 0, {0}, &one, false}, {TB_DTYPE_F16, 0, {0}, &tiny, false}, {TB_DTYPE_F16, 0, {0}, &tiny, false}};
  TB_ASSERT_OK(ewt_run(&t, hins));
  ewt_assert_bytes(&t, 0, (uint16_t[]){0x3c01}, 1);
  /* At run time too: the third input does not broadcast with the first two. */
  float f4v[] = {1, 2, 3, 4};
  ewt_in bad_run[] = {{TB_DTYPE_F32, 1, {3}, a, false}, {TB_DTYPE_F32, 1, {1}, b, false}, {TB_DTYPE_F32, 1, {4}, f4v, false}};
  assert_int_equal(ewt_run(&t, bad_run), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Sum): input 2 does not broadcast");
  /* Errors: no broadcast, mixed dtypes, integers in Sum. */
  tb_value_type f3 = toh_type(TB_DTYPE_F32, 1, (int64_t[]){3}), f4 = toh_type(TB_DTYPE_F32, 1, (int64_t[]){4}),
                i3 = toh_type(TB_DTYPE_I32, 1, (int64_t[]){3}), out;
  const tb_value_type *nb[] = {&f3, &f3, &f4}, *mixed[] = {&f3, &f3, &i3}, *ints[] = {&i3, &i3, &i3};
  assert_int_equal(toh_infer(&t, nb, &out), TB_ERR_MODEL);
  assert_int_equal(toh_infer(&t, mixed, &out), TB_ERR_MODEL);
  assert_int_equal(toh_infer(&t, ints, &out), TB_ERR_MODEL);
  toh_teardown(&t);
}

static void pow_types(void **state) {
  (void)state;
  toh t;
  float fa[] = {2, 4, -8}, fb[] = {3, 0.5f, 1.0f / 3};
  ewt_in fins[] = {{TB_DTYPE_F32, 1, {3}, fa, false}, {TB_DTYPE_F32, 1, {3}, fb, false}};
  run2(&t, "Pow", 15, NULL, 0, fins);
  ewt_assert_near(&t, 0, (double[]){8, 2, NAN}, 3, 1e-7);
  toh_teardown(&t);
  /* int32 base, int64 exponent: exact, wrapping; negative exponents truncate. */
  int32_t ia[] = {3, 2, -1, 5, 2}, ib_dummy[] = {0};
  int64_t ib[] = {4, 31, -3, -1, 40};
  (void)ib_dummy;
  ewt_in iins[] = {{TB_DTYPE_I32, 1, {5}, ia, false}, {TB_DTYPE_I64, 1, {5}, ib, false}};
  run2(&t, "Pow", 15, NULL, 0, iins);
  toh_assert_tensor(t.out[0], TB_DTYPE_I32, 1, (int64_t[]){5});
  ewt_assert_bytes(&t, 0, (int32_t[]){81, INT32_MIN, -1, 0, 0}, 5);
  toh_teardown(&t);
  /* int64 base, float exponent: pow in double, truncated. */
  int64_t la[] = {2, 9};
  float lb[] = {0.5f, 0.5f};
  ewt_in lins[] = {{TB_DTYPE_I64, 1, {2}, la, false}, {TB_DTYPE_F32, 1, {2}, lb, false}};
  run2(&t, "Pow", 15, NULL, 0, lins);
  ewt_assert_bytes(&t, 0, (int64_t[]){1, 3}, 2);
  /* Before opset 12 both inputs share one type; a u8 base is never allowed. */
  tb_value_type f = toh_type(TB_DTYPE_F32, 1, (int64_t[]){2}), i = toh_type(TB_DTYPE_I32, 1, (int64_t[]){2}),
                u = toh_type(TB_DTYPE_U8, 1, (int64_t[]){2}), out;
  const tb_value_type *mixed[] = {&f, &i}, *ubase[] = {&u, &u};
  TB_ASSERT_OK(toh_infer(&t, mixed, &out));
  assert_int_equal(out.dtype, TB_DTYPE_F32);
  assert_int_equal(toh_infer(&t, ubase, &out), TB_ERR_MODEL);
  toh_teardown(&t);
  toh_setup(&t, "Pow", 7, 2, 0, 1, NULL, 0);
  assert_int_equal(toh_infer(&t, mixed, &out), TB_ERR_MODEL);
  toh_teardown(&t);
}

static void mod_and_bitshift(void **state) {
  (void)state;
  int32_t a[] = {7, -7, 7, -7, 5, INT32_MIN}, b[] = {3, 3, -3, -3, 0, -1};
  ewt_in ins[] = {{TB_DTYPE_I32, 1, {6}, a, false}, {TB_DTYPE_I32, 1, {6}, b, false}};
  toh t;
  run2(&t, "Mod", 13, NULL, 0, ins);
  ewt_assert_bytes(&t, 0, (int32_t[]){1, 2, -2, -1, 0, 0}, 6);
  toh_teardown(&t);
  tb_attr fmod[] = {TOH_INT("fmod", 1)};
  run2(&t, "Mod", 13, fmod, 1, ins);
  ewt_assert_bytes(&t, 0, (int32_t[]){1, -1, 1, -1, 0, 0}, 6);
  toh_teardown(&t);
  float fa[] = {5.5f, -5.5f}, fb[] = {2, 2};
  ewt_in fins[] = {{TB_DTYPE_F32, 1, {2}, fa, false}, {TB_DTYPE_F32, 1, {2}, fb, false}};
  run2(&t, "Mod", 13, fmod, 1, fins);
  ewt_assert_bytes(&t, 0, (float[]){1.5f, -1.5f}, 2);
  toh_teardown(&t);
  toh_setup(&t, "Mod", 13, 2, 0, 1, NULL, 0);
  tb_value_type f = toh_type(TB_DTYPE_F32, 1, (int64_t[]){2}), out;
  const tb_value_type *fin[] = {&f, &f};
  assert_int_equal(toh_infer(&t, fin, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "fmod=1");
  toh_teardown(&t);

  uint8_t x[] = {1, 0x81, 0xff, 16}, s[] = {1, 1, 8, 4};
  ewt_in uins[] = {{TB_DTYPE_U8, 1, {4}, x, false}, {TB_DTYPE_U8, 1, {4}, s, false}};
  tb_attr left[] = {TOH_STR("direction", "LEFT")}, right[] = {TOH_STR("direction", "RIGHT")},
          up[] = {TOH_STR("direction", "UP")};
  run2(&t, "BitShift", 11, left, 1, uins);
  ewt_assert_bytes(&t, 0, (uint8_t[]){2, 0x02, 0, 0}, 4);
  toh_teardown(&t);
  run2(&t, "BitShift", 11, right, 1, uins);
  ewt_assert_bytes(&t, 0, (uint8_t[]){0, 0x40, 0, 1}, 4);
  toh_teardown(&t);
  toh_setup(&t, "BitShift", 11, 2, 0, 1, up, 1);
  tb_value_type u = toh_type(TB_DTYPE_U8, 1, (int64_t[]){4});
  const tb_value_type *uin[] = {&u, &u};
  assert_int_equal(toh_infer(&t, uin, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "LEFT or RIGHT");
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(comparisons),       cmocka_unit_test(bool_logic),   cmocka_unit_test(where_broadcasts_three),
      cmocka_unit_test(cast_and_castlike), cmocka_unit_test(variadic_ops), cmocka_unit_test(pow_types),
      cmocka_unit_test(mod_and_bitshift),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
