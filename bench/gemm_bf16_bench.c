/* bf16 GEMM throughput (issue 5): TensorBridge's bf16 GEMM with fp32 accumulation
 * (src/backend/cpu/kernels/fast/gemm/gemm_bf16.h) at 1024^3 and 2048^3 (or the sizes given as arguments: N for N^3,
 * or MxNxK such as 128x3072x768, BERT's feed-forward product) on 1 and 2 threads, against
 *   - the peak of the path the library picks on this machine, measured on 1 and on 2 threads at once: on
 *     AMX (when tb_gemm_bf16_amx_ready) a loop of tdpbf16ps on four accumulator tiles (16384 flops each),
 *     else a loop of independent vdpbf16ps (64 flops each);
 *   - oneDNN's bf16 matmul (bf16 inputs, f32 output; the dnnl C primitive API), built in when CMake found
 *     libdnnl, its thread count set with omp_set_num_threads.
 * Two cases each: "fp32 in" (ours rounds fp32 A and B while packing; oneDNN gets bf16 A and B in plain
 * layout, converted before timing) and "B packed" (the weights case: ours packs B once, oneDNN reorders its
 * weights to the layout it picks, both before timing), and ours with B packed but cold (cycling over copies
 * of the packed B that outgrow the L3, as a model's weights are met). Prints GFLOP/s (the best run after a warm-up, runs
 * repeated for 1.5 s), % of the measured peak for that thread count, and the ratio ours / oneDNN. Single-thread
 * runs are timed in the thread's CPU time and 2-thread runs in wall time, since other processes may share
 * the machine.
 * Usage: gemm_bf16_bench [N | MxNxK ...] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#ifdef TB_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

/* The clock of a measurement: with 1 thread the calling thread's CPU time, so that other processes sharing
 * the machine do not count; with more, wall time (best of several runs). */
static double clock_for(int threads) {
  struct timespec ts;
  clock_gettime(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the vdpbf16ps peak ---- */

enum { PEAK_ACC = 24 };
static const long PEAK_ITERS = 5000000;

/* 24 independent accumulator chains (more than latency x pipes), 16 lanes x 2 products x 2 flops each. */
typedef struct peak_run {
  float sink;
  double gflops; /* this thread's flops over its CPU time */
} peak_run;

__attribute__((target("avx512f,avx512bw,avx512bf16"))) static void *peak_loop(void *arg) {
  peak_run *r = arg;
  double t0 = clock_for(1);
  __m512 acc[PEAK_ACC];
  for (int i = 0; i < PEAK_ACC; i++) acc[i] = _mm512_set1_ps((float)i * 1e-3f);
  const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3F803F80), y = (__m512bh)_mm512_set1_epi32(0x33D633D6);
  for (long it = 0; it < PEAK_ITERS; it++) {
#pragma GCC unroll 24
    for (int i = 0; i < PEAK_ACC; i++) acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
  }
  float sink = 0;
  for (int i = 0; i < PEAK_ACC; i++) sink += _mm512_reduce_add_ps(acc[i]);
  r->sink = sink; /* keeps the chains alive */
  r->gflops = (double)PEAK_ITERS * PEAK_ACC * 64 / (clock_for(1) - t0) * 1e-9;
  return NULL;
}

/* The AMX peak: tiles configured 16 rows x 64 bytes, A in tiles 4-5 and B in 6-7 loaded once, four
 * independent tdpbf16ps per iteration into tiles 0-3 (16 x 16 x 32 x 2 flops each). Runs only where the
 * library's AMX path is ready (cpuid, the kernel's permission, the self-check). */
__attribute__((target("amx-tile,amx-bf16"))) static void *peak_loop_amx(void *arg) {
  peak_run *r = arg;
  _Alignas(64) static const struct {
    uint8_t palette, start, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
  } config = {1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};
  _Alignas(64) uint16_t ones[16 * 32];
  _Alignas(64) float out[16 * 16];
  for (int i = 0; i < 16 * 32; i++) ones[i] = 0x3F80;
  __asm__ volatile("" : : : "memory");
  _tile_loadconfig(&config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, ones, 64);
  _tile_loadd(5, ones, 64);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  double t0 = clock_for(1);
  long iters = PEAK_ITERS / 4;
  for (long it = 0; it < iters; it++) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  double t1 = clock_for(1);
  _tile_stored(0, out, 64);
  _tile_release();
  r->sink = out[0]; /* keeps the loop */
  r->gflops = (double)iters * 4 * 16 * 16 * 32 * 2 / (t1 - t0) * 1e-9;
  return NULL;
}

/* The threads run the loop at once; the peak is the sum of their rates (each over its own CPU time). */
static double peak_gflops(int threads, bool amx) {
  double best = 0;
  for (int rep = 0; rep < 5; rep++) {
    pthread_t t[8];
    peak_run runs[8];
    double g = 0;
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, amx ? peak_loop_amx : peak_loop, &runs[i]);
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < threads; i++) g += runs[i].gflops;
    if (runs[0].sink == 12345.0f) printf("(%g)\n", runs[0].sink);
    if (g > best) best = g;
  }
  return best;
}

