/* tb_soak's main: picks the backends, loads the models and their references, starts the workers, samples memory
 * every 100 ms until the duration is over, then prints the summary (runs per backend/model/level/thread,
 * failures, drift) and exits 0 when every output matched and the drift stayed within its bounds, 1 when not
 * (each reason a sentence), 2 on a bad option and 3 when something could not be set up. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "soak.h"

static char default_requests[SOAK_MAX_BACKENDS][32];

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Every available backend's first device when --backends is not given; each one is created once here so that a
 * backend named by the user that cannot be made is an error before anything runs, and one found by discovery is
 * skipped with its reason. */
static int pick_backends(soak_options *o) {
  if (!o->backends_given) {
    tb_backend_kind kinds[TB_BACKEND_COUNT];
    size_t count = 0;
    if (tb_backend_list_available(kinds, TB_BACKEND_COUNT, &count) != TB_OK) {
      fprintf(stderr, "tb_soak: cannot list the available backends: %s\n", tb_last_error());
      return SOAK_EXIT_SETUP;
    }
    o->backend_count = 0;
    for (size_t i = 0; i < count && o->backend_count < SOAK_MAX_BACKENDS; i++) {
      snprintf(default_requests[o->backend_count], sizeof default_requests[0], "%s:0", tb_backend_name(kinds[i]));
      o->backends[o->backend_count] = default_requests[o->backend_count];
      o->backend_count++;
    }
  }
  size_t kept = 0;
  for (size_t b = 0; b < o->backend_count; b++) {
    tb_backend *probe = NULL;
    if (tb_backend_create(o->backends[b], &probe) != TB_OK) {
      if (o->backends_given) {
        fprintf(stderr, "tb_soak: cannot create backend '%s': %s\n", o->backends[b], tb_last_error());
        return SOAK_EXIT_SETUP;
      }
      printf("backend %s skipped: %s\n", o->backends[b], tb_last_error());
      continue;
    }
    tb_backend_destroy(probe);
    o->backends[kept++] = o->backends[b];
  }
  o->backend_count = kept;
  if (kept == 0) {
    fprintf(stderr, "tb_soak: no backend can be created here; name one with --backends cpu\n");
    return SOAK_EXIT_SETUP;
  }
  return 0;
}

static bool all_covered(soak_worker *workers, int count) {
  for (int t = 0; t < count; t++) {
    if (!atomic_load(&workers[t].covered)) return false;
  }
  return true;
}

static unsigned long long total(soak_worker *workers, int count, bool failures) {
  unsigned long long sum = 0;
  for (int t = 0; t < count; t++) {
    for (size_t b = 0; b < SOAK_MAX_BACKENDS; b++) {
      for (size_t m = 0; m < SOAK_MAX_MODELS; m++) {
        for (size_t l = 0; l < SOAK_MAX_LEVELS; l++)
          sum += atomic_load(failures ? &workers[t].failures[b][m][l] : &workers[t].runs[b][m][l]);
      }
    }
  }
  return sum;
}

static void print_runs(const soak_options *o, const soak_model *models, soak_worker *workers) {
  printf("%-12s %-16s %-5s", "backend", "model", "level");
  for (int t = 0; t < o->threads; t++) printf(" %9s%-2d", "thread ", t);
  printf(" %9s\n", "failures");
  for (size_t b = 0; b < o->backend_count; b++) {
    for (size_t m = 0; m < o->model_count; m++) {
      for (size_t l = 0; l < o->level_count; l++) {
        unsigned long long failures = 0;
        printf("%-12s %-16s %-5s", o->backends[b], models[m].name, tb_opt_level_name(o->levels[l]));
        for (int t = 0; t < o->threads; t++) {
          printf(" %11llu", atomic_load(&workers[t].runs[b][m][l]));
          failures += atomic_load(&workers[t].failures[b][m][l]);
        }
        printf(" %9llu\n", failures);
      }
    }
  }
}

