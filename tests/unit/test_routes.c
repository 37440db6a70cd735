/* Routes to the same device (src/model/routes.c, exec_place.c): which devices count as the same hardware
 * (device lists built by hand: PCI bus id, UUID, usable, not a CPU implementation, native first), and real
 * execution when the device backend lacks a kernel: PoCL's opencl:0, whose kernels are cut down to Relu by
 * the test, and lavapipe's vulkan:0, declared the same device by the test hook. Each node's placement and
 * reason, the copies between the two through the host, the outputs against the CPU's, and device_only's
 * error with its code and sentence. */
#include "backend/backend_impl.h"
#include "backend/vulkan/vk_backend.h"
#include "model/routes.h"
#include "test_engine_util.h"
#include "test_select_helpers.h"

/* ---- the rule: which devices are routes to which ------------------------------------------------- */

static const char *routes_of(const tb_device_list *l, const char *device, char *buf, size_t cap) {
  const tb_device_info *found[8];
  size_t n = tb_routes_match(l, device, found, 8);
  buf[0] = '\0';
  for (size_t i = 0, len = 0; i < n && i < 8; i++) len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? "," : "", found[i]->device);
  return buf;
}

static void same_pci_bus_or_uuid_is_one_device(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  tb_device_info *cuda = sel_add_h100(l, "0000:1a:00.0");
  sel_add(l, TB_BACKEND_XPU, "Intel(R) Iris(R) Xe Graphics", "Intel", "Xe-LP", TB_DEVICE_INTEGRATED_GPU, 0, 0, 15, 96, "0000:00:02.0");
  sel_add(l, TB_BACKEND_VULKAN, "Intel(R) Iris(R) Xe Graphics (TGL GT2)", "Intel", "", TB_DEVICE_INTEGRATED_GPU, 0, 0, 15, 0, "0000:00:02.0");
  sel_add(l, TB_BACKEND_VULKAN, "NVIDIA H100 80GB HBM3", "NVIDIA", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 80, 0, "0000:1a:00.0");
  sel_add(l, TB_BACKEND_VULKAN, "llvmpipe (LLVM 15.0.6, 256 bits)", "Mesa", "", TB_DEVICE_CPU, 0, 0, 16, 0, NULL);
  /* the H100 through OpenCL with no PCI id but its UUID; a second one, unusable */
  tb_device_info *cl = sel_add(l, TB_BACKEND_OPENCL, "NVIDIA H100 80GB HBM3", "NVIDIA", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 80, 0, NULL);
  tb_device_info *cl_bad = sel_add(l, TB_BACKEND_OPENCL, "NVIDIA H100 80GB HBM3", "NVIDIA", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 80, 0, "0000:1a:00.0");
  tb_dev_unusable(l, cl_bad, NULL, "%s", "clCreateContext failed with -6 CL_OUT_OF_HOST_MEMORY");
  sel_add(l, TB_BACKEND_OPENCL, "Portable Computing Language", "pocl", "", TB_DEVICE_CPU, 0, 0, 16, 0, NULL);
  tb_dev_set(l, &cuda->uuid, "GPU-8c0f3a51-1d6e-4b27-9a33-5e10c47b2000");
  tb_dev_set(l, &cl->uuid, "8c0f3a511d6e4b279a335e10c47b2000");
  sel_finish(l);
  char buf[256];
  /* native first, then Vulkan, then OpenCL; the unusable route and the CPU implementations never */
  assert_string_equal(routes_of(l, "cuda:0", buf, sizeof buf), "vulkan:1,opencl:0");
  assert_string_equal(routes_of(l, "vulkan:1", buf, sizeof buf), "cuda:0,opencl:0");
  assert_string_equal(routes_of(l, "opencl:0", buf, sizeof buf), "cuda:0,vulkan:1");
  assert_string_equal(routes_of(l, "xpu:0", buf, sizeof buf), "vulkan:0");
  assert_string_equal(routes_of(l, "vulkan:2", buf, sizeof buf), "");
  assert_string_equal(routes_of(l, "cpu:0", buf, sizeof buf), "");
  assert_string_equal(routes_of(l, "rocm:0", buf, sizeof buf), ""); /* not in the list */
  /* the test hook: two CPU implementations declared one device */
  tb_routes_test_declare_same("opencl:2", "vulkan:2");
  assert_string_equal(routes_of(l, "vulkan:2", buf, sizeof buf), "opencl:2");
  tb_routes_test_declare_same(NULL, NULL);
  assert_string_equal(routes_of(l, "vulkan:2", buf, sizeof buf), "");
  tb_device_list_destroy(l);
}

