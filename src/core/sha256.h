/* Internal: SHA-256 (FIPS 180-4), for model hashes in records and `tb_model_sha256`. */
#ifndef TB_CORE_SHA256_H
#define TB_CORE_SHA256_H
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/status.h>

typedef struct tb_sha256 {
  uint32_t state[8];
  uint64_t length;      /* bytes hashed so far */
  uint8_t block[64];
  size_t used;          /* bytes waiting in block */
} tb_sha256;

void tb_sha256_init(tb_sha256 *h);
void tb_sha256_update(tb_sha256 *h, const void *data, size_t size);
void tb_sha256_final(tb_sha256 *h, uint8_t digest[32]);
/* tb_sha256_hex (the digest as hex) is public: include/tensorbridge/status.h. */

#endif
