/* cuBLASLt's workspace on cuda:0 (src/backend/cuda/cuda_blas_workspace.c, used by kernels/cuda_gemm.c) on the fake
 * libcuda and the computing fake cuBLASLt: the size NVIDIA recommends for the architecture (32 MiB from Hopper on,
 * 4 MiB before) given to the heuristic and to every product; one workspace per stream, shared by the product nodes
 * of a model, and a different one for a second model on the same device (its own stream), each kept across runs;
 * two threads running the two models at once; growth on demand keeping the outgrown block (a captured graph may name
 * it) until the stream goes; the blocks freed with the model's stream; an allocation failure leaving the products
 * without a workspace, still computed right. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_module.h"
#include "backend/allocator.h"
#include "backend/cuda/cuda_state.h"
#include "core/error.h"
#include "../fakes/fake_cublaslt.h"
#include "model/prepared.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_util.h"
#include "test_util.h"

static char cache_dir[64];
enum { MIB = 1 << 20 };

/* The CUDA stream of a prepared model's stream handle (what the products and the workspace are keyed by). */
static tb_cu_stream cuda_stream_of_model(void *state, void *stream) { return tb_cuda_stream_handle_of(state, stream); }

/* The fake driver's cuMemAlloc_v2 calls answered out of memory so far. */
static unsigned long long out_of_memory_answers(void) {
  return ((unsigned long long (*)(void))fake_symbol("fake_cuda_alloc_out_of_memory"))();
}

static const fake_cublaslt_state *blas_fake(void) {
  return ((const fake_cublaslt_state *(*)(void))tcu_symbol("fake_cublaslt", "fake_cublaslt_state_get"))();
}

static const char *const vars[] = {"FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_CODE", "FAKE_CUDA_CC", "FAKE_CUDA_EMULATE", "FAKE_CUDA_MEM_CAPACITY",
                                   "FAKE_CUBLASLT_FAIL", "FAKE_CUBLASLT_HEURISTIC", "FAKE_CUBLASLT_WORKSPACE", "TB_CUDA_GEMM",
                                   "TB_CUBLASLT_LIB", "TB_GRAPH_CAPTURE"};

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  setenv("TB_CUBLASLT_LIB", tbt_fake("fake_cublaslt"), 1);
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* the fake cuBLASLt computes even on a capturing stream */
  setenv("FAKE_CUBLASLT_WORKSPACE", "1048576", 1); /* its algorithms need 1 MiB: the matmul gets the workspace */
  tcu_cache_make(cache_dir, "tb_cuws");
  tb_cuda_module_test_source(NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  tcu_cache_remove(cache_dir);
  return 0;
}

/* y = MatMul(x [3, 4], W [4, 5]); with `two`, z = MatMul(y, V [5, 2]) is the output instead. */
static tb_model *product_model(bool two) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "mm");
  const int64_t xd[2] = {3, 4}, wd[2] = {4, 5}, vd[2] = {5, 2};
  tbt_input(g, "x", TB_DTYPE_F32, 2, xd, NULL);
  pt_const_rand(g, "W", 2, wd, 3, -1.0f, 1.0f);
  tbt_node(g, "MatMul", "mm", "x,W", "y");
  if (two) {
    pt_const_rand(g, "V", 2, vd, 4, -1.0f, 1.0f);
    tbt_node(g, "MatMul", "mm2", "y,V", "z");
    tbt_output(g, "z");
  } else {
    tbt_output(g, "y");
  }
  return tbt_model_of(ir);
}

typedef struct rig {
  tb_backend *cpu, *cuda;
  tb_model *model[2];
  tb_prepared *reference[2], *prepared[2];
} rig;

static void rig_open(rig *r) {
  memset(r, 0, sizeof *r);
  r->cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &r->cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  for (int k = 0; k < 2; k++) {
    r->model[k] = product_model(k == 1);
    TB_ASSERT_OK(tb_model_prepare(r->model[k], r->cpu, &o, &r->reference[k], NULL));
    const tb_prepare_result *res = NULL;
    if (tb_model_prepare(r->model[k], r->cuda, &o, &r->prepared[k], &res) != TB_OK) fail_msg("prepare: %s", tb_last_error());
    assert_int_equal(res->cpu_fallback_nodes, 0);
  }
}

