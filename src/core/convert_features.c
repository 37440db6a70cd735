/* Run-time choice of tb_convert's vector paths: the CPU's features from the same cpuid decoding the
 * CPU probe uses, masked by TB_CPU_FEATURES through the probe's own parser. */
#include "core/convert_features.h"

#include <pthread.h>

#include "core/env.h"
#include "core/cpuid.h"
#include "core/cpu_features.h"

static uint64_t hardware;
static pthread_once_t hardware_once = PTHREAD_ONCE_INIT;

static void read_hardware(void) {
  static tb_cpuid_dump dump; /* large; only touched once, under pthread_once */
  if (!tb_cpuid_read_host(&dump)) return;
  tb_cpu_ident ident;
  tb_cpuid_decode(&dump, &ident);
  hardware = ident.features & TB_CPU_FEATURE_BITS;
}

uint64_t tb_convert_hardware_features(void) {
  pthread_once(&hardware_once, read_hardware);
  return hardware;
}

uint64_t tb_convert_features(void) {
  uint64_t features = tb_convert_hardware_features();
  const char *mask = tb_env("TB_CPU_FEATURES");
  if (!mask) return features;
  return tb_cpu_features_apply_mask(features, mask, NULL, NULL).features;
}
