/* Elementwise arithmetic (Add, Sub, Mul, Div) and the pass-through ops (Identity, Dropout, Relu):
 * inference with broadcasting, unknown dims and errors, and the reference kernels on hand-computed
 * values, including integer wrap-around, division by zero, f16 rounding and strided inputs. */
#include "backend/cpu/kernels/elementwise/broadcast.h"
#include "test_ops_elementwise_util.h"

static const int64_t S23[] = {2, 3}, S3[] = {3}, S13[] = {1, 3}, S21[] = {2, 1}, S4[] = {4};

static void infer_broadcasts_with_unknown_dims(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "Add", 17, 2, 0, 1, NULL, 0);
  int64_t a_dims[] = {-1, 1, 5}, b_dims[] = {4, 5};
  tb_value_type a = toh_type(TB_DTYPE_F32, 3, a_dims), b = toh_type(TB_DTYPE_F32, 2, b_dims), out;
  const tb_value_type *in[] = {&a, &b};
  TB_ASSERT_OK(toh_infer(&t, in, &out));
  assert_int_equal(out.dtype, TB_DTYPE_F32);
  int64_t want[] = {-1, 4, 5};
  toh_assert_dims(&out, 3, want);

  tb_value_type unranked = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL);
  const tb_value_type *in2[] = {&a, &unranked};
  TB_ASSERT_OK(toh_infer(&t, in2, &out));
  assert_false(out.has_shape);
  assert_true(out.has_dtype);
  toh_teardown(&t);
}