static void rig_close(rig *r) {
  cuda_state *s = r->cuda->state;
  for (int k = 0; k < 2; k++) {
    tb_cu_stream stream = cuda_stream_of_model(r->cuda->state, r->prepared[k]->stream);
    tb_prepared_destroy(r->prepared[k]);
    assert_int_equal(tb_cuda_workspace_blocks(s, stream, NULL), 0); /* freed with the stream */
    tb_prepared_destroy(r->reference[k]);
    tb_model_destroy(r->model[k]);
  }
  tb_backend_destroy(r->cuda);
  tb_backend_destroy(r->cpu);
  assert_int_equal(live_allocations(), 0);
}

/* The stream's workspace, as the products get it (an existing one: nothing is allocated). */
static void *workspace_of(rig *r, int k) {
  tb_cu_deviceptr p = 0;
  size_t n = 0;
  TB_ASSERT_OK(tb_cuda_workspace_get(r->cuda->state, r->cuda->allocator, cuda_stream_of_model(r->cuda->state, r->prepared[k]->stream), 0, &p, &n));
  return (void *)(uintptr_t)p;
}

/* Model k on cuda:0 equals the CPU's (the fake cuBLASLt computes in float: within 1e-5 + 1e-5 |cpu|). */
static tb_status run_model(rig *r, int k, unsigned seed) {
  float x[12];
  for (int i = 0; i < 12; i++) x[i] = (float)((seed * 7 + (unsigned)i * 13) % 17) / 4.0f - 2.0f;
  const int64_t xd[2] = {3, 4};
  tb_tensor *in = tbt_f32(r->cpu, 2, xd, x), *want = NULL, *got = NULL;
  const char *names[1] = {"x"};
  tb_status st = tb_prepared_run(r->reference[k], 1, names, &in, 1, NULL, &want);
  if (st == TB_OK) st = tb_prepared_run(r->prepared[k], 1, names, &in, 1, NULL, &got);
  if (st == TB_OK) {
    size_t n = (size_t)tb_tensor_numel(want);
    float a[16], b[16];
    if (n != (size_t)tb_tensor_numel(got) || n > 16) st = TB_ERR_INTERNAL;
    if (st == TB_OK) st = tb_tensor_copy_to_host(want, a, n * sizeof *a);
    if (st == TB_OK) st = tb_tensor_copy_to_host(got, b, n * sizeof *b);
    for (size_t i = 0; st == TB_OK && i < n; i++)
      if (fabsf(a[i] - b[i]) > 1e-5f + 1e-5f * fabsf(a[i])) st = TB_ERR_INTERNAL;
  }
  tb_tensor_destroy(in);
  tb_tensor_destroy(want);
  tb_tensor_destroy(got);
  return st;
}

static void recommended_sizes(void **state) {
  (void)state;
  assert_int_equal(tb_cuda_workspace_recommended(7), 4 * MIB);
  assert_int_equal(tb_cuda_workspace_recommended(8), 4 * MIB);
  assert_int_equal(tb_cuda_workspace_recommended(9), 32 * MIB);
  assert_int_equal(tb_cuda_workspace_recommended(10), 32 * MIB);
}

/* Each architecture's size reaches the heuristic (the preference's max workspace) and the matmul. */
static void the_products_get_the_recommended_workspace(void **state) {
  (void)state;
  static const struct {
    const char *cc;
    size_t bytes;
  } cases[] = {{"9.0", 32 * MIB}, {"8.0", 4 * MIB}, {"10.0", 32 * MIB}};
  for (size_t c = 0; c < 3; c++) {
    setenv("FAKE_CUDA_CC", cases[c].cc, 1);
    rig r;
    rig_open(&r);
    TB_ASSERT_OK(run_model(&r, 0, 1));
    const fake_cublaslt_state *f = blas_fake();
    assert_int_equal(f->heuristic.max_workspace, cases[c].bytes); /* the algorithms may use all of it */
    assert_ptr_equal(f->matmul.workspace, workspace_of(&r, 0));
    assert_int_equal(f->matmul.workspace_bytes, 1 * MIB); /* what the chosen algorithm needs */
    assert_ptr_equal(f->matmul.stream, cuda_stream_of_model(r.cuda->state, r.prepared[0]->stream));
    size_t bytes = 0;
    assert_int_equal(tb_cuda_workspace_blocks(r.cuda->state, cuda_stream_of_model(r.cuda->state, r.prepared[0]->stream), &bytes), 1);
    assert_int_equal(bytes, cases[c].bytes);
    rig_close(&r);
  }
}

