/* Convolution throughput (issue 5): the level-2 fp32 Conv (src/backend/cpu/kernels/fast/conv/conv_*.c) on the
 * best path this CPU has, with 1 and 2 threads, and the level-3 bf16 Conv, against the level-0 reference
 * kernel (one thread, one run) on ResNet-18's convolution shapes at 224x224 (batch 1), plus a 1x1 and a
 * depthwise layer. Weights are packed once (prepare) as the executor does for constant weights, and the
 * output is allocated once. Prints ms per run and GFLOP/s (2 * multiply-adds / time, the best of several
 * runs after a warm-up), the fp32 share of the FMA peak (a loop of 16 independent 512-bit FMA chains per
 * thread, measured here with one thread and counted twice for two) and the speed-up over the reference.
 * One-thread times (and the peak loop) are the calling thread's CPU time, so a loaded machine does not
 * inflate them; two-thread times are wall time and are only meaningful when both cores are free.
 * The 3x3 stride-1 layers with enough tiles (layer1-3 here) run Winograd F(2x2, 3x3) (conv_winograd.h), so
 * their GFLOP/s (counted for the direct convolution's multiplies) pass the FMA peak; TB_CONV_WINOGRAD=off
 * measures the direct convolution instead.
 * Usage: conv_bench [--no-reference] [--only TEXT] (--only: the layers whose name contains TEXT) */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tensorbridge/backend.h>
#include <tensorbridge/tensor.h>
#include "backend/cpu/kernels/kernel.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "ir/ir.h"
#include "ops/op.h"

extern const tb_kernel tb_kernel_conv;

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
static double thread_cpu(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

enum { CHAINS = 16 };

/* One core's fp32 FMA peak: CHAINS independent zmm chains (more than FMA latency x pipes). */
__attribute__((target("avx512f,fma"))) static double fma_peak_gflops(void) {
  __m512 acc[CHAINS];
  for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_set1_ps(1.0f + (float)i);
  const __m512 mul = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-8f);
  const long iters = 5000000;
  double best = 0;
  for (int rep = 0; rep < 8; rep++) {
    double t0 = thread_cpu();
    for (long it = 0; it < iters; it++) {
#pragma GCC unroll 16
      for (int i = 0; i < CHAINS; i++) acc[i] = _mm512_fmadd_ps(acc[i], mul, add);
    }
    double g = (double)iters * CHAINS * 32 / (thread_cpu() - t0) * 1e-9;
    if (g > best) best = g;
  }
  float keep = 0;
  for (int i = 0; i < CHAINS; i++) keep += _mm512_reduce_add_ps(acc[i]);
  if (keep == -1.0f) printf("%g\n", keep);
  return best;
}

typedef struct layer {
  const char *name;
  int64_t c, h, m, k, stride, pad, group;
} layer;

static const layer layers[] = {
    {"stem 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 3, 1},
    {"layer1 3x3 64 @56", 64, 56, 64, 3, 1, 1, 1},
    {"layer2 3x3/2 64->128 @56", 64, 56, 128, 3, 2, 1, 1},
    {"layer2 1x1/2 64->128 @56", 64, 56, 128, 1, 2, 0, 1},
    {"layer2 3x3 128 @28", 128, 28, 128, 3, 1, 1, 1},
    {"layer3 3x3 256 @14", 256, 14, 256, 3, 1, 1, 1},
    {"layer4 3x3 512 @7", 512, 7, 512, 3, 1, 1, 1},
    {"pointwise 1x1 128 @56", 128, 56, 128, 1, 1, 0, 1},
    {"depthwise 3x3 128 @56", 128, 56, 128, 3, 1, 1, 128},
};

/* One Conv node with its tensors, W a graph constant. */
typedef struct bench_node {
  tb_ir_model *model;
  tb_graph *g;
  int node;
  tb_tensor *in[3], *out;
  int64_t macs;
} bench_node;

static tb_tensor *random_tensor(tb_backend *cpu, size_t ndim, const int64_t *shape, unsigned seed, float scale) {
  tb_tensor *t = NULL;
  if (tb_tensor_create(cpu, TB_DTYPE_F32, ndim, shape, &t) != TB_OK) return NULL;
  float *p = tb_tensor_host_data(t);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++) p[i] = scale * ((float)((i * 2654435761u + seed) % 2001) / 1000.0f - 1.0f);
  return t;
}