static void infer_rejects_bad_inputs(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "Mul", 14, 2, 0, 1, NULL, 0);
  tb_value_type a = toh_type(TB_DTYPE_F32, 2, S23), b = toh_type(TB_DTYPE_F32, 1, S4), out;
  const tb_value_type *in[] = {&a, &b};
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Mul)");
  TB_ASSERT_CONTAINS(tb_last_error(), "cannot broadcast");

  tb_value_type i = toh_type(TB_DTYPE_I32, 1, S3), f = toh_type(TB_DTYPE_F32, 1, S3);
  const tb_value_type *mixed[] = {&f, &i};
  assert_int_equal(toh_infer(&t, mixed, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "must match");

  tb_value_type bo = toh_type(TB_DTYPE_BOOL, 1, S3);
  const tb_value_type *bools[] = {&bo, &bo};
  assert_int_equal(toh_infer(&t, bools, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "bool, which Mul does not accept");

  tb_value_type fp8 = toh_type(TB_DTYPE_FP8_E4M3FN, 1, S3);
  const tb_value_type *fp8s[] = {&fp8, &fp8};
  assert_int_equal(toh_infer(&t, fp8s, &out), TB_ERR_MODEL);

  const tb_value_type *missing[] = {&f, NULL};
  assert_int_equal(toh_infer(&t, missing, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input 1");
  toh_teardown(&t);
}

static void legacy_axis_broadcast(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_INT("broadcast", 1), TOH_INT("axis", 0)};
  toh t;
  toh_setup(&t, "Add", 6, 2, 0, 1, attrs, 2);
  int64_t a_dims[] = {2, 3}, b_dims[] = {2};
  tb_value_type a = toh_type(TB_DTYPE_F32, 2, a_dims), b = toh_type(TB_DTYPE_F32, 1, b_dims), out;
  const tb_value_type *in[] = {&a, &b};
  TB_ASSERT_OK(toh_infer(&t, in, &out));
  toh_assert_dims(&out, 2, a_dims);
  /* B = [10, 20] along axis 0: row r gets B[r] (numpy would have refused [2,3] + [2]). */
  float av[] = {1, 2, 3, 4, 5, 6}, bv[] = {10, 20};
  ewt_in ins[] = {{TB_DTYPE_F32, 2, {2, 3}, av, false}, {TB_DTYPE_F32, 1, {2}, bv, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  float want[] = {11, 12, 13, 24, 25, 26};
  ewt_assert_bytes(&t, 0, want, 6);

  int64_t bad[] = {3};
  tb_value_type b3 = toh_type(TB_DTYPE_F32, 1, bad);
  const tb_value_type *in_bad[] = {&a, &b3};
  assert_int_equal(toh_infer(&t, in_bad, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "does not match");
  toh_teardown(&t);
}

static void f32_kernels_broadcast(void **state) {
  (void)state;
  float a[] = {1, 2, 3, 4, 5, 6}, b[] = {10, 20, 30}, c[] = {2, -4};
  const char *ops[] = {"Add", "Sub", "Mul", "Div"};
  float want[4][6] = {{11, 22, 33, 14, 25, 36}, {-9, -18, -27, -6, -15, -24}, {10, 40, 90, 40, 100, 180},
                      {0.1f, 0.1f, 0.1f, 0.4f, 0.25f, 0.2f}};
  for (int k = 0; k < 4; k++) {
    toh t;
    toh_setup(&t, ops[k], 14, 2, 0, 1, NULL, 0);
    ewt_in ins[] = {{TB_DTYPE_F32, 2, {2, 3}, a, false}, {TB_DTYPE_F32, 2, {1, 3}, b, false}};
    TB_ASSERT_OK(ewt_run(&t, ins));
    toh_assert_tensor(t.out[0], TB_DTYPE_F32, 2, S23);
    ewt_assert_bytes(&t, 0, want[k], 6);
    toh_teardown(&t);
  }
  /* [2,1] + [3] -> [2,3], with a strided first input. */
  toh t;
  toh_setup(&t, "Add", 14, 2, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_F32, 2, {2, 1}, c, true}, {TB_DTYPE_F32, 1, {3}, b, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  float want2[] = {12, 22, 32, 6, 16, 26};
  toh_assert_tensor(t.out[0], TB_DTYPE_F32, 2, S23);
  ewt_assert_bytes(&t, 0, want2, 6);
  (void)S13;
  (void)S21;
  toh_teardown(&t);
}

static void integer_edge_cases(void **state) {
  (void)state;
  int32_t a[] = {INT32_MIN, INT32_MAX, 7, -7, 5, INT32_MIN}, b[] = {-1, 1, 2, 2, 0, 2};
  struct {
    const char *op;
    int32_t want[6];
  } cases[] = {{"Div", {INT32_MIN, INT32_MAX, 3, -3, 0, INT32_MIN / 2}},
               {"Add", {INT32_MAX, INT32_MIN, 9, -5, 5, INT32_MIN + 2}},
               {"Sub", {INT32_MIN + 1, INT32_MAX - 1, 5, -9, 5, INT32_MAX - 1}},
               {"Mul", {INT32_MIN, INT32_MAX, 14, -14, 0, 0}}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    toh t;
    toh_setup(&t, cases[k].op, 14, 2, 0, 1, NULL, 0);
    ewt_in ins[] = {{TB_DTYPE_I32, 1, {6}, a, false}, {TB_DTYPE_I32, 1, {6}, b, false}};
    TB_ASSERT_OK(ewt_run(&t, ins));
    ewt_assert_bytes(&t, 0, cases[k].want, 6);
    toh_teardown(&t);
  }
  /* u8 wraps; int64 INT64_MIN / -1; int8 Mul wraps. */
  uint8_t ua[] = {250, 3, 200}, ub[] = {10, 5, 0};
  toh t;
  toh_setup(&t, "Add", 14, 2, 0, 1, NULL, 0);
  ewt_in uins[] = {{TB_DTYPE_U8, 1, {3}, ua, false}, {TB_DTYPE_U8, 1, {3}, ub, false}};
  TB_ASSERT_OK(ewt_run(&t, uins));
  uint8_t uwant[] = {4, 8, 200};
  ewt_assert_bytes(&t, 0, uwant, 3);
  toh_teardown(&t);
  toh_setup(&t, "Div", 14, 2, 0, 1, NULL, 0);
  TB_ASSERT_OK(ewt_run(&t, uins));
  uint8_t dwant[] = {25, 0, 0};
  ewt_assert_bytes(&t, 0, dwant, 3);
  toh_teardown(&t);
  int64_t la[] = {INT64_MIN}, lb[] = {-1};
  toh_setup(&t, "Div", 14, 2, 0, 1, NULL, 0);
  ewt_in lins[] = {{TB_DTYPE_I64, 0, {0}, la, false}, {TB_DTYPE_I64, 1, {1}, lb, false}};
  TB_ASSERT_OK(ewt_run(&t, lins));
  ewt_assert_bytes(&t, 0, la, 1);
  toh_teardown(&t);
  int8_t ca[] = {100, -128}, cb[] = {3, -1};
  int8_t cwant[] = {44, -128};
  toh_setup(&t, "Mul", 14, 2, 0, 1, NULL, 0);
  ewt_in cins[] = {{TB_DTYPE_I8, 1, {2}, ca, false}, {TB_DTYPE_I8, 1, {2}, cb, false}};
  TB_ASSERT_OK(ewt_run(&t, cins));
  ewt_assert_bytes(&t, 0, cwant, 2);
  toh_teardown(&t);
}

/* f16 is computed in f32 and rounded once: 1 + 2^-11 is a tie in f16 and rounds to even (1.0);
 * 1 + 3*2^-11 rounds up to 1 + 2^-9. */
static void f16_rounds_once(void **state) {
  (void)state;
  float af[] = {1.0f, 1.0f, 65504.0f}, bf[] = {0.00048828125f, 0.00146484375f, 65504.0f};
  uint16_t a[3], b[3];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, af, TB_DTYPE_F16, a, 3, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, bf, TB_DTYPE_F16, b, 3, true));
  toh t;
  toh_setup(&t, "Add", 14, 2, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_F16, 1, {3}, a, false}, {TB_DTYPE_F16, 1, {3}, b, false}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  /* 1.0; 1 + 3*2^-11 is halfway between 0x3c01 and 0x3c02, to even; 65504 + 65504 overflows to +inf. */
  uint16_t want[] = {0x3c00, 0x3c02, 0x7c00};
  ewt_assert_bytes(&t, 0, want, 3);
  toh_teardown(&t);
}

static void relu_identity_dropout(void **state) {
  (void)state;
  float x[] = {-2, -0.5f, 0, 3, NAN, INFINITY};
  toh t;
  toh_setup(&t, "Relu", 14, 1, 0, 1, NULL, 0);
  ewt_in ins[] = {{TB_DTYPE_F32, 2, {2, 3}, x, true}};
  TB_ASSERT_OK(ewt_run(&t, ins));
  double want[] = {0, 0, 0, 3, NAN, INFINITY};
  ewt_assert_near(&t, 0, want, 6, 0);
  toh_teardown(&t);

  int8_t xi[] = {-128, -1, 0, 127};
  int8_t wi[] = {0, 0, 0, 127};
  toh_setup(&t, "Relu", 14, 1, 0, 1, NULL, 0);
  ewt_in iins[] = {{TB_DTYPE_I8, 1, {4}, xi, false}};
  TB_ASSERT_OK(ewt_run(&t, iins));
  ewt_assert_bytes(&t, 0, wi, 4);
  tb_value_type bo = toh_type(TB_DTYPE_U8, 1, S4), out;
  const tb_value_type *in[] = {&bo};
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  toh_teardown(&t);

  toh_setup(&t, "Identity", 16, 1, 0, 1, NULL, 0);
  bool bx[] = {true, false, true, true};
  ewt_in bins[] = {{TB_DTYPE_BOOL, 2, {2, 2}, bx, true}};
  TB_ASSERT_OK(ewt_run(&t, bins));
  ewt_assert_bytes(&t, 0, bx, 4);
  tb_value_type seq = toh_type(TB_DTYPE_F32, 1, S3);
  seq.kind = TB_VALUE_SEQUENCE;
  const tb_value_type *sin[] = {&seq};
  assert_int_equal(toh_infer(&t, sin, &out), TB_ERR_UNSUPPORTED);
  toh_teardown(&t);

  /* Dropout-13 with both outputs: y = x, mask all true. */
  toh_setup(&t, "Dropout", 13, 1, 0, 2, NULL, 0);
  float dx[] = {1, -2, 3};
  ewt_in dins[] = {{TB_DTYPE_F32, 1, {3}, dx, false}};
  tb_value_type dt = toh_type(TB_DTYPE_F32, 1, S3), dout[2];
  const tb_value_type *din[] = {&dt};
  TB_ASSERT_OK(toh_infer(&t, din, dout));
  assert_int_equal(dout[1].dtype, TB_DTYPE_BOOL);
  toh_assert_dims(&dout[1], 1, S3);
  TB_ASSERT_OK(ewt_run(&t, dins));
  ewt_assert_bytes(&t, 0, dx, 3);
  bool mask[] = {true, true, true};
  ewt_assert_bytes(&t, 1, mask, 3);
  toh_teardown(&t);

  /* Dropout-7 (ratio attribute, ignored at inference): the mask has the input's type, all 1. */
  tb_attr ratio[] = {TOH_FLOAT("ratio", 0.3f)};
  toh_setup(&t, "Dropout", 7, 1, 0, 2, ratio, 1);
  TB_ASSERT_OK(toh_infer(&t, din, dout));
  assert_int_equal(dout[1].dtype, TB_DTYPE_F32);
  TB_ASSERT_OK(ewt_run(&t, dins));
  ewt_assert_bytes(&t, 0, dx, 3);
  ewt_assert_bytes(&t, 1, (float[]){1, 1, 1}, 3);
  toh_teardown(&t);
}

static void dropout_training_mode(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "Dropout", 13, 3, 0, 1, NULL, 0);
  float x[] = {1, 2, 3}, ratio_half = 0.5f, ratio_zero = 0;
  bool yes = true;
  ewt_in ins[] = {{TB_DTYPE_F32, 1, {3}, x, false}, {TB_DTYPE_F32, 0, {0}, &ratio_half, false},
                  {TB_DTYPE_BOOL, 0, {0}, &yes, false}};
  assert_int_equal(ewt_run(&t, ins), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "training_mode");
  /* Infer sees the value and refuses first. */
  tb_value_type xt = toh_type(TB_DTYPE_F32, 1, S3), rt = toh_type(TB_DTYPE_F32, 0, NULL),
                bt = toh_type(TB_DTYPE_BOOL, 0, NULL), out;
  const tb_value_type *in[] = {&xt, &rt, &bt};
  tb_ir_tensor rv = {"r", TB_DTYPE_F32, 0, {0}, &ratio_half, 4}, bv = {"b", TB_DTYPE_BOOL, 0, {0}, &yes, 1};
  const tb_ir_tensor *values[] = {NULL, &rv, &bv};
  assert_int_equal(toh_infer_values(&t, in, values, &out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Dropout): training_mode is true");
  /* Ratio 0 keeps everything: allowed. */
  rv.data = &ratio_zero;
  TB_ASSERT_OK(toh_infer_values(&t, in, values, &out));
  ins[1].data = &ratio_zero;
  TB_ASSERT_OK(ewt_run(&t, ins));
  ewt_assert_bytes(&t, 0, x, 3);
  toh_teardown(&t);
}

static void count_loop(char *const *p, const int64_t *step, int64_t n, const void *params) {
  (void)p;
  (void)step;
  int64_t *calls = (int64_t *)params;
  calls[0]++;
  calls[1] += n;
}

/* The shared walk: shape rules, merged dims (one call for a packed add), empty outputs, refusals. */
static void broadcast_walk(void **state) {
  (void)state;
  int64_t a[] = {2, 1, 4}, b[] = {3, 1}, out[TB_MAX_DIMS];
  size_t nd, ndims[] = {3, 2};
  const int64_t *shapes[] = {a, b};
  assert_true(tb_bcast_shape(2, ndims, shapes, &nd, out));
  assert_int_equal(nd, 3);
  assert_int_equal(out[0], 2);
  assert_int_equal(out[1], 3);
  assert_int_equal(out[2], 4);
  int64_t c[] = {2, 5};
  const int64_t *bad[] = {a, c};
  assert_false(tb_bcast_shape(2, ndims, bad, &nd, out));

  char buf[64];
  int64_t packed[] = {2, 3, 4}, calls[2] = {0, 0};
  tb_bcast_operand ops[] = {{buf, 1, 3, packed, NULL}, {buf, 1, 3, packed, NULL}};
  assert_true(tb_bcast_walk(ops, 2, count_loop, calls));
  assert_int_equal(calls[0], 1); /* all dims merged */
  assert_int_equal(calls[1], 24);

  int64_t row[] = {4}, rcalls[2] = {0, 0};
  tb_bcast_operand bops[] = {{buf, 1, 3, packed, NULL}, {buf, 1, 1, row, NULL}};
  assert_true(tb_bcast_walk(bops, 2, count_loop, rcalls));
  assert_int_equal(rcalls[0], 6);
  assert_int_equal(rcalls[1], 24);

  int64_t empty[] = {2, 0}, ecalls[2] = {0, 0};
  tb_bcast_operand eops[] = {{buf, 1, 2, empty, NULL}, {buf, 1, 1, (int64_t[]){1}, NULL}};
  assert_true(tb_bcast_walk(eops, 2, count_loop, ecalls));
  assert_int_equal(ecalls[0], 0);

  int64_t scalar_calls[2] = {0, 0};
  tb_bcast_operand sops[] = {{buf, 1, 0, NULL, NULL}, {buf, 1, 0, NULL, NULL}};
  assert_true(tb_bcast_walk(sops, 2, count_loop, scalar_calls));
  assert_int_equal(scalar_calls[1], 1);

  tb_bcast_operand nops[] = {{buf, 1, 1, row, NULL}, {buf, 1, 3, packed, NULL}};
  assert_false(tb_bcast_walk(nops, 2, count_loop, calls));
  assert_false(tb_bcast_walk(nops, 0, count_loop, calls));
}

/* Empty and scalar tensors through a kernel; shapes that do not broadcast at run time. */
static void empty_scalar_and_mismatch(void **state) {
  (void)state;
  float one = 1, none[1] = {0}, v[] = {1, 2, 3};
  toh t;
  toh_setup(&t, "Add", 14, 2, 0, 1, NULL, 0);
  ewt_in eins[] = {{TB_DTYPE_F32, 2, {0, 3}, none, false}, {TB_DTYPE_F32, 0, {0}, &one, false}};
  TB_ASSERT_OK(ewt_run(&t, eins));
  toh_assert_tensor(t.out[0], TB_DTYPE_F32, 2, (int64_t[]){0, 3});
  ewt_in sins[] = {{TB_DTYPE_F32, 0, {0}, &one, false}, {TB_DTYPE_F32, 0, {0}, &one, false}};
  TB_ASSERT_OK(ewt_run(&t, sins));
  toh_assert_tensor(t.out[0], TB_DTYPE_F32, 0, NULL);
  ewt_assert_bytes(&t, 0, (float[]){2}, 1);
  ewt_in bad[] = {{TB_DTYPE_F32, 1, {3}, v, false}, {TB_DTYPE_F32, 1, {2}, v, false}};
  assert_int_equal(ewt_run(&t, bad), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Add): input shapes [3] and [2] do not broadcast");
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(infer_broadcasts_with_unknown_dims),
      cmocka_unit_test(infer_rejects_bad_inputs),
      cmocka_unit_test(legacy_axis_broadcast),
      cmocka_unit_test(f32_kernels_broadcast),
      cmocka_unit_test(integer_edge_cases),
      cmocka_unit_test(f16_rounds_once),
      cmocka_unit_test(relu_identity_dropout),
      cmocka_unit_test(dropout_training_mode),
      cmocka_unit_test(broadcast_walk),
      cmocka_unit_test(empty_scalar_and_mismatch),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
