/* Internal to SHA-256: the round constants and the SHA-NI block function (sha256_shani.c) that sha256.c
 * uses for whole runs of blocks when the CPU has it; the portable compression is the reference. */
#ifndef TB_CORE_SHA256_IMPL_H
#define TB_CORE_SHA256_IMPL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const uint32_t tb_sha256_round_constants[64];

/* cpuid reports SHA, SSSE3 and SSE4.1 (false off x86-64). */
bool tb_sha256_shani_available(void);
/* state after `blocks` 64-byte blocks from p, with the SHA extensions (call only when available). */
void tb_sha256_shani_blocks(uint32_t state[8], const uint8_t *p, size_t blocks);
/* The same in portable C (the reference the tests hold the SHA-NI path to). */
void tb_sha256_portable_blocks(uint32_t state[8], const uint8_t *p, size_t blocks);

#endif