/* Prints the drift and returns how many bounds were exceeded (each a sentence on stderr). */
static int check_drift(const soak_options *o, const soak_drift *d) {
  char growth[32], max_growth[32], settled_growth[32], from[32], to[32];
  int exceeded = 0;
  if (d->baseline_at_s < 0) {
    fprintf(stderr, "tb_soak: FAILED: the warm-up never ended: within %g s not every thread ran every shape on every "
            "backend, model and level, so there is no memory baseline; raise --duration or lower --warmup\n",
            o->duration_s);
    return 1;
  }
  int64_t rss_growth = (int64_t)soak_rss_settled(d) - (int64_t)d->rss_baseline;
  soak_format_bytes((int64_t)(d->rss_max - d->rss_baseline), max_growth, sizeof max_growth);
  soak_format_bytes((int64_t)(d->rss_final - d->rss_baseline), growth, sizeof growth);
  soak_format_bytes(rss_growth, settled_growth, sizeof settled_growth);
  soak_format_bytes((int64_t)d->rss_baseline, from, sizeof from);
  printf("drift after the warm-up (baseline at %.1f s, %zu samples):\n", d->baseline_at_s, d->samples);
  printf("  RSS: baseline %s, at most %s, at the end %s, settled %s (bound %g MiB on the settled growth)\n", from + 1,
         max_growth, growth, settled_growth, o->max_rss_growth_mib);
  if ((double)rss_growth > o->max_rss_growth_mib * 1024 * 1024) {
    fprintf(stderr, "tb_soak: FAILED: the process's RSS grew by %s after the warm-up (from %s) and stayed there, more "
            "than the bound of %g MiB (--max-rss-growth): host memory is leaking or piling up\n", settled_growth + 1,
            from + 1, o->max_rss_growth_mib);
    exceeded++;
  }
  for (size_t b = 0; b < o->backend_count; b++) {
    int64_t reserved_growth = (int64_t)(d->reserved_max[b] - d->reserved_baseline[b]);
    soak_format_bytes(reserved_growth, max_growth, sizeof max_growth);
    soak_format_bytes((int64_t)(d->reserved_final[b] - d->reserved_baseline[b]), growth, sizeof growth);
    soak_format_bytes((int64_t)d->reserved_baseline[b], from, sizeof from);
    soak_format_bytes((int64_t)d->reserved_max[b], to, sizeof to);
    printf("  reserved on %s: baseline %s, at most %s, at the end %s (bound %g MiB)\n", o->backends[b], from + 1,
           max_growth, growth, o->max_reserved_growth_mib);
    if ((double)reserved_growth > o->max_reserved_growth_mib * 1024 * 1024) {
      fprintf(stderr, "tb_soak: FAILED: the memory reserved on %s grew by %s after the warm-up (from %s to %s), "
              "more than the bound of %g MiB (--max-reserved-growth): every shape had been seen, so the caching "
              "allocator should have had the blocks\n", o->backends[b], max_growth + 1, from + 1, to + 1,
              o->max_reserved_growth_mib);
      exceeded++;
    }
  }
  return exceeded;
}

/* Runs the workers until the duration is over, sampling memory every 100 ms. */
static void soak_loop(const soak_options *o, soak_worker *workers, soak_drift *d, atomic_bool *stop,
                      atomic_bool *warm) {
  double start = now_s(), next_progress = 60;
  d->baseline_at_s = -1;
  while (true) {
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
    double t = now_s() - start;
    if (t >= o->duration_s) break;
    if (!atomic_load(warm) && t >= o->warmup_s && all_covered(workers, o->threads)) {
      soak_drift_sample(d, workers, o->threads, o->backend_count, true, t);
      atomic_store(warm, true);
    } else if (atomic_load(warm)) {
      soak_drift_sample(d, workers, o->threads, o->backend_count, false, t);
    }
    if (t >= next_progress) {
      char rss[32];
      soak_format_bytes((int64_t)soak_rss_bytes(), rss, sizeof rss);
      printf("tb_soak: %.0f s: %llu runs, %llu failures, RSS %s\n", t, total(workers, o->threads, false),
             total(workers, o->threads, true), rss + 1);
      fflush(stdout);
      next_progress += 60;
    }
  }
  atomic_store(stop, true);
}

