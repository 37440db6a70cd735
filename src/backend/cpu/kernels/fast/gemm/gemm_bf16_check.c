/* When the AMX bf16 path may run: the hardware, the kernel's permission, and a self-check of the path
 * against the portable one on a product whose exact result every summation order reaches; and with it the
 * choice of the fastest path for a feature set (tb_gemm_bf16_path_for), which asks whether AMX is ready.
 * The AMX kernel was developed on a machine without AMX (tested there on the C model of the instructions),
 * so on real tiles it is trusted only after this check passes; otherwise the bf16 GEMM runs on AVX512-BF16. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/device.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "core/convert_features.h"
#include "core/env.h"
#include "discover/cpu_amx.h"

enum { CHECK_M = 45, CHECK_N = 70, CHECK_K = 1100 };

/* Multiples of 1/8 in [-1, 1]: exact in bf16; their products are multiples of 1/64 and any sum of 1100 of
 * them stays below 2^24 / 64, so every order of summation gives the same fp32 bits. */
static float check_value(int64_t i, int64_t j, int salt) { return (float)((i * 7 + j * 3 + salt) % 17 - 8) / 8.0f; }

bool tb_gemm_bf16_self_check(tb_gemm_bf16_path path, char *why, size_t why_cap) {
  float *a = malloc(sizeof(float) * CHECK_M * CHECK_K), *b = malloc(sizeof(float) * CHECK_K * CHECK_N);
  float *got = malloc(sizeof(float) * CHECK_M * CHECK_N), *want = malloc(sizeof(float) * CHECK_M * CHECK_N);
  bool ok = a && b && got && want;
  if (!ok) snprintf(why, why_cap, "no memory for the bf16 GEMM self-check");
  for (int64_t i = 0; ok && i < CHECK_M; i++)
    for (int64_t p = 0; p < CHECK_K; p++) a[i * CHECK_K + p] = check_value(i, p, 1);
  for (int64_t p = 0; ok && p < CHECK_K; p++)
    for (int64_t j = 0; j < CHECK_N; j++) b[p * CHECK_N + j] = check_value(p, j, 5);
  tb_gemm_bf16_operand oa = {.data = a, .ld = CHECK_K}, ob = {.data = b, .ld = CHECK_N};
  if (ok && (!tb_gemm_bf16_run(path, CHECK_M, CHECK_N, CHECK_K, 1.0f, &oa, &ob, 0.0f, got, CHECK_N, NULL, NULL) ||
             !tb_gemm_bf16_run(TB_GEMM_BF16_PORTABLE, CHECK_M, CHECK_N, CHECK_K, 1.0f, &oa, &ob, 0.0f, want, CHECK_N,
                               NULL, NULL))) {
    snprintf(why, why_cap, "no memory for the bf16 GEMM self-check");
    ok = false;
  }
  for (int64_t e = 0; ok && e < CHECK_M * CHECK_N; e++)
    if (memcmp(&got[e], &want[e], sizeof(float)) != 0) {
      snprintf(why, why_cap, "the %s bf16 GEMM gave %g at row %lld, column %lld of a %dx%dx%d self-check where the "
               "portable path gives %g", tb_gemm_bf16_path_name(path), (double)got[e], (long long)(e / CHECK_N),
               (long long)(e % CHECK_N), CHECK_M, CHECK_N, CHECK_K, (double)want[e]);
      ok = false;
    }
  free(a);
  free(b);
  free(got);
  free(want);
  return ok;
}

static bool amx_ready;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;

static void decide_amx(void) {
  uint64_t need = TB_FEATURE_BIT(TB_FEATURE_AMX_TILE) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16);
  if (!tb_gemm_bf16_kernel_amx.ukr || (tb_convert_hardware_features() & need) != need) return; /* no AMX: no log */
  char why[300], errno_text[32];
  int err = tb_amx_request_permission();
  if (err != 0) {
    tb_log(TB_LOG_WARN, "CPU: Linux refused the AMX tile state (%s); the bf16 GEMM runs without AMX",
           tb_errno_name(err, errno_text, sizeof errno_text));
    return;
  }
  if (!tb_gemm_bf16_self_check(TB_GEMM_BF16_AMX, why, sizeof why)) {
    tb_log(TB_LOG_WARN, "CPU: %s; AMX is not used, the bf16 GEMM runs without it (please report this)", why);
    return;
  }
  amx_ready = true;
}

bool tb_gemm_bf16_amx_ready(void) {
  pthread_once(&amx_once, decide_amx);
  return amx_ready;
}

tb_gemm_bf16_path tb_gemm_bf16_path_for(uint64_t features) {
  uint64_t amx = tb_gemm_bf16_path_features(TB_GEMM_BF16_AMX);
  if ((features & amx) == amx && tb_gemm_bf16_amx_ready()) return TB_GEMM_BF16_AMX;
  uint64_t need = tb_gemm_bf16_path_features(TB_GEMM_BF16_AVX512BF16);
  if ((features & need) == need && tb_gemm_bf16_kernel_avx512bf16.ukr) return TB_GEMM_BF16_AVX512BF16;
  return TB_GEMM_BF16_PORTABLE;
}

tb_gemm_bf16_path tb_gemm_bf16_runnable(tb_gemm_bf16_path path) {
  if (path != TB_GEMM_BF16_AMX || tb_gemm_bf16_amx_ready()) return path;
  uint64_t amx = TB_FEATURE_BIT(TB_FEATURE_AMX_TILE) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16);
  return tb_gemm_bf16_path_for(tb_convert_hardware_features() & ~amx);
}
