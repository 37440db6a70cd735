/* Internal: the row step of the level-2 tb::Attention (seq_attention.c): scale, mask and softmax of one
 * score row, portable and with AVX-512 (seq_attention_avx512.c). */
#ifndef TB_CPU_KERNELS_FAST_SEQ_ATTENTION_H
#define TB_CPU_KERNELS_FAST_SEQ_ATTENTION_H
#include <stdbool.h>
#include <stdint.h>

typedef struct seq_attention_row {
  bool has_scale, divide; /* row / scale when divide, else row * scale, when has_scale */
  float scale;
  const float *mask; /* NULL, or the mask row: element c at mask[c * mask_step] */
  int64_t mask_step;
} seq_attention_row;

/* row[0..n) = softmax(scaled row + mask), n > 0; only when the CPU has AVX512F. */
void seq_attention_row_avx512(float *row, int64_t n, const seq_attention_row *how);

#endif
