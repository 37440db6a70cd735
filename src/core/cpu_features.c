/* CPU feature masks: the prerequisite table, TB_CPU_FEATURES parsing, and formatting of feature sets. */
#include "core/cpu_features.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core/env.h"

#define BIT(f) TB_FEATURE_BIT(TB_FEATURE_##f)
#define AVX512_GROUP (BIT(AVX512F) | BIT(AVX512BW) | BIT(AVX512VL) | BIT(AVX512VNNI) | BIT(AVX512BF16) | BIT(AVX512FP16))
#define AMX_GROUP (BIT(AMX_TILE) | BIT(AMX_BF16) | BIT(AMX_INT8))

/* What each feature needs. AVX-512 needs AVX2 on every CPU that has it; the AVX-512 extensions need
 * AVX512F (Intel SDM vol. 1, 15.2); AMX-BF16/INT8 operate on AMX tiles (Intel SDM vol. 1, 18.1);
 * SVE and SME extend the Advanced SIMD register file (Arm ARM, A1.5). */
static uint64_t prerequisites(tb_feature f) {
  switch (f) {
    case TB_FEATURE_AVX512F: return BIT(AVX2);
    case TB_FEATURE_AVX512BW:
    case TB_FEATURE_AVX512VL:
    case TB_FEATURE_AVX512VNNI:
    case TB_FEATURE_AVX512BF16:
    case TB_FEATURE_AVX512FP16: return BIT(AVX512F);
    case TB_FEATURE_AMX_BF16:
    case TB_FEATURE_AMX_INT8: return BIT(AMX_TILE);
    case TB_FEATURE_SVE:
    case TB_FEATURE_SME: return BIT(NEON);
    default: return 0;
  }
}

const char *tb_cpu_features_valid_names(void) {
  return "sse4_2, avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512vnni, avx512bf16, avx512fp16, amx_tile, "
         "amx_bf16, amx_int8, neon, sve, sme, and the groups amx (amx_tile, amx_bf16, amx_int8) and avx512 (every "
         "avx512 feature)";
}

uint64_t tb_cpu_features_with_dependents(uint64_t removed) {
  for (bool grew = true; grew;) {
    grew = false;
    for (int f = 0; f < TB_FEATURE_COUNT; f++) {
      if (!(removed & TB_FEATURE_BIT(f)) && (prerequisites((tb_feature)f) & removed)) {
        removed |= TB_FEATURE_BIT(f);
        grew = true;
      }
    }
  }
  return removed;
}

uint64_t tb_cpu_features_consistent(uint64_t features) {
  for (bool shrank = true; shrank;) {
    shrank = false;
    for (int f = 0; f < TB_FEATURE_COUNT; f++) {
      uint64_t need = prerequisites((tb_feature)f);
      if ((features & TB_FEATURE_BIT(f)) && (features & need) != need) {
        features &= ~TB_FEATURE_BIT(f);
        shrank = true;
      }
    }
  }
  return features;
}

size_t tb_cpu_features_format(uint64_t features, char *buf, size_t cap) {
  size_t len = 0;
  if (cap == 0) return 0;
  buf[0] = '\0';
  for (int f = 0; f < TB_FEATURE_COUNT; f++) {
    if (!(features & TB_FEATURE_BIT(f))) continue;
    int n = snprintf(buf + len, cap - len, "%s%s", len ? "," : "", tb_feature_name((tb_feature)f));
    if (n < 0 || (size_t)n >= cap - len) {
      buf[len] = '\0'; /* only whole names */
      break;
    }
    len += (size_t)n;
  }
  if (len == 0) {
    snprintf(buf, cap, "none");
    len = strlen(buf);
  }
  return len;
}

/* The bits a name stands for: a group, or one CPU feature. 0 when it is neither. */
static uint64_t lookup_name(const char *name, bool *is_other_feature) {
  *is_other_feature = false;
  if (strcasecmp(name, "amx") == 0) return AMX_GROUP;
  if (strcasecmp(name, "avx512") == 0) return AVX512_GROUP;
  for (int f = 0; f < TB_FEATURE_COUNT; f++) {
    if (strcasecmp(name, tb_feature_name((tb_feature)f)) != 0) continue;
    if (TB_FEATURE_BIT(f) & TB_CPU_FEATURE_BITS) return TB_FEATURE_BIT(f);
    *is_other_feature = true;
    return 0;
  }
  return 0;
}

typedef struct mask_state {
  uint64_t hardware, current;
  tb_cpu_mask_result *result;
  tb_cpu_mask_note_fn note;
  void *ctx;
  const char *mask;
} mask_state;