static int soak(soak_options *o, soak_model *models, soak_worker *workers) {
  atomic_bool stop = false, warm = false;
  for (int t = 0; t < o->threads; t++) {
    workers[t].index = t;
    workers[t].options = o;
    workers[t].models = models;
    workers[t].stop = &stop;
    workers[t].warm = &warm;
    int rc = soak_worker_setup(&workers[t]);
    if (rc != 0) return rc;
  }
  char rss[32];
  soak_format_bytes((int64_t)soak_rss_bytes(), rss, sizeof rss);
  printf("tb_soak: %d threads, %zu backends, %zu models, %zu levels prepared (RSS %s); running %g s, warm-up %g s\n",
         o->threads, o->backend_count, o->model_count, o->level_count, rss + 1, o->duration_s, o->warmup_s);
  fflush(stdout);
  pthread_t threads[SOAK_MAX_THREADS];
  int started = 0;
  for (; started < o->threads; started++) {
    if (pthread_create(&threads[started], NULL, soak_worker_run, &workers[started]) != 0) break;
  }
  soak_drift drift = {0};
  if (started == o->threads) soak_loop(o, workers, &drift, &stop, &warm);
  atomic_store(&stop, true);
  for (int t = 0; t < started; t++) pthread_join(threads[t], NULL);
  if (started < o->threads) {
    fprintf(stderr, "tb_soak: cannot start worker thread %d of %d; lower --threads\n", started, o->threads);
    return SOAK_EXIT_SETUP;
  }
  if (atomic_load(&warm)) soak_drift_sample(&drift, workers, o->threads, o->backend_count, false, o->duration_s);

  print_runs(o, models, workers);
  unsigned long long runs = total(workers, o->threads, false), failures = total(workers, o->threads, true);
  int exceeded = check_drift(o, &drift);
  printf("tb_soak: %llu runs, %llu failed, %d memory bound%s exceeded: %s\n", runs, failures, exceeded,
         exceeded == 1 ? "" : "s", failures == 0 && exceeded == 0 ? "passed" : "FAILED");
  if (failures > 0)
    fprintf(stderr, "tb_soak: FAILED: %llu of %llu runs failed or gave an output outside the tolerance (the first "
            "are above)\n", failures, runs);
  return failures == 0 && exceeded == 0 ? 0 : SOAK_EXIT_FAILED;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  soak_options o;
  int rc = soak_parse_options(argc, argv, &o);
  if (rc == 0) rc = pick_backends(&o);
  if (rc != 0) return rc;
  tb_backend *cpu = NULL;
  if (tb_backend_create("cpu", &cpu) != TB_OK) {
    fprintf(stderr, "tb_soak: cannot create the CPU backend for the reference: %s\n", tb_last_error());
    return SOAK_EXIT_SETUP;
  }
  soak_model *models = calloc(SOAK_MAX_MODELS, sizeof *models);
  soak_worker *workers = calloc(SOAK_MAX_THREADS, sizeof *workers);
  if (!models || !workers) {
    fprintf(stderr, "tb_soak: out of host memory for the models and workers\n");
    rc = SOAK_EXIT_SETUP;
  } else {
    rc = soak_models_load(&o, cpu, models);
    if (rc == 0) rc = soak(&o, models, workers);
    for (int t = 0; t < o.threads; t++) soak_worker_destroy(&workers[t]);
    soak_models_destroy(models, o.model_count);
  }
  free(workers);
  free(models);
  tb_backend_destroy(cpu);
  return rc;
}
