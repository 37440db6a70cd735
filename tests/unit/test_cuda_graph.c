/* The CUDA backend's execution machinery, host side, on the fake libcuda (tests/fakes/fake_cuda.c and
 * fake_cuda_exec.h, which log every stream, copy, event and graph call in order): one non-blocking stream per
 * prepared model and nothing on the legacy default stream; the weights uploaded at prepare, only the inputs at run;
 * pinned staging buffers made once and reused; the run captured as a CUDA graph and replayed while the input
 * shapes repeat (one cuGraphLaunch, no kernel launch), a graph per set of input shapes (bounded, the oldest
 * evicted and its executable graph updated in place), not captured
 * where it cannot be (with the reason) or when turned off; errors in the middle of a capture as a status and a
 * sentence with nothing left behind; the device time of a run and of each node from events. Values go through the
 * kernels' emulator (FAKE_CUDA_EMULATE) and are compared with the CPU backend where it was built. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/allocator.h"
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/cuda_state.h"
#include "core/error.h"
#include "../fakes/fake_cuda_launch.h"
#include "backend/tensor/tensor_impl.h"
#include "model/exec_impl.h"
#include "model/prepared.h"
#include "model/replay.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_util.h"
#include "test_util.h"

#if !defined(__SANITIZE_ADDRESS__)
/* The process's calloc (this file's: the library's calls come here), failing the fail_countdown-th call of
 * calloc(fail_nmemb, fail_size) from when it is set; plain otherwise. Not under ASan, whose allocator owns calloc. */
#define CALLOC_HOOK 1
static size_t fail_nmemb, fail_size;
static int fail_countdown;
void *calloc(size_t nmemb, size_t size) {
  if (nmemb == fail_nmemb && size == fail_size && __atomic_load_n(&fail_countdown, __ATOMIC_RELAXED) > 0 &&
      __atomic_sub_fetch(&fail_countdown, 1, __ATOMIC_RELAXED) == 0)
    return NULL;
  if (size && nmemb > SIZE_MAX / size) return NULL;
  size_t bytes = nmemb * size;
  void *p = malloc(bytes > 0 ? bytes : 1);
  if (p) memset(p, 0, bytes);
  return p;
}
#endif

static char cache_dir[64];
static bool emulated;

static unsigned long long fake_ull(const char *name) { return ((unsigned long long (*)(void))fake_symbol(name))(); }
static const char *call_log(void) { return ((const char *(*)(void))fake_symbol("fake_cuda_call_log"))(); }

/* The call log holds these calls in this order (other calls may come between them). */
static void expect_order(const char *const *names, size_t n) {
  const char *at = call_log();
  for (size_t i = 0; i < n; i++) {
    char line[96];
    snprintf(line, sizeof line, "%s\n", names[i]);
    const char *found = strstr(at, line);
    while (found && found != call_log() && found[-1] != '\n') found = strstr(found + 1, line);
    if (!found) fail_msg("call %zu, %s, is not in the log after the calls before it; the log:\n%s", i, names[i], call_log());
    at = found + strlen(line);
  }
}

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  static const char *const vars[] = {"FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_CODE", "FAKE_CUDA_CC", "FAKE_CUDA_LAUNCH_FAIL_AT",
                                     "FAKE_CUDA_EMULATE", "FAKE_CUDA_MEM_CAPACITY", "FAKE_NVRTC_FAIL", "TB_NVRTC_LIB",
                                     "TB_GRAPH_CAPTURE", "TB_CUDA_STAGING"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  tcu_cache_make(cache_dir, "tb_cugraph");
  tb_cuda_module_test_source(NULL);
  const char *emu = tbt_fake("cuda_emu");
  emulated = access(emu, R_OK) == 0;
  if (emulated) setenv("FAKE_CUDA_EMULATE", emu, 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tcu_cache_remove(cache_dir);
  return 0;
}

/* x [batch, 6] -> Relu -> Add(bias [6]) -> Softmax(-1) -> Mul(scale [6]) -> ReduceSum(axes [1], keepdims) -> y [batch, 1],
 * and s (the softmax) as a second output: every node has a CUDA kernel. With `echo`, x is an output too (a graph
 * output the run does not compute, so the run copies it to the host: what a capture cannot hold). With `host_node`,
 * y goes on through a Dropout with its mask output, which the CUDA kernel declines (test_cuda_exec), so it runs on
 * the CPU in the middle of the run; its mask picks between its output and y (a Where on the device, which keeps the
 * mask used, so the O1 passes do not remove the Dropout). */
static tb_model *device_model(bool echo, bool host_node) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "device");
  const int64_t x_dims[2] = {-1, 6}, six = 6, one = 1;
  const char *x_sym[2] = {"batch", NULL};
  const float bias[6] = {0.5f, -1, 2, 0, 1, -0.5f}, scale[6] = {1, 2, 3, 4, 5, 6};
  const int64_t axes[1] = {1};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, x_sym);
  tbt_const_f32(g, "bias", 1, &six, bias);
  tbt_const_f32(g, "scale", 1, &six, scale);
  tbt_const_i64(g, "axes", 1, &one, axes);
  tbt_node(g, "Relu", "relu", "x", "r");
  tbt_node(g, "Add", "add", "r,bias", "a");
  tbt_node(g, "Softmax", "softmax", "a", "s");
  tbt_node(g, "Mul", "mul", "s,scale", "m");
  tbt_node(g, "ReduceSum", "sum", "m,axes", "y");
  if (host_node) {
    tbt_node(g, "Dropout", "dropout", "y", "d,mask");
    tbt_node(g, "Where", "where", "mask,d,y", "h");
    tbt_output(g, "h");
  } else {
    tbt_output(g, "y");
  }
  tbt_output(g, "s");
  if (echo) tbt_output(g, "x");
  return tbt_model_of(m);
}

typedef struct rig {
  tb_backend *cuda, *cpu;
  tb_model *model;
  tb_prepared *prepared, *reference;
  const tb_prepare_result *result;
} rig;