/* ---- real execution: PoCL runs Relu, lavapipe the rest it has, the CPU Hardmax ---------------------- */

typedef struct fixture {
  tb_backend *cl, *cpu;
  const tb_backend_ops *real_ops;
  tb_backend_ops ops;
} fixture;

/* opencl:0's only kernel: Relu, computed on the host through copies (PoCL's own kernels insist on the real
 * vtable, which the test replaces): the device backend "lacks" every other op. */
static tb_status host_relu(tb_kernel_ctx *ctx) {
  if (tb_backend_kind_of(tb_tensor_backend(ctx->inputs[0])) != TB_BACKEND_OPENCL ||
      tb_backend_kind_of(tb_tensor_backend(ctx->outputs[0])) != TB_BACKEND_OPENCL)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "Relu's tensors are not on opencl:0");
  size_t count = (size_t)tb_tensor_numel(ctx->outputs[0]);
  float *a = calloc(count + 1, sizeof *a);
  tb_status st = tb_tensor_copy_to_host(ctx->inputs[0], a, count * sizeof *a);
  for (size_t i = 0; i < count; i++) a[i] = a[i] > 0 ? a[i] : 0;
  if (st == TB_OK) st = tb_tensor_copy_from_host(ctx->outputs[0], a, count * sizeof *a);
  free(a);
  return st;
}

static const tb_kernel test_relu = {.domain = "", .name = "Relu", .run = host_relu};

static const tb_kernel *relu_only(void *state, const tb_kernel_query *q) {
  (void)state;
  return strcmp(q->op_type, "Relu") == 0 ? &test_relu : NULL;
}

static int setup(void **state) {
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  fixture *f = calloc(1, sizeof *f);
  tb_backend *vk = NULL;
  bool lavapipe = tb_backend_create("vulkan:0", &vk) == TB_OK && strstr(vk->device->name, "llvmpipe");
  tb_backend_destroy(vk);
  if (!lavapipe || tb_backend_create("opencl:0", &f->cl) != TB_OK) {
    free(f);
    *state = NULL;
    return 0;
  }
  f->real_ops = f->cl->ops;
  f->ops = *f->cl->ops;
  f->ops.find_kernel = relu_only;
  f->cl->ops = &f->ops;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &f->cpu));
  tb_routes_test_declare_same("opencl:0", "vulkan:0");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  tb_routes_test_declare_same(NULL, NULL);
  if (!f) return 0;
  f->cl->ops = f->real_ops;
  tb_backend_destroy(f->cl);
  tb_backend_destroy(f->cpu);
  free(f);
  return 0;
}

/* x[2,3] -> Relu -> Add c -> (Hardmax when with_hardmax) -> MatMul W -> out[2,2] */
static tb_model *route_model(bool with_hardmax) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "routes");
  int64_t x_dims[2] = {2, 3}, three = 3, w_dims[2] = {3, 2};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, NULL);
  float c[3] = {0.5f, -2, 1}, w[6] = {1, -1, 0.5f, 2, -3, 0.25f};
  tbt_const_f32(g, "c", 1, &three, c);
  tbt_const_f32(g, "W", 2, w_dims, w);
  tbt_node(g, "Relu", "relu", "x", "r");
  tbt_node(g, "Add", "add", "r,c", "s");
  if (with_hardmax) tbt_node(g, "Hardmax", "hardmax", "s", "h");
  tbt_node(g, "MatMul", "matmul", with_hardmax ? "h,W" : "s,W", "out");
  tbt_output(g, "out");
  return tbt_model_of(m);
}

