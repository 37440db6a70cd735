/* Internal: bf16 GEMM with fp32 accumulation for the level-3 (O3 / precision bf16) CPU kernels:
 * C = epilogue(alpha * op(A) op(B) + beta * C) where A and B are fp32 rounded to bf16 (round to nearest
 * even, NaN quieted, subnormals kept: exactly what tb_convert gives) while they are packed, products
 * summed in fp32, and C fp32. The operand and epilogue contract is gemm_f32.h's (tb_gemm_epilogue is
 * shared; tb_gemm_bf16_operand has the fields of tb_gemm_operand with a bf16-packed operand in `packed`).
 *
 * Paths: AMX (tdpbf16ps on 16 x 16 tiles), AVX512-BF16 (vdpbf16ps on pairs of k) and portable C computing
 * the same products (bf16 inputs, fp32 sums; only the summation order differs). The AMX kernel is also
 * built on a C model of the tile instructions (amx_emulate.h), the path the tests run it on where there is
 * no AMX; on the hardware it is used only after a self-check against the portable path passes. */
#ifndef TB_CPU_KERNELS_FAST_GEMM_BF16_H
#define TB_CPU_KERNELS_FAST_GEMM_BF16_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"

typedef enum tb_gemm_bf16_path {
  TB_GEMM_BF16_PORTABLE = 0,
  TB_GEMM_BF16_AVX512BF16, /* AVX512F + AVX512BW + AVX512_BF16 */
  TB_GEMM_BF16_AMX,        /* AVX512-BF16's + AMX_TILE + AMX_BF16, the tile state granted, self-checked */
  TB_GEMM_BF16_AMX_EMULATED, /* the AMX kernel on the C model of the instructions: tests only, never chosen */
  TB_GEMM_BF16_PATH_COUNT
} tb_gemm_bf16_path;

/* The TB_FEATURE_BIT sets of the AVX512-BF16 and AMX paths, as constants for kernel entries' initializers
 * (tb_gemm_bf16_path_features returns them; <tensorbridge/device.h> defines the bits). */
#define TB_GEMM_BF16_AVX512BF16_FEATURES \
  (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_AVX512BW) | TB_FEATURE_BIT(TB_FEATURE_AVX512BF16))
#define TB_GEMM_BF16_AMX_FEATURES \
  (TB_GEMM_BF16_AVX512BF16_FEATURES | TB_FEATURE_BIT(TB_FEATURE_AMX_TILE) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16))

/* The fastest path for a TB_FEATURE_BIT mask: AMX when its features are in the mask and
 * tb_gemm_bf16_amx_ready(), else AVX512-BF16 when AVX512F, AVX512BW and AVX512BF16 are all present, else
 * portable. */
tb_gemm_bf16_path tb_gemm_bf16_path_for(uint64_t features);
/* The TB_FEATURE_BIT set a path needs (0 for portable and the emulated AMX), for kernel entries. */
uint64_t tb_gemm_bf16_path_features(tb_gemm_bf16_path path);
/* "portable", "avx512bf16", "amx", "amx-emulated" */
const char *tb_gemm_bf16_path_name(tb_gemm_bf16_path path);

/* Whether the AMX path runs on this machine: the kernel is built, this CPU's cpuid (not a recorded one)
 * has AMX-TILE and AMX-BF16, Linux granted the process the tile state, and tb_gemm_bf16_self_check
 * passed. Decided once; a failure is logged (warning) with its reason. */
bool tb_gemm_bf16_amx_ready(void);
/* path, or when it cannot run here (AMX not ready) the best path of this CPU without AMX: what a kernel
 * entry chosen for AMX runs, so prepare and run agree. */
tb_gemm_bf16_path tb_gemm_bf16_runnable(tb_gemm_bf16_path path);
/* Runs the path on a fixed 45 x 70 x 1100 product whose values are exact in bf16 and whose sums are exact
 * in fp32 in any order (edges, padding and three depth blocks) and compares with the portable path bit
 * for bit; false with the first difference in why when they differ or memory runs out. */
bool tb_gemm_bf16_self_check(tb_gemm_bf16_path path, char *why, size_t why_cap);

typedef struct tb_gemm_bf16_packed tb_gemm_bf16_packed; /* an operand rounded to bf16 and packed; opaque */

/* One operand: exactly one of data, packed and pack is set. data and pack give fp32 values (rounded to
 * bf16 by the driver); pack follows tb_gemm_pack_fn's contract (gemm_f32.h) and is called per sliver,
 * possibly from several threads at once. */
typedef struct tb_gemm_bf16_operand {
  const float *data;                /* row-major; op() transposes when trans */
  int64_t ld;
  bool trans;
  const tb_gemm_bf16_packed *packed; /* from tb_gemm_bf16_pack_a / _pack_b for the same path and sizes */
  tb_gemm_pack_fn pack;
  void *pack_ctx;
} tb_gemm_bf16_operand;

/* op(A) (m x k) or op(B) (k x n) rounded and packed once for this path (weights at prepare time); the
 * source operand must be plain (data) or on-demand (pack). NULL when out of memory or the operand is
 * itself packed. */
tb_gemm_bf16_packed *tb_gemm_bf16_pack_a(tb_gemm_bf16_path path, const tb_gemm_bf16_operand *a, int64_t m, int64_t k);
tb_gemm_bf16_packed *tb_gemm_bf16_pack_b(tb_gemm_bf16_path path, const tb_gemm_bf16_operand *b, int64_t k, int64_t n);
void tb_gemm_bf16_packed_free(tb_gemm_bf16_packed *packed);
/* Bytes a packed operand holds (for prepare-time metrics). */
size_t tb_gemm_bf16_packed_bytes(const tb_gemm_bf16_packed *packed);

/* C[m x n] (row stride ldc) = epilogue(alpha * op(A) op(B) + beta * C), split over the pool's threads
 * (NULL: the caller's thread only). beta == 0 ignores C's old contents (NaN included). ep NULL: none;
 * ep->residual may alias C (it is then C's contents before the call). False when a buffer cannot be
 * allocated or a packed operand was made for another path or other sizes (C is then unspecified). */
bool tb_gemm_bf16_run(tb_gemm_bf16_path path, int64_t m, int64_t n, int64_t k, float alpha, const tb_gemm_bf16_operand *a,
                      const tb_gemm_bf16_operand *b, float beta, float *c, int64_t ldc, const tb_gemm_epilogue *ep,
                      struct tb_pool *pool);

#endif
