/* The soak test, tb_soak (docs/testing.md, "Soak test"): models run on every backend from several threads for a
 * given time, each output checked against the CPU O0 reference of the same inputs, and the process's RSS and
 * each backend's reserved memory sampled; their growth after the warm-up is bounded. Only the public API.
 * This header holds what the soak's files share: the options, the cases (model, shape, inputs, reference),
 * the workers and the memory samples. */
#ifndef TB_SOAK_H
#define TB_SOAK_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensorbridge.h>

enum {
  SOAK_MAX_MODELS = 16,
  SOAK_MAX_BACKENDS = 8,
  SOAK_MAX_LEVELS = 4,
  SOAK_MAX_THREADS = 16,
  SOAK_MAX_IO = 32,
  SOAK_MAX_CASES = 8,
  SOAK_EXIT_FAILED = 1, /* an output differed, a run failed or the memory drifted */
  SOAK_EXIT_USAGE = 2,  /* a bad option */
  SOAK_EXIT_SETUP = 3   /* a model, backend or reference could not be set up */
};

/* Test-only faults, to show that the soak fails when it should (tests/soak/test_soak.c). */
typedef enum soak_inject {
  SOAK_INJECT_NONE = 0,
  SOAK_INJECT_CORRUPT, /* thread 0 adds 1000 to one element of one output after the warm-up */
  SOAK_INJECT_LEAK,    /* thread 0 keeps 256 KiB of touched host memory per run after the warm-up (64 MiB at most) */
  SOAK_INJECT_RESERVED /* thread 0 keeps each output tensor after the warm-up (1000 at most) */
} soak_inject;

typedef struct soak_options {
  double duration_s;           /* --duration */
  double warmup_s;             /* --warmup: the least time before the baseline is taken */
  int threads;                 /* --threads */
  int max_dim;                 /* --max-dim: symbolic dims take 1..max_dim */
  double max_rss_growth_mib;   /* --max-rss-growth */
  double max_reserved_growth_mib; /* --max-reserved-growth, per backend */
  size_t backend_count;        /* --backends, or every available one */
  const char *backends[SOAK_MAX_BACKENDS];
  bool backends_given;
  size_t level_count;          /* --levels */
  tb_opt_level levels[SOAK_MAX_LEVELS];
  size_t model_count;          /* the positional arguments */
  const char *models[SOAK_MAX_MODELS];
  soak_inject inject;          /* --inject (test-only) */
} soak_options;

/* Parses argv into *o. Returns 0, or SOAK_EXIT_USAGE after printing a sentence and the usage to stderr. */
int soak_parse_options(int argc, char **argv, soak_options *o);

/* One shape of one model: its inputs (CPU tensors, random from a seed) and the CPU O0 outputs for them. */
typedef struct soak_case {
  int64_t dim_value;            /* the value of every symbolic dim (0 when the model has none) */
  tb_tensor *inputs[SOAK_MAX_IO];
  tb_tensor *reference[SOAK_MAX_IO];
} soak_case;

typedef struct soak_model {
  const char *path;
  char name[128];               /* the file name without folder and .onnx */
  tb_model *model;
  size_t input_count, output_count;
  const char *input_names[SOAK_MAX_IO];
  const char *output_names[SOAK_MAX_IO];
  char symbolic[128];           /* the symbolic dims' names, "batch" or "" */
  size_t case_count;
  soak_case cases[SOAK_MAX_CASES];
} soak_model;

/* Loads every model, makes its cases (one per value of the symbolic dims, or one) and computes their
 * references on `cpu` at O0. Returns 0 or SOAK_EXIT_SETUP after printing a sentence. */
int soak_models_load(const soak_options *o, tb_backend *cpu, soak_model *models);
void soak_models_destroy(soak_model *models, size_t count);

/* What a worker shares with the main thread. Counters are written by the worker only. */
typedef struct soak_worker {
  int index;
  const soak_options *options;
  const soak_model *models;
  tb_backend *backends[SOAK_MAX_BACKENDS];                 /* this thread's own handles */
  tb_prepared *prepared[SOAK_MAX_BACKENDS][SOAK_MAX_MODELS][SOAK_MAX_LEVELS];
  tb_precision precision[SOAK_MAX_BACKENDS][SOAK_MAX_MODELS][SOAK_MAX_LEVELS];
  atomic_ullong runs[SOAK_MAX_BACKENDS][SOAK_MAX_MODELS][SOAK_MAX_LEVELS];
  atomic_ullong failures[SOAK_MAX_BACKENDS][SOAK_MAX_MODELS][SOAK_MAX_LEVELS];
  atomic_bool covered;          /* every case ran on every configuration at least twice: the sequence of
                                 * (configuration, shape) a worker runs repeats after each configuration has taken
                                 * all its shapes once, so two such periods have been seen */
  const atomic_bool *stop;
  const atomic_bool *warm;      /* set by the main thread when the warm-up is over */
  /* Injected faults (thread 0 only), freed at the end. */
  void *leaked[256];
  size_t leaked_count;
  tb_tensor *kept[1000];
  size_t kept_count;
  bool corrupted;
} soak_worker;

/* Creates the worker's own backend handles (o->backends, all checked by the main thread) and prepares every
 * (backend, model, level). Returns 0 or SOAK_EXIT_SETUP after printing a sentence. */
int soak_worker_setup(soak_worker *w);
/* The thread's loop: until *stop, each configuration in turn with its next case; a run that fails or an output
 * outside the tolerance is counted and the first few are printed. */
void *soak_worker_run(void *arg);
void soak_worker_destroy(soak_worker *w);
/* Prints "tb_soak: FAILED: " and the sentence to stderr for the first 10 failures of the process; the later ones
 * are only counted (the summary has them). Thread-safe. */
void soak_report_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Memory: the process's resident set from /proc/self/statm and the reserved bytes of each backend summed over
 * every worker's handle. */
uint64_t soak_rss_bytes(void);
uint64_t soak_reserved_bytes(soak_worker *workers, int worker_count, size_t backend);

/* How many of the last RSS samples the settled figure looks at (about a second at the sampling rate). */
enum { SOAK_SETTLE_SAMPLES = 10 };

typedef struct soak_drift {
  uint64_t rss_start, rss_baseline, rss_final, rss_max;
  uint64_t rss_recent[SOAK_SETTLE_SAMPLES]; /* a ring of the last samples after the baseline */
  size_t rss_recent_count;
  uint64_t reserved_baseline[SOAK_MAX_BACKENDS], reserved_final[SOAK_MAX_BACKENDS], reserved_max[SOAK_MAX_BACKENDS];
  double baseline_at_s;         /* seconds into the soak when the warm-up ended (< 0: it never did) */
  size_t samples;
} soak_drift;

/* One sample: takes the baseline when `baseline` is set, else updates the maxima and the final values. */
void soak_drift_sample(soak_drift *d, soak_worker *workers, int worker_count, size_t backend_count, bool baseline,
                       double now_s);

/* The settled RSS: the lowest of the last samples. Memory that leaked is still held in every one of them; a
 * transient peak (a worker's scratch, a driver's staging buffer) is not, so the bound judges this figure. */
uint64_t soak_rss_settled(const soak_drift *d);

/* "1.50 MiB", "-12 KiB": a signed byte count for people. */
void soak_format_bytes(int64_t bytes, char *buf, size_t size);

#endif
