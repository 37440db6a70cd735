/* Internal: what the fast tb::Attention kernels share: the node's shapes and attributes checked once
 * (seq_attention.c), the pointers of one batch entry, and the row step (scale, mask and softmax of one
 * score row) portable, with AVX-512 (seq_attention_avx512.c) and with AVX2 (seq_attention_avx2.c). The
 * level-2 fp32 kernel is in seq_attention.c, the level-3 bf16 one in seq_attention_bf16.c. */
#ifndef TB_CPU_KERNELS_FAST_SEQ_ATTENTION_H
#define TB_CPU_KERNELS_FAST_SEQ_ATTENTION_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/kernel.h"

typedef struct seq_attention_row {
  bool has_scale, divide; /* row / scale when divide, else row * scale, when has_scale */
  float scale;
  const float *mask; /* NULL, or the mask row: element c at mask[c * mask_step] */
  int64_t mask_step;
} seq_attention_row;

/* One tb::Attention node as the fast kernels run it: Q [.., lq, d], K_T [.., d, lk], V [.., lk, dv] and
 * the optional mask (strides over the output rank + 2, 0 where it broadcasts), the scale attributes, the
 * batch the three broadcast to, and the output y [batch.., lq, dv]. */
typedef struct seq_attention_geom {
  const tb_tensor *q, *k, *v, *mask;
  size_t nb; /* batch rank of the output */
  int64_t batch[TB_MAX_DIMS];
  int64_t entries; /* product of batch */
  int64_t lq, d, lk, dv;
  int64_t mstride[TB_MAX_DIMS + 2];
  bool has_scale, divide;
  float scale;
  bool scale_by_inverse; /* divide by a power of two: multiply by inv_scale (tb_seq_attention_exact_inverse) */
  float inv_scale;
  tb_tensor *y;
} seq_attention_geom;

/* The pointers of batch entry p: Q [lq x d], K_T [d x lk], V [lk x dv] (row-major), the mask's element
 * (0, 0) of this entry (NULL without a mask; element (i, c) at mask[i * mstride[nb] + c * mstride[nb + 1]])
 * and Y [lq x dv]. */
typedef struct seq_attention_entry {
  const float *q, *k, *v, *mask;
  float *y;
} seq_attention_entry;

/* Check the inputs (float32, ranks, inner sizes, broadcasts), read scale and scale_divide, and allocate
 * the output (g->y); an error naming the node otherwise. */
tb_status tb_seq_attention_begin(tb_kernel_ctx *ctx, seq_attention_geom *g);
seq_attention_entry tb_seq_attention_entry_at(const seq_attention_geom *g, int64_t p);
/* The row step for query row i of an entry (mask row i, or none). */
seq_attention_row tb_seq_attention_row_for(const seq_attention_geom *g, const seq_attention_entry *e, int64_t i);
/* True when 1 / scale is exact (scale a power of two, both normal): x / scale is then x * inverse, the
 * same result without a division. */
bool tb_seq_attention_exact_inverse(float scale, float *inverse);
/* row[0..n) = softmax(scaled row + mask) on a path, n > 0: each step rounded to fp32 as the reference. */
void tb_seq_attention_softmax_row(tb_gemm_path path, float *row, int64_t n, const seq_attention_row *how);

/* row[0..n) = softmax(scaled row + mask), n > 0; only when the CPU has AVX512F. */
void tb_seq_attention_row_avx512(float *row, int64_t n, const seq_attention_row *how);
/* The same with AVX2 + FMA; only when the CPU has them. */
void tb_seq_attention_row_avx2(float *row, int64_t n, const seq_attention_row *how);

#endif
