/* The AMX bf16 GEMM path: a 32 x 32 micro-kernel on the eight tiles (four 16 x 16 fp32 accumulators, two
 * 16-row tiles of A, two 16-column tiles of B, four tdpbf16ps per 32 k), and the packing of its layouts.
 * B keeps the shared pair-interleaved layout (gemm_bf16_kernel.h), which is AMX's own for B: a B tile is
 * 16 pairs of k x 16 columns, rows 128 bytes apart in a 32-wide sliver. A is packed line by line instead
 * (line o's kpp pairs at o * kpp * 2): a tile of A is 16 lines x 32 k. Every sliver's depth is padded with
 * zeros to whole tiles of 16 pairs (pair_block), so no tile reads past its sliver. Each thread loads the
 * configuration (all eight tiles 16 rows x 64 bytes) before its first tile (thread_setup: again only when
 * the thread's configuration differs, e.g. another library used the tiles in between). C is loaded into
 * the accumulator tiles and stored from them directly (alpha 1, beta 0 or 1: the driver's usual case).
 * Built twice: on the hardware (gemm_bf16_amx.c, x86-64 only, run only when cpuid has AMX, the kernel has
 * granted the tile state and the self-check of gemm_bf16_check.c passed) and on the C model of the
 * instructions (gemm_bf16_amx_emulated.c, TB_AMX_EMULATED), which the tests run on any machine. */
#include <stdbool.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/amx_tiles.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_amx_pack.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"

#if defined(TB_AMX_EMULATED)
#define TB_AMX_KERNEL tb_gemm_bf16_kernel_amx_emulated
#else
#define TB_AMX_KERNEL tb_gemm_bf16_kernel_amx
#endif

#if TB_AMX_BUILT
enum { MR = 32, NR = 32, PAIR_BLOCK = TB_AMX_PAIR_BLOCK, TILE_ROWS = 16, TILE_BYTES = 64 };

static const tb_amx_config config = {
    .palette_id = 1,
    .colsb = {TILE_BYTES, TILE_BYTES, TILE_BYTES, TILE_BYTES, TILE_BYTES, TILE_BYTES, TILE_BYTES, TILE_BYTES},
    .rows = {TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS, TILE_ROWS},
};

static TB_AMX_TARGET void thread_setup(void) {
  _Alignas(64) tb_amx_config now;
  TB_TILE_STORECONFIG(&now);
  if (memcmp(&now, &config, sizeof now) != 0) TB_TILE_LOADCONFIG(&config);
}

/* The products of a sliver pair over kp (a multiple of PAIR_BLOCK) pairs added to tiles 0-3, which hold
 * (rows 0-15 | 16-31) x (columns 0-15 | 16-31); 4-5 hold A, 6-7 hold B. */
static TB_AMX_TARGET void tile_products(int64_t kp, const uint16_t *a, const uint16_t *b) {
  const long a_stride = (long)kp * 4, b_stride = NR * 4;
  const uint16_t *a_low = a + TILE_ROWS * kp * 2;
  for (int64_t q = 0; q < kp; q += PAIR_BLOCK) {
    TB_TILE_LOAD(4, a + q * 2, a_stride);
    TB_TILE_LOAD(6, b + q * NR * 2, b_stride);
    TB_TILE_LOAD(7, b + q * NR * 2 + 32, b_stride);
    TB_TILE_DPBF16PS(0, 4, 6);
    TB_TILE_DPBF16PS(1, 4, 7);
    TB_TILE_LOAD(5, a_low + q * 2, a_stride);
    TB_TILE_DPBF16PS(2, 5, 6);
    TB_TILE_DPBF16PS(3, 5, 7);
  }
}

/* The 32 x 32 sums into acc (row stride NR). */
static TB_AMX_TARGET void tile_sums(int64_t kp, const uint16_t *a, const uint16_t *b, float *acc) {
  TB_TILE_ZERO(0);
  TB_TILE_ZERO(1);
  TB_TILE_ZERO(2);
  TB_TILE_ZERO(3);
  tile_products(kp, a, b);
  TB_TILE_STORE(0, acc, NR * 4);
  TB_TILE_STORE(1, acc + 16, NR * 4);
  TB_TILE_STORE(2, acc + TILE_ROWS * NR, NR * 4);
  TB_TILE_STORE(3, acc + TILE_ROWS * NR + 16, NR * 4);
}

/* With alpha 1 and beta 0 or 1 (every depth block after the first), C itself is the accumulator: loaded
 * into the tiles (or the tiles zeroed), the products added, the tiles stored back, with no pass over C in
 * vector code. An edge goes through a 32 x 32 copy of its part of C so that its elements see the same
 * additions as a whole tile's. Other alpha and beta: alpha * sums + beta * C. */
