/* The bf16 trial (precision_trial.h): per node, its fp32 and bf16 kernels timed on its real shapes at prepare,
 * the decision and its sentence, and the process-wide cache of results. */
#include "model/precision_trial.h"
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/error.h"

enum { MIN_ROUNDS = 2, MAX_ROUNDS = 6, CACHE_CAP = 4096 };
/* A node's trial stops after MIN_ROUNDS rounds once it has spent this long (one round: each kernel once). */
#define NODE_TRIAL_MS 25.0

static tb_bf16_trial_hook_fn hook;
static void *hook_ctx;

void tb_bf16_trial_set_hook(tb_bf16_trial_hook_fn fn, void *ctx) {
  hook = fn;
  hook_ctx = ctx;
}

/* ---- the cache ------------------------------------------------------------------------------------- */

typedef struct cached_trial {
  char *key;
  double fp32_ms, bf16_ms;
} cached_trial;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static cached_trial *cache;
static size_t cache_count;

static bool cache_find(const char *key, double *fp32_ms, double *bf16_ms) {
  bool found = false;
  pthread_mutex_lock(&cache_lock);
  for (size_t i = 0; i < cache_count && !found; i++)
    if (strcmp(cache[i].key, key) == 0) {
      *fp32_ms = cache[i].fp32_ms;
      *bf16_ms = cache[i].bf16_ms;
      found = true;
    }
  pthread_mutex_unlock(&cache_lock);
  return found;
}

/* Only a saving: when memory is short or the cache is full, the result is not kept. */
static void cache_add(const char *key, double fp32_ms, double bf16_ms) {
  pthread_mutex_lock(&cache_lock);
  if (!cache) cache = calloc(CACHE_CAP, sizeof *cache);
  char *copy = cache && cache_count < CACHE_CAP ? strdup(key) : NULL;
  if (copy) cache[cache_count++] = (cached_trial){copy, fp32_ms, bf16_ms};
  pthread_mutex_unlock(&cache_lock);
}

size_t tb_bf16_trial_cache_count(void) {
  pthread_mutex_lock(&cache_lock);
  size_t n = cache_count;
  pthread_mutex_unlock(&cache_lock);
  return n;
}

void tb_bf16_trial_cache_clear(void) {
  pthread_mutex_lock(&cache_lock);
  for (size_t i = 0; i < cache_count; i++) free(cache[i].key);
  free(cache);
  cache = NULL;
  cache_count = 0;
  pthread_mutex_unlock(&cache_lock);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* What a node's times depend on: CPU features, threads, convolution algorithm, op, input and output types
 * (constant inputs marked: their values are packed at prepare), and a hash of the attributes. */
static void trial_key(const tb_exec *e, const tb_node *n, const tb_value_type *const *in, char *key, size_t cap) {
  size_t len = (size_t)snprintf(key, cap, "%llx/%d/%d/%s/%s/", (unsigned long long)e->features, e->threads,
                                (int)e->conv_algo, n->domain ? n->domain : "", n->op_type);
  for (size_t k = 0; k < n->n_inputs + n->n_outputs && len < cap; k++) {
    bool is_in = k < n->n_inputs;
    int v = is_in ? n->inputs[k] : n->outputs[k - n->n_inputs];
    const tb_value_type *t = is_in ? in[k] : v >= 0 ? &e->g->values[v].type : NULL;
    if (!t || v < 0) {
      len += (size_t)snprintf(key + len, cap - len, "-;");
      continue;
    }
    len += (size_t)snprintf(key + len, cap - len, "%s%s[", is_in && e->consts[v] ? "c" : "", tb_dtype_name(t->dtype));
    for (size_t d = 0; d < t->ndim && len < cap; d++) len += (size_t)snprintf(key + len, cap - len, "%lld,", (long long)t->dims[d].value);
    if (len < cap) len += (size_t)snprintf(key + len, cap - len, "];");
  }
  uint64_t h = 1469598103934665603ull;
  for (size_t a = 0; a < n->n_attrs; a++) {
    const tb_attr *at = &n->attrs[a];
    h = fnv(h, at->name, strlen(at->name) + 1);
    h = fnv(h, &at->type, sizeof at->type);
    h = fnv(h, &at->f, sizeof at->f);
    h = fnv(h, &at->i, sizeof at->i);
    if (at->s) h = fnv(h, at->s, at->s_len);
    if (at->ints) h = fnv(h, at->ints, at->count * sizeof *at->ints);
    if (at->floats) h = fnv(h, at->floats, at->count * sizeof *at->floats);
  }
  if (len < cap) snprintf(key + len, cap - len, "%llx", (unsigned long long)h);
}

/* ---- the decision ---------------------------------------------------------------------------------- */

/* "1.8" (one decimal from 1.1 up, two below, where one would read 1.0) */
static const char *ratio_text(double r, char *buf, size_t cap) {
  snprintf(buf, cap, r >= 1.095 ? "%.1f" : "%.2f", r);
  return buf;
}

bool tb_bf16_trial_decide(double fp32_ms, double bf16_ms, bool cached, char *why, size_t cap) {
  const char *tail = cached ? ", cached" : "";
  char r[32];
  if (bf16_ms > 0 && fp32_ms >= TB_BF16_WIN * bf16_ms) {
    snprintf(why, cap, "bf16: %sx faster than fp32 on this shape (trial: %.3g vs %.3g ms%s)",
             ratio_text(fp32_ms / bf16_ms, r, sizeof r), bf16_ms, fp32_ms, tail);
    return true;
  }
  if (bf16_ms > fp32_ms)
    snprintf(why, cap, "fp32: bf16 %sx slower on this shape (trial: %.3g vs %.3g ms%s)",
             ratio_text(fp32_ms > 0 ? bf16_ms / fp32_ms : 0.0, r, sizeof r), bf16_ms, fp32_ms, tail);
  else
    snprintf(why, cap, "fp32: bf16 only %.2fx faster on this shape (trial: %.3g vs %.3g ms%s), less than the %.2fx it must win by",
             bf16_ms > 0 ? floor(fp32_ms / bf16_ms * 100) / 100 : 1.0, bf16_ms, fp32_ms, tail, TB_BF16_WIN); /* floored: 1.047 is not 1.05 */
  return false;
}

/* ---- running the kernels --------------------------------------------------------------------------- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct trial {
  tb_exec *e;
  const tb_node *n;
  const tb_value_type *const *in_types;
  tb_tensor **in;     /* constants, or stand-ins made here (made[k]) */
  bool *made;
  tb_tensor **consts; /* what a kernel's prepare() sees: the constant inputs only */
  tb_tensor **out;
} trial;