static void report(mask_state *s, tb_cpu_mask_outcome outcome, const char *item, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void report(mask_state *s, tb_cpu_mask_outcome outcome, const char *item, const char *fmt, ...) {
  if (outcome == TB_CPU_MASK_INVALID) s->result->invalid_items++;
  if (outcome == TB_CPU_MASK_IGNORED) s->result->ignored_items++;
  if (!s->note && outcome == TB_CPU_MASK_APPLIED) return;
  char detail[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (outcome != TB_CPU_MASK_APPLIED) { /* the log says so once per process, whoever reads the mask */
    char key[400];
    snprintf(key, sizeof key, "TB_CPU_FEATURES=%.300s item %s", s->mask, item);
    tb_warn_once(key, "TB_CPU_FEATURES=%s: %s; the other items apply", s->mask, detail);
  }
  if (s->note) s->note(s->ctx, outcome, item, detail);
}

static void add_back(mask_state *s, const char *item, uint64_t bits) {
  char names[256], needed[256];
  uint64_t wanted = bits & s->hardware;
  if (!wanted) {
    tb_cpu_features_format(bits, names, sizeof names);
    report(s, TB_CPU_MASK_IGNORED, item, "'%s' ignored: this CPU does not have %s (TB_CPU_FEATURES can only remove features)",
           item, names);
    return;
  }
  for (int f = 0; f < TB_FEATURE_COUNT; f++) {
    uint64_t need = prerequisites((tb_feature)f);
    if ((wanted & TB_FEATURE_BIT(f)) && (s->current & need) == need) s->current |= TB_FEATURE_BIT(f);
  }
  uint64_t blocked = wanted & ~s->current, missing_needs = 0;
  for (int f = 0; f < TB_FEATURE_COUNT; f++)
    if (blocked & TB_FEATURE_BIT(f)) missing_needs |= prerequisites((tb_feature)f) & ~s->current;
  tb_cpu_features_format(blocked, names, sizeof names);
  tb_cpu_features_format(missing_needs, needed, sizeof needed);
  if (blocked == wanted)
    report(s, TB_CPU_MASK_IGNORED, item, "'%s' ignored: %s needs %s, removed earlier in TB_CPU_FEATURES", item, names, needed);
  else if (blocked)
    report(s, TB_CPU_MASK_APPLIED, item, "'%s' kept what it could; %s stays off because it needs %s", item, names, needed);
  else
    report(s, TB_CPU_MASK_APPLIED, item, "'%s' kept", item);
}

static void apply_item(mask_state *s, const char *item) {
  const char *valid = tb_cpu_features_valid_names();
  if (item[0] == '\0') {
    report(s, TB_CPU_MASK_INVALID, item, "empty item (two commas in a row, or a comma at an end) skipped; valid names: %s", valid);
    return;
  }
  if (item[0] != '-' && item[0] != '+') {
    report(s, TB_CPU_MASK_INVALID, item, "'%s' skipped: each item needs a sign, '-%s' to remove or '+%s' to keep; valid names: %s",
           item, item, item, valid);
    return;
  }
  const char *name = item + 1;
  bool other = false;
  uint64_t bits = *name ? lookup_name(name, &other) : 0;
  if (!bits) {
    if (!*name)
      report(s, TB_CPU_MASK_INVALID, item, "'%s' skipped: no feature name after the sign; valid names: %s", item, valid);
    else if (other)
      report(s, TB_CPU_MASK_INVALID, item, "'%s' skipped: %s is not a CPU feature; valid names: %s", item, name, valid);
    else
      report(s, TB_CPU_MASK_INVALID, item, "'%s' skipped: unknown CPU feature '%s'; valid names: %s", item, name, valid);
    return;
  }
  if (item[0] == '-') {
    uint64_t gone = tb_cpu_features_with_dependents(bits) & s->current;
    s->current &= ~gone;
    char names[256];
    tb_cpu_features_format(gone, names, sizeof names);
    report(s, TB_CPU_MASK_APPLIED, item, "'%s' removed %s", item, gone ? names : "nothing (not present)");
    return;
  }
  add_back(s, item, bits);
}

tb_cpu_mask_result tb_cpu_features_apply_mask(uint64_t hardware, const char *mask, tb_cpu_mask_note_fn note, void *ctx) {
  tb_cpu_mask_result result = {.features = hardware, .removed = 0, .invalid_items = 0, .ignored_items = 0};
  mask_state s = {.hardware = hardware, .current = hardware, .result = &result, .note = note, .ctx = ctx, .mask = mask};
  if (!mask) return result;
  const char *p = mask;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    while (len > 0 && isspace((unsigned char)*p)) p++, len--;
    while (len > 0 && isspace((unsigned char)p[len - 1])) len--;
    char item[64];
    if (len >= sizeof item) {
      snprintf(item, sizeof item, "%.*s...", (int)(sizeof item - 4), p);
      report(&s, TB_CPU_MASK_INVALID, item, "'%s' skipped: too long to be a feature name; valid names: %s", item,
             tb_cpu_features_valid_names());
    } else {
      memcpy(item, p, len);
      item[len] = '\0';
      apply_item(&s, item);
    }
    if (!comma) break;
    p = comma + 1;
  }
  result.features = s.current;
  result.removed = hardware & ~s.current;
  return result;
}
