/* Shared by the Vulkan execution tests: open vulkan:0 (lavapipe) with the Khronos validation layer on,
 * add a one-node graph in any domain, run a node through the backend's find_kernel / prepare / run on the
 * device with the inputs copied there (value inputs stay on the CPU), and compare each output with the
 * level-0 CPU reference: |device - ref| <= atol + rtol * |ref|. */
#ifndef TB_TEST_VULKAN_EXEC_UTIL_H
#define TB_TEST_VULKAN_EXEC_UTIL_H
#include <math.h>
#include "backend/backend_impl.h"
#include "backend/vulkan/vk_backend.h"
#include "core/convert_scalar.h"
#include "test_op_harness.h"

#define VKX_RTOL 1e-4
#define VKX_ATOL 1e-5

static inline tb_backend *vkx_open(void) {
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  tb_backend *b = NULL;
  tb_status st = tb_backend_create("vulkan:0", &b);
  if (st != TB_OK) fail_msg("vulkan:0 did not open: %s", tb_last_error());
  if (!strstr(b->device->name, "llvmpipe")) fail_msg("vulkan:0 is %s, not lavapipe (llvmpipe)", b->device->name);
  assert_true(tb_vk_validation_counting(b->state));
  return b;
}

static inline void vkx_assert_quiet(tb_backend *b) {
  char first[512];
  unsigned n = tb_vk_validation_messages(b->state, first, sizeof first);
  if (n) fail_msg("the validation layer reported %u message(s); first: %s", n, first);
}

static inline void vkx_close(tb_backend *b) {
  vkx_assert_quiet(b);
  tb_backend_destroy(b);
  char first[512];
  unsigned n = tb_vk_closed_validation_messages(first, sizeof first);
  if (n) fail_msg("the validation layer reported %u message(s) by device destruction; first: %s", n, first);
}

/* toh_add for an op in `domain` ("" or "tb"). */
static inline void vkx_add(toh *t, const char *domain, const char *op, int opset, size_t n_in, unsigned omit, size_t n_out,
                           const tb_attr *attrs, size_t n_attrs) {
  if (!domain[0]) {
    toh_add(t, op, opset, n_in, omit, n_out, 0, attrs, n_attrs);
    return;
  }
  int ins[TOH_MAX], outs[TOH_MAX];
  char name[32];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = (omit >> i) & 1u ? -1 : tb_graph_value(t->graph, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = tb_graph_value(t->graph, name);
  }
  t->node = tb_graph_add_node(t->graph, "n0", op, domain, ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(t->node >= 0);
  toh_node(t)->opset = opset;
  toh_node(t)->def = tb_op_find(domain, op, opset);
  if (!toh_node(t)->def) fail_msg("no definition of %s::%s at opset %d", domain, op, opset);
  t->n_in = n_in;
  t->n_out = n_out;
}

/* Deterministic values in [lo, hi). */
static inline void vkx_fill(float *x, size_t n, unsigned seed, float lo, float hi) {
  uint32_t s = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = lo + (hi - lo) * (float)((s >> 8) & 0xffffff) / 16777216.0f;
  }
}

static inline double vkx_value(const tb_tensor *x, const void *data, int64_t i) {
  switch (tb_tensor_dtype(x)) {
    case TB_DTYPE_F32: return ((const float *)data)[i];
    case TB_DTYPE_F16: return tb_minifloat_to_float(TB_MINIFLOAT_F16, ((const uint16_t *)data)[i]);
    case TB_DTYPE_I64: return (double)((const int64_t *)data)[i];
    default: return ((const int32_t *)data)[i];
  }
}

/* Run the node on the device and compare with the reference (t->in set with toh_input). prealloc: the
 * outputs exist before the run (as when inference knows them), else the kernel makes them. Runs twice to
 * check that the second run reuses the node's descriptor sets and pipelines. */
