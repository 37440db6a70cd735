/* fp32 GEMM throughput (issue 5): TensorBridge's blocked GEMM (src/backend/cpu/kernels/fast/, the
 * tb_gemm_f32_run driver) on each path the CPU has, on 1 thread and on 2 threads (a tb_pool), against the
 * AVX-512 FMA peak measured here by independent FMA chains (on one thread, and on two at once for the
 * 2-thread column), with OpenBLAS's cblas_sgemm (when libopenblas.so.0 opens; OPENBLAS_CORETYPE defaults
 * to Cooperlake) and oneDNN's dnnl_sgemm (when the bench was built with libdnnl, TB_BENCH_HAVE_DNNL) as
 * peers, each on 1 and 2 threads; "tb packed B" is the best path with B packed once beforehand (what
 * MatMul/Gemm do with constant weights, at prepare), the others pack per call. Shapes M x N x K: 1024^3, 2048^3 and transformer ones (128 tokens by
 * 768 / 3072 features), or those given as arguments ("M" for a cube or "MxNxK"). Prints GFLOP/s (best
 * of several runs after a warm-up) and the share of the peak for that thread count.
 * Usage: gemm_bench [N | MxNxK ...] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#ifdef TB_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);
typedef void (*set_threads_fn)(int);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { PEAK_ACC = 24, MAX_SHAPES = 16 };

/* 24 independent zmm FMA chains (more than latency x pipes on any AVX-512 core), 2*16 flops each. */
__attribute__((target("avx512f,fma"))) static double avx512_peak_gflops(void) {
  __m512 acc[PEAK_ACC];
  for (int i = 0; i < PEAK_ACC; i++) acc[i] = _mm512_set1_ps((float)i * 1e-3f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  const long iters = 2000000;
  double best = 0;
  for (int rep = 0; rep < 15; rep++) { /* best of many short runs: other processes share the cores */
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

static void peak_task(void *ctx, size_t begin, size_t end) {
  double *g = ctx;
  for (size_t i = begin; i < end; i++) g[i] = avx512_peak_gflops();
}

/* The peak of `threads` threads measuring at once (their sum). */
static double peak_gflops(tb_pool *pool, int threads) {
  double g[2] = {0, 0};
  if (threads == 1) return avx512_peak_gflops();
  tb_pool_parallel_for(pool, 2, peak_task, g);
  return g[0] + g[1];
}

static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
}

typedef enum kind { TB, TB_PACKED_B, OPENBLAS, DNNL } kind;

typedef struct runner {
  const char *name;
  kind kind;
  tb_gemm_path path;
  int threads;
} runner;

typedef struct peers {
  sgemm_fn openblas;
  set_threads_fn openblas_threads, omp_threads;
} peers;

static bool run_once(const runner *r, const peers *p, tb_pool *pool, int m, int n, int k, const float *a,
                     const float *b, const tb_gemm_packed *packed_b, float *c) {
  if (r->kind == OPENBLAS) {
    p->openblas(101, 111, 111, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    return true;
  }
#ifdef TB_BENCH_HAVE_DNNL
  if (r->kind == DNNL) return dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n) == dnnl_success;
#endif
  tb_gemm_operand oa = {.data = a, .ld = k}, ob = {.data = b, .ld = n};
  if (r->kind == TB_PACKED_B) ob = (tb_gemm_operand){.packed = packed_b};
  return tb_gemm_f32_run(r->path, m, n, k, 1.0f, &oa, &ob, 0.0f, c, n, NULL, r->threads > 1 ? pool : NULL);
}

static double gflops(const runner *r, const peers *p, tb_pool *pool, int m, int n, int k, const float *a,
                     const float *b, float *c) {
  if (r->kind == OPENBLAS && p->openblas_threads) p->openblas_threads(r->threads);
  if (r->kind == DNNL && p->omp_threads) p->omp_threads(r->threads);
  double flops = 2.0 * m * (double)n * k, best = 1e30, spent = 0;
  int reps = r->kind == TB && r->path == TB_GEMM_PORTABLE ? 2 : 6;
  tb_gemm_packed *packed_b = NULL; /* B packed once beforehand, as MatMul/Gemm do with constant weights */
  if (r->kind == TB_PACKED_B) {
    tb_gemm_operand ob = {.data = b, .ld = n};
    if (!(packed_b = tb_gemm_pack_b(r->path, &ob, k, n))) return 0;
  }
  for (int rep = 0; rep <= reps || (spent < 0.3 && rep < 200); rep++) { /* rep 0 warms up */
    double t0 = now();
    if (!run_once(r, p, pool, m, n, k, a, b, packed_b, c)) break;
    double dt = now() - t0;
    if (rep && dt < best) best = dt;
    if (rep) spent += dt;
  }
  tb_gemm_packed_free(packed_b);
  return best < 1e30 ? flops / best * 1e-9 : 0;
}

static int parse_shapes(int argc, char **argv, int shapes[][3]) {
  static const int defaults[][3] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {128, 768, 768},
                                    {128, 3072, 768},   {128, 768, 3072},   {128, 2304, 768}};
  int count = 0;
  if (argc <= 1) {
    memcpy(shapes, defaults, sizeof defaults);
    return (int)(sizeof defaults / sizeof defaults[0]);
  }
  for (int i = 1; i < argc && count < MAX_SHAPES; i++) {
    int m = 0, n = 0, k = 0, got = sscanf(argv[i], "%dx%dx%d", &m, &n, &k);
    if (got == 1) n = k = m;
    if ((got != 1 && got != 3) || m <= 0 || n <= 0 || k <= 0) {
      fprintf(stderr, "gemm_bench: '%s' is not N or MxNxK with positive sizes\n", argv[i]);
      return -1;
    }
    shapes[count][0] = m;
    shapes[count][1] = n;
    shapes[count++][2] = k;
  }
  return count;
}

int main(int argc, char **argv) {
  int shapes[MAX_SHAPES][3];
  int n_shapes = parse_shapes(argc, argv, shapes);
  if (n_shapes < 0) return 2;
  setenv("OPENBLAS_CORETYPE", "Cooperlake", 0);
  tb_pool *pool = NULL;
  if (tb_pool_create(2, &pool) != TB_OK) return 1;
  peers p = {0};
  void *blas = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (blas) {
    p.openblas = (sgemm_fn)(uintptr_t)dlsym(blas, "cblas_sgemm");
    p.openblas_threads = (set_threads_fn)(uintptr_t)dlsym(blas, "openblas_set_num_threads");
  }
  if (!p.openblas) printf("OpenBLAS: libopenblas.so.0 not found (apt-get install libopenblas0-pthread); no peer column\n");
  p.omp_threads = (set_threads_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  tb_gemm_path best = tb_gemm_path_for(tb_convert_features());
  runner runners[16];
  int n_runners = 0;
  static const char *const names[] = {"tb portable", "tb avx2", "tb avx512"};
  for (int t = 1; t <= 2; t++) {
    for (int path = (int)best; path >= 0; path--)
      if (t == 1 || path == (int)best) runners[n_runners++] = (runner){names[path], TB, (tb_gemm_path)path, t};
    runners[n_runners++] = (runner){"tb packed B", TB_PACKED_B, best, t};
    if (p.openblas) runners[n_runners++] = (runner){"openblas", OPENBLAS, TB_GEMM_PORTABLE, t};
#ifdef TB_BENCH_HAVE_DNNL
    runners[n_runners++] = (runner){"onednn", DNNL, TB_GEMM_PORTABLE, t};
#endif
  }
#ifndef TB_BENCH_HAVE_DNNL
  printf("oneDNN: built without libdnnl (install libdnnl-dev and reconfigure); no oneDNN column\n");
#endif
  double peak[3] = {0, 0, 0};
  if (best == TB_GEMM_AVX512) {
    peak[1] = peak_gflops(pool, 1);
    peak[2] = peak_gflops(pool, 2);
  }
  printf("AVX-512 FMA peak (24 independent zmm FMA chains): %.1f GFLOP/s on 1 thread, %.1f on 2\n", peak[1], peak[2]);
  printf("%-16s %-12s %7s %10s %8s\n", "MxNxK", "kernel", "threads", "GFLOP/s", "of peak");
  for (int s = 0; s < n_shapes; s++) {
    int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    float *a = aligned_alloc(64, ((size_t)m * k * 4 + 63) / 64 * 64), *b = aligned_alloc(64, ((size_t)k * n * 4 + 63) / 64 * 64);
    float *c = aligned_alloc(64, ((size_t)m * n * 4 + 63) / 64 * 64);
    if (!a || !b || !c) return 1;
    fill(a, (size_t)m * k, 1);
    fill(b, (size_t)k * n, 2);
    char shape[32];
    snprintf(shape, sizeof shape, "%dx%dx%d", m, n, k);
    for (int r = 0; r < n_runners; r++) {
      if (runners[r].kind == TB && runners[r].path == TB_GEMM_PORTABLE && (double)m * n * k > 2e9) continue;
      double g = gflops(&runners[r], &p, pool, m, n, k, a, b, c);
      char of_peak[16] = "-";
      if (peak[runners[r].threads] > 0) snprintf(of_peak, sizeof of_peak, "%.0f%%", 100 * g / peak[runners[r].threads]);
      printf("%-16s %-12s %7d %10.1f %8s\n", shape, runners[r].name, runners[r].threads, g, of_peak);
      fflush(stdout);
    }
    free(a);
    free(b);
    free(c);
  }
  if (blas) dlclose(blas);
  tb_pool_destroy(pool);
  return 0;
}
