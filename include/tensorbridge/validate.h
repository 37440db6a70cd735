/* Validation: run a model on backends at levels and precisions and compare every output with the
 * reference, the CPU backend at O0 in fp32, on the same inputs (docs/validation.md).
 *
 *   tb_tolerance_lookup     the tolerance table keyed by (backend, precision, level), each entry measured
 *                           or assumed
 *   tb_validate             reference vs each configuration: per output max abs/rel error, cosine, ULP
 *                           distance (f32), mismatches outside atol*S + rtol*|ref|, NaN/Inf counts; a verdict
 *                           per configuration; with `localize`, the first node whose output diverges
 *   tb_validate_replay      rerun a record written by `tb run --record` here and compare with its outputs
 *   tb_tensor_fill_random   the random inputs `tb run` and `tb validate` make from a seed */
#ifndef TENSORBRIDGE_VALIDATE_H
#define TENSORBRIDGE_VALIDATE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "model.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Random inputs -------------------------------------------------------------------------------- */

/* Fill a tensor of any dtype from a xorshift generator seeded with (seed, index): floats uniform in
 * [-1, 1) (narrow floats rounded from f32), integers in [0, 10), bool 0/1. The same (seed, index, dtype,
 * numel) always gives the same values; `index` is the input's position in the model. */
TB_API tb_status tb_tensor_fill_random(tb_tensor *tensor, uint64_t seed, size_t index);

/* ---- Tolerance table ------------------------------------------------------------------------------ */

#define TB_TOLERANCE_ANY (-1)

typedef struct tb_tolerance {
  size_t size;        /* sizeof(tb_tolerance), set by the caller of tb_tolerance_lookup */
  int backend;        /* a tb_backend_kind, or TB_TOLERANCE_ANY */
  int precision;      /* a tb_precision (never AUTO), or TB_TOLERANCE_ANY */
  int level;          /* a tb_opt_level, or TB_TOLERANCE_ANY */
  double rtol, atol;  /* an element passes when |got - ref| <= atol * S + rtol * |ref|,
                          S = max(1, the largest |ref| of the output) */
  const char *source; /* "measured" or "assumed" (static text) */
  const char *note;   /* what was measured, or why it is assumed (static text) */
} tb_tolerance;

TB_API size_t tb_tolerance_count(void);
/* Entry i of the table (static; NULL past the end). */
TB_API const tb_tolerance *tb_tolerance_entry(size_t i);
/* The entry for a configuration. Fallback order: (backend, precision, level), then (backend, precision,
 * any level), then (any backend, precision, level), then (any backend, precision, any level). The table has
 * an any/any entry for every precision, so this fails only for AUTO or an out-of-range value
 * (TB_ERR_INVALID_ARGUMENT). out->size must be set; the whole entry is copied. */
TB_API tb_status tb_tolerance_lookup(tb_backend_kind backend, tb_precision precision, tb_opt_level level,
                                     tb_tolerance *out);

/* ---- Validation ----------------------------------------------------------------------------------- */

typedef struct tb_validate_options {
  size_t size;                       /* sizeof(tb_validate_options) */
  size_t backend_count;              /* backends to check, as tb_backend_create requests ("cpu", "opencl:0"); */
  const char *const *backends;       /*   0/NULL: {"cpu"} */
  size_t level_count;                /* levels to check; 0/NULL: O0, O1, O2, O3 */
  const tb_opt_level *levels;
  tb_precision precision;            /* for every configuration (AUTO: what each level picks) */
  size_t input_count;                /* given inputs by name (on any backend); the others are random */
  const char *const *input_names;
  tb_tensor *const *inputs;
  uint64_t seed;                     /* of the random inputs (tb_tensor_fill_random with the input's index) */
  size_t dim_count;                  /* symbolic dims of random inputs ("batch" = 2); unbound ones are 1 */
  const char *const *dim_names;
  const int64_t *dim_values;
  bool localize;                     /* on a failing configuration, find the first diverging node */
  bool override_tolerance;           /* use rtol/atol below instead of the table */
  double rtol, atol;
} tb_validate_options;

typedef struct tb_validation_report tb_validation_report;

