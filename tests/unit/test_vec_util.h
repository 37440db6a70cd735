/* Helpers for the tests of the level-2 vectorised kernels (src/backend/cpu/kernels/fast/vec/vec_*.c): the three
 * registry entries of a kernel, random data, running an entry directly (with and without a 2-thread pool)
 * and comparing every output with the level-0 reference kernel's under a stated tolerance. */
#ifndef TB_TEST_VEC_UTIL_H
#define TB_TEST_VEC_UTIL_H
#include <math.h>
#include "backend/cpu/kernels/fast/vec/vec_registry.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_op_harness.h"

/* avx512, avx2, portable */
#define VT_ENTRIES(s) \
  { &tb_kernel_vec_##s##_avx512, &tb_kernel_vec_##s##_avx2, &tb_kernel_vec_##s##_portable }
static const char *const vt_path_names[3] = {"avx512", "avx2", "portable"};

static tb_pool *vt_pool;

static inline int vt_setup(void **state) {
  (void)state;
  tbt_clear_env();
  return tb_pool_create(2, &vt_pool) == TB_OK ? 0 : -1;
}
static inline int vt_teardown(void **state) {
  (void)state;
  tb_pool_destroy(vt_pool);
  vt_pool = NULL;
  return 0;
}

/* Whether this CPU can run the entry (every path does on an AVX-512 machine such as the CI's). */
static inline bool vt_runnable(const tb_kernel *k) {
  return (k->cpu_features & ~tb_convert_hardware_features()) == 0;
}
/* The fastest of the three entries this CPU can run (the portable one always can). */
static inline const tb_kernel *vt_fastest(const tb_kernel *const *entries) {
  return vt_runnable(entries[0]) ? entries[0] : vt_runnable(entries[1]) ? entries[1] : entries[2];
}

/* Deterministic values uniform in [lo, hi). */
static inline void vt_fill(float *x, int64_t n, uint64_t seed, float lo, float hi) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 12345;
  for (int64_t i = 0; i < n; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    double u = (double)((s * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 24);
    x[i] = (float)(lo + (hi - lo) * u);
  }
}

/* A CPU tensor of this shape filled from vt_fill. */
static inline tb_tensor *vt_random(toh *t, size_t ndim, const int64_t *shape, uint64_t seed, float lo, float hi) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= shape[i];
  float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
  assert_non_null(x);
  vt_fill(x, n, seed, lo, hi);
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, ndim, shape, x);
  free(x);
  return r;
}

static inline float *vt_data(tb_tensor *x) { return tb_tensor_host_data(x); }

/* Run entry k directly on t's node: outputs start NULL (the kernel allocates them). */
static inline void vt_run(toh *t, const tb_kernel *k, tb_tensor **in, tb_tensor **out, tb_pool *pool) {
  for (size_t i = 0; i < t->n_out; i++) out[i] = NULL;
  tb_kernel_ctx ctx = {.graph = t->graph,
                       .node = toh_node(t),
                       .n_inputs = t->n_in,
                       .inputs = in,
                       .n_outputs = t->n_out,
                       .outputs = out,
                       .backend = t->cpu,
                       .threads = tb_pool_threads(pool),
                       .pool = pool};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  TB_ASSERT_OK(k->run(&ctx));
}

/* got matches ref in shape; NaN where ref is NaN, the same infinity, else |got - ref| <= atol + rtol |ref|. */
static inline void vt_assert_close(const tb_tensor *got, const tb_tensor *ref, double rtol, double atol,
                                   const char *what) {
  assert_non_null(got);
  toh_assert_tensor(got, tb_tensor_dtype(ref), tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++) {
    bool ok = isnan(r[i])   ? isnan(g[i])
              : isinf(r[i]) ? g[i] == r[i]
                            : fabs((double)g[i] - r[i]) <= atol + rtol * fabs((double)r[i]);
    if (!ok)
      fail_msg("%s: element %lld is %.9g, reference %.9g (rtol %g, atol %g)", what, (long long)i, g[i], r[i], rtol,
               atol);
  }
}

