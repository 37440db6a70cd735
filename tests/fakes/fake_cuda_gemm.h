/* fake_cuda.c's knowledge of the GEMM kernels (src/backend/cuda/kernels/40_gemm.cu): their parameter
 * lists, how many leading parameters are device pointers, and the elements each pointer must hold, read
 * from the tb_gemm_desc passed by value (its layout mirrored here; the library checks its own mirror
 * against the same offsets). Included by fake_cuda.c only. */
#ifndef TB_FAKE_CUDA_GEMM_H
#define TB_FAKE_CUDA_GEMM_H
#include <string.h>
#include "fake_cuda_launch.h"

typedef struct fake_gemm_desc {
  int batch_rank, act;
  long long batch_dims[6], a_batch[6], b_batch[6], add0_batch[6], add1_batch[6];
  long long batch, m, n, k;
  long long a_rs, a_cs, b_rs, b_cs, add0_rs, add0_cs, add1_rs, add1_cs;
  float alpha, add0_scale, add1_scale, act_alpha, act_beta, act_min, act_max;
  int divide;
} fake_gemm_desc;

/* Whether a product kernel reads 16-bit A and B (41_gemm_lowp.cu: tb_cu_gemm_bf16, tb_cu_gemm_f16). */
static int fake_gemm_16bit(const char *name) {
  return strcmp(name, "tb_cu_gemm_bf16") == 0 || strcmp(name, "tb_cu_gemm_f16") == 0 ||
         strcmp(name, "tb_cu_gemm_bf16_out16") == 0 || strcmp(name, "tb_cu_gemm_f16_out16") == 0;
}

/* 41_gemm_lowp.cu's products writing C in 16 bits too: (a, b, c, add0, add1, c16, desc, c16_f16) and the epilogue's
 * (c, add0, add1, c16, desc, c16_f16); their pointer count, 0 for another name. */
static int fake_gemm_out16_pointers(const char *name) {
  if (strcmp(name, "tb_cu_gemm_epilogue_out16") == 0) return 4;
  return strcmp(name, "tb_cu_gemm_f32_out16") == 0 || strcmp(name, "tb_cu_gemm_bf16_out16") == 0 ||
                 strcmp(name, "tb_cu_gemm_f16_out16") == 0
             ? 6
             : 0;
}

/* 41_gemm_lowp.cu's fp8 helpers: tb_cu_lowp_amax_f32 (x, out, n) and tb_cu_lowp_to_e4m3 (x, amax, scale, y,
 * rows, cols, transpose): their pointer count, 0 for another name. */
static int fake_lowp_pointers(const char *name) {
  return strcmp(name, "tb_cu_lowp_amax_f32") == 0 ? 2 : strcmp(name, "tb_cu_lowp_to_e4m3") == 0 ? 4 : 0;
}

/* The parameter sizes of tb_cu_gemm_f32 and the 16-bit ones (a, b, c, add0, add1, desc),
 * tb_cu_gemm_epilogue_f32 (c, add0, add1, desc) and the fp8 helpers; 0 for another name. */
static int fake_gemm_params(const char *name, unsigned *sizes) {
  int lowp = fake_lowp_pointers(name);
  if (lowp) {
    int n = lowp == 2 ? 3 : 7;
    for (int i = 0; i < n; i++) sizes[i] = 8;
    return n;
  }
  int out16 = fake_gemm_out16_pointers(name);
  if (out16) {
    for (int i = 0; i < out16; i++) sizes[i] = 8;
    sizes[out16] = sizeof(fake_gemm_desc);
    sizes[out16 + 1] = 4;
    return out16 + 2;
  }
  int pointers = strcmp(name, "tb_cu_gemm_f32") == 0 || fake_gemm_16bit(name) ? 5
                 : strcmp(name, "tb_cu_gemm_epilogue_f32") == 0 ? 3 : 0;
  for (int i = 0; i < pointers; i++) sizes[i] = 8;
  if (pointers) sizes[pointers] = sizeof(fake_gemm_desc);
  return pointers ? pointers + 1 : 0;
}

