/* Internal: the AVX512-BF16 block step of the level-3 tb::Attention (seq_attention_bf16_avx512.c), driven by
 * seq_attention_bf16.c. One batch entry's K_T and V are rounded to bf16 and packed once as the bf16 GEMM's
 * B slivers (gemm_bf16_kernel.h: SEQ_ATTN_NR columns, pairs of k interleaved); then each block of up to
 * SEQ_ATTN_MR query rows runs S = Q K_T with the scale and mask applied as the tile is stored, the
 * softmax numerators exp(s - max) in fp32 rounded to bf16, and Y = (E V) / sum. */
#ifndef TB_CPU_KERNELS_FAST_SEQ_ATTENTION_BF16_H
#define TB_CPU_KERNELS_FAST_SEQ_ATTENTION_BF16_H
#include <stdbool.h>
#include <stdint.h>

enum { SEQ_ATTN_MR = 14, SEQ_ATTN_NR = 32 };

/* One entry's operands: Q rows and Y rows row-major, K_T and V packed, the scale and the mask. */
typedef struct seq_attn_bf16_head {
  const float *q; /* [lq x d] */
  float *y;       /* [lq x dv] */
  const uint16_t *k_pack, *v_pack; /* slivers of SEQ_ATTN_NR columns: kp_d (kp_l) pairs each */
  int64_t d, lk, dv;
  int64_t kp_d, kp_l; /* ceil(d / 2), ceil(lk / 2) */
  bool has_scale, divide, scale_by_inverse; /* divide by a power of two: multiply by its exact inverse */
  float scale, inv_scale;
  const float *mask; /* NULL, or element (i, c) at mask[i * mask_row + c * mask_col]; mask_col 0 or 1 */
  int64_t mask_row, mask_col;
} seq_attn_bf16_head;

/* A thread's buffers for one block: Q rows and E rows in bf16 (row strides 2 kp_d and 2 kp_l), the
 * scores (row stride lds, SEQ_ATTN_NR times the slivers of K_T), and per row the running maximum (16
 * lanes) and the sum's inverse. */
typedef struct seq_attn_bf16_scratch {
  uint16_t *q_rows, *e_rows;
  float *scores, *row_max, *row_inv;
  int64_t lds;
} seq_attn_bf16_scratch;

/* Y rows row0 .. row0+rows (1 <= rows <= SEQ_ATTN_MR) of one entry; only when the CPU has AVX512-BF16. */
void tb_seq_attention_bf16_block_avx512(const seq_attn_bf16_head *h, int64_t row0, int rows, seq_attn_bf16_scratch *s);

#endif