static tb_status rig_open(rig *r, tb_model *model, const tb_prepare_options *options) {
  memset(r, 0, sizeof *r);
  r->cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &r->cpu));
  r->model = model;
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  if (options) o = *options;
  tb_prepare_options cpu_o = {.size = sizeof cpu_o, .level = TB_LEVEL_O0};
  TB_ASSERT_OK(tb_model_prepare(model, r->cpu, &cpu_o, &r->reference, NULL));
  return tb_model_prepare(model, r->cuda, &o, &r->prepared, &r->result);
}

static void rig_close(rig *r) {
  tb_prepared_destroy(r->prepared);
  tb_prepared_destroy(r->reference);
  tb_model_destroy(r->model);
  tb_backend_destroy(r->cuda);
  tb_backend_destroy(r->cpu);
  assert_int_equal(live_allocations(), 0);
  assert_int_equal(fake_int("fake_cuda_live_graphs"), 0);
  assert_int_equal(fake_int("fake_cuda_live_pinned"), 0);
  assert_int_equal(fake_int("fake_cuda_live_streams"), 0);
  assert_int_equal(fake_int("fake_cuda_live_contexts"), 0);
  assert_int_equal(fake_int("fake_cuda_live_events"), 0);
}

static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) & 0xffff) / 8192.0f - 4.0f;
  }
}

/* Run the prepared model with x [batch, 6] filled from seed; n_out outputs into out (device tensors). */
static tb_status rig_run(rig *r, tb_prepared *p, int64_t batch, unsigned seed, size_t n_out, tb_tensor **out) {
  const int64_t dims[2] = {batch, 6};
  float x[64 * 6];
  fill(x, (size_t)batch * 6, seed);
  tb_tensor *in = tbt_f32(r->cpu, 2, dims, x);
  const char *names[1] = {"x"};
  tb_status st = tb_prepared_run(p, 1, names, &in, n_out, NULL, out);
  tb_tensor_destroy(in);
  return st;
}

/* The cuda run's outputs equal the CPU reference's for this input (when the emulator computes them). */
static void expect_values(rig *r, int64_t batch, unsigned seed, size_t n_out) {
  tb_tensor *want[4] = {NULL}, *got[4] = {NULL};
  TB_ASSERT_OK(rig_run(r, r->prepared, batch, seed, n_out, got));
  TB_ASSERT_OK(rig_run(r, r->reference, batch, seed, n_out, want));
  for (size_t k = 0; k < n_out; k++) {
    size_t n = (size_t)tb_tensor_numel(want[k]);
    assert_int_equal(tb_tensor_numel(got[k]), n);
    assert_ptr_equal(tb_tensor_backend(got[k]), r->cuda);
    float a[512], b[512];
    TB_ASSERT_OK(tb_tensor_copy_to_host(want[k], a, n * sizeof *a));
    TB_ASSERT_OK(tb_tensor_copy_to_host(got[k], b, n * sizeof *b));
    for (size_t i = 0; emulated && i < n; i++)
      if (fabsf(a[i] - b[i]) > 1e-6f + 1e-5f * fabsf(a[i]))
        fail_msg("batch %lld seed %u output %zu element %zu: cuda:0 %.9g, cpu %.9g", (long long)batch, seed, k, i, (double)b[i],
                 (double)a[i]);
    tb_tensor_destroy(want[k]);
    tb_tensor_destroy(got[k]);
  }
}

static tb_replay_counts counts(const rig *r) { return tb_replay_counts_of(r->prepared->replay); }

/* ---- Streams, uploads, staging --------------------------------------------------------------------- */

static void one_stream_per_model_and_no_legacy_stream(void **state) {
  (void)state;
  unsigned long long legacy = fake_ull("fake_cuda_legacy_stream_uses");
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  assert_int_equal(fake_int("fake_cuda_nonblocking_streams"), 2); /* the backend's and the model's */
  assert_non_null(r.prepared->stream);
  tb_prepared *second = NULL;
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  TB_ASSERT_OK(tb_model_prepare(r.model, r.cuda, &o, &second, NULL));
  assert_int_equal(fake_int("fake_cuda_nonblocking_streams"), 3);
  assert_ptr_not_equal(second->stream, r.prepared->stream);
  tb_prepared_destroy(second);
  assert_int_equal(fake_int("fake_cuda_nonblocking_streams"), 2);
  for (int i = 0; i < 3; i++) expect_values(&r, 2, 7 + (unsigned)i, 2);
  assert_int_equal(fake_ull("fake_cuda_legacy_stream_uses"), legacy); /* not one call on the legacy default stream */
  assert_int_equal(tcu_calls("cuCtxSynchronize"), 0);
  rig_close(&r);
}

static void weights_go_up_at_prepare_and_only_inputs_at_run(void **state) {
  (void)state;
  tcu_call_log_reset();
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  /* prepare: the bias, the scale (the axes are read on the host), through staging */
  assert_int_equal(tcu_calls("cuMemcpyHtoDAsync_v2"), 2);
  assert_int_equal(tcu_calls("cuMemHostAlloc"), 2);
  for (int run = 0; run < 3; run++) {
    tcu_call_log_reset();
    tb_tensor *out[2] = {NULL};
    TB_ASSERT_OK(rig_run(&r, r.prepared, 2, 1, 2, out));
    assert_int_equal(tcu_calls("cuMemcpyHtoDAsync_v2"), 1); /* the input, and nothing else */
    assert_int_equal(tcu_calls("cuMemHostAlloc"), 0);       /* the staging buffers are reused */
    assert_int_equal(tcu_calls("cuMemcpyDtoHAsync_v2"), 0);  /* the outputs stay on the device */
    tb_tensor_destroy(out[0]);
    tb_tensor_destroy(out[1]);
  }
  rig_close(&r);
}

