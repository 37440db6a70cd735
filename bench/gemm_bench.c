/* fp32 GEMM throughput (issue 5): TensorBridge's blocked GEMM (src/backend/cpu/kernels/fast/) on each
 * path the CPU has, single-threaded, at 1024^3 and 2048^3 (or the sizes given as arguments); the
 * AVX-512 FMA peak of this core measured by a loop of independent FMAs; and OpenBLAS's cblas_sgemm as the
 * peer when libopenblas.so.0 can be opened (OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS default to
 * Cooperlake and 1). Prints GFLOP/s (best of several runs after a warm-up) and the ratios.
 * Usage: gemm_bench [N ...] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/cpu/kernels/fast/gemm_f32.h"
#include "core/convert_features.h"

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { PEAK_ACC = 24 };

/* 24 independent zmm FMA chains (more than latency x pipes on any AVX-512 core), 2*16 flops each. */
__attribute__((target("avx512f,fma"))) static double avx512_peak_gflops(void) {
  __m512 acc[PEAK_ACC];
  for (int i = 0; i < PEAK_ACC; i++) acc[i] = _mm512_set1_ps((float)i * 1e-3f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  const long iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now();
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 24
      for (int i = 0; i < PEAK_ACC; i++) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    }
    double dt = now() - t0, g = (double)iters * PEAK_ACC * 32 / dt * 1e-9;
    if (g > best) best = g;
  }
  float sink = 0;
  for (int i = 0; i < PEAK_ACC; i++) sink += _mm512_reduce_add_ps(acc[i]);
  if (sink == 12345.0f) printf("(%g)\n", sink); /* keeps the chains alive */
  return best;
}

static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
}

typedef struct runner {
  const char *name;
  tb_gemm_path path;
  sgemm_fn blas;
} runner;

static double gflops(const runner *r, int n, const float *a, const float *b, float *c, int reps) {
  double best = 1e30;
  for (int rep = 0; rep <= reps; rep++) { /* rep 0 warms up */
    double t0 = now();
    if (r->blas) r->blas(101, 111, 111, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    else if (!tb_gemm_f32(r->path, false, false, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n)) return 0;
    double dt = now() - t0;
    if (rep && dt < best) best = dt;
  }
  return 2.0 * n * (double)n * n / best * 1e-9;
}

int main(int argc, char **argv) {
  int sizes[8] = {1024, 2048}, n_sizes = 2;
  if (argc > 1) {
    n_sizes = 0;
    for (int i = 1; i < argc && n_sizes < 8; i++) sizes[n_sizes++] = atoi(argv[i]);
  }
  setenv("OPENBLAS_CORETYPE", "Cooperlake", 0);
  setenv("OPENBLAS_NUM_THREADS", "1", 0);
  tb_gemm_path best = tb_gemm_path_for(tb_convert_features());
  runner runners[4];
  int n_runners = 0;
  static const char *const names[] = {"tb portable", "tb avx2", "tb avx512"};
  for (int p = (int)best; p >= 0; p--) runners[n_runners++] = (runner){names[p], (tb_gemm_path)p, NULL};
  void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  sgemm_fn sgemm = blas ? (sgemm_fn)(uintptr_t)dlsym(blas, "cblas_sgemm") : NULL;
  if (sgemm) runners[n_runners++] = (runner){"openblas", TB_GEMM_PORTABLE, sgemm};
  else printf("OpenBLAS: libopenblas.so.0 not found (apt-get install libopenblas0-pthread); no peer column\n");
  double peak = best == TB_GEMM_AVX512 ? avx512_peak_gflops() : 0;
  printf("single thread; AVX-512 FMA peak (24 independent zmm FMA chains): %.1f GFLOP/s\n", peak);
  printf("%-6s %-12s %10s %8s %12s\n", "N", "kernel", "GFLOP/s", "of peak", "vs openblas");
  for (int s = 0; s < n_sizes; s++) {
    int n = sizes[s];
    if (n <= 0) continue;
    size_t nn = (size_t)n * (size_t)n;
    float *a = aligned_alloc(64, nn * 4), *b = aligned_alloc(64, nn * 4), *c = aligned_alloc(64, nn * 4);
    if (!a || !b || !c) return 1;
    fill(a, nn, 1);
    fill(b, nn, 2);
    double g[4] = {0}, blas_g = 0;
    for (int r = 0; r < n_runners; r++) {
      int reps = runners[r].path == TB_GEMM_PORTABLE && !runners[r].blas ? 1 : (n <= 1024 ? 5 : 3);
      g[r] = gflops(&runners[r], n, a, b, c, reps);
      if (runners[r].blas) blas_g = g[r];
    }
    for (int r = 0; r < n_runners; r++) {
      char of_peak[16] = "-", vs[16] = "-";
      if (peak > 0) snprintf(of_peak, sizeof of_peak, "%.0f%%", 100 * g[r] / peak);
      if (blas_g > 0) snprintf(vs, sizeof vs, "%.2fx", g[r] / blas_g);
      printf("%-6d %-12s %10.1f %8s %12s\n", n, runners[r].name, g[r], of_peak, vs);
    }
    free(a);
    free(b);
    free(c);
  }
  if (blas) dlclose(blas);
  return 0;
}
