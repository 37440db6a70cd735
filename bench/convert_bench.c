/* tb_convert throughput for the pairs with vector paths, under each TB_CPU_FEATURES mask (so each
 * path: AVX512-BF16, AVX-512, F16C, portable), using only the public API. Prints elements per
 * second and bytes read+written per second.
 *   cc -O2 -I include bench/convert_bench.c -L <build> -ltensorbridge -Wl,-rpath,<build> -o convert_bench
 *   ./convert_bench [elements]      (default 4194304) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/dtype.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)4 << 20;
  static const char *masks[] = {"", "-avx512bf16", "-avx512f", "-avx512f,-f16c"};
  static const struct { tb_dtype src, dst; } pairs[] = {
      {TB_DTYPE_F32, TB_DTYPE_F16},  {TB_DTYPE_F16, TB_DTYPE_F32},         {TB_DTYPE_F32, TB_DTYPE_BF16},
      {TB_DTYPE_BF16, TB_DTYPE_F32}, {TB_DTYPE_F32, TB_DTYPE_FP8_E4M3FN}, {TB_DTYPE_F32, TB_DTYPE_FP8_E5M2},
      {TB_DTYPE_FP8_E4M3FN, TB_DTYPE_F32}, {TB_DTYPE_F64, TB_DTYPE_F32},   {TB_DTYPE_F32, TB_DTYPE_I32}};
  float *src = malloc(n * 8), *dst = malloc(n * 8);
  if (!src || !dst) return 1;
  srand(1);
  for (size_t i = 0; i < n * 2; i++) src[i] = ((float)rand() / (float)RAND_MAX - 0.5f) * 600.0f;
  printf("%-22s %-16s %10s %10s\n", "pair", "TB_CPU_FEATURES", "Melem/s", "GB/s");
  for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
    for (size_t m = 0; m < sizeof masks / sizeof masks[0]; m++) {
      if (m > 0 && pairs[p].src != TB_DTYPE_F32 && pairs[p].dst != TB_DTYPE_F32) continue;
      setenv("TB_CPU_FEATURES", masks[m], 1);
      if (tb_convert(pairs[p].src, src, pairs[p].dst, dst, n, true) != TB_OK) {
        fprintf(stderr, "%s\n", tb_last_error());
        return 1;
      }
      double best = 1e9;
      for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        tb_convert(pairs[p].src, src, pairs[p].dst, dst, n, true);
        double t = now() - t0;
        if (t < best) best = t;
      }
      char name[64];
      snprintf(name, sizeof name, "%s->%s", tb_dtype_name(pairs[p].src), tb_dtype_name(pairs[p].dst));
      double bytes = (double)n * (double)(tb_dtype_size(pairs[p].src) + tb_dtype_size(pairs[p].dst));
      printf("%-22s %-16s %10.0f %10.2f\n", name, m ? masks[m] : "(none)", (double)n / best / 1e6, bytes / best / 1e9);
    }
  }
  free(src);
  free(dst);
  return 0;
}
