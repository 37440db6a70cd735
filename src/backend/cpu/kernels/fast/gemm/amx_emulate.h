/* Internal: a C model of the AMX tile instructions the bf16 GEMM uses (ldtilecfg, sttilecfg, tilezero,
 * tileloadd, tilestored, tdpbf16ps), following the pseudocode of Intel's instruction set reference, on a
 * per-thread register file. The development machine has no AMX and no emulator, so the AMX kernel
 * (gemm_bf16_amx.c) is also built on this model (gemm_bf16_amx_emulated.c) and the tests run it: its
 * layouts, strides, tile shapes, per-thread configuration and padding are checked that way. What real
 * hardware would fault on (#UD / #GP: an unconfigured thread, a tile used outside its configured shape, an
 * invalid configuration) is counted, not raised, and the tests assert the count stays zero. */
#ifndef TB_CPU_KERNELS_FAST_AMX_EMULATE_H
#define TB_CPU_KERNELS_FAST_AMX_EMULATE_H
#include <stdint.h>

/* The 64-byte tile configuration ldtilecfg reads (palette 1: eight tiles of up to 16 rows x 64 bytes). */
typedef struct tb_amx_config {
  uint8_t palette_id, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tb_amx_config;

void tb_amx_emu_loadconfig(const tb_amx_config *config);
void tb_amx_emu_storeconfig(tb_amx_config *config);
void tb_amx_emu_zero(int tile);
void tb_amx_emu_load(int tile, const void *base, long stride);
void tb_amx_emu_store(int tile, void *base, long stride);
/* dst (fp32 rows x colsb/4) += a (bf16 pairs) . b (pair-interleaved bf16): per row m, depth pair k and
 * column n, two fp32 adds of exact products, input subnormals read as zero and subnormal sums flushed. */
void tb_amx_emu_dpbf16ps(int dst, int a, int b);

/* Instructions that would have faulted on real hardware, over the whole process; and the calling thread's
 * tile state dropped (the state a new thread starts in), for tests. */
unsigned long tb_amx_emu_faults(void);
void tb_amx_emu_release(void);

#endif
