/* Internal: CPU feature masks. TB_CPU_FEATURES ("-amx,-avx512f") removes features for users and
 * tests; removing a feature also removes the features that need it (avx2 -> every AVX-512 feature,
 * avx512f -> the other AVX-512 features, amx_tile -> amx_bf16 and amx_int8, neon -> sve and sme).
 * A "+name" can only put back what the hardware has. Any code may call the parser. */
#ifndef TB_CORE_CPU_FEATURES_H
#define TB_CORE_CPU_FEATURES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/device.h>

/* The tb_feature bits that describe a CPU (sse4_2 .. sme). */
#define TB_CPU_FEATURE_BITS (TB_FEATURE_BIT(TB_FEATURE_SME + 1) - 1u)

/* The names TB_CPU_FEATURES accepts, for messages: the CPU features and the groups. */
const char *tb_cpu_features_valid_names(void);

/* `removed` plus every feature that needs one of them, directly or through another. */
uint64_t tb_cpu_features_with_dependents(uint64_t removed);
/* `features` without those whose prerequisites are missing (avx512bw without avx512f, ...). */
uint64_t tb_cpu_features_consistent(uint64_t features);

/* "avx2,fma,avx512f" in tb_feature order; "none" for 0. Returns the length written. */
size_t tb_cpu_features_format(uint64_t features, char *buf, size_t cap);

typedef enum tb_cpu_mask_outcome {
  TB_CPU_MASK_APPLIED = 0, /* the item changed the set, or asked for what already held */
  TB_CPU_MASK_IGNORED,     /* a well-formed "+name" the hardware lacks (or whose prerequisite is off) */
  TB_CPU_MASK_INVALID      /* not "-name" or "+name" with a known CPU feature or group name */
} tb_cpu_mask_outcome;

/* Called once per item of the mask, in order: the item as written (trimmed) and a sentence. */
typedef void (*tb_cpu_mask_note_fn)(void *ctx, tb_cpu_mask_outcome outcome, const char *item, const char *detail);

typedef struct tb_cpu_mask_result {
  uint64_t features;    /* the hardware features after the mask */
  uint64_t removed;     /* hardware features the mask took away */
  size_t invalid_items; /* items skipped because they made no sense */
  size_t ignored_items; /* "+name" items that could not add anything */
} tb_cpu_mask_result;

/* Apply a comma-separated mask such as "-amx,-avx512f,+avx512f" to the hardware's features. Items
 * apply left to right; bad items are skipped (and reported through note, which may be NULL). */
tb_cpu_mask_result tb_cpu_features_apply_mask(uint64_t hardware, const char *mask, tb_cpu_mask_note_fn note, void *ctx);

#endif
