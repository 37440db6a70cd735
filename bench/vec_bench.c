/* Time per element of the vectorised fp32 unary functions (src/backend/cpu/kernels/fast/vec/vec_math.h through
 * the vec_ops tables) on one thread: GELU (erf and tanh forms), Erf, Tanh, Sigmoid, Exp, SiLU, HardSwish and
 * HardSigmoid (alpha 1/6, beta 1/2: MobileNetV3's), on every table the CPU runs (avx512, avx2, portable),
 * over n = 16384 elements (in L1/L2) and n = 393216 (one BERT-base layer's 128 x 3072 intermediate). The
 * inputs are normal with mean -0.5 and standard deviation 1.5, the rough shape of a transformer's
 * pre-activations, so vectors mix small and large arguments. Prints the best
 * of 15 timed runs (after 3 warm-ups) in ns per element and in cycles per element at the given GHz. The
 * peer, in the same run: oneDNN's eltwise primitive on one thread (gelu_erf, gelu_tanh, tanh, logistic,
 * exp; it has no erf) when the bench was built with libdnnl (TB_HAVE_DNNL), as a row "onednn" and, on our
 * rows, the ratio oneDNN time / ours (above 1: ours is faster).
 * Usage: vec_bench [GHz] (default 4.0; only scales the cycles column) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef TB_HAVE_DNNL
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#endif
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "core/convert_features.h"
#include "tensorbridge/device.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A fixed-seed normal sample (Box-Muller on a 64-bit LCG), the same on every run. */
static void fill_normal(float *x, int64_t n, double mean, double sd) {
  uint64_t s = 0x9e3779b97f4a7c15u;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005u + 1442695040888963407u;
    double u1 = ((double)(s >> 11) + 1.0) * 0x1p-53;
    s = s * 6364136223846793005u + 1442695040888963407u;
    double u2 = (double)(s >> 11) * 0x1p-53;
    x[i] = (float)(mean + sd * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
  }
}

static bool table_runs(int p) {
  uint64_t hw = tb_convert_hardware_features(), fma = TB_FEATURE_BIT(TB_FEATURE_FMA);
  uint64_t need = p == 0   ? TB_FEATURE_BIT(TB_FEATURE_AVX512F) | fma
                  : p == 1 ? TB_FEATURE_BIT(TB_FEATURE_AVX2) | fma
                           : 0;
  return (hw & need) == need;
}

/* Seconds per element of oneDNN's eltwise `alg` over x[0..n) into y, best of 15 after 3 warm-ups, on
 * one thread; 0 when this build has no oneDNN, the function has none (alg < 0) or a call fails. */
static double onednn_per_elem(int alg, const float *x, float *y, int64_t n, int reps) {
#ifdef TB_HAVE_DNNL
  if (alg < 0) return 0;
  void (*set_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (set_threads) set_threads(1);
  double best = 0;
  dnnl_engine_t engine = NULL;
  dnnl_stream_t stream = NULL;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_t prim = NULL;
  dnnl_memory_t mx = NULL, my = NULL;
  dnnl_memory_desc_t md;
  dnnl_dims_t dims = {n};
  dnnl_eltwise_desc_t desc;
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) == dnnl_success &&
      dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) == dnnl_success &&
      dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_f32, dnnl_a) == dnnl_success &&
      dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, (dnnl_alg_kind_t)alg, &md, 0.0f, 0.0f) ==
          dnnl_success &&
      dnnl_primitive_desc_create(&pd, &desc, NULL, engine, NULL) == dnnl_success &&
      dnnl_primitive_create(&prim, pd) == dnnl_success &&
      dnnl_memory_create(&mx, &md, engine, (void *)x) == dnnl_success &&
      dnnl_memory_create(&my, &md, engine, y) == dnnl_success) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}};
    best = 1e30;
    for (int run = 0; run < 18 && best > 0; run++) {
      double t0 = now();
      for (int r = 0; r < reps; r++)
        if (dnnl_primitive_execute(prim, stream, 2, args) != dnnl_success || dnnl_stream_wait(stream) != dnnl_success)
          best = 0;
      double t = (now() - t0) / ((double)reps * (double)n);
      if (run >= 3 && best > 0 && t < best) best = t;
    }
  }
  if (mx) dnnl_memory_destroy(mx);
  if (my) dnnl_memory_destroy(my);
  if (prim) dnnl_primitive_destroy(prim);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (stream) dnnl_stream_destroy(stream);
  if (engine) dnnl_engine_destroy(engine);
  return best;
