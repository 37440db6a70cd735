/* libFuzzer harness for the .npy reader: every input is written to a memfd and loaded with tb_npy_load
 * onto the CPU backend (made once). A load may succeed or fail, but a failure must be one of the reader's
 * documented statuses with a sentence, and a loaded tensor's bytes must all be readable. Anything else,
 * a crash, a leak or a sanitizer report is a finding. Built by tests/fuzz/CMakeLists.txt (TB_FUZZ=ON,
 * clang); run by scripts/fuzz.sh ... npy. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <tensorbridge/tensorbridge.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tb_backend *cpu;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!cpu && tb_backend_create("cpu", &cpu) != TB_OK) __builtin_trap();
  int fd = memfd_create("fuzz.npy", MFD_CLOEXEC);
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  tb_tensor *t = NULL;
  tb_status s = tb_npy_load(path, cpu, &t);
  close(fd);
  if (s != TB_OK) {
    if (t) __builtin_trap();
    if (s != TB_ERR_IO && s != TB_ERR_INVALID_ARGUMENT && s != TB_ERR_UNSUPPORTED && s != TB_ERR_OUT_OF_MEMORY)
      __builtin_trap();
    if (strlen(tb_last_error()) < 10) __builtin_trap();
    return 0;
  }
  size_t n = tb_tensor_nbytes(t);
  const uint8_t *p = tb_tensor_host_data(t);
  if (n && !p) __builtin_trap();
  uint8_t x = 0;
  for (size_t i = 0; i < n; i++) x ^= p[i];
  if (x == 0 && n == SIZE_MAX) __builtin_trap();
  tb_tensor_destroy(t);
  return 0;
}
