/* Internal: the packing of the AMX bf16 path (its layouts: gemm_bf16_amx.c), in plain C and in AVX-512
 * giving the same bits. Depths are padded with zero pairs to whole tiles of TB_AMX_PAIR_BLOCK pairs. */
#ifndef TB_CPU_KERNELS_FAST_GEMM_BF16_AMX_PACK_H
#define TB_CPU_KERNELS_FAST_GEMM_BF16_AMX_PACK_H
#include <stdbool.h>
#include <stdint.h>

enum { TB_AMX_PAIR_BLOCK = 16 };

typedef enum tb_amx_pack_kind {
  TB_AMX_PACK_A_O, /* A (line by line) from element (p, o) at src[p * ld + o] */
  TB_AMX_PACK_A_P, /* A from src[o * ld + p] */
  TB_AMX_PACK_B_O, /* B (pair-interleaved) from src[p * ld + o] */
  TB_AMX_PACK_B_P, /* B from src[o * ld + p] */
} tb_amx_pack_kind;

/* One sliver of `width` lines (outer of them present) over depth kc, as tb_gemm_bf16_pack_fn; avx512 picks
 * the AVX-512 code (only where tb_amx_pack_avx512_runs()). */
void tb_amx_pack(tb_amx_pack_kind kind, bool avx512, const float *src, int64_t ld, int64_t kc, int64_t outer,
                 int width, uint16_t *dst);
/* Whether this CPU runs the AVX-512 packing (AVX512F, BW, VL and the AVX512-BF16 packing's features). */
bool tb_amx_pack_avx512_runs(void);

#endif