#else
  (void)alg, (void)x, (void)y, (void)n, (void)reps;
  return 0;
#endif
}

#ifdef TB_HAVE_DNNL
#define PEER(alg) (int)(alg)
#else
#define PEER(alg) (-1)
#endif

int main(int argc, char **argv) {
  double ghz = 4.0;
  char *end = NULL;
  if (argc > 2 ||
      (argc == 2 && ((ghz = strtod(argv[1], &end)), end == argv[1] || *end || !(ghz >= 0.1 && ghz <= 10)))) {
    fprintf(stderr, "vec_bench: the clock must be one number of GHz in 0.1..10 (got '%s'); usage: vec_bench [GHz]\n",
            argc > 2 ? argv[2] : argv[1]);
    return 2;
  }
  static const struct {
    vec_unop op;
    const char *name;
    int peer; /* oneDNN's eltwise algorithm, -1: none */
    float p0, p1; /* the op's parameters (HardSigmoid: alpha, beta) */
  } ops[] = {{VEC_GELU_ERF, "gelu(erf)", PEER(dnnl_eltwise_gelu_erf), 0, 0},
             {VEC_GELU_TANH, "gelu(tanh)", PEER(dnnl_eltwise_gelu_tanh), 0, 0},
             {VEC_ERF, "erf", -1, 0, 0},
             {VEC_TANH, "tanh", PEER(dnnl_eltwise_tanh), 0, 0},
             {VEC_SIGMOID, "sigmoid", PEER(dnnl_eltwise_logistic), 0, 0},
             {VEC_EXP, "exp", PEER(dnnl_eltwise_exp), 0, 0},
             {VEC_SILU, "silu", -1, 0, 0},
             {VEC_HARD_SWISH, "hardswish", -1, 0, 0},
             {VEC_HARD_SIGMOID, "hardsigm", -1, 1.0f / 6.0f, 0.5f}};
  static const int64_t sizes[] = {16384, 393216};
  const vec_ops *const tables[3] = {&tb_vec_ops_avx512, &tb_vec_ops_avx2, &tb_vec_ops_portable};
  float *x = malloc(393216 * sizeof(float)), *y = malloc(393216 * sizeof(float));
  if (!x || !y) return 1;
  fill_normal(x, 393216, -0.5, 1.5);
  printf("%-10s %-9s %8s %10s %10s %12s\n", "function", "table", "n", "ns/elem", "cyc/elem", "oneDNN/ours");
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      int64_t n = sizes[s];
      int reps = (int)(2000000 / n) + 1;
      double peer = onednn_per_elem(ops[k].peer, x, y, n, reps);
      if (peer > 0)
        printf("%-10s %-9s %8lld %10.3f %10.2f\n", ops[k].name, "onednn", (long long)n, peer * 1e9, peer * 1e9 * ghz);
      for (int p = 0; p < 3; p++) {
        if (!table_runs(p)) continue;
        double best = 1e30;
        for (int run = 0; run < 18; run++) {
          double t0 = now();
          for (int r = 0; r < reps; r++) tables[p]->unary_p(ops[k].op, ops[k].p0, ops[k].p1, x, y, n);
          double t = (now() - t0) / ((double)reps * (double)n);
          if (run >= 3 && t < best) best = t;
        }
        printf("%-10s %-9s %8lld %10.3f %10.2f", ops[k].name, tables[p]->name, (long long)n, best * 1e9,
               best * 1e9 * ghz);
        if (peer > 0) printf(" %12.2f", peer / best);
        printf("\n");
      }
    }
  free(x);
  free(y);
  return 0;
}
