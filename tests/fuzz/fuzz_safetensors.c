/* libFuzzer harness for the safetensors reader and the run-record checks: every input is opened from memory
 * (tb_safetensors_open_memory). An open may succeed or fail, but a failure must be one of the reader's
 * documented statuses with a sentence; on success every entry must lie inside the input and every
 * accessor must answer. Anything else, a crash, a leak or a sanitizer report is a finding. Built by
 * tests/fuzz/CMakeLists.txt (TB_FUZZ=ON, clang); run by scripts/fuzz.sh ... safetensors. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <tensorbridge/checkpoint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tb_safetensors *st = NULL;
  tb_status s = tb_safetensors_open_memory(data, size, "fuzz.safetensors", &st);
  if (s != TB_OK) {
    if (st) __builtin_trap();
    if (s != TB_ERR_MODEL && s != TB_ERR_UNSUPPORTED && s != TB_ERR_OUT_OF_MEMORY) __builtin_trap();
    if (strlen(tb_last_error()) < 10) __builtin_trap();
    return 0;
  }
  uint64_t covered = 0;
  for (size_t i = 0; i < tb_safetensors_count(st); i++) {
    tb_safetensors_info info = {.size = sizeof info};
    if (tb_safetensors_info_at(st, i, &info) != TB_OK || !info.name) __builtin_trap();
    if (info.data_offset > size || info.nbytes > size - info.data_offset) __builtin_trap();
    if (info.nbytes != 0 && tb_dtype_size(info.dtype) == 0) __builtin_trap();
    const void *bytes;
    size_t n;
    if (tb_safetensors_data(st, info.name, &bytes, &n) != TB_OK || n != info.nbytes) __builtin_trap();
    uint8_t x = 0;
    for (size_t k = 0; k < n; k++) x ^= ((const uint8_t *)bytes)[k]; /* every byte must be readable */
    if (x == 0 && n == SIZE_MAX) __builtin_trap(); /* keeps the loop */
    covered += n;
  }
  if (covered > size) __builtin_trap();
  for (size_t i = 0; i < tb_safetensors_metadata_count(st); i++) {
    const char *k, *v;
    if (tb_safetensors_metadata_at(st, i, &k, &v) != TB_OK || tb_safetensors_metadata(st, k) != v) __builtin_trap();
  }
  tb_safetensors_close(st);
  return 0;
}