static bool accumulates_in_c(float alpha, float beta) { return alpha == 1.0f && (beta == 0.0f || beta == 1.0f); }

static TB_AMX_TARGET void edge_amx(int64_t kp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc, float alpha,
                                   float beta, int rows, int cols) {
  _Alignas(64) float acc[MR * NR];
  if (accumulates_in_c(alpha, beta)) {
    memset(acc, 0, sizeof acc);
    for (int i = 0; beta != 0.0f && i < rows; i++) memcpy(acc + i * NR, c + i * ldc, (size_t)cols * sizeof(float));
    TB_TILE_LOAD(0, acc, NR * 4);
    TB_TILE_LOAD(1, acc + 16, NR * 4);
    TB_TILE_LOAD(2, acc + TILE_ROWS * NR, NR * 4);
    TB_TILE_LOAD(3, acc + TILE_ROWS * NR + 16, NR * 4);
    tile_products(kp, a, b);
    TB_TILE_STORE(0, acc, NR * 4);
    TB_TILE_STORE(1, acc + 16, NR * 4);
    TB_TILE_STORE(2, acc + TILE_ROWS * NR, NR * 4);
    TB_TILE_STORE(3, acc + TILE_ROWS * NR + 16, NR * 4);
    for (int i = 0; i < rows; i++) memcpy(c + i * ldc, acc + i * NR, (size_t)cols * sizeof(float));
    return;
  }
  tile_sums(kp, a, b, acc);
  for (int i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    const float *ai = acc + i * NR;
    if (beta == 0.0f)
      for (int j = 0; j < cols; j++) ci[j] = alpha * ai[j];
    else
      for (int j = 0; j < cols; j++) ci[j] = alpha * ai[j] + beta * ci[j];
  }
}

static TB_AMX_TARGET void ukr_amx(int64_t kp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc, float alpha,
                                  float beta) {
  if (!accumulates_in_c(alpha, beta)) {
    edge_amx(kp, a, b, c, ldc, alpha, beta, MR, NR);
    return;
  }
  const long stride = (long)ldc * 4;
  float *c_low = c + TILE_ROWS * ldc;
  if (beta == 0.0f) {
    TB_TILE_ZERO(0);
    TB_TILE_ZERO(1);
    TB_TILE_ZERO(2);
    TB_TILE_ZERO(3);
  } else {
    TB_TILE_LOAD(0, c, stride);
    TB_TILE_LOAD(1, c + 16, stride);
    TB_TILE_LOAD(2, c_low, stride);
    TB_TILE_LOAD(3, c_low + 16, stride);
  }
  tile_products(kp, a, b);
  TB_TILE_STORE(0, c, stride);
  TB_TILE_STORE(1, c + 16, stride);
  TB_TILE_STORE(2, c_low, stride);
  TB_TILE_STORE(3, c_low + 16, stride);
}

/* The packing: AVX-512 on the hardware (AMX implies it); on the model, whatever this CPU runs. */
#if defined(TB_AMX_EMULATED)
#define PACK_AVX512 tb_amx_pack_avx512_runs()
#else
#define PACK_AVX512 true
#endif
static void pack_a_o(const float *src, int64_t ld, int64_t kc, int64_t outer, int width, uint16_t *dst) {
  tb_amx_pack(TB_AMX_PACK_A_O, PACK_AVX512, src, ld, kc, outer, width, dst);
}
static void pack_a_p(const float *src, int64_t ld, int64_t kc, int64_t outer, int width, uint16_t *dst) {
  tb_amx_pack(TB_AMX_PACK_A_P, PACK_AVX512, src, ld, kc, outer, width, dst);
}
static void pack_b_o(const float *src, int64_t ld, int64_t kc, int64_t outer, int width, uint16_t *dst) {
  tb_amx_pack(TB_AMX_PACK_B_O, PACK_AVX512, src, ld, kc, outer, width, dst);
}
static void pack_b_p(const float *src, int64_t ld, int64_t kc, int64_t outer, int width, uint16_t *dst) {
  tb_amx_pack(TB_AMX_PACK_B_P, PACK_AVX512, src, ld, kc, outer, width, dst);
}

const tb_gemm_bf16_kernel TB_AMX_KERNEL = {.mr = MR, .nr = NR, .pair_block = PAIR_BLOCK, .ukr = ukr_amx,
                                           .edge = edge_amx, .thread_setup = thread_setup,
                                           .pack_o_contiguous = pack_b_o, .pack_p_contiguous = pack_b_p,
                                           .pack_a_o_contiguous = pack_a_o, .pack_a_p_contiguous = pack_a_p};
#else
const tb_gemm_bf16_kernel TB_AMX_KERNEL = {0};
#endif
