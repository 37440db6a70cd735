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

/* The parameter sizes of tb_cu_gemm_f32 (a, b, c, add0, add1, desc) and tb_cu_gemm_epilogue_f32 (c, add0,
 * add1, desc); 0 for another name. */
static int fake_gemm_params(const char *name, unsigned *sizes) {
  int pointers = strcmp(name, "tb_cu_gemm_f32") == 0 ? 5 : strcmp(name, "tb_cu_gemm_epilogue_f32") == 0 ? 3 : 0;
  for (int i = 0; i < pointers; i++) sizes[i] = 8;
  if (pointers) sizes[pointers] = sizeof(fake_gemm_desc);
  return pointers ? pointers + 1 : 0;
}

/* The leading pointer parameters of a GEMM kernel (0 for another name). */
static int fake_gemm_pointers(const char *name) {
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
  fake_gemm_desc d;
  memcpy(&d, l->args + l->arg_offset[pointers], sizeof d);
  if (d.batch_rank < 0 || d.batch_rank > 6 || d.m < 0 || d.n < 0 || d.k < 0) return -1;
  long long product = 1;
  for (int i = 0; i < d.batch_rank; i++) product *= d.batch_dims[i];
  if (product != d.batch) return -1;
  int first_addend = pointers == 5 ? 3 : 1, c = pointers == 5 ? 2 : 0;
  unsigned long long add[2];
  memcpy(&add[0], l->args + l->arg_offset[first_addend], 8);
  memcpy(&add[1], l->args + l->arg_offset[first_addend + 1], 8);
  int ok = covers(l, c, d.batch * d.m * d.n);
  if (pointers == 5 && d.k > 0)
    ok = ok && covers(l, 0, fake_gemm_reach(&d, d.a_batch, d.m, d.a_rs, d.k, d.a_cs)) &&
         covers(l, 1, fake_gemm_reach(&d, d.b_batch, d.k, d.b_rs, d.n, d.b_cs));
  if (add[0]) ok = ok && covers(l, first_addend, fake_gemm_reach(&d, d.add0_batch, d.m, d.add0_rs, d.n, d.add0_cs));
  if (add[1]) ok = ok && covers(l, first_addend + 1, fake_gemm_reach(&d, d.add1_batch, d.m, d.add1_rs, d.n, d.add1_cs));
  return ok;
}

#endif