/* Two models on one device: a workspace each (their streams differ), the same one run after run; the two product
 * nodes of the second model share its one. */
static void one_workspace_per_stream(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  cuda_state *s = r.cuda->state;
  assert_ptr_not_equal(cuda_stream_of_model(r.cuda->state, r.prepared[0]->stream), cuda_stream_of_model(r.cuda->state, r.prepared[1]->stream));
  TB_ASSERT_OK(run_model(&r, 0, 1));
  void *first = blas_fake()->matmul.workspace;
  TB_ASSERT_OK(run_model(&r, 1, 2));
  void *second = blas_fake()->matmul.workspace;
  assert_ptr_equal(blas_fake()->matmul.stream, cuda_stream_of_model(r.cuda->state, r.prepared[1]->stream));
  assert_non_null(first);
  assert_non_null(second);
  assert_ptr_not_equal(first, second);
  assert_ptr_equal(first, workspace_of(&r, 0));
  assert_ptr_equal(second, workspace_of(&r, 1));
  assert_int_equal(tb_cuda_workspace_blocks(s, cuda_stream_of_model(r.cuda->state, r.prepared[1]->stream), NULL), 1); /* two nodes, one block */
  for (unsigned i = 0; i < 3; i++) {
    TB_ASSERT_OK(run_model(&r, 0, 3 + i));
    assert_ptr_equal(blas_fake()->matmul.workspace, first);
    TB_ASSERT_OK(run_model(&r, 1, 4 + i));
    assert_ptr_equal(blas_fake()->matmul.workspace, second);
  }
  assert_int_equal(tb_cuda_workspace_blocks(s, cuda_stream_of_model(r.cuda->state, r.prepared[0]->stream), NULL), 1);
  assert_int_equal(tb_cuda_workspace_blocks(s, s->stream, NULL), 0); /* the backend's own stream ran no product */
  rig_close(&r);
}

typedef struct worker {
  rig *r;
  int k;
  tb_status st;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (unsigned i = 0; i < 40 && w->st == TB_OK; i++) w->st = run_model(w->r, w->k, i);
  return NULL;
}

/* The two models run at once from two threads: each on its stream with its workspace, values right. */
static void two_threads_two_models(void **state) {
  (void)state;
  rig r;
  rig_open(&r);
  worker w[2] = {{&r, 0, TB_OK}, {&r, 1, TB_OK}};
  pthread_t t[2];
  for (int k = 0; k < 2; k++) assert_int_equal(pthread_create(&t[k], NULL, work, &w[k]), 0);
  for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
  for (int k = 0; k < 2; k++) {
    if (w[k].st != TB_OK) fail_msg("model %d: %s", k, tb_status_str(w[k].st));
    assert_int_equal(tb_cuda_workspace_blocks(r.cuda->state, cuda_stream_of_model(r.cuda->state, r.prepared[k]->stream), NULL), 1);
  }
  rig_close(&r);
}

/* Asking for more than the stream has: a new block, the old one kept until the stream's release. */
static void grown_on_demand(void **state) {
  (void)state;
  setenv("FAKE_CUDA_CC", "9.0", 1);
  tb_backend *cuda = open_cuda0();
  cuda_state *s = cuda->state;
  tb_cu_deviceptr a = 0, b = 0, c = 0;
  size_t na = 0, nb = 0, nc = 0, held = 0;
  int before = live_allocations();
  TB_ASSERT_OK(tb_cuda_workspace_get(s, NULL, s->stream, 0, &a, &na));
  assert_int_equal(na, 32 * MIB);
  TB_ASSERT_OK(tb_cuda_workspace_get(s, NULL, s->stream, 40 * MIB, &b, &nb));
  assert_int_equal(nb, 40 * MIB);
  assert_true(a != b);
  TB_ASSERT_OK(tb_cuda_workspace_get(s, NULL, s->stream, 0, &c, &nc)); /* the larger one from now on */
  assert_true(c == b);
  assert_int_equal(nc, 40 * MIB);
  assert_int_equal(tb_cuda_workspace_blocks(s, s->stream, &held), 2);
  assert_int_equal(held, 72 * MIB);
  assert_int_equal(live_allocations(), before + 2);
  tb_cuda_workspace_release(s, s->stream, false);
  assert_int_equal(tb_cuda_workspace_blocks(s, s->stream, NULL), 0);
  assert_int_equal(live_allocations(), before);
  TB_ASSERT_OK(tb_cuda_workspace_get(s, NULL, s->stream, 0, &a, &na)); /* freed at close */
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
}