static inline void vkx_check(toh *t, tb_backend *vk, bool prealloc, double rtol, double atol) {
  TB_ASSERT_OK(toh_run_owned(t, false));
  tb_node *n = toh_node(t);
  tb_value_type types[TOH_MAX];
  const tb_value_type *ptypes[TOH_MAX] = {0};
  tb_tensor *dev_in[TOH_MAX] = {0}, *none[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++) {
    if (!t->in[i]) continue;
    types[i] = toh_type_of(t->in[i]);
    ptypes[i] = &types[i];
    t->graph->values[n->inputs[i]].type = types[i];
    if (n->def->value_inputs & (1u << i)) {
      dev_in[i] = t->in[i];
      continue;
    }
    TB_ASSERT_OK(tb_tensor_create(vk, tb_tensor_dtype(t->in[i]), tb_tensor_ndim(t->in[i]), tb_tensor_shape(t->in[i]), &dev_in[i]));
    TB_ASSERT_OK(tb_tensor_copy(dev_in[i], t->in[i]));
  }
  const tb_kernel *k = tbt_backend_kernel_find(vk, t->graph, n, ptypes);
  if (!k) fail_msg("no Vulkan kernel for %s", n->op_type);
  void *state = NULL;
  tb_kernel_ctx pctx = {t->graph, n, t->n_in, none, t->n_out, NULL, vk, NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&pctx, t->graph, n, ptypes);
  tb_status st = k->prepare ? k->prepare(&pctx, &state) : TB_OK; /* Constant has no state */
  if (st != TB_OK) fail_msg("prepare failed: %s", tb_last_error());
  tb_vk_compute_stats before, after;
  for (int round = 0; round < 2; round++) {
    tb_tensor *outs[TOH_MAX] = {0};
    for (size_t o = 0; o < t->n_out && prealloc; o++)
      if (t->out[o])
        TB_ASSERT_OK(tb_tensor_create(vk, tb_tensor_dtype(t->out[o]), tb_tensor_ndim(t->out[o]), tb_tensor_shape(t->out[o]), &outs[o]));
    TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &before));
    tb_kernel_ctx ctx = {t->graph, n, t->n_in, dev_in, t->n_out, outs, vk, NULL, NULL, 1, NULL, state, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
    (void)tbt_kernel_bind(&ctx, t->graph, n, ptypes);
    st = k->run(&ctx);
    if (st != TB_OK) fail_msg("%s on vulkan:0 failed: %s", n->op_type, tb_last_error());
    TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &after));
    assert_int_equal(after.descriptor_pools, before.descriptor_pools);
    assert_int_equal(after.pipelines_created, before.pipelines_created);
    for (size_t o = 0; o < t->n_out; o++) {
      if (!t->out[o]) continue;
      assert_non_null(outs[o]);
      toh_assert_tensor(outs[o], tb_tensor_dtype(t->out[o]), tb_tensor_ndim(t->out[o]), tb_tensor_shape(t->out[o]));
      int64_t numel = tb_tensor_numel(t->out[o]);
      size_t bytes = tb_tensor_nbytes(outs[o]);
      void *got = malloc(bytes ? bytes : 1);
      TB_ASSERT_OK(tb_tensor_copy_to_host(outs[o], got, bytes));
      const void *want = tb_tensor_host_data(t->out[o]);
      for (int64_t i = 0; i < numel; i++) {
        double g = vkx_value(outs[o], got, i), w = vkx_value(t->out[o], want, i);
        bool ok = (isnan(w) && isnan(g)) || (isinf(w) && g == w) || fabs(g - w) <= atol + rtol * fabs(w);
        if (!ok) fail_msg("%s output %zu element %lld: vulkan %.9g, CPU reference %.9g", n->op_type, o, (long long)i, g, w);
      }
      free(got);
    }
    toh_clear(outs, TOH_MAX);
  }
  assert_true(after.dispatches > 0);
  if (k->release) k->release(state);
  for (size_t i = 0; i < t->n_in; i++)
    if (dev_in[i] != t->in[i]) tb_tensor_destroy(dev_in[i]);
}

#endif