/* ---- ours ---- */

static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f;
}

/* Timed runs continue until at least 5 were made and 1.5 s of wall time passed, so that on a shared machine
 * every case gets the same chance of quiet moments; the best run counts. */
static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool more_runs(int done, double start) { return done < 6 || (wall() - start < 1.5 && done < 1000); }

/* One product's sizes: C (m x n) = A (m x k) B (k x n). */
typedef struct gemm_shape {
  int m, n, k;
} gemm_shape;

static double flops(gemm_shape s) { return 2.0 * s.m * (double)s.n * s.k; }

static double ours(tb_gemm_bf16_path path, gemm_shape s, const float *a, const float *b, float *c, bool pack_b,
                   tb_pool *pool) {
  int threads = tb_pool_threads(pool);
  tb_gemm_bf16_operand oa = {.data = a, .ld = s.k}, ob = {.data = b, .ld = s.n};
  tb_gemm_bf16_packed *pb = NULL;
  if (pack_b) {
    pb = tb_gemm_bf16_pack_b(path, &ob, s.k, s.n);
    if (!pb) return 0;
    ob = (tb_gemm_bf16_operand){.packed = pb};
  }
  double best = 1e30, start = wall();
  for (int r = 0; more_runs(r, start); r++) {
    double t0 = clock_for(threads);
    if (!tb_gemm_bf16_run(path, s.m, s.n, s.k, 1.0f, &oa, &ob, 0.0f, c, s.n, NULL, pool)) return 0;
    double dt = clock_for(threads) - t0;
    if (r > 0 && dt < best) best = dt; /* run 0 is the warm-up */
  }
  tb_gemm_bf16_packed_free(pb);
  return flops(s) / best * 1e-9;
}

/* "B packed, cold": the weights as a model meets them, out of every cache. Enough packed copies of B to
 * outgrow the L3 (96 MiB in all, at most 256 copies), each timed run a sweep over all of them; GFLOP/s of
 * the best sweep. */
static double ours_cold(tb_gemm_bf16_path path, gemm_shape s, const float *a, const float *b, float *c, tb_pool *pool) {
  int threads = tb_pool_threads(pool);
  tb_gemm_bf16_operand oa = {.data = a, .ld = s.k}, ob = {.data = b, .ld = s.n}, op;
  int copies = (int)(96.0 * 1024 * 1024 / (2.0 * s.k * (double)s.n)) + 1;
  if (copies > 256) copies = 256;
  tb_gemm_bf16_packed **pbs = calloc((size_t)copies, sizeof *pbs);
  double best = 1e30, start = wall();
  bool ok = pbs != NULL;
  for (int i = 0; ok && i < copies; i++) ok = (pbs[i] = tb_gemm_bf16_pack_b(path, &ob, s.k, s.n)) != NULL;
  for (int r = 0; ok && more_runs(r, start); r++) {
    double t0 = clock_for(threads);
    for (int i = 0; ok && i < copies; i++) {
      op = (tb_gemm_bf16_operand){.packed = pbs[i]};
      ok = tb_gemm_bf16_run(path, s.m, s.n, s.k, 1.0f, &oa, &op, 0.0f, c, s.n, NULL, pool);
    }
    double dt = (clock_for(threads) - t0) / copies;
    if (r > 0 && dt < best) best = dt;
  }
  for (int i = 0; pbs && i < copies; i++) tb_gemm_bf16_packed_free(pbs[i]);
  free(pbs);
  return ok ? flops(s) / best * 1e-9 : 0;
}

/* ---- oneDNN ---- */