/* A copy of 20 MiB goes through the two 8 MiB pinned buffers in three chunks each way, the buffers made once. */
static void pinned_staging_buffers_are_reused(void **state) {
  (void)state;
  tcu_call_log_reset();
  tb_backend *cuda = open_cuda0();
  size_t n = (20u << 20) / 4;
  float *host = malloc(n * sizeof *host), *back = malloc(n * sizeof *back);
  for (size_t i = 0; i < n; i++) host[i] = (float)i * 0.5f;
  const int64_t dims[1] = {(int64_t)n};
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(cuda, TB_DTYPE_F32, 1, dims, &t));
  unsigned long long pinned0 = fake_ull("fake_cuda_pinned_copies");
  for (int round = 0; round < 2; round++) {
    memset(back, 0, n * sizeof *back);
    TB_ASSERT_OK(tb_tensor_copy_from_host(t, host, n * sizeof *host));
    TB_ASSERT_OK(tb_tensor_copy_to_host(t, back, n * sizeof *back));
    assert_memory_equal(host, back, n * sizeof *host);
  }
  assert_int_equal(tcu_calls("cuMemHostAlloc"), 2);
  assert_int_equal(fake_int("fake_cuda_live_pinned"), 2);
  assert_int_equal(tcu_calls("cuMemcpyHtoDAsync_v2"), 6);
  assert_int_equal(tcu_calls("cuMemcpyDtoHAsync_v2"), 6);
  assert_int_equal(fake_ull("fake_cuda_pinned_copies") - pinned0, 12);
  const cuda_state *s = cuda->state;
  assert_int_equal(tb_cuda_staging_buffers(s), 2);
  assert_int_equal(tb_cuda_staged_copies(s), 4);
  tb_tensor_destroy(t);
  tb_backend_destroy(cuda);
  assert_int_equal(fake_int("fake_cuda_live_pinned"), 0);

  /* pinned memory refused: the copies go directly, still right; TB_CUDA_STAGING=off: no pinned memory asked */
  for (int mode = 0; mode < 2; mode++) {
    tcu_call_log_reset();
    if (mode == 0) setenv("FAKE_CUDA_FAIL", "host_alloc", 1);
    else setenv("TB_CUDA_STAGING", "off", 1);
    cuda = open_cuda0();
    TB_ASSERT_OK(tb_tensor_create(cuda, TB_DTYPE_F32, 1, dims, &t));
    memset(back, 0, n * sizeof *back);
    TB_ASSERT_OK(tb_tensor_copy_from_host(t, host, n * sizeof *host));
    TB_ASSERT_OK(tb_tensor_copy_to_host(t, back, n * sizeof *back));
    assert_memory_equal(host, back, n * sizeof *host);
    assert_int_equal(tb_cuda_staging_buffers(cuda->state), 0);
    assert_int_equal(tcu_calls("cuMemHostAlloc"), mode == 0 ? 1 : 0);
    assert_int_equal(tcu_calls("cuMemcpyHtoDAsync_v2"), 1);
    tb_tensor_destroy(t);
    tb_backend_destroy(cuda);
    unsetenv("FAKE_CUDA_FAIL");
    unsetenv("TB_CUDA_STAGING");
  }
  /* a value that is no switch: one warning naming it, and staging stays on */
  setenv("TB_CUDA_STAGING", "sometimes", 1);
  setenv("TB_LOG", "warn", 1);
  tbt_capture_stderr_begin();
  cuda = open_cuda0();
  char *log = tbt_capture_stderr_end();
  setenv("TB_LOG", "error", 1);
  unsetenv("TB_CUDA_STAGING");
  TB_ASSERT_CONTAINS(log, "TB_CUDA_STAGING=sometimes is not on, 1, off or 0; host copies go through pinned staging buffers (on)");
  free(log);
  assert_true(((const cuda_state *)cuda->state)->staging_on);
  tb_backend_destroy(cuda);
  free(host);
  free(back);
  assert_int_equal(live_allocations(), 0);
  assert_int_equal(fake_int("fake_cuda_live_pinned"), 0);
}

/* What a captured run frees stays allocated for the graph: not handed to the next tensor until released. */
static void freed_blocks_are_held_for_the_graph(void **state) {
  (void)state;
  tb_backend *cuda = open_cuda0();
  const int64_t dims[1] = {1000};
  tb_tensor *t = NULL, *u = NULL;
  tb_block_hold hold = {0};
  tb_allocator_hold_begin(cuda->allocator, &hold);
  TB_ASSERT_OK(tb_tensor_create(cuda, TB_DTYPE_F32, 1, dims, &t));
  const tb_block *held = t->storage->block;
  tb_tensor_destroy(t);
  tb_allocator_hold_end(cuda->allocator);
  assert_int_equal(hold.count, 1);
  assert_ptr_equal(hold.blocks[0], held);
  assert_false(hold.failed);
  TB_ASSERT_OK(tb_tensor_create(cuda, TB_DTYPE_F32, 1, dims, &u)); /* the cache does not have it */
  assert_ptr_not_equal(u->storage->block, held);
  tb_tensor_destroy(u);
  tb_memory_stats before = {.size = sizeof before}, after = {.size = sizeof after};
  TB_ASSERT_OK(tb_backend_memory_stats(cuda, &before));
  tb_allocator_hold_release(cuda->allocator, &hold);
  TB_ASSERT_OK(tb_backend_memory_stats(cuda, &after));
  assert_int_equal(hold.count, 0);
  assert_int_equal(before.allocated - after.allocated, 4096); /* 4000 bytes, rounded to the device's 256 and the 512 min */
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
}

/* ---- Graph capture and replay ------------------------------------------------------------------------ */