static int make_node(tb_backend *cpu, const layer *l, bench_node *b) {
  memset(b, 0, sizeof *b);
  b->model = tb_ir_model_new();
  b->g = b->model ? tb_graph_new(b->model, NULL, "g") : NULL;
  if (!b->g) return -1;
  int64_t ks[2] = {l->k, l->k}, st[2] = {l->stride, l->stride}, pads[4] = {l->pad, l->pad, l->pad, l->pad};
  tb_attr attrs[4] = {{.name = "kernel_shape", .type = TB_ATTR_INTS, .ints = ks, .count = 2},
                      {.name = "strides", .type = TB_ATTR_INTS, .ints = st, .count = 2},
                      {.name = "pads", .type = TB_ATTR_INTS, .ints = pads, .count = 4},
                      {.name = "group", .type = TB_ATTR_INT, .i = l->group}};
  int ins[3] = {tb_graph_value(b->g, "x"), tb_graph_value(b->g, "w"), tb_graph_value(b->g, "b")};
  int outs[1] = {tb_graph_value(b->g, "y")};
  b->node = tb_graph_add_node(b->g, "conv", "Conv", "", ins, 3, outs, 1, attrs, 4);
  if (b->node < 0) return -1;
  b->g->nodes[b->node].opset = 11;
  b->g->nodes[b->node].def = tb_op_find("", "Conv", 11);
  int64_t xs[4] = {1, l->c, l->h, l->h}, ws[4] = {l->m, l->c / l->group, l->k, l->k};
  int64_t oh = (l->h + 2 * l->pad - l->k) / l->stride + 1;
  b->macs = l->m * (l->c / l->group) * l->k * l->k * oh * oh;
  b->in[0] = random_tensor(cpu, 4, xs, 1, 1.0f);
  b->in[1] = random_tensor(cpu, 4, ws, 2, 0.1f);
  b->in[2] = random_tensor(cpu, 1, &l->m, 3, 0.1f);
  if (!b->in[0] || !b->in[1] || !b->in[2]) return -1;
  void *data = NULL;
  tb_ir_tensor *w = tb_graph_new_tensor(b->g, "w_init", TB_DTYPE_F32, 4, ws, &data);
  if (!w) return -1;
  memcpy(data, tb_tensor_host_data(b->in[1]), tb_tensor_nbytes(b->in[1]));
  b->g->values[ins[1]].constant = w;
  return 0;
}

static void free_node(bench_node *b) {
  for (int i = 0; i < 3; i++) tb_tensor_destroy(b->in[i]);
  tb_tensor_destroy(b->out);
  tb_graph_destroy(b->g);
  tb_ir_model_destroy(b->model);
}

/* Best seconds per run of kernel k (prepared once) on the pool (thread CPU time without a pool, wall time
 * with one); 0 on failure. `max_runs` 1: one run. */
static double time_kernel(bench_node *b, tb_backend *cpu, const tb_kernel *k, tb_pool *pool, int max_runs) {
  void *state = NULL;
  tb_tensor *consts[3] = {NULL, b->in[1], NULL};
  tb_kernel_ctx pc = {.graph = b->g, .node = &b->g->nodes[b->node], .n_inputs = 3, .inputs = consts, .backend = cpu, .threads = 1};
  if (k->prepare && k->prepare(&pc, &state) != TB_OK) return 0;
  tb_tensor *outs[1] = {b->out};
  tb_kernel_ctx ctx = {.graph = b->g, .node = &b->g->nodes[b->node], .n_inputs = 3, .inputs = b->in, .n_outputs = 1,
                       .outputs = outs, .backend = cpu, .threads = tb_pool_threads(pool), .pool = pool, .state = state};
  double best = 1e30, spent = 0;
  for (int r = 0; r <= max_runs && (r < 4 || spent < 0.3); r++) { /* run 0 warms up (and allocates y) */
    if (max_runs == 1 && r == 0) continue;
    double t0 = pool ? now() : thread_cpu();
    if (k->run(&ctx) != TB_OK) {
      fprintf(stderr, "conv_bench: %s\n", tb_last_error());
      best = 1e30;
      break;
    }
    double dt = (pool ? now() : thread_cpu()) - t0;
    spent += dt;
    if ((r > 0 || max_runs == 1) && dt < best) best = dt;
    if (!b->out) b->out = outs[0];
  }
  if (k->release) k->release(state);
  return best >= 1e30 ? 0 : best;
}