/* The leading pointer parameters of a GEMM kernel (0 for another name). */
static int fake_gemm_pointers(const char *name) {
  if (fake_lowp_pointers(name)) return fake_lowp_pointers(name);
  if (fake_gemm_out16_pointers(name)) return fake_gemm_out16_pointers(name);
  unsigned sizes[8];
  int n = fake_gemm_params(name, sizes);
  return n ? n - 1 : 0;
}

/* The elements an operand reaches: 1 + the sum of (dim - 1) * stride over the batch dims and its two
 * matrix dims; 0 when it has none. */
static long long fake_gemm_reach(const fake_gemm_desc *d, const long long *batch, long long rows, long long rs, long long cols,
                                 long long cs) {
  if (d->batch <= 0 || rows <= 0 || cols <= 0) return 0;
  long long r = 1 + (rows - 1) * rs + (cols - 1) * cs;
  for (int i = 0; i < d->batch_rank && i < 6; i++) r += (d->batch_dims[i] - 1) * batch[i];
  return r;
}

/* Whether every pointer of a GEMM launch holds what the kernel would touch (covers(l, i, elements): the
 * fake's check of argument i); a NULL addend is none. -1 for a malformed descriptor. */
static int fake_gemm_in_bounds(const fake_launch *l, int (*covers)(const fake_launch *, int, long long)) {
  int pointers = fake_gemm_pointers(l->name);
  if (fake_lowp_pointers(l->name)) { /* x of n (or rows * cols) floats; amax out one per block; scale one; y n bytes */
    long long n;
    memcpy(&n, l->args + l->arg_offset[pointers], sizeof n);
    if (pointers == 4) {
      long long cols;
      memcpy(&cols, l->args + l->arg_offset[5], sizeof cols);
      n *= cols;
      return n < 0 ? -1 : covers(l, 0, n) && covers(l, 1, 1) && covers(l, 2, 1) && covers(l, 3, (n + 3) / 4);
    }
    return n < 0 ? -1 : covers(l, 0, n) && covers(l, 1, l->grid[0]); /* one maximum per block */
  }
  fake_gemm_desc d;
  memcpy(&d, l->args + l->arg_offset[pointers], sizeof d);
  if (d.batch_rank < 0 || d.batch_rank > 6 || d.m < 0 || d.n < 0 || d.k < 0) return -1;
  long long product = 1;
  for (int i = 0; i < d.batch_rank; i++) product *= d.batch_dims[i];
  if (product != d.batch) return -1;
  int first_addend = pointers >= 5 ? 3 : 1, c = pointers >= 5 ? 2 : 0;
  unsigned long long add[2];
  memcpy(&add[0], l->args + l->arg_offset[first_addend], 8);
  memcpy(&add[1], l->args + l->arg_offset[first_addend + 1], 8);
  int ok = covers(l, c, d.batch * d.m * d.n);
  /* covers counts 4-byte elements: a 16-bit operand's reach in halves, rounded up */
  int halves = fake_gemm_16bit(l->name);
  long long reach_a = fake_gemm_reach(&d, d.a_batch, d.m, d.a_rs, d.k, d.a_cs), reach_b = fake_gemm_reach(&d, d.b_batch, d.k, d.b_rs, d.n, d.b_cs);
  if (halves) reach_a = (reach_a + 1) / 2, reach_b = (reach_b + 1) / 2;
  if (fake_gemm_out16_pointers(l->name)) ok = ok && covers(l, first_addend + 2, (d.batch * d.m * d.n + 1) / 2);
  if (pointers >= 5 && d.k > 0) ok = ok && covers(l, 0, reach_a) && covers(l, 1, reach_b);
  if (add[0]) ok = ok && covers(l, first_addend, fake_gemm_reach(&d, d.add0_batch, d.m, d.add0_rs, d.n, d.add0_cs));
  if (add[1]) ok = ok && covers(l, first_addend + 1, fake_gemm_reach(&d, d.add1_batch, d.m, d.add1_rs, d.n, d.add1_cs));
  return ok;
}

#endif