static void same_shapes_replay_one_graph(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  assert_true(r.result->graph_capture);
  assert_string_equal(r.result->graph_capture_why, "");
  tcu_call_log_reset();
  expect_values(&r, 3, 1, 2); /* the first run: captured, then launched */
  static const char *const first[] = {"cuMemcpyHtoDAsync_v2", "cuStreamBeginCapture_v2", "cuLaunchKernel", "cuLaunchKernel",
                                      "cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel", "cuStreamEndCapture",
                                      "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuStreamSynchronize"};
  expect_order(first, sizeof first / sizeof first[0]);
  assert_int_equal(tcu_calls("cuMemcpyDtoDAsync_v2"), 0); /* the caller gets the graph's output buffers */
  assert_int_equal(tcu_calls("cuLaunchKernel"), 5);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 1);
  assert_int_equal(counts(&r).captures, 1);
  for (unsigned seed = 2; seed < 5; seed++) { /* new values, same shapes: the graph reads the new input */
    tcu_call_log_reset();
    expect_values(&r, 3, seed, 2);
    static const char *const again[] = {"cuMemcpyHtoDAsync_v2", "cuGraphLaunch", "cuStreamSynchronize"};
    expect_order(again, sizeof again / sizeof again[0]);
    assert_int_equal(tcu_calls("cuMemcpyDtoDAsync_v2"), 0); /* nor a copy of them: the last run's were given back */
    assert_int_equal(tcu_calls("cuMemAlloc_v2"), 0);
    assert_int_equal(tcu_calls("cuLaunchKernel"), 0); /* one launch per run, whatever the number of nodes */
    assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
    assert_int_equal(tcu_calls("cuGraphLaunch"), 1);
  }
  assert_int_equal(counts(&r).captures, 1);
  assert_int_equal(counts(&r).replays, 3);
  const char *why = NULL;
  assert_true(tb_prepared_graph_capture(r.prepared, &why));
  assert_string_equal(why, "");
  rig_close(&r);
}

/* The outputs are the graph's own buffers while the caller gives them back before the next run; a caller keeping
 * them (here the outputs of the first run, while two more run) keeps its values: the graph lets go of those buffers,
 * is captured again with buffers of its own, and outputs are copies from then on. */
static void outputs_kept_by_the_caller_are_not_overwritten(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  tb_tensor *kept[2] = {NULL}, *want[2] = {NULL};
  TB_ASSERT_OK(rig_run(&r, r.prepared, 3, 1, 2, kept)); /* captured; kept holds the graph's buffers */
  TB_ASSERT_OK(rig_run(&r, r.reference, 3, 1, 2, want));
  tcu_call_log_reset();
  expect_values(&r, 3, 2, 2); /* other values: captured again, not written over kept */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  assert_int_equal(counts(&r).outputs_kept, 1);
  tcu_call_log_reset();
  expect_values(&r, 3, 3, 2); /* a replay, its outputs copied out */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 1);
  assert_int_equal(tcu_calls("cuMemcpyDtoDAsync_v2"), 2);
  for (size_t k = 0; k < 2; k++) {
    size_t n = (size_t)tb_tensor_numel(want[k]);
    float a[64], b[64];
    TB_ASSERT_OK(tb_tensor_copy_to_host(want[k], a, n * sizeof *a));
    TB_ASSERT_OK(tb_tensor_copy_to_host(kept[k], b, n * sizeof *b));
    for (size_t i = 0; emulated && i < n; i++)
      if (fabsf(a[i] - b[i]) > 1e-6f + 1e-5f * fabsf(a[i]))
        fail_msg("kept output %zu element %zu: %.9g after two more runs, %.9g when it was made", k, i, (double)b[i], (double)a[i]);
    tb_tensor_destroy(kept[k]);
    tb_tensor_destroy(want[k]);
  }
  assert_int_equal(counts(&r).outputs_kept, 1);
  rig_close(&r);
}

/* One graph per set of input shapes: a model alternating between two batch sizes captures each once, then only
 * replays (no kernel launch, no capture), the values right every time (the fake checks each replayed graph's memory
 * again, so a graph whose buffers another capture freed would fail with 700). */
static void alternating_shapes_replay_a_graph_each(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  tcu_call_log_reset();
  expect_values(&r, 2, 1, 2);
  expect_values(&r, 2, 2, 2); /* replay */
  tb_replay_counts one = counts(&r);
  assert_int_equal(one.graphs, 1);
  /* x [2, 6], y [2, 1], s [2, 6] and the three intermediate values the captured run freed: six blocks of 512 */
  assert_int_equal(one.pinned_bytes, 6 * 512);
  expect_values(&r, 5, 3, 2); /* batch 5: a second graph, the first one kept */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 2);
  assert_int_equal(tcu_calls("cuGraphInstantiateWithFlags"), 2);
  assert_int_equal(tcu_calls("cuGraphExecUpdate_v2"), 0);
  assert_int_equal(fake_int("fake_cuda_live_graphs"), 2);
  tcu_call_log_reset();
  for (unsigned i = 0; i < 6; i++) expect_values(&r, i % 2 ? 5 : 2, 10 + i, 2);
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
  assert_int_equal(tcu_calls("cuLaunchKernel"), 0);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 6);
  tb_replay_counts c = counts(&r);
  assert_int_equal(c.captures, 2);
  assert_int_equal(c.updates, 0);
  assert_int_equal(c.replays, 7);
  assert_int_equal(c.evictions, 0);
  assert_int_equal(c.graphs, 2);
  /* batch 5's six blocks and one more: batch 2's arena, planned after the first capture and freed in the second
   * (held by the second graph, which outlives the first: the oldest is evicted first) */
  assert_int_equal(c.pinned_bytes, 13 * 512);
  rig_close(&r); /* every graph, buffer and held block freed (rig_close counts them) */
}

/* At most TB_REPLAY_GRAPHS graphs: a new set of shapes beyond them evicts the oldest capture, whose executable graph
 * is updated in place for the new one (or made anew when the driver refuses the update). */
