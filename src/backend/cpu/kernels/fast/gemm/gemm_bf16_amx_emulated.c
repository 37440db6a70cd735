/* The AMX bf16 GEMM kernel built on the C model of the tile instructions (amx_emulate.h), for the tests:
 * the same source as the hardware kernel, tb_gemm_bf16_kernel_amx_emulated. */
#define TB_AMX_EMULATED 1
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_amx.c"