/* No device memory for the workspace: the allocation's sentence, and the products run without one, right. */
static void no_memory_for_the_workspace(void **state) {
  (void)state;
  setenv("FAKE_CUDA_CC", "9.0", 1);
  setenv("FAKE_CUDA_MEM_CAPACITY", "16777216", 1); /* 16 MiB: the tensors fit, 32 MiB of workspace does not */
  setenv("FAKE_CUBLASLT_WORKSPACE", "0", 1); /* algorithms that need none */
  rig r;
  rig_open(&r);
  cuda_state *s = r.cuda->state;
  tb_cu_deviceptr p = 0;
  size_t n = 0;
  unsigned long long before = out_of_memory_answers();
  assert_int_equal(tb_cuda_workspace_get(s, NULL, s->stream, 0, &p, &n), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuMemAlloc_v2 of 32.0 MiB for cuBLASLt's workspace (compute capability 9.0) failed");
  TB_ASSERT_CONTAINS(tb_last_error(), "free device memory or prepare fewer models on the device");
  assert_true(p == 0 && n == 0);
  assert_int_equal(out_of_memory_answers() - before, 1);
  /* remembered: asked again, the same answer without a new attempt */
  assert_int_equal(tb_cuda_workspace_get(s, NULL, s->stream, 0, &p, &n), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuMemAlloc_v2 of 32.0 MiB for cuBLASLt's workspace (compute capability 9.0) failed");
  TB_ASSERT_CONTAINS(tb_last_error(), "not retried");
  assert_int_equal(out_of_memory_answers() - before, 1);
  /* many products on a model's stream: one attempt and its one retry after the cache was released, not one a product.
   * Before: every product asked the driver again. */
  before = out_of_memory_answers();
  for (unsigned i = 0; i < 8; i++) TB_ASSERT_OK(run_model(&r, 1, 5 + i));
  assert_int_equal(out_of_memory_answers() - before, 2);
  assert_null(blas_fake()->matmul.workspace);
  assert_int_equal(blas_fake()->matmul.workspace_bytes, 0);
  assert_int_equal(blas_fake()->heuristic.max_workspace, 0);
  assert_int_equal(tb_cuda_workspace_blocks(s, cuda_stream_of_model(r.cuda->state, r.prepared[1]->stream), NULL), 0);
  rig_close(&r);
}

/* A workspace that fits only once the caching allocator released its cache: the cache is emptied and the
 * allocation retried once, which succeeds. */
static void the_cache_is_released_and_the_allocation_retried(void **state) {
  (void)state;
  setenv("FAKE_CUDA_CC", "8.0", 1); /* 4 MiB of workspace */
  setenv("FAKE_CUDA_MEM_CAPACITY", "16777216", 1);
  tb_backend *cuda = open_cuda0();
  cuda_state *s = cuda->state;
  tb_block *b = NULL;
  TB_ASSERT_OK(tb_allocator_alloc(cuda->allocator, 14 * MIB, &b));
  tb_allocator_free(cuda->allocator, b); /* cached: the device's memory stays reserved */
  unsigned long long before = out_of_memory_answers();
  tb_cu_deviceptr p = 0;
  size_t n = 0;
  TB_ASSERT_OK(tb_cuda_workspace_get(s, cuda->allocator, s->stream, 0, &p, &n));
  assert_true(p != 0);
  assert_int_equal(n, 4 * MIB);
  assert_int_equal(out_of_memory_answers() - before, 1);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(recommended_sizes),
      cmocka_unit_test_setup_teardown(the_products_get_the_recommended_workspace, setup, teardown),
      cmocka_unit_test_setup_teardown(one_workspace_per_stream, setup, teardown),
      cmocka_unit_test_setup_teardown(two_threads_two_models, setup, teardown),
      cmocka_unit_test_setup_teardown(grown_on_demand, setup, teardown),
      cmocka_unit_test_setup_teardown(no_memory_for_the_workspace, setup, teardown),
      cmocka_unit_test_setup_teardown(the_cache_is_released_and_the_allocation_retried, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