static void a_new_shape_beyond_the_bound_evicts_the_oldest(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  for (int64_t b = 1; b <= TB_REPLAY_GRAPHS; b++) expect_values(&r, b, (unsigned)b, 2);
  assert_int_equal(counts(&r).graphs, TB_REPLAY_GRAPHS);
  assert_int_equal(fake_int("fake_cuda_live_graphs"), TB_REPLAY_GRAPHS);
  tcu_call_log_reset();
  expect_values(&r, 9, 20, 2); /* one more: batch 1 (the oldest) goes, its executable graph updated */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  assert_int_equal(tcu_calls("cuGraphExecUpdate_v2"), 1);
  assert_int_equal(tcu_calls("cuGraphInstantiateWithFlags"), 0);
  tb_replay_counts c = counts(&r);
  assert_int_equal(c.evictions, 1);
  assert_int_equal(c.updates, 1);
  assert_int_equal(c.graphs, TB_REPLAY_GRAPHS);
  assert_int_equal(fake_int("fake_cuda_live_graphs"), TB_REPLAY_GRAPHS);
  tcu_call_log_reset();
  for (int64_t b = 2; b <= TB_REPLAY_GRAPHS; b++) expect_values(&r, b, 30 + (unsigned)b, 2); /* still kept */
  expect_values(&r, 9, 21, 2);
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
  assert_int_equal(tcu_calls("cuGraphLaunch"), TB_REPLAY_GRAPHS);
  /* batch 1 again: captured again, evicting batch 2 (now the oldest); the driver refuses the update this time */
  setenv("FAKE_CUDA_FAIL", "update", 1);
  tcu_call_log_reset();
  expect_values(&r, 1, 40, 2);
  unsetenv("FAKE_CUDA_FAIL");
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  assert_int_equal(tcu_calls("cuGraphExecUpdate_v2"), 1);
  assert_int_equal(tcu_calls("cuGraphInstantiateWithFlags"), 1);
  assert_int_equal(tcu_calls("cuGraphExecDestroy"), 1); /* the evicted graph's */
  assert_int_equal(fake_int("fake_cuda_live_graphs"), TB_REPLAY_GRAPHS);
  assert_int_equal(counts(&r).evictions, 2);
  tcu_call_log_reset();
  expect_values(&r, 2, 41, 2); /* batch 2 was evicted: a capture */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  expect_values(&r, 1, 42, 2); /* batch 1 replays */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  assert_int_equal(counts(&r).evictions, 3);
  rig_close(&r);
}

/* A graph captured on the executor's planned arena keeps working after another shape's capture made a new plan: the
 * old arena, freed during that capture, is held by the newer graph, which is evicted only after the older one. */
static void a_graph_on_the_arena_outlives_the_next_plan(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  TB_ASSERT_OK(tb_prepared_set_profiling(r.prepared, true));
  expect_values(&r, 3, 1, 2); /* observed: no graph; the executor plans for batch 3 after it */
  TB_ASSERT_OK(tb_prepared_set_profiling(r.prepared, false));
  const tb_block *arena = r.prepared->exec->darena->storage->block;
  expect_values(&r, 3, 2, 2); /* captured with its values in the arena */
  expect_values(&r, 5, 3, 2); /* captured: a new plan, the batch-3 arena freed into this capture's hold */
  assert_ptr_not_equal(r.prepared->exec->darena->storage->block, arena);
  for (int64_t b = 6; b < 6 + TB_REPLAY_GRAPHS - 2; b++) expect_values(&r, b, (unsigned)b, 2); /* the cache full */
  for (unsigned i = 0; i < 4; i++) expect_values(&r, i % 2 ? 5 : 3, 10 + i, 2); /* both still replay, right */
  assert_int_equal(counts(&r).captures, TB_REPLAY_GRAPHS);
  expect_values(&r, 11, 20, 2); /* evicts batch 3's graph (the oldest), not batch 5's */
  expect_values(&r, 5, 21, 2);
  tb_replay_counts c = counts(&r);
  assert_int_equal(c.evictions, 1);
  assert_int_equal(c.replays, 5);
  rig_close(&r);
}

/* A profiled run (node by node, no replay) with other shapes makes a new memory plan and frees the arena the
 * graph was captured on: the next unprofiled run with the first shapes captures again instead of replaying a
 * graph that writes the freed arena. */
static void an_observed_run_with_new_shapes_forces_a_capture(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  expect_values(&r, 3, 1, 2);
  expect_values(&r, 3, 2, 2); /* replay */
  assert_int_equal(counts(&r).captures, 1);
  TB_ASSERT_OK(tb_prepared_set_profiling(r.prepared, true));
  expect_values(&r, 7, 3, 2); /* observed: the executor runs it, with a plan for batch 7 */
  TB_ASSERT_OK(tb_prepared_set_profiling(r.prepared, false));
  tcu_call_log_reset();
  expect_values(&r, 3, 4, 2); /* batch 3 again: the graph's plan is gone, so a fresh capture */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  assert_int_equal(counts(&r).captures, 2);
  tcu_call_log_reset();
  expect_values(&r, 3, 5, 2); /* and then replays */
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 1);
  rig_close(&r);
}

