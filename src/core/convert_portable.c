/* The portable loops for the dedicated conversion pairs: the scalar reference applied per element,
 * and 256-entry tables for fp8 -> f32. Used on CPUs without the vector paths, and when
 * TB_CPU_FEATURES masks them off. */
#include <pthread.h>
#include <string.h>

#include "core/convert_kernels.h"
#include "core/convert_scalar.h"

void tb_convert_f32_to_f16_portable(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  const float *s = src;
  uint16_t *d = dst;
  for (size_t i = 0; i < count; i++) d[i] = tb_f32_to_f16_ref(s[i]);
}

void tb_convert_f16_to_f32_portable(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  const uint16_t *s = src;
  float *d = dst;
  for (size_t i = 0; i < count; i++) d[i] = tb_minifloat_to_float(TB_MINIFLOAT_F16, s[i]);
}

void tb_convert_f32_to_bf16_portable(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  const float *s = src;
  uint16_t *d = dst;
  for (size_t i = 0; i < count; i++) d[i] = tb_f32_to_bf16_ref(s[i]);
}

void tb_convert_bf16_to_f32_portable(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  const uint16_t *s = src;
  uint32_t *d = dst; /* bf16 is the top half of a float: a shift, bit for bit */
  for (size_t i = 0; i < count; i++) d[i] = (uint32_t)s[i] << 16;
}

void tb_convert_f32_to_e4m3fn_portable(const void *src, void *dst, size_t count, bool saturate) {
  const float *s = src;
  uint8_t *d = dst;
  for (size_t i = 0; i < count; i++) d[i] = tb_f32_to_e4m3fn_ref(s[i], saturate);
}

void tb_convert_f32_to_e5m2_portable(const void *src, void *dst, size_t count, bool saturate) {
  const float *s = src;
  uint8_t *d = dst;
  for (size_t i = 0; i < count; i++) d[i] = tb_f32_to_e5m2_ref(s[i], saturate);
}

static float e4m3fn_values[256], e5m2_values[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void build_tables(void) {
  for (unsigned b = 0; b < 256; b++) {
    e4m3fn_values[b] = tb_minifloat_to_float(TB_MINIFLOAT_E4M3FN, (uint16_t)b);
    e5m2_values[b] = tb_minifloat_to_float(TB_MINIFLOAT_E5M2, (uint16_t)b);
  }
}

static void lookup(const float *table, const void *src, void *dst, size_t count) {
  const uint8_t *s = src;
  float *d = dst;
  for (size_t i = 0; i < count; i++) d[i] = table[s[i]];
}

void tb_convert_e4m3fn_to_f32_table(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  pthread_once(&tables_once, build_tables);
  lookup(e4m3fn_values, src, dst, count);
}

void tb_convert_e5m2_to_f32_table(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  pthread_once(&tables_once, build_tables);
  lookup(e5m2_values, src, dst, count);
}
