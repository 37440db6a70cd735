/* The executor's device placement, with the device's kernels replaced by test kernels so that what is checked
 * is placement itself: an OpenCL backend (PoCL) whose find_kernel offers Relu, Add and Reshape. The nodes
 * with a device kernel run there and get their inputs on the device (Reshape's shape on the CPU), MatMul
 * falls back to the CPU with its reason, the copies between the two are listed, constants go to the device
 * once, kernel state is made once at prepare and released once, and a device kernel that cannot be prepared
 * fails prepare or, when asked, falls back to the CPU. */
#include "backend/backend_impl.h"
#include "test_engine_util.h"

static int prepare_calls, release_calls, runs_on_device;
static bool fail_relu_prepare;

/* A test device kernel: checks where its inputs live, computes on the host through copies. */
static tb_status host_round_trip(tb_kernel_ctx *ctx, float (*op)(float, float)) {
  const tb_node *n = ctx->node;
  for (size_t k = 0; k < ctx->n_inputs; k++) {
    bool value = n->def && (n->def->value_inputs >> k & 1u);
    tb_backend_kind want = value ? TB_BACKEND_CPU : TB_BACKEND_OPENCL;
    if (tb_backend_kind_of(tb_tensor_backend(ctx->inputs[k])) != want) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %zu on the wrong side", k);
  }
  if (tb_backend_kind_of(ctx->backend) != TB_BACKEND_OPENCL || !ctx->outputs[0] ||
      tb_backend_kind_of(tb_tensor_backend(ctx->outputs[0])) != TB_BACKEND_OPENCL)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output not on the device");
  size_t count = (size_t)tb_tensor_numel(ctx->outputs[0]);
  float *a = calloc(count + 1, sizeof *a), *b = calloc(count + 1, sizeof *b);
  tb_status st = tb_tensor_copy_to_host(ctx->inputs[0], a, count * sizeof *a);
  if (st == TB_OK && op) {
    size_t nb = (size_t)tb_tensor_numel(ctx->inputs[1]);
    st = tb_tensor_copy_to_host(ctx->inputs[1], b, nb * sizeof *b);
    for (size_t i = 0; i < count && st == TB_OK; i++) a[i] = op(a[i], b[i % nb]);
  }
  if (st == TB_OK) st = tb_tensor_copy_from_host(ctx->outputs[0], a, count * sizeof *a);
  free(a);
  free(b);
  runs_on_device++;
  return st;
}

static float relu_op(float x, float unused) {
  (void)unused;
  return x > 0 ? x : 0;
}
static float add_op(float x, float y) { return x + y; }
static tb_status relu_run(tb_kernel_ctx *ctx) {
  /* relu through the binary path with itself as the second operand, which the op ignores */
  tb_tensor *in[2] = {ctx->inputs[0], ctx->inputs[0]};
  tb_kernel_ctx two = *ctx;
  two.inputs = in;
  two.n_inputs = 2;
  return host_round_trip(&two, relu_op);
}
static tb_status add_run(tb_kernel_ctx *ctx) {
  if (!ctx->state || *(int *)ctx->state != 42) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "no state");
  return host_round_trip(ctx, add_op);
}
static tb_status reshape_run(tb_kernel_ctx *ctx) { return host_round_trip(ctx, NULL); }

static tb_status add_prepare(tb_kernel_ctx *ctx, void **state) {
  /* the constant c is already on the device; x's sum is not known yet */
  if (!ctx->inputs[1] || tb_backend_kind_of(tb_tensor_backend(ctx->inputs[1])) != TB_BACKEND_OPENCL || ctx->inputs[0])
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "prepare got the wrong inputs");
  int *s = malloc(sizeof *s);
  if (!s) return TB_ERR_OUT_OF_MEMORY;
  *s = 42;
  *state = s;
  prepare_calls++;
  return TB_OK;
}
static void add_release(void *state) {
  free(state);
  release_calls++;
}
static tb_status relu_prepare(tb_kernel_ctx *ctx, void **state) {
  (void)state;
  if (fail_relu_prepare) return tb_kernel_error(ctx, TB_ERR_DRIVER, "clBuildProgram failed with -11 CL_BUILD_PROGRAM_FAILURE");
  return TB_OK;
}

static const tb_kernel test_relu = {.domain = "", .name = "Relu", .run = relu_run, .prepare = relu_prepare};
static const tb_kernel test_add = {.domain = "", .name = "Add", .run = add_run, .prepare = add_prepare, .release = add_release};
static const tb_kernel test_reshape = {.domain = "", .name = "Reshape", .run = reshape_run};

static const tb_kernel *test_find(void *state, const tb_kernel_query *q) {
  (void)state;
  if (!q->in[0] || q->in[0]->dtype != TB_DTYPE_F32) return NULL;
  if (strcmp(q->op_type, "Relu") == 0) return &test_relu;
  if (strcmp(q->op_type, "Add") == 0) return &test_add;
  if (strcmp(q->op_type, "Reshape") == 0) return &test_reshape;
  return NULL;
}