static void what_cannot_be_captured_runs_without_a_graph(void **state) {
  (void)state;
  /* a node on the CPU in the middle */
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, true), NULL));
  assert_false(r.result->graph_capture);
  assert_string_equal(r.result->graph_capture_why,
                      "node 'dropout' (Dropout) runs on cpu:0, so the run crosses to the host in its middle");
  char *json = NULL;
  TB_ASSERT_OK(tb_prepare_result_to_json(r.result, &json));
  TB_ASSERT_CONTAINS(json, "\"graph_capture\":\tfalse");
  TB_ASSERT_CONTAINS(json, "\"graph_capture_why\":\t\"node 'dropout' (Dropout) runs on cpu:0");
  free(json);
  for (int i = 0; i < 2; i++) {
    tcu_call_log_reset();
    expect_values(&r, 2, 1, 2);
    assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
    assert_int_equal(tcu_calls("cuLaunchKernel"), 6); /* the five before the Dropout and the Where */
  }
  rig_close(&r);

  /* turned off: by the option, by the environment; a value that is neither is an error */
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2, .no_graph_capture = true};
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), &o));
  assert_false(r.result->graph_capture);
  assert_string_equal(r.result->graph_capture_why, "turned off (the no_graph_capture option)");
  tcu_call_log_reset();
  expect_values(&r, 2, 1, 2);
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
  rig_close(&r);
  setenv("TB_GRAPH_CAPTURE", "off", 1);
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  assert_string_equal(r.result->graph_capture_why, "turned off (TB_GRAPH_CAPTURE=off)");
  rig_close(&r);
  setenv("TB_GRAPH_CAPTURE", "sometimes", 1);
  assert_int_equal(rig_open(&r, device_model(false, false), NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "TB_GRAPH_CAPTURE='sometimes' is not one of on, 1, off, 0");
  r.prepared = NULL;
  rig_close(&r);
  unsetenv("TB_GRAPH_CAPTURE");

  /* found only at run time: an output the run copies to the host; the run goes on without a graph, and says why */
  TB_ASSERT_OK(rig_open(&r, device_model(true, false), NULL));
  assert_true(r.result->graph_capture);
  tcu_call_log_reset();
  expect_values(&r, 2, 1, 3);
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 0);
  const char *why = NULL;
  assert_false(tb_prepared_graph_capture(r.prepared, &why));
  TB_ASSERT_CONTAINS(why, "a capture at run time failed: ");
  TB_ASSERT_CONTAINS(why, "cuda:0: a copy of 48 bytes to the host in the middle of a captured run cannot be captured into a "
                          "CUDA graph");
  tcu_call_log_reset();
  expect_values(&r, 2, 2, 3);
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 0);
  assert_int_equal(fake_int("fake_cuda_live_graphs"), 0);
  rig_close(&r);
}

/* A transformer's front, as DistilBERT and GPT-2 have it: ids [2, 4] -> Gather(embeddings [10, 8]) -> Add(positions
 * [4, 8]) -> LayerNormalization -> Pad(pads (0, 1, 0, 0, 0, 1), constant_value 0.5) -> Softmax -> s [2, 5, 9], and
 * Shape of the normalised values -> shape. Gather's indices are checked by the device (no read-back in the middle),
 * Shape is written by kernels and Pad's constant read at prepare, so the whole run is one graph. */
static tb_model *embedding_model(void) {
  tb_ir_model *m = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(m, NULL, "embed");
  const int64_t ids_dims[2] = {2, 4}, emb_dims[2] = {10, 8}, pos_dims[2] = {4, 8}, eight = 8;
  static float emb[80], pos[32], gamma[8], beta[8];
  fill(emb, 80, 21);
  fill(pos, 32, 22);
  fill(gamma, 8, 23);
  fill(beta, 8, 24);
  tbt_input(g, "ids", TB_DTYPE_I64, 2, ids_dims, NULL);
  tbt_const_f32(g, "emb", 2, emb_dims, emb);
  tbt_const_f32(g, "pos", 2, pos_dims, pos);
  tbt_const_f32(g, "gamma", 1, &eight, gamma);
  tbt_const_f32(g, "beta", 1, &eight, beta);
  tbt_node(g, "Gather", "embed", "emb,ids", "e");
  tbt_node(g, "Add", "position", "e,pos", "h");
  tbt_node(g, "LayerNormalization", "norm", "h,gamma,beta", "n");
  tbt_const_i64(g, "pads", 1, (const int64_t[]){6}, (const int64_t[]){0, 1, 0, 0, 0, 1});
  const float half = 0.5f;
  tbt_const_f32(g, "pad_value", 0, NULL, &half);
  tbt_node(g, "Pad", "pad", "n,pads,pad_value", "padded");
  tbt_node(g, "Softmax", "softmax", "padded", "s");
  tbt_node(g, "Shape", "shape", "n", "shape");
  tbt_output(g, "s");
  tbt_output(g, "shape");
  return tbt_model_of(m);
}

static tb_status run_ids(rig *r, tb_prepared *p, const int64_t ids[8], tb_tensor **out) {
  const int64_t dims[2] = {2, 4};
  tb_tensor *in = NULL;
  TB_ASSERT_OK(tb_tensor_create(r->cpu, TB_DTYPE_I64, 2, dims, &in));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in, ids, 8 * sizeof *ids));
  const char *names[1] = {"ids"};
  tb_status st = tb_prepared_run(p, 1, names, &in, 2, NULL, out);
  tb_tensor_destroy(in);
  return st;
}

/* The cuda run with these ids equals the CPU's: the softmax within 1e-6 + 1e-5 |cpu| (when emulated), the shape. */
static void expect_ids(rig *r, const int64_t ids[8]) {
  tb_tensor *want[2] = {NULL}, *got[2] = {NULL};
  TB_ASSERT_OK(run_ids(r, r->prepared, ids, got));
  TB_ASSERT_OK(run_ids(r, r->reference, ids, want));
  float a[90], b[90];
  TB_ASSERT_OK(tb_tensor_copy_to_host(want[0], a, sizeof a));
  TB_ASSERT_OK(tb_tensor_copy_to_host(got[0], b, sizeof b));
  for (size_t i = 0; emulated && i < 90; i++)
    if (fabsf(a[i] - b[i]) > 1e-6f + 1e-5f * fabsf(a[i])) fail_msg("element %zu: cuda:0 %.9g, cpu %.9g", i, (double)b[i], (double)a[i]);
  int64_t shape[3] = {0};
  TB_ASSERT_OK(tb_tensor_copy_to_host(got[1], shape, sizeof shape));
  if (emulated) {
    assert_int_equal(shape[0], 2);
    assert_int_equal(shape[1], 4);
    assert_int_equal(shape[2], 8);
  }
  for (int k = 0; k < 2; k++) {
    tb_tensor_destroy(want[k]);
    tb_tensor_destroy(got[k]);
  }
}