static void fill(tb_tensor *t) {
  void *p = tb_tensor_host_data(t);
  size_t bytes = tb_tensor_nbytes(t);
  if (!p) return;
  if (tb_tensor_dtype(t) != TB_DTYPE_F32) {
    memset(p, 0, bytes);
    return;
  }
  float *f = p;
  for (size_t i = 0; i < bytes / sizeof *f; i++) f[i] = (float)((int)(i * 7919u % 2001u) - 1000) / 1000.0f;
}

/* A tensor of this complete type on the CPU, written (its pages touched); NULL when none could be made. */
static tb_tensor *stand_in(tb_exec *e, const tb_value_type *t) {
  if (!t || !tb_value_type_complete(t)) return NULL;
  int64_t shape[TB_MAX_DIMS];
  for (size_t d = 0; d < t->ndim; d++) shape[d] = t->dims[d].value;
  tb_tensor *x = NULL;
  if (tb_tensor_create(e->cpu, t->dtype, t->ndim, shape, &x) != TB_OK) return NULL;
  fill(x);
  return x;
}

/* Whether every activation the node reads or writes has a known shape (else why says so). */
static bool shapes_known(const tb_exec *e, const tb_node *n, const tb_value_type *const *in, char *why, size_t cap) {
  for (size_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
    bool is_in = k < n->n_inputs;
    int v = is_in ? n->inputs[k] : n->outputs[k - n->n_inputs];
    if (v < 0 || (is_in && e->consts[v] && !e->g->values[v].is_input)) continue;
    const tb_value_type *t = is_in ? in[k] : &e->g->values[v].type;
    if (!t || !tb_value_type_complete(t)) {
      snprintf(why, cap, "fp32: %s '%s' has a shape known only at run time, so no bf16 trial ran", is_in ? "input" : "output",
               e->g->values[v].name);
      return false;
    }
  }
  return true;
}

/* The node's inputs and outputs for the trial (shapes_known said yes); false (why set) when memory is short. */
static bool make_tensors(trial *t, char *why, size_t cap) {
  const tb_node *n = t->n;
  tb_exec *e = t->e;
  for (size_t k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    if (v < 0) continue;
    if (e->consts[v] && !e->g->values[v].is_input) {
      t->in[k] = t->consts[k] = e->consts[v];
      continue;
    }
    t->in[k] = stand_in(e, t->in_types[k]);
    t->made[k] = true;
    if (!t->in[k]) {
      snprintf(why, cap, "fp32: out of host memory for input '%s' of the bf16 trial", e->g->values[v].name);
      return false;
    }
  }
  for (size_t o = 0; o < n->n_outputs; o++) {
    int v = n->outputs[o];
    if (v < 0) continue;
    t->out[o] = stand_in(e, &e->g->values[v].type);
    if (!t->out[o]) {
      snprintf(why, cap, "fp32: out of host memory for output '%s' of the bf16 trial", e->g->values[v].name);
      return false;
    }
  }
  return true;
}

static void free_tensors(trial *t) {
  for (size_t k = 0; k < t->n->n_inputs; k++)
    if (t->made[k]) tb_tensor_destroy(t->in[k]);
  for (size_t o = 0; o < t->n->n_outputs; o++) tb_tensor_destroy(t->out[o]);
}

/* The context the executor would give the node's CPU kernel, without the executor itself (exec NULL: the
 * trial's prepare consumes no constant and records no method) nor subgraphs. */
