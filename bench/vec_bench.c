/* Time per element of the vectorised fp32 unary functions (src/backend/cpu/kernels/fast/vec_math.h through
 * the vec_ops tables) on one thread: GELU (erf and tanh forms), Erf, Tanh, Sigmoid and Exp, on every table
 * the CPU runs (avx512, avx2, portable), over n = 16384 elements (in L1/L2) and n = 393216 (one BERT-base
 * layer's 128 x 3072 intermediate). The inputs are normal with mean -0.5 and standard deviation 1.5, the
 * rough shape of a transformer's pre-activations, so vectors mix small and large arguments. Prints the best
 * of 15 timed runs (after 3 warm-ups) in ns per element and in cycles per element at the given GHz.
 * Usage: vec_bench [GHz] (default 4.0; only scales the cycles column) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "backend/cpu/kernels/fast/vec_ops.h"
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

int main(int argc, char **argv) {
  double ghz = argc > 1 ? atof(argv[1]) : 4.0;
  if (!(ghz > 0.1 && ghz < 10)) {
    fprintf(stderr, "vec_bench: GHz must be in 0.1..10 (got %s)\n", argv[1]);
    return 2;
  }
  static const struct {
    vec_unop op;
    const char *name;
  } ops[] = {{VEC_GELU_ERF, "gelu(erf)"}, {VEC_GELU_TANH, "gelu(tanh)"}, {VEC_ERF, "erf"},
             {VEC_TANH, "tanh"},          {VEC_SIGMOID, "sigmoid"},        {VEC_EXP, "exp"}};
  static const int64_t sizes[] = {16384, 393216};
  const vec_ops *const tables[3] = {&tb_vec_ops_avx512, &tb_vec_ops_avx2, &tb_vec_ops_portable};
  float *x = malloc(393216 * sizeof(float)), *y = malloc(393216 * sizeof(float));
  if (!x || !y) return 1;
  fill_normal(x, 393216, -0.5, 1.5);
  printf("%-10s %-9s %8s %10s %10s\n", "function", "table", "n", "ns/elem", "cyc/elem");
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    for (int p = 0; p < 3; p++) {
      if (!table_runs(p)) continue;
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int64_t n = sizes[s];
        int reps = (int)(2000000 / n) + 1;
        double best = 1e30;
        for (int run = 0; run < 18; run++) {
          double t0 = now();
          for (int r = 0; r < reps; r++) tables[p]->unary(ops[k].op, x, y, n);
          double t = (now() - t0) / ((double)reps * (double)n);
          if (run >= 3 && t < best) best = t;
        }
        printf("%-10s %-9s %8lld %10.3f %10.2f\n", ops[k].name, tables[p]->name, (long long)n, best * 1e9,
               best * 1e9 * ghz);
      }
    }
  free(x);
  free(y);
  return 0;
}