static void an_embedding_lookup_is_captured_and_replayed(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, embedding_model(), NULL));
  assert_int_equal(r.result->cpu_fallback_nodes, 0);
  assert_true(r.result->graph_capture);
  const int64_t a[8] = {0, 1, 2, 3, 9, 8, 7, 6}, b[8] = {-1, -10, 5, 5, 4, 3, 2, 1}, bad[8] = {0, 1, 2, 12, 0, 0, 0, 0};
  tcu_call_log_reset();
  expect_ids(&r, a); /* captured */
  expect_ids(&r, b); /* replayed: new ids, negative ones counted from the end */
  expect_ids(&r, a);
  const char *why = NULL;
  assert_true(tb_prepared_graph_capture(r.prepared, &why));
  assert_int_equal(counts(&r).captures, 1);
  assert_int_equal(counts(&r).replays, 2);
  assert_int_equal(tcu_calls("cuStreamBeginCapture_v2"), 1);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 3);
  assert_int_equal(tcu_calls("cuMemcpyHtoDAsync_v2"), 3); /* the ids of each run, nothing else from the host */
  /* a bad index in a replay: the device's flag, read after the run, names it as the host check did */
  tb_tensor *out[2] = {NULL};
  assert_int_equal(run_ids(&r, r.prepared, bad, out), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'embed' (Gather): index 12 (indices element 3) is out of range for axis 0 of size 10");
  assert_null(out[0]);
  assert_int_equal(counts(&r).replays, 3);
  expect_ids(&r, b); /* the flag was reset: the next replay is good */
  assert_int_equal(counts(&r).captures, 1);
  assert_int_equal(counts(&r).replays, 4);
  rig_close(&r);
}

/* The replay's graph slots are sized all or nothing: a host allocation failing half-way through them (each k-th
 * calloc(3, 8) of a first run in turn, the slots' output lists among them for a model of 2 outputs) fails that run
 * with TB_ERR_OUT_OF_MEMORY and leaves no slot; the next runs size them again, and four input shapes (a graph each,
 * every slot used) give the CPU's values, twice. Before (the slots made before the failure kept), the next run took
 * the slots as whole, and the second shape's capture wrote into a slot without lists. */
static void replay_slots_are_sized_all_or_nothing(void **state) {
  (void)state;
#ifdef CALLOC_HOOK
  int failed = 0;
  for (int k = 1; k <= 8; k++) {
    rig r;
    TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
    tb_tensor *out[2] = {NULL, NULL};
    fail_nmemb = 3;
    fail_size = sizeof(void *);
    __atomic_store_n(&fail_countdown, k, __ATOMIC_RELAXED);
    tb_status st = rig_run(&r, r.prepared, 2, 1, 2, out);
    bool hit = __atomic_load_n(&fail_countdown, __ATOMIC_RELAXED) == 0;
    __atomic_store_n(&fail_countdown, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < 2; i++) tb_tensor_destroy(out[i]);
    if (st != TB_OK) {
      assert_true(hit);
      assert_int_equal(st, TB_ERR_OUT_OF_MEMORY);
      TB_ASSERT_CONTAINS(tb_last_error(), "out of host memory");
      failed++;
    }
    for (int round = 0; round < 2; round++)
      for (int64_t batch = 1; batch <= 4; batch++) expect_values(&r, batch, (unsigned)(batch + 7 * round), 2);
    assert_int_equal(counts(&r).graphs, 4);
    rig_close(&r);
  }
  assert_true(failed > 0);
#else
  print_message("replay_slots_are_sized_all_or_nothing: under ASan calloc is not hooked; nothing checked\n");
#endif
}

/* A failure at each step of a capture: the status and the driver's sentence, nothing kept, and the next run works. */
static void errors_in_the_middle_of_a_capture(void **state) {
  (void)state;
  static const struct {
    const char *fail, *at, *call;
    tb_status status;
  } cases[] = {
      {NULL, "3", "cuLaunchKernel of tb_cu_softmax_f32_rows for node 'softmax' (Softmax)", TB_ERR_DRIVER},
      {"capture", NULL, "cuStreamBeginCapture_v2 failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS", TB_ERR_DRIVER},
      {"end_capture", NULL, "cuStreamEndCapture failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS", TB_ERR_DRIVER},
      {"instantiate", NULL, "cuGraphInstantiateWithFlags failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS", TB_ERR_DRIVER},
      {"graph_launch", NULL, "cuGraphLaunch failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS", TB_ERR_DRIVER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rig r;
    TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
    ((void (*)(void))fake_symbol("fake_cuda_launch_reset"))();
    if (cases[i].fail) setenv("FAKE_CUDA_FAIL", cases[i].fail, 1);
    if (cases[i].at) setenv("FAKE_CUDA_LAUNCH_FAIL_AT", cases[i].at, 1);
    tb_tensor *out[2] = {NULL, NULL};
    assert_int_equal(rig_run(&r, r.prepared, 2, 1, 2, out), cases[i].status);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].call);
    assert_null(out[0]);
    assert_null(out[1]);
    unsetenv("FAKE_CUDA_FAIL");
    unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
    assert_int_equal(fake_int("fake_cuda_live_graphs"), cases[i].fail && strcmp(cases[i].fail, "graph_launch") == 0 ? 1 : 0);
    assert_true(tb_prepared_graph_capture(r.prepared, NULL)); /* a driver error does not turn graphs off */
    expect_values(&r, 2, 1, 2);
    expect_values(&r, 2, 2, 2);
    assert_int_equal(counts(&r).replays, 1);
    rig_close(&r);
  }
}

/* The device's values in one planned arena of the caching allocator: the same addresses every run, nothing
 * allocated for them after the first (without a graph, so the executor runs each time). */