int main(int argc, char **argv) {
  bool reference = true;
  const char *only = NULL;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--no-reference") == 0) {
      reference = false;
    } else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc) {
      only = argv[++a];
    } else {
      fprintf(stderr, "usage: conv_bench [--no-reference] [--only TEXT]\n");
      return 2;
    }
  }
  uint64_t features = tb_convert_features();
  tb_backend *cpu = NULL;
  tb_pool *pool2 = NULL;
  if (tb_backend_create("cpu", &cpu) != TB_OK || tb_pool_create(2, &pool2) != TB_OK) {
    fprintf(stderr, "conv_bench: %s\n", tb_last_error());
    return 1;
  }
  double peak = (features & TB_FEATURE_BIT(TB_FEATURE_AVX512F)) ? fma_peak_gflops() : 0;
  printf("fp32 FMA peak, one core (16 zmm FMA chains): %.1f GFLOP/s; two threads: %.1f\n", peak, 2 * peak);
  printf("%-26s %8s | %8s %7s %5s | %8s %7s %5s | %8s %7s | %8s %7s | %9s %7s\n", "layer", "GMAC", "fp32 1t", "GFLOP/s",
         "peak", "fp32 2t", "GFLOP/s", "peak", "bf16 1t", "GFLOP/s", "bf16 2t", "GFLOP/s", "reference", "speedup");
  const char *kname = NULL, *bname = NULL;
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    if (only && !strstr(layers[i].name, only)) continue;
    bench_node b;
    if (make_node(cpu, &layers[i], &b) != 0) {
      fprintf(stderr, "conv_bench: cannot build layer %s: %s\n", layers[i].name, tb_last_error());
      return 1;
    }
    tb_value_type types[3];
    const tb_value_type *in[3];
    for (int t = 0; t < 3; t++) {
      memset(&types[t], 0, sizeof types[t]);
      types[t].kind = TB_VALUE_TENSOR;
      types[t].has_dtype = types[t].has_shape = true;
      types[t].dtype = TB_DTYPE_F32;
      types[t].ndim = tb_tensor_ndim(b.in[t]);
      for (size_t d = 0; d < types[t].ndim; d++) types[t].dims[d] = (tb_dim){tb_tensor_shape(b.in[t])[d], -1};
      in[t] = &types[t];
    }
    for (int t = 0; t < 3; t++) b.g->values[b.g->nodes[b.node].inputs[t]].type = types[t]; /* X's shape at prepare */
    tb_kernel_query q_fast = tb_kernel_query_for(&b.g->nodes[b.node], in, 2, features);
    tb_kernel_query q_bf16 = tb_kernel_query_for(&b.g->nodes[b.node], in, 3, features);
    const tb_kernel *fast = tb_cpu_kernel_find(&q_fast);
    const tb_kernel *bf16 = tb_cpu_kernel_find(&q_bf16);
    double flop = 2.0 * (double)b.macs;
    double t1 = time_kernel(&b, cpu, fast, NULL, 1000), t2 = time_kernel(&b, cpu, fast, pool2, 1000);
    bool has_bf16 = bf16 && bf16->precision;
    double tbf1 = has_bf16 ? time_kernel(&b, cpu, bf16, NULL, 1000) : 0;
    double tbf = has_bf16 ? time_kernel(&b, cpu, bf16, pool2, 1000) : 0;
    double tref = reference ? time_kernel(&b, cpu, &tb_kernel_conv, NULL, 1) : 0;
    if (!fast || t1 <= 0 || t2 <= 0) {
      fprintf(stderr, "conv_bench: no level-2 Conv kernel ran for %s\n", layers[i].name);
      return 1;
    }
    char speedup[16] = "-", ref_ms[16] = "-", bf_ms[16] = "-", bf_g[16] = "-", bf1_ms[16] = "-", bf1_g[16] = "-";
    if (tref > 0 && t2 > 0) snprintf(speedup, sizeof speedup, "%.0fx", tref / t2);
    if (tref > 0) snprintf(ref_ms, sizeof ref_ms, "%.1f ms", tref * 1e3);
    if (tbf1 > 0)
      snprintf(bf1_ms, sizeof bf1_ms, "%.2f ms", tbf1 * 1e3), snprintf(bf1_g, sizeof bf1_g, "%.0f", flop / tbf1 * 1e-9);
    if (tbf > 0) snprintf(bf_ms, sizeof bf_ms, "%.2f ms", tbf * 1e3), snprintf(bf_g, sizeof bf_g, "%.0f", flop / tbf * 1e-9);
    printf("%-26s %8.3f | %5.2f ms %7.0f %4.0f%% | %5.2f ms %7.0f %4.0f%% | %8s %7s | %8s %7s | %9s %7s\n", layers[i].name,
           (double)b.macs * 1e-9, t1 * 1e3, flop / t1 * 1e-9, peak > 0 ? 100 * flop / t1 * 1e-9 / peak : 0, t2 * 1e3,
           flop / t2 * 1e-9, peak > 0 ? 100 * flop / t2 * 1e-9 / (2 * peak) : 0, bf1_ms, bf1_g, bf_ms, bf_g, ref_ms,
           speedup);
    kname = fast ? fast->name : kname;
    bname = bf16 && bf16->precision ? bf16->precision : bname;
    free_node(&b);
  }
  printf("fp32: the level-2 %s kernel for this CPU's features; bf16: %s (level 3); reference: level 0, one thread\n",
         kname ? kname : "-", bname ? bname : "none");
  tb_pool_destroy(pool2);
  tb_backend_destroy(cpu);
  return 0;
}