static tb_status prepare(tb_model *m, tb_backend *b, bool device_only, tb_prepared **p, const tb_prepare_result **r) {
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .device_only = device_only};
  return tb_model_prepare(m, b, &o, p, r);
}

/* The output for x through the prepared model, on the CPU. */
static void run_to_host(tb_prepared *p, tb_backend *input_on, const float *x, float *out) {
  int64_t shape[2] = {2, 3};
  tb_tensor *in = tbt_f32(input_on, 2, shape, x), *o = NULL;
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &o));
  TB_ASSERT_OK(tb_tensor_copy_to_host(o, out, 4 * sizeof *out));
  tb_tensor_destroy(o);
  tb_tensor_destroy(in);
}

static void expect_same_as_cpu(fixture *f, tb_model *m, tb_prepared *p) {
  tb_prepared *ref = NULL;
  TB_ASSERT_OK(prepare(m, f->cpu, false, &ref, NULL));
  const float x[6] = {0.5f, -1, 2, 3, -4, 1.25f};
  float want[4], got[4];
  run_to_host(ref, f->cpu, x, want);
  run_to_host(p, f->cpu, x, got);
  for (int i = 0; i < 4; i++) assert_true(fabsf(got[i] - want[i]) <= 1e-5f + 1e-4f * fabsf(want[i]));
  run_to_host(p, f->cl, x, got); /* the input already on the device */
  for (int i = 0; i < 4; i++) assert_true(fabsf(got[i] - want[i]) <= 1e-5f + 1e-4f * fabsf(want[i]));
  tb_prepared_destroy(ref);
}

static void nodes_the_device_lacks_run_on_the_same_devices_other_route(void **state) {
  fixture *f = *state;
  if (!f) {
    skip(); /* no PoCL or no lavapipe here */
    return;
  }
  tb_model *m = route_model(true);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(prepare(m, f->cl, false, &p, &r));
  assert_int_equal(r->device_nodes, 1);
  assert_int_equal(r->route_nodes, 2);
  assert_int_equal(r->cpu_fallback_nodes, 1);
  static const char *const devices[4] = {"opencl:0", "vulkan:0", "cpu:0", "vulkan:0"};
  assert_int_equal(r->node_count, 4);
  for (int i = 0; i < 4; i++) assert_string_equal(r->node_devices[i], devices[i]);
  assert_string_equal(r->node_labels[2], "Hardmax (hardmax)");
  assert_string_equal(r->node_reasons[0], "");
  assert_string_equal(r->routed_ops[0], "Add (add): no opencl kernel for Add with inputs (f32, f32); ran on vulkan:0, declared the "
                                        "same device as opencl:0 by the test hook");
  assert_string_equal(r->routed_ops[1], "MatMul (matmul): no opencl kernel for MatMul with inputs (f32, f32); ran on vulkan:0, "
                                        "declared the same device as opencl:0 by the test hook");
  assert_string_equal(r->fallback_ops[0], "Hardmax (hardmax): no opencl kernel for Hardmax with inputs (f32); no other route to "
                                          "this device has one (vulkan:0 has none); ran on cpu:0");
  assert_string_equal(r->node_reasons[2], strchr(r->fallback_ops[0], ':') + 2);
  /* r goes PoCL -> lavapipe through the host; s to the CPU for Hardmax, h back; out to the prepared backend */
  assert_int_equal(r->copies_inserted, 4);
  assert_string_equal(r->copies[0], "value 'r': opencl -> vulkan through the host (for Add (add))");
  assert_string_equal(r->copies[1], "value 's': vulkan -> cpu (for Hardmax (hardmax))");
  assert_string_equal(r->copies[2], "value 'h': cpu -> vulkan (for MatMul (matmul))");
  assert_string_equal(r->copies[3], "value 'out': vulkan -> opencl through the host (a graph output)");
  TB_ASSERT_CONTAINS(r->warnings[r->warning_count - 1], "2 of 4 nodes run on another route to opencl:0's hardware");
  char *json = NULL;
  TB_ASSERT_OK(tb_prepare_result_to_json(r, &json));
  TB_ASSERT_CONTAINS(json, "\"route_nodes\":\t2");
  TB_ASSERT_CONTAINS(json, "\"node\":\t\"Add (add)\",\n\t\t\t\t\"device\":\t\"vulkan:0\"");
  tb_free(json);
  expect_same_as_cpu(f, m, p);
  TB_ASSERT_OK(tb_prepared_set_profiling(p, true));
  const float x[6] = {1, 2, 3, 4, 5, 6};
  float out[4];
  run_to_host(p, f->cpu, x, out);
  size_t n = 0;
  const tb_node_profile *prof = NULL;
  TB_ASSERT_OK(tb_prepared_profile(p, &n, &prof));
  assert_int_equal(n, 4);
  assert_string_equal(prof[0].placement, "opencl");
  assert_string_equal(prof[1].placement, "vulkan");
  assert_string_equal(prof[2].placement, "cpu");
  tb_prepared_destroy(p); /* closes the route's backend: lavapipe's validation layer had nothing to say */
  char first[512];
  unsigned said = tb_vk_closed_validation_messages(first, sizeof first);
  if (said) fail_msg("the validation layer reported %u message(s) by device destruction; first: %s", said, first);
  tb_model_destroy(m);
}