#ifdef TB_HAVE_DNNL
static void dnnl_threads(int threads) {
  void (*set)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (set) set(threads);
}

#define DNNL_OK(call)                                                       \
  do {                                                                      \
    if ((call) != dnnl_success) {                                           \
      fprintf(stderr, "oneDNN: %s failed\n", #call);                        \
      goto done;                                                            \
    }                                                                       \
  } while (0)

/* bf16 A (m x k) x bf16 B (k x n) -> f32 C; weights_any: B reordered once to the layout oneDNN picks. */
static double onednn(gemm_shape s, const uint16_t *a, const uint16_t *b, float *c, bool weights_any, int threads) {
  double result = 0, best = 1e30;
  dnnl_threads(threads);
  dnnl_engine_t engine = NULL;
  dnnl_stream_t stream = NULL;
  dnnl_primitive_desc_t pd = NULL, rpd = NULL;
  dnnl_primitive_t prim = NULL, reorder = NULL;
  dnnl_memory_t ma = NULL, mb_plain = NULL, mb = NULL, mc = NULL;
  dnnl_memory_desc_t a_md, b_md, b_any, c_md;
  dnnl_dims_t a_dims = {s.m, s.k}, b_dims = {s.k, s.n}, c_dims = {s.m, s.n};
  dnnl_matmul_desc_t mm;
  DNNL_OK(dnnl_engine_create(&engine, dnnl_cpu, 0));
  DNNL_OK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&a_md, 2, a_dims, dnnl_bf16, dnnl_ab));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&b_md, 2, b_dims, dnnl_bf16, dnnl_ab));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&b_any, 2, b_dims, dnnl_bf16, weights_any ? dnnl_format_tag_any : dnnl_ab));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&c_md, 2, c_dims, dnnl_f32, dnnl_ab));
  DNNL_OK(dnnl_matmul_desc_init(&mm, &a_md, &b_any, NULL, &c_md));
  DNNL_OK(dnnl_primitive_desc_create(&pd, &mm, NULL, engine, NULL));
  DNNL_OK(dnnl_primitive_create(&prim, pd));
  const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  DNNL_OK(dnnl_memory_create(&ma, &a_md, engine, (void *)a));
  DNNL_OK(dnnl_memory_create(&mb_plain, &b_md, engine, (void *)b));
  DNNL_OK(dnnl_memory_create(&mc, &c_md, engine, c));
  if (weights_any) {
    DNNL_OK(dnnl_memory_create(&mb, wmd, engine, DNNL_MEMORY_ALLOCATE));
    DNNL_OK(dnnl_reorder_primitive_desc_create(&rpd, &b_md, engine, wmd, engine, NULL));
    DNNL_OK(dnnl_primitive_create(&reorder, rpd));
    dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, mb_plain}, {DNNL_ARG_TO, mb}};
    DNNL_OK(dnnl_primitive_execute(reorder, stream, 2, rargs));
    DNNL_OK(dnnl_stream_wait(stream));
  }
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, weights_any ? mb : mb_plain}, {DNNL_ARG_DST, mc}};
  double start = wall();
  for (int r = 0; more_runs(r, start); r++) {
    double t0 = clock_for(threads);
    DNNL_OK(dnnl_primitive_execute(prim, stream, 3, args));
    DNNL_OK(dnnl_stream_wait(stream));
    double dt = clock_for(threads) - t0;
    if (r > 0 && dt < best) best = dt;
  }
  result = flops(s) / best * 1e-9;
done:
  if (ma) dnnl_memory_destroy(ma);
  if (mb_plain) dnnl_memory_destroy(mb_plain);
  if (mb) dnnl_memory_destroy(mb);
  if (mc) dnnl_memory_destroy(mc);
  if (reorder) dnnl_primitive_destroy(reorder);
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  if (prim) dnnl_primitive_destroy(prim);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (stream) dnnl_stream_destroy(stream);
  if (engine) dnnl_engine_destroy(engine);
  return result;
}
#endif

static void row(gemm_shape s, int threads, const char *what, double g, double peak, double peer) {
  char size[48];
  if (s.m == s.n && s.n == s.k) snprintf(size, sizeof size, "%d", s.n);
  else snprintf(size, sizeof size, "%dx%dx%d", s.m, s.n, s.k);
  printf("%14s  %7d  %-22s %9.1f  %6.1f%%", size, threads, what, g, 100.0 * g / peak);
  if (peer > 0) printf("  %6.2fx", g / peer);
  printf("\n");
}

