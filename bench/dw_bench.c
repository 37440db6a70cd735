/* The depthwise convolution's two kernels side by side (src/backend/cpu/kernels/fast/conv/conv_depthwise*.c):
 * the row kernels (tb_conv_depthwise_rows_run) against channels in lanes (tb_conv_depthwise_lanes_run) on
 * every depthwise layer shape of MobileNetV3-Large and EfficientNet-B0 at 224x224 (batch 1, bias, no
 * activation) plus wider maps for the cost rule, on each vector path this CPU has (AVX-512, AVX2+FMA), one
 * thread. Prints, per shape and path, each kernel's best time of RUNS calls (the calling thread's CPU time,
 * the two kernels interleaved call by call so that a loaded machine slows both alike), GFLOP/s (2 * taps *
 * outputs / time), lanes' speed-up over rows and which one the cost rule (tb_dwl_wanted) picks.
 * Usage: dw_bench [--only TEXT] [--runs N] (--only: the shapes whose name contains TEXT; RUNS default 40) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/cpu/kernels/fast/conv/conv_depthwise.h"
#include "backend/cpu/kernels/fast/conv/conv_depthwise_lanes.h"
#include "core/convert_features.h"

typedef struct shape {
  const char *name;
  int64_t c, hw, k, s;
} shape;

static const shape shapes[] = {
    {"mbv3 16x112 3x3", 16, 112, 3, 1},   {"mbv3 64x112 3x3 s2", 64, 112, 3, 2}, {"mbv3 72x56 3x3", 72, 56, 3, 1},
    {"mbv3 72x56 5x5 s2", 72, 56, 5, 2},  {"mbv3 120x28 5x5", 120, 28, 5, 1},   {"mbv3 240x28 3x3 s2", 240, 28, 3, 2},
    {"mbv3 200x14 3x3", 200, 14, 3, 1},   {"mbv3 184x14 3x3", 184, 14, 3, 1},   {"mbv3 480x14 3x3", 480, 14, 3, 1},
    {"mbv3 672x14 3x3", 672, 14, 3, 1},   {"mbv3 672x14 5x5 s2", 672, 14, 5, 2}, {"mbv3 960x7 5x5", 960, 7, 5, 1},
    {"effb0 32x112 3x3", 32, 112, 3, 1},  {"effb0 96x112 3x3 s2", 96, 112, 3, 2}, {"effb0 144x56 3x3", 144, 56, 3, 1},
    {"effb0 144x56 5x5 s2", 144, 56, 5, 2}, {"effb0 240x28 5x5", 240, 28, 5, 1}, {"effb0 240x28 3x3 s2", 240, 28, 3, 2},
    {"effb0 480x14 3x3", 480, 14, 3, 1},  {"effb0 480x14 5x5", 480, 14, 5, 1},   {"effb0 672x14 5x5", 672, 14, 5, 1},
    {"effb0 672x14 5x5 s2", 672, 14, 5, 2}, {"effb0 1152x7 5x5", 1152, 7, 5, 1}, {"effb0 1152x7 3x3", 1152, 7, 3, 1},
    {"convnext 384x14 7x7", 384, 14, 7, 1}, {"convnext 96x56 7x7", 96, 56, 7, 1},
    {"rule 96x20 3x3", 96, 20, 3, 1},     {"rule 96x24 3x3", 96, 24, 3, 1},
    {"rule 96x32 3x3", 96, 32, 3, 1},     {"rule 96x40 5x5", 96, 40, 5, 1},     {"rule 64x56 5x5", 64, 56, 5, 1},
};

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *only = NULL;
  int runs = 40;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) runs = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: dw_bench [--only TEXT] [--runs N]\n");
      return 2;
    }
  }
  int best_path = (int)tb_gemm_path_for(tb_convert_hardware_features());
  const tb_gemm_epilogue ep = {0};
  printf("| shape | path | rows ms | lanes ms | rows GFLOP/s | lanes GFLOP/s | lanes / rows speed | rule picks |\n");
  printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    const shape *sh = &shapes[i];
    if (only && !strstr(sh->name, only)) continue;
    int64_t pad = sh->k / 2, oh = (sh->hw + 2 * pad - sh->k) / sh->s + 1;
    tb_conv_geom g = {.spatial = 2, .batch = 1, .in_c = sh->c, .out_c = sh->c, .group = sh->c, .ih = sh->hw, .iw = sh->hw,
                      .oh = oh, .ow = oh, .kh = sh->k, .kw = sh->k, .sh = sh->s, .sw = sh->s, .dh = 1, .dw = 1,
                      .ph = pad, .pw = pad};
    size_t nx = (size_t)(sh->c * sh->hw * sh->hw), nw = (size_t)(sh->c * sh->k * sh->k), ny = (size_t)(sh->c * oh * oh);
    float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *b = malloc((size_t)sh->c * sizeof *b);
    float *y = malloc(ny * sizeof *y);
    if (!x || !w || !b || !y) return 1;
    for (size_t k = 0; k < nx; k++) x[k] = (float)((k * 7919) % 1000) * 1e-3f - 0.5f;
    for (size_t k = 0; k < nw; k++) w[k] = (float)((k * 104729) % 1000) * 1e-3f - 0.5f;
    for (int64_t k = 0; k < sh->c; k++) b[k] = 0.01f * (float)k;
    double flop = 2.0 * (double)ny * (double)(sh->k * sh->k);
    for (int p = best_path; p >= (int)TB_GEMM_AVX2; p--) {
      double best[2] = {1e9, 1e9};
      for (int r = 0; r < runs + 3; r++)
        for (int m = 0; m < 2; m++) {
          double t0 = cpu_s();
          bool ok = m == 0 ? tb_conv_depthwise_rows_run((tb_gemm_path)p, &g, x, w, b, NULL, &ep, y, NULL)
                           : tb_conv_depthwise_lanes_run((tb_gemm_path)p, &g, x, w, b, NULL, &ep, y, NULL);
          double t = cpu_s() - t0;
          if (!ok) return 1;
          if (r >= 3 && t < best[m]) best[m] = t;
        }
      printf("| %s | %s | %.4f | %.4f | %.1f | %.1f | %.2f | %s |\n", sh->name, p == TB_GEMM_AVX512 ? "avx512" : "avx2",
             best[0] * 1e3, best[1] * 1e3, flop / best[0] * 1e-9, flop / best[1] * 1e-9, best[0] / best[1],
             tb_dwl_wanted((tb_gemm_path)p, &g) ? "lanes" : "rows");
    }
    free(x), free(w), free(b), free(y);
  }
  return 0;
}
