/* The LSTM's fused step, the part the shared driver (seq_rnn.c) needs before any LSTM code runs: whether an
 * entry's path runs the fused step, and R packed into that step's layout (seq_rnn.h). Below both seq_rnn.c
 * and seq_lstm.c, so that the driver does not depend on the LSTM file that depends on it. */
#include <stdlib.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "backend/cpu/kernels/fast/seq/seq_rnn.h"

bool tb_seq_lstm_fused(tb_gemm_path path, int bf16) {
#if defined(__x86_64__)
  return (path == TB_GEMM_AVX512 && (bf16 < 0 || bf16 == TB_GEMM_BF16_AVX512BF16)) ||
         (path == TB_GEMM_AVX2 && bf16 < 0);
#else
  (void)path;
  (void)bf16;
  return false;
#endif
}

void *tb_seq_lstm_pack_r(const float *r, int64_t hidden, bool bf16) {
  int64_t blocks = (hidden + SEQ_LSTM_UNITS - 1) / SEQ_LSTM_UNITS, width = 2 * SEQ_LSTM_UNITS;
  int64_t depth = bf16 ? (hidden + 1) / 2 * 2 : hidden; /* bf16: k padded to whole pairs */
  size_t bytes = (size_t)(blocks * 2 * depth * width) * (bf16 ? sizeof(uint16_t) : sizeof(float));
  void *out = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!out) return NULL;
  float *dst = out;
  uint16_t *dst16 = out;
  for (int64_t j = 0; j < blocks; j++)
    for (int pair = 0; pair < 2; pair++) /* gates i, o then f, c: ONNX rows 0, 1 then 2, 3 of H each */
      for (int64_t q = 0; q < depth; q += bf16 ? 2 : 1)
        for (int64_t col = 0; col < width; col++) {
          int64_t gate = 2 * pair + col / SEQ_LSTM_UNITS, u = j * SEQ_LSTM_UNITS + col % SEQ_LSTM_UNITS;
          const float *row = r + (gate * hidden + u) * hidden;
          if (!bf16) {
            *dst++ = u < hidden ? row[q] : 0.0f;
            continue;
          }
          for (int64_t k = q; k < q + 2; k++) *dst16++ = u < hidden && k < hidden ? tb_bf16_round(row[k]) : 0;
        }
  return out;
}
