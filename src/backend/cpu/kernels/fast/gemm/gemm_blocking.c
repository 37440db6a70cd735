/* The fp32 GEMM's column block for L2: the CPU's L2 size per core (cpuid, read once) and the number of B
 * columns a task packs and sweeps per depth block so that its C block, the packed B panel and the packed A
 * block stay in half of that L2 across the depth blocks. Which columns run together does not change any
 * element's operations (every element still sees the same depth blocks in the same order). */
#include <stdatomic.h>
#include <stddef.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* Used when cpuid does not say (a CPU or hypervisor without leaf 0x80000006, or not x86): the L2 of an
 * AVX2 server core of the Zen 2 / Zen 3 generation, smaller than Zen 4/5's and Skylake-SP's (1 MiB). */
enum { L2_FALLBACK_BYTES = 512 * 1024 };

/* At least this many B slivers per column block: below, the A block is packed again too often. */
enum { MIN_BLOCK_SLIVERS = 16 };

static int64_t read_l2_bytes(void) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  /* leaf 0x80000006 ECX[31:16]: L2 size in KiB per core, on AMD and on Intel */
  if (__get_cpuid_max(0x80000000u, NULL) >= 0x80000006u && __get_cpuid(0x80000006u, &eax, &ebx, &ecx, &edx)) {
    int64_t kib = (int64_t)(ecx >> 16);
    if (kib >= 64 && kib <= 64 * 1024) return kib * 1024;
  }
#endif
  return L2_FALLBACK_BYTES;
}

int64_t tb_gemm_l2_bytes(void) {
  static _Atomic int64_t cached;
  int64_t v = atomic_load_explicit(&cached, memory_order_relaxed);
  if (!v) {
    v = read_l2_bytes();
    atomic_store_explicit(&cached, v, memory_order_relaxed);
  }
  return v;
}

int64_t tb_gemm_column_block(int64_t l2_bytes, int64_t rows, int64_t kc, int nr) {
  int64_t most = GEMM_NC / nr * nr, least = (int64_t)MIN_BLOCK_SLIVERS * nr;
  if (rows <= 0 || kc <= 0 || l2_bytes <= 0) return most;
  int64_t budget = l2_bytes / 2 - rows * kc * (int64_t)sizeof(float); /* less the packed A block */
  int64_t cols = budget / ((rows + kc) * (int64_t)sizeof(float));     /* a column of C and one of the B panel */
  cols = cols / nr * nr;
  return cols < least ? least : cols > most ? most : cols;
}