static void device_values_live_in_one_planned_arena(void **state) {
  (void)state;
  const char *names[1] = {"batch"};
  const int64_t values[1] = {3};
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2, .no_graph_capture = true, .dim_count = 1,
                          .dim_names = names, .dim_values = values};
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), &o));
  const tb_exec *e = r.prepared->exec;
  assert_non_null(e->darena); /* planned at prepare: every shape is known */
  /* r [3,6], a [3,6], m [3,6] (s and y are outputs, never planned): two buffers in turn, 2 x 72 bytes rounded */
  assert_true(r.result->planned_peak_activation_bytes >= 2 * 72);
  assert_int_equal(r.result->planned_peak_activation_bytes, e->dplan.arena_bytes);
  const tb_block *arena = e->darena->storage->block;
  unsigned long long base = (unsigned long long)(uintptr_t)arena->mem.handle + arena->offset;
  unsigned long long first[5] = {0};
  for (int run = 0; run < 3; run++) {
    ((void (*)(void))fake_symbol("fake_cuda_launch_reset"))();
    tb_memory_stats before = {.size = sizeof before}, after = {.size = sizeof after};
    TB_ASSERT_OK(tb_backend_memory_stats(r.cuda, &before));
    expect_values(&r, 3, 1 + (unsigned)run, 2);
    TB_ASSERT_OK(tb_backend_memory_stats(r.cuda, &after));
    const fake_launch *(*at)(int) = (const fake_launch *(*)(int))fake_symbol("fake_cuda_launch_at");
    for (int k = 0; k < 5; k++) {
      const fake_launch *l = at(k);
      assert_non_null(l);
      unsigned long long out;
      int o_arg = strstr(l->name, "_broadcast") || strstr(l->name, "_flat") ? 2 : 1;
      memcpy(&out, l->args + l->arg_offset[o_arg], sizeof out);
      if (run == 0) first[k] = out;
      assert_int_equal(out, first[k]); /* the same address every run */
      bool in_arena = out >= base && out < base + e->dplan.arena_bytes;
      if (k == 0 || k == 1 || k == 3) assert_true(in_arena); /* relu, add, mul: planned */
      else assert_false(in_arena);                          /* softmax and the sum write graph outputs */
    }
    /* a run allocates only its input's copy and its two outputs (the CPU reference's are on the CPU) */
    assert_int_equal(after.num_allocs - before.num_allocs, 3);
  }
  rig_close(&r);
}

/* ---- Device time ----------------------------------------------------------------------------------- */

static void device_time_of_runs_and_nodes_from_events(void **state) {
  (void)state;
  rig r;
  TB_ASSERT_OK(rig_open(&r, device_model(false, false), NULL));
  double ms = -1;
  assert_int_equal(tb_prepared_device_ms(r.prepared, &ms), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "no run of this prepared model has been timed yet");
  tb_tensor *out[2] = {NULL};
  TB_ASSERT_OK(rig_run(&r, r.prepared, 2, 1, 2, out));
  tb_tensor_destroy(out[0]);
  tb_tensor_destroy(out[1]);
  TB_ASSERT_OK(tb_prepared_device_ms(r.prepared, &ms));
  assert_true(ms > 0); /* the fake's clock: 0.25 ms per event recorded between the two */
  assert_int_equal(tb_prepared_device_ms(r.reference, &ms), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "the cpu backend has no device timer");

  /* profiling: each device node timed by events around its launches (one record apart: 0.25 ms), no graph */
  TB_ASSERT_OK(tb_prepared_set_profiling(r.prepared, true));
  tcu_call_log_reset();
  TB_ASSERT_OK(rig_run(&r, r.prepared, 2, 1, 2, out));
  tb_tensor_destroy(out[0]);
  tb_tensor_destroy(out[1]);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 0);
  assert_int_equal(tcu_calls("cuLaunchKernel"), 5);
  assert_int_equal(tcu_calls("cuCtxSynchronize"), 0);
  size_t n = 0;
  const tb_node_profile *p = NULL;
  TB_ASSERT_OK(tb_prepared_profile(r.prepared, &n, &p));
  assert_int_equal(n, 5);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(p[i].placement, "cuda");
    if (p[i].total_ms != 0.25) fail_msg("node %s: %g ms, expected 0.25 (one fake event tick)", p[i].name, p[i].total_ms);
  }
  rig_close(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(one_stream_per_model_and_no_legacy_stream, setup, teardown),
      cmocka_unit_test_setup_teardown(weights_go_up_at_prepare_and_only_inputs_at_run, setup, teardown),
      cmocka_unit_test_setup_teardown(pinned_staging_buffers_are_reused, setup, teardown),
      cmocka_unit_test_setup_teardown(freed_blocks_are_held_for_the_graph, setup, teardown),
      cmocka_unit_test_setup_teardown(same_shapes_replay_one_graph, setup, teardown),
      cmocka_unit_test_setup_teardown(outputs_kept_by_the_caller_are_not_overwritten, setup, teardown),
      cmocka_unit_test_setup_teardown(alternating_shapes_replay_a_graph_each, setup, teardown),
      cmocka_unit_test_setup_teardown(a_new_shape_beyond_the_bound_evicts_the_oldest, setup, teardown),
      cmocka_unit_test_setup_teardown(a_graph_on_the_arena_outlives_the_next_plan, setup, teardown),
      cmocka_unit_test_setup_teardown(an_observed_run_with_new_shapes_forces_a_capture, setup, teardown),
      cmocka_unit_test_setup_teardown(what_cannot_be_captured_runs_without_a_graph, setup, teardown),
      cmocka_unit_test_setup_teardown(an_embedding_lookup_is_captured_and_replayed, setup, teardown),
      cmocka_unit_test_setup_teardown(replay_slots_are_sized_all_or_nothing, setup, teardown),
      cmocka_unit_test_setup_teardown(errors_in_the_middle_of_a_capture, setup, teardown),
      cmocka_unit_test_setup_teardown(device_values_live_in_one_planned_arena, setup, teardown),
      cmocka_unit_test_setup_teardown(device_time_of_runs_and_nodes_from_events, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
