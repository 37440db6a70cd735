/* Internal: the dedicated conversion loops of tb_convert (f32 <-> f16, bf16, fp8), one set per
 * instruction set, and the choice among them from a set of CPU features. Pairs without a dedicated
 * loop go through the generic element-wise path in convert.c. */
#ifndef TB_CORE_CONVERT_KERNELS_H
#define TB_CORE_CONVERT_KERNELS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/dtype.h>

/* Convert count packed elements; `saturate` is used by the fp8 encoders only. src and dst never
 * overlap (the dedicated pairs all change the element size). */
typedef void (*tb_convert_kernel_fn)(const void *src, void *dst, size_t count, bool saturate);

typedef struct tb_convert_kernel {
  tb_convert_kernel_fn fn; /* NULL: no dedicated loop, use the generic path */
  const char *path;        /* "avx512bf16", "avx512", "f16c", "portable", "table" or "generic" */
} tb_convert_kernel;

/* The loop tb_convert uses for (src, dst) on a CPU with `features` (TB_FEATURE_BIT set); path "copy"
 * when the dtypes are equal. */
tb_convert_kernel tb_convert_pick(tb_dtype src, tb_dtype dst, uint64_t features);

/* tb_convert as if the CPU had exactly `features` (tests use it to run every path). */
tb_status tb_convert_with_features(tb_dtype src_dtype, const void *src, tb_dtype dst_dtype, void *dst, size_t count,
                                   bool saturate, uint64_t features);

/* Portable C (convert_portable.c). */
void tb_convert_f32_to_f16_portable(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f16_to_f32_portable(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f32_to_bf16_portable(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_bf16_to_f32_portable(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f32_to_e4m3fn_portable(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f32_to_e5m2_portable(const void *src, void *dst, size_t count, bool saturate);
/* fp8 -> f32 through a 256-entry table of the exact values, built once. */
void tb_convert_e4m3fn_to_f32_table(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_e5m2_to_f32_table(const void *src, void *dst, size_t count, bool saturate);

#if defined(__x86_64__) || defined(__i386__)
#define TB_CONVERT_X86 1
/* AVX-512F (convert_avx512.c); the bf16 encoder there also has an AVX512-BF16 form. */
void tb_convert_f32_to_f16_avx512(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f16_to_f32_avx512(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f32_to_bf16_avx512(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f32_to_bf16_avx512bf16(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_bf16_to_f32_avx512(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f32_to_e4m3fn_avx512(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f32_to_e5m2_avx512(const void *src, void *dst, size_t count, bool saturate);
/* F16C with 256-bit AVX registers (convert_f16c.c). */
void tb_convert_f32_to_f16_f16c(const void *src, void *dst, size_t count, bool saturate);
void tb_convert_f16_to_f32_f16c(const void *src, void *dst, size_t count, bool saturate);
#endif

#endif
