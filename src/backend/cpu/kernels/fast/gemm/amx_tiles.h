/* Internal: the tile operations of the AMX kernel, on the hardware (GCC's AMX intrinsics, in functions
 * built with TB_AMX_TARGET) or, when TB_AMX_EMULATED is defined before this header, on the C model of
 * amx_emulate.h. Tile numbers are literal constants (the instructions encode them). TB_AMX_BUILT says
 * whether this translation unit has tile operations at all (x86-64, or the model anywhere). */
#ifndef TB_CPU_KERNELS_FAST_AMX_TILES_H
#define TB_CPU_KERNELS_FAST_AMX_TILES_H
#include "backend/cpu/kernels/fast/gemm/amx_emulate.h"

#if defined(TB_AMX_EMULATED)
#define TB_AMX_BUILT 1
#define TB_AMX_TARGET
#define TB_TILE_LOADCONFIG(config) tb_amx_emu_loadconfig(config)
#define TB_TILE_STORECONFIG(config) tb_amx_emu_storeconfig(config)
#define TB_TILE_ZERO(t) tb_amx_emu_zero(t)
#define TB_TILE_LOAD(t, base, stride) tb_amx_emu_load(t, base, stride)
#define TB_TILE_STORE(t, base, stride) tb_amx_emu_store(t, base, stride)
#define TB_TILE_DPBF16PS(dst, a, b) tb_amx_emu_dpbf16ps(dst, a, b)
#elif defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TB_AMX_BUILT 1
#define TB_AMX_TARGET __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw")))
/* ldtilecfg's intrinsic tells the compiler it reads 8 bytes: the memory clobber makes all 64 visible */
#define TB_TILE_LOADCONFIG(config)             \
  do {                                         \
    __asm__ volatile("" : : : "memory");       \
    _tile_loadconfig(config);                  \
  } while (0)
#define TB_TILE_STORECONFIG(config)            \
  do {                                         \
    _tile_storeconfig(config);                 \
    __asm__ volatile("" : : : "memory");       \
  } while (0)
#define TB_TILE_ZERO(t) _tile_zero(t)
/* tileloadd's intrinsic names no memory it reads: the barrier keeps stores to base (a copy of C just
 * made, say) from being moved after it */
#define TB_TILE_LOAD(t, base, stride)          \
  do {                                         \
    __asm__ volatile("" : : : "memory");       \
    _tile_loadd(t, base, stride);              \
  } while (0)
#define TB_TILE_STORE(t, base, stride) _tile_stored(t, base, stride)
#define TB_TILE_DPBF16PS(dst, a, b) _tile_dpbf16ps(dst, a, b)
#else
#define TB_AMX_BUILT 0
#endif

#endif
