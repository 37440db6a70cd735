/* fake_cuda.c's knowledge of the quantized kernels (src/backend/cuda/kernels/45_quant.cu): their parameter lists,
 * how many leading parameters are device pointers, and the memory each pointer must hold, read from the
 * descriptors passed by value (tb_quant_desc; tb_gemm_desc as fake_cuda_gemm.h mirrors it). Sizes are in bytes,
 * checked as whole 4-byte words (the fake's covers()), so a byte array is checked up to its last whole word.
 * Included by fake_cuda.c only, after fake_cuda_gemm.h. */
#ifndef TB_FAKE_CUDA_QUANT_H
#define TB_FAKE_CUDA_QUANT_H
#include <string.h>
#include "fake_cuda_gemm.h"
#include "fake_cuda_launch.h"

typedef struct fake_quant_desc {
  int x_kind, y_kind, s_axis, z_axis;
  long long n, inner, len;
} fake_quant_desc;

typedef struct fake_qconv_desc {
  long long n, c, k, groups;
  long long in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
  int x_kind, w_kind, y_kind, wzp_channels, ws_channels, unused;
} fake_qconv_desc;

static int fake_quant_elementwise(const char *name) {
  return strcmp(name, "tb_cu_q_quantize_f32") == 0 || strcmp(name, "tb_cu_q_dequantize_f32") == 0;
}

/* The parameter sizes of the quantized kernels; 0 for another name. */
static int fake_quant_params(const char *name, unsigned *sizes) {
  if (fake_quant_elementwise(name)) {
    for (int i = 0; i < 4; i++) sizes[i] = 8;
    sizes[4] = sizeof(fake_quant_desc);
    return 5;
  }
  if (strcmp(name, "tb_cu_q_conv") == 0) { /* ten pointers, then tb_qconv_desc */
    for (int i = 0; i < 10; i++) sizes[i] = 8;
    sizes[10] = sizeof(fake_qconv_desc);
    return 11;
  }
  if (strcmp(name, "tb_cu_q_matmul") != 0) return 0;
  for (int i = 0; i < 9; i++) sizes[i] = 8;
  sizes[9] = sizeof(fake_gemm_desc);
  sizes[10] = 24; /* tb_qmm_desc */
  return 11;
}

/* The leading pointer parameters of a quantized kernel (0 for another name). */
static int fake_quant_pointers(const char *name) {
  return fake_quant_elementwise(name) ? 4 : strcmp(name, "tb_cu_q_matmul") == 0 ? 9 : strcmp(name, "tb_cu_q_conv") == 0 ? 10 : 0;
}

static long long fake_quant_size(int kind) { return kind == 2 ? 4 : 1; }

/* Whether every pointer of a quantized launch holds what the kernel would touch (covers(l, i, words)); a NULL
 * optional pointer is none. -1 for a malformed descriptor. */
static int fake_quant_in_bounds(const fake_launch *l, long long (*arg)(const fake_launch *, int),
                                int (*covers)(const fake_launch *, int, long long)) {
  if (fake_quant_elementwise(l->name)) {
    fake_quant_desc d;
    memcpy(&d, l->args + l->arg_offset[4], sizeof d);
    int quantize = strcmp(l->name, "tb_cu_q_quantize_f32") == 0, kind = quantize ? d.y_kind : d.x_kind;
    if (d.n < 0 || d.inner < 1 || d.len < 1 || kind < 0 || kind > (quantize ? 1 : 2)) return -1;
    long long x_bytes = quantize ? 4 * d.n : fake_quant_size(d.x_kind) * d.n, y_bytes = quantize ? d.n : 4 * d.n;
    long long s_bytes = 4 * (d.s_axis ? d.len : 1);
    return covers(l, 0, x_bytes / 4) && covers(l, 1, s_bytes / 4) && covers(l, 3, y_bytes / 4);
  }
  if (strcmp(l->name, "tb_cu_q_conv") == 0) {
    fake_qconv_desc c;
    memcpy(&c, l->args + l->arg_offset[10], sizeof c);
    if (c.n < 0 || c.c < 0 || c.k < 0 || c.groups < 1 || c.y_kind < 0 || c.y_kind > 2) return -1;
    long long in = c.in[0] * c.in[1] * c.in[2], out = c.out[0] * c.out[1] * c.out[2], taps = c.kernel[0] * c.kernel[1] * c.kernel[2];
    int ok = covers(l, 0, c.n * c.c * in * fake_quant_size(c.x_kind) / 4) &&
             covers(l, 1, c.k * (c.c / c.groups) * taps * fake_quant_size(c.w_kind) / 4) &&
             covers(l, 9, c.n * c.k * out * fake_quant_size(c.y_kind) / 4);
    if (ok && arg(l, 8)) ok = covers(l, 8, c.k); /* the int32 bias */
    return ok;
  }
  fake_gemm_desc d;
  int q[6];
  memcpy(&d, l->args + l->arg_offset[9], sizeof d);
  memcpy(q, l->args + l->arg_offset[10], sizeof q);
  if (d.batch_rank < 0 || d.batch_rank > 6 || d.m < 0 || d.n < 0 || d.k < 0 || q[2] < 0 || q[2] > 2) return -1;
  int ok = covers(l, 8, d.batch * d.m * d.n * fake_quant_size(q[2]) / 4);
  if (d.k > 0)
    ok = ok && covers(l, 0, fake_gemm_reach(&d, d.a_batch, d.m, d.a_rs, d.k, d.a_cs) / 4) &&
         covers(l, 1, fake_gemm_reach(&d, d.b_batch, d.k, d.b_rs, d.n, d.b_cs) / 4);
  for (int i = 4; i < 7 && ok; i++) /* the scales, when given */
    if (arg(l, i)) ok = covers(l, i, 1);
  return ok;
}

#endif