static tb_kernel_ctx trial_ctx(const trial *t, tb_tensor *const *in, tb_tensor **out, void *state) {
  const tb_exec *e = t->e;
  const tb_node *n = t->n;
  tb_kernel_ctx kc = {
      .graph = e->g,
      .node = n,
      .n_inputs = n->n_inputs,
      .inputs = in,
      .n_outputs = n->n_outputs,
      .outputs = out,
      .backend = e->cpu,
      .threads = e->threads,
      .pool = e->pool,
      .conv_algo = (int)e->conv_algo,
      .state = state,
      .params = n->params,
      .domain = n->domain ? n->domain : "",
      .op_type = n->op_type,
      .opset = n->opset,
      .in_types = t->in_types,
      .omitted_outputs = tb_kernel_omitted_outputs(n),
      .constant_inputs = tb_kernel_constant_inputs(e->g, n),
      .name = n->name ? n->name : "",
  };
  return kc;
}

/* The kernel's state for the trial (its own: the node's real state is made after the choice). */
static tb_status prepare_kernel(trial *t, const tb_kernel *k, void **state) {
  *state = NULL;
  if (!k->prepare) return TB_OK;
  tb_kernel_ctx kc = trial_ctx(t, t->consts, NULL, NULL);
  return k->prepare(&kc, state);
}

static tb_status run_kernel(trial *t, const tb_kernel *k, void *state, double *ms) {
  tb_kernel_ctx kc = trial_ctx(t, t->in, t->out, state);
  double t0 = now_ms();
  tb_status st = k->run(&kc);
  double dt = now_ms() - t0;
  if (st == TB_OK && dt < *ms) *ms = dt;
  return st;
}

/* Fastest of a few interleaved runs of each kernel (the first of each warms caches and is counted too). */
static bool time_kernels(trial *t, const tb_kernel *fp32, const tb_kernel *bf16, double *fp32_ms, double *bf16_ms, char *why,
                         size_t cap) {
  void *s32 = NULL, *s16 = NULL;
  tb_status st = prepare_kernel(t, fp32, &s32);
  const char *which = "fp32";
  if (st == TB_OK) {
    which = "bf16";
    st = prepare_kernel(t, bf16, &s16);
  }
  double start = now_ms();
  *fp32_ms = *bf16_ms = 1e300;
  for (int r = 0; st == TB_OK && r < MAX_ROUNDS; r++) {
    which = "fp32";
    st = run_kernel(t, fp32, s32, fp32_ms);
    if (st == TB_OK) {
      which = "bf16";
      st = run_kernel(t, bf16, s16, bf16_ms);
    }
    if (r + 1 >= MIN_ROUNDS && now_ms() - start > NODE_TRIAL_MS) break;
  }
  if (st != TB_OK) snprintf(why, cap, "fp32: the %s kernel failed in the bf16 trial (%s)", which, tb_last_error());
  if (s32 && fp32->release) fp32->release(s32);
  if (s16 && bf16->release) bf16->release(s16);
  t->e->trial_ms_left -= now_ms() - start;
  return st == TB_OK;
}

void tb_bf16_trial_choose(tb_exec *e, size_t step, const tb_value_type *const *in, const tb_kernel *bf16,
                          const tb_kernel *fp32, bool *use_bf16, char *why, size_t cap) {
  const tb_node *n = &e->g->nodes[step];
  double fp32_ms = 0, bf16_ms = 0;
  *use_bf16 = false;
  if (!shapes_known(e, n, in, why, cap)) return;
  if (hook && hook(hook_ctx, n->name ? n->name : "", n->op_type, &fp32_ms, &bf16_ms)) {
    *use_bf16 = tb_bf16_trial_decide(fp32_ms, bf16_ms, false, why, cap);
    return;
  }
  char key[1024];
  trial_key(e, n, in, key, sizeof key);
  if (cache_find(key, &fp32_ms, &bf16_ms)) {
    *use_bf16 = tb_bf16_trial_decide(fp32_ms, bf16_ms, true, why, cap);
    return;
  }
  if (e->trial_ms_left <= 0) {
    snprintf(why, cap, "fp32: no bf16 trial ran: this prepare's trial budget (%.0f ms) was spent", TB_BF16_TRIAL_BUDGET_MS);
    return;
  }
  size_t slots = n->n_inputs + n->n_outputs + 1;
  tb_tensor **tensors = calloc(3 * slots, sizeof *tensors);
  bool *made = calloc(slots, sizeof *made);
  trial t = {e, n, in, tensors, made, tensors ? tensors + slots : NULL, tensors ? tensors + 2 * slots : NULL};
  if (!tensors || !made) {
    snprintf(why, cap, "fp32: out of host memory for the bf16 trial");
  } else if (make_tensors(&t, why, cap) && time_kernels(&t, fp32, bf16, &fp32_ms, &bf16_ms, why, cap)) {
    cache_add(key, fp32_ms, bf16_ms);
    *use_bf16 = tb_bf16_trial_decide(fp32_ms, bf16_ms, false, why, cap);
  }
  if (tensors && made) free_tensors(&t);
  free(tensors);
  free(made);
}