int main(int argc, char **argv) {
  gemm_shape sizes[16] = {{1024, 1024, 1024}, {2048, 2048, 2048}};
  int n_sizes = 2;
  if (argc > 1) {
    n_sizes = 0;
    for (int i = 1; i < argc && n_sizes < 16; i++) {
      gemm_shape s = {0, 0, 0};
      if (sscanf(argv[i], "%dx%dx%d", &s.m, &s.n, &s.k) != 3) s.m = s.n = s.k = atoi(argv[i]);
      if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
        fprintf(stderr, "gemm_bf16_bench: size '%s' is not N or MxNxK with positive numbers\n", argv[i]);
        return 2;
      }
      sizes[n_sizes++] = s;
    }
  }
  tb_gemm_bf16_path path = tb_gemm_bf16_path_for(tb_convert_features());
  if (path != TB_GEMM_BF16_AVX512BF16 && path != TB_GEMM_BF16_AMX) {
    printf("this CPU has neither AMX nor AVX512-BF16 (or TB_CPU_FEATURES removed them): nothing to measure against "
           "a peak\n");
    return 0;
  }
  bool amx = path == TB_GEMM_BF16_AMX;
  if (!amx) printf("AMX: not used here (no AMX-BF16 in cpuid, TB_CPU_FEATURES, or the log above says why)\n");
  double peak[3] = {0, peak_gflops(1, amx), peak_gflops(2, amx)};
  printf("%s peak (measured): %.1f GFLOP/s on 1 thread, %.1f on 2 threads; ours runs the %s path\n",
         amx ? "tdpbf16ps" : "vdpbf16ps", peak[1], peak[2], tb_gemm_bf16_path_name(path));
#ifndef TB_HAVE_DNNL
  printf("oneDNN: not built in (CMake did not find libdnnl and oneapi/dnnl/dnnl.h)\n");
#endif
  printf("%14s  %7s  %-22s %9s  %7s  %s\n", "N or MxNxK", "threads", "case", "GFLOP/s", "% peak", "ours/oneDNN");
  for (int si = 0; si < n_sizes; si++) {
    gemm_shape sz = sizes[si];
    size_t na = (size_t)sz.m * (size_t)sz.k, nb = (size_t)sz.k * (size_t)sz.n, nc = (size_t)sz.m * (size_t)sz.n;
    float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float)), *c = malloc(nc * sizeof(float));
    uint16_t *ha = malloc(na * sizeof(uint16_t)), *hb = malloc(nb * sizeof(uint16_t));
    if (!a || !b || !c || !ha || !hb) {
      fprintf(stderr, "out of memory for %dx%dx%d\n", sz.m, sz.n, sz.k);
      return 1;
    }
    fill(a, na, 1);
    fill(b, nb, 2);
    for (size_t i = 0; i < na; i++) ha[i] = tb_bf16_round(a[i]);
    for (size_t i = 0; i < nb; i++) hb[i] = tb_bf16_round(b[i]);
    for (int threads = 1; threads <= 2; threads++) {
      tb_pool *pool = NULL;
      if (threads > 1 && tb_pool_create(threads, &pool) != TB_OK) return 1;
      double dn_plain = 0, dn_any = 0;
#ifdef TB_HAVE_DNNL
      dn_plain = onednn(sz, ha, hb, c, false, threads);
      dn_any = onednn(sz, ha, hb, c, true, threads);
#endif
      row(sz, threads, "ours, fp32 in", ours(path, sz, a, b, c, false, pool), peak[threads], dn_plain);
      row(sz, threads, "ours, B packed", ours(path, sz, a, b, c, true, pool), peak[threads], dn_any);
      row(sz, threads, "ours, B packed, cold", ours_cold(path, sz, a, b, c, pool), peak[threads], 0);
#ifdef TB_HAVE_DNNL
      row(sz, threads, "oneDNN, bf16 in", dn_plain, peak[threads], 0);
      row(sz, threads, "oneDNN, B reordered", dn_any, peak[threads], 0);
#endif
      tb_pool_destroy(pool);
    }
    free(a);
    free(b);
    free(c);
    free(ha);
    free(hb);
  }
  return 0;
}