/* One output of one configuration against the reference. */
typedef struct tb_output_metrics {
  size_t size;                 /* sizeof(tb_output_metrics), set by the caller */
  const char *name;            /* the output's name (owned by the report) */
  tb_dtype dtype;              /* the reference's dtype */
  int64_t numel;
  bool shape_matches;          /* same dtype and shape as the reference (else the numbers below are 0) */
  double max_abs_error;        /* max |got - ref| over elements where both are finite */
  double max_rel_error;        /* max |got - ref| / |ref| over elements where both are finite and ref != 0 */
  double cosine;               /* dot(got, ref) / (|got| |ref|) over finite pairs; 1 when both are all zero */
  uint64_t max_ulp;            /* f32 outputs: max distance in units in the last place; 0 for others */
  int64_t mismatches;          /* elements outside atol*S + rtol*|ref| (S above), or non-finite where ref differs */
  int64_t nan_got, inf_got, nan_ref, inf_ref;
  bool passed;
} tb_output_metrics;

/* One (backend, level, precision) configuration. */
typedef struct tb_validation_config {
  size_t size;                 /* sizeof(tb_validation_config), set by the caller */
  const char *backend;         /* the request as given ("opencl:0") */
  const char *device;          /* the device's name, "" when the backend could not be created */
  tb_opt_level level;
  tb_precision precision;      /* what preparation applied (the requested one when it failed) */
  tb_tolerance tolerance;      /* the entry used */
  size_t output_count;
  bool passed;                 /* prepared, ran, and every output passed */
  const char *error;           /* why it could not run (create, prepare or run error); NULL when it ran */
  /* Localisation (options.localize and the configuration failed): */
  bool localized;              /* a diverging node was found */
  const char *node_name;       /* the first node, in the target's execution order, whose output fails */
  const char *node_op;
  size_t node_index;           /* its position in the target's execution order */
  const char *node_output;     /* the value that fails */
  double node_max_abs_error, node_max_rel_error, node_cosine;
  int64_t node_mismatches, node_numel;
  const char *localize_note;   /* what localisation did or why it found nothing; NULL when not run */
} tb_validation_config;

/* Validate `model`. On success *out_report holds every configuration (failures included: a configuration
 * that cannot run fails with its error). Returns an error only when the reference cannot be computed or the
 * arguments are bad (unknown input name, bad level). Destroy the report with tb_validation_report_destroy. */
TB_API tb_status tb_validate(tb_model *model, const tb_validate_options *options, tb_validation_report **out_report);

/* Replay a record written by `tb run --record`: check that the model file named in the record still has the
 * recorded SHA-256 (model_path NULL: the path in the record) — another model is TB_ERR_INVALID_ARGUMENT
 * saying so — then run the recorded inputs on `backend_request` (NULL: the record's backend kind, then "cpu"
 * when it is not available here) at the recorded level and precision, and compare with the recorded outputs
 * using the record's tolerance. A corrupted record is the record reader's error. */
TB_API tb_status tb_validate_replay(const char *record_path, const char *model_path, const char *backend_request,
                                    tb_validation_report **out_report);

TB_API void tb_validation_report_destroy(tb_validation_report *report);
TB_API size_t tb_validation_report_config_count(const tb_validation_report *report);
TB_API tb_status tb_validation_report_config(const tb_validation_report *report, size_t i, tb_validation_config *out);
TB_API tb_status tb_validation_report_output(const tb_validation_report *report, size_t config, size_t output,
                                             tb_output_metrics *out);
/* Configurations that passed and the total (the seeds' "passed/total"). */
TB_API size_t tb_validation_report_passed(const tb_validation_report *report);
TB_API size_t tb_validation_report_total(const tb_validation_report *report);
/* Seed and model hash the reference used; replay's record path ("" for tb_validate). Owned by the report. */
TB_API uint64_t tb_validation_report_seed(const tb_validation_report *report);
TB_API const char *tb_validation_report_model_sha256(const tb_validation_report *report);
/* The report as JSON (keys in docs/validation.md); free with tb_free. */
TB_API tb_status tb_validation_report_to_json(const tb_validation_report *report, char **out_json);

/* Metrics of got against ref (same dtype and shape, any backend) with a tolerance: what tb_validate
 * computes per output, for callers with their own tensors. out->size must be set; out->name is NULL. */
TB_API tb_status tb_compare_tensors(const tb_tensor *got, const tb_tensor *ref, double rtol, double atol,
                                    tb_output_metrics *out);

#ifdef __cplusplus
}
#endif
#endif
