/* Internal: what the files of validation share — the report's layout (validate.c fills it,
 * validate_report.c reads it out), element-wise metrics on host arrays (compare.c), localisation
 * (validate_localize.c) and replay (validate_replay.c). */
#ifndef TB_TOOLS_VALIDATE_IMPL_H
#define TB_TOOLS_VALIDATE_IMPL_H
#include <tensorbridge/validate.h>
#include "core/arena.h"

typedef struct tbv_config {
  tb_validation_config info;  /* strings in the report's arena */
  tb_output_metrics *outputs; /* info.output_count entries, names in the arena */
} tbv_config;

struct tb_validation_report {
  tbv_config *configs;
  size_t count, cap;
  uint64_t seed;
  const char *sha256;
  const char *record; /* replay: the record's path; "" otherwise */
  tb_arena arena;
};

/* A new empty report (NULL on OOM); add a configuration (NULL on OOM) with its backend, level, precision. */
tb_validation_report *tb_tbv_report_new(void);
tbv_config *tb_tbv_report_add(tb_validation_report *r, const char *backend, tb_opt_level level, tb_precision precision);

/* Metrics of packed host data of `dtype` (n elements each): got against ref. out->size must be set. */
tb_status tb_tbv_compare_host(tb_dtype dtype, const void *got, const void *ref, int64_t n, double rtol, double atol,
                           tb_output_metrics *out);
/* The distance in f32 units in the last place (ordered bit patterns; +0 and -0 are 0 apart). */
uint64_t tb_tbv_ulp_distance(float a, float b);

/* A packed host copy of any tensor (malloc'd; free with free); NULL on failure with the error set. */
void *tb_tbv_host_copy(const tb_tensor *t);

/* Run reference and target node by node on the same inputs (graph input order) and fill cfg's localisation
 * fields: the first node in the target's order whose output differs beyond tol from the reference's value of
 * the same name. */
tb_status tb_tbv_localize(tb_validation_report *r, tbv_config *cfg, tb_prepared *reference, tb_prepared *target,
                       size_t n_inputs, const char *const *names, tb_tensor *const *inputs);

#endif