typedef struct fixture {
  tb_backend *cl, *cpu;
  const tb_backend_ops *real_ops;
  tb_backend_ops ops;
  tb_model *model;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  if (tb_backend_create("opencl:0", &f->cl) != TB_OK) {
    free(f);
    *state = NULL;
    return 0;
  }
  f->real_ops = f->cl->ops;
  f->ops = *f->cl->ops;
  f->ops.find_kernel = test_find;
  f->cl->ops = &f->ops;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &f->cpu));
  f->model = tbt_model_of(tbt_small_model());
  prepare_calls = release_calls = runs_on_device = 0;
  fail_relu_prepare = false;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  if (!f) return 0;
  tb_model_destroy(f->model);
  f->cl->ops = f->real_ops;
  tb_backend_destroy(f->cl);
  tb_backend_destroy(f->cpu);
  free(f);
  return 0;
}

static tb_status prepare_on(fixture *f, bool cpu_fallback, tb_prepared **p, const tb_prepare_result **r) {
  static const char *const names[1] = {"batch"};
  static const int64_t batch[1] = {2};
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .dim_count = 1, .dim_names = names, .dim_values = batch,
                          .cpu_fallback = cpu_fallback};
  return tb_model_prepare(f->model, f->cl, &o, p, r);
}

static void run_and_check(fixture *f, tb_prepared *p, tb_backend *input_on) {
  float x[6] = {0.5f, -1, 2, 3, -4, 1.25f}, want[4];
  tbt_small_expected(x, 2, want);
  int64_t shape[2] = {2, 3}, oshape[1] = {4};
  tb_tensor *in = tbt_f32(input_on, 2, shape, x), *out = NULL;
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  assert_ptr_equal(tb_tensor_backend(out), f->cl);
  tbt_expect_f32(out, 1, oshape, want);
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
}

static void nodes_run_where_the_device_has_kernels(void **state) {
  fixture *f = *state;
  if (!f) {
    skip(); /* no OpenCL platform (PoCL) on this machine */
    return;
  }
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(prepare_on(f, false, &p, &r));
  assert_int_equal(r->device_nodes, 3);
  assert_int_equal(r->cpu_fallback_nodes, 1);
  assert_string_equal(r->fallback_ops[0], "MatMul (matmul): no opencl kernel for MatMul with inputs (f32, f32); no other route reaches this device; ran on cpu:0");
  assert_int_equal(r->copies_inserted, 2);
  assert_string_equal(r->copies[0], "value 's': opencl -> cpu (for MatMul (matmul))");
  assert_string_equal(r->copies[1], "value 'mm': cpu -> opencl (for Reshape (reshape))");
  assert_int_equal(r->warning_count, 1);
  assert_string_equal(r->warnings[0], "1 of 4 nodes run on the CPU instead of opencl; fallback_ops says why for each");
  assert_int_equal(prepare_calls, 1);
  char *json = NULL;
  TB_ASSERT_OK(tb_prepare_result_to_json(r, &json));
  TB_ASSERT_CONTAINS(json, "\"device_nodes\":\t3");
  TB_ASSERT_CONTAINS(json, "\"value 's': opencl -> cpu (for MatMul (matmul))\"");
  tb_free(json);

  run_and_check(f, p, f->cl);  /* input already on the device */
  run_and_check(f, p, f->cpu); /* input on the CPU: copied */
  run_and_check(f, p, f->cl);
  assert_int_equal(runs_on_device, 9);
  assert_int_equal(prepare_calls, 1); /* the state made at prepare serves every run */
  assert_int_equal(release_calls, 0);
  tb_prepared_destroy(p);
  assert_int_equal(release_calls, 1);
}

static void failed_device_prepare(void **state) {
  fixture *f = *state;
  if (!f) {
    skip();
    return;
  }
  fail_relu_prepare = true;
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  assert_int_equal(prepare_on(f, false, &p, &r), TB_ERR_DRIVER);
  assert_null(p);
  TB_ASSERT_CONTAINS(tb_last_error(), "clBuildProgram failed with -11 CL_BUILD_PROGRAM_FAILURE");
  assert_int_equal(release_calls, prepare_calls); /* nothing leaks on the way out */

  /* asked to fall back: Relu runs on the CPU, with the reason */
  TB_ASSERT_OK(prepare_on(f, true, &p, &r));
  assert_int_equal(r->device_nodes, 2);
  assert_int_equal(r->cpu_fallback_nodes, 2);
  TB_ASSERT_CONTAINS(r->fallback_ops[0], "Relu (relu): the opencl kernel could not be prepared: ");
  TB_ASSERT_CONTAINS(r->fallback_ops[0], "CL_BUILD_PROGRAM_FAILURE");
  assert_int_equal(r->copies_inserted, 4); /* x to the CPU, r to the device, s back, mm up */
  run_and_check(f, p, f->cl);
  tb_prepared_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(nodes_run_where_the_device_has_kernels, setup, teardown),
      cmocka_unit_test_setup_teardown(failed_device_prepare, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