/* Every runnable entry, without and with the 2-thread pool, against the reference kernel on these inputs:
 * each of the node's present outputs within (rtol, atol). */
static inline void vt_check(toh *t, const tb_kernel *const *entries, tb_tensor **in, double rtol, double atol,
                            const char *what) {
  tb_tensor *ref[TOH_MAX], *got[TOH_MAX];
  TB_ASSERT_OK(toh_run_tensors(t, in, ref, false));
  for (int p = 0; p < 3; p++) {
    if (!vt_runnable(entries[p])) continue;
    for (int threaded = 0; threaded < 2; threaded++) {
      vt_run(t, entries[p], in, got, threaded ? vt_pool : NULL);
      for (size_t o = 0; o < t->n_out; o++) {
        if (!ref[o]) {
          assert_null(got[o]);
          continue;
        }
        char label[200];
        snprintf(label, sizeof label, "%s on %s%s, output %zu", what, vt_path_names[p], threaded ? " (2 threads)" : "",
                 o);
        vt_assert_close(got[o], ref[o], rtol, atol, label);
      }
      toh_clear(got, t->n_out);
    }
  }
  toh_clear(ref, t->n_out);
}

/* The kernel tb_cpu_kernel_find picks for t's node on these inputs at `level` under TB_CPU_FEATURES=mask. */
static inline const tb_kernel *vt_pick(toh *t, tb_tensor **in, int level, const char *mask) {
  tb_value_type types[TOH_MAX];
  const tb_value_type *pt[TOH_MAX] = {0};
  for (size_t i = 0; i < t->n_in; i++)
    if (in[i]) {
      types[i] = toh_type_of(in[i]);
      pt[i] = &types[i];
    }
  if (mask)
    setenv("TB_CPU_FEATURES", mask, 1);
  else
    unsetenv("TB_CPU_FEATURES");
  uint64_t features = tb_convert_features();
  unsetenv("TB_CPU_FEATURES");
  return tbt_kernel_find(t->graph, toh_node(t), pt, level, features);
}

/* The default pick is the AVX-512 entry, then AVX2 under -avx512f, portable under -avx2, the reference
 * at level 1 (when the CPU has the features: checked on this machine and the CI's). */
static inline void vt_assert_picks(toh *t, tb_tensor **in, const tb_kernel *const *entries) {
  uint64_t hw = tb_convert_hardware_features();
  if ((entries[0]->cpu_features & ~hw) == 0) assert_ptr_equal(vt_pick(t, in, 2, NULL), entries[0]);
  if ((entries[1]->cpu_features & ~hw) == 0) assert_ptr_equal(vt_pick(t, in, 2, "-avx512f"), entries[1]);
  assert_ptr_equal(vt_pick(t, in, 2, "-avx2"), entries[2]);
  const tb_kernel *ref = vt_pick(t, in, 1, NULL);
  assert_non_null(ref);
  assert_int_equal(ref->level, 0);
}

/* A node of a "tb" operator (toh_add only knows the ONNX domain). */
static inline void vt_add_tb(toh *t, const char *op, size_t n_in, size_t n_out, const tb_attr *attrs, size_t n_attrs) {
  int ins[TOH_MAX], outs[TOH_MAX];
  char name[32];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(name, sizeof name, "in%zu", i);
    ins[i] = tb_graph_value(t->graph, name);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(name, sizeof name, "out%zu", i);
    outs[i] = tb_graph_value(t->graph, name);
  }
  t->node = tb_graph_add_node(t->graph, "n0", op, "tb", ins, n_in, outs, n_out, attrs, n_attrs);
  assert_true(t->node >= 0);
  toh_node(t)->opset = 1;
  toh_node(t)->def = tb_op_find("tb", op, 1);
  assert_non_null(toh_node(t)->def);
  t->n_in = n_in;
  t->n_out = n_out;
}

#endif