static void without_a_route_the_cpu_runs_them(void **state) {
  fixture *f = *state;
  if (!f) {
    skip();
    return;
  }
  tb_routes_test_declare_same(NULL, NULL); /* PoCL and lavapipe are CPU implementations: no route by the rule */
  tb_model *m = route_model(false);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(prepare(m, f->cl, false, &p, &r));
  assert_int_equal(r->route_nodes, 0);
  assert_int_equal(r->cpu_fallback_nodes, 2);
  assert_string_equal(r->fallback_ops[0],
                      "Add (add): no opencl kernel for Add with inputs (f32, f32); no other route reaches this device; ran on cpu:0");
  expect_same_as_cpu(f, m, p);
  tb_prepared_destroy(p);
  tb_model_destroy(m);
}

static void device_only_refuses_a_cpu_fallback(void **state) {
  fixture *f = *state;
  if (!f) {
    skip();
    return;
  }
  tb_model *m = route_model(true);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  assert_int_equal(prepare(m, f->cl, true, &p, &r), TB_ERR_UNSUPPORTED);
  assert_null(p);
  assert_null(r);
  assert_string_equal(tb_last_error(),
                      "device_only: 1 of 4 nodes would fall back to the CPU from opencl:0: Hardmax (hardmax): no opencl kernel "
                      "for Hardmax with inputs (f32); no other route to this device has one (vulkan:0 has none); ran on "
                      "cpu:0; turn device_only off (tb run without --device-only) to let them run there");
  tb_model_destroy(m);
  /* every node on the device or its other route: device_only is met */
  m = route_model(false);
  TB_ASSERT_OK(prepare(m, f->cl, true, &p, &r));
  assert_int_equal(r->device_nodes + r->route_nodes, 3);
  assert_int_equal(r->cpu_fallback_nodes, 0);
  expect_same_as_cpu(f, m, p);
  tb_prepared_destroy(p);
  /* the CPU backend is the device: nothing falls back */
  TB_ASSERT_OK(prepare(m, f->cpu, true, &p, &r));
  assert_int_equal(r->cpu_fallback_nodes, 0);
  assert_string_equal(r->node_devices[0], "cpu:0");
  tb_prepared_destroy(p);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_pci_bus_or_uuid_is_one_device),
      cmocka_unit_test_setup_teardown(nodes_the_device_lacks_run_on_the_same_devices_other_route, setup, teardown),
      cmocka_unit_test_setup_teardown(without_a_route_the_cpu_runs_them, setup, teardown),
      cmocka_unit_test_setup_teardown(device_only_refuses_a_cpu_fallback, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
