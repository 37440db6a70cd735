/* The copies handed from producer to consumer (cuda_handoff.h): one table for the process, keyed by the fp32 output's
 * device address (unique among live allocations of every device of the process), under a lock; producers publish
 * and withdraw, consumers look up. Each entry names its publisher and the run it was written in; a consumer takes only
 * its paired producer's entry of its own run. A captured graph holds the producer's launch writing the copy and the
 * consumer's launch reading it, both decided in the captured run, so a replay re-writes what it reads. */
#include "backend/cuda/kernels/cuda_handoff.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "backend/tensor/tensor_impl.h"
#include "core/env.h"

typedef struct entry {
  tb_cu_deviceptr at;
  const tb_tensor *t;
  const void *publisher; /* the producer's identity and the run it was written in (tb_kernel_reduced_source) */
  uint64_t run;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *table;
static size_t count, cap;

bool tb_cuda_fuse_casts_wanted(void) {
  const char *v = tb_env("TB_CUDA_FUSE_CASTS");
  if (!v || strcmp(v, "on") == 0) return true;
  if (strcmp(v, "off") == 0) return false;
  tb_env_warn("TB_CUDA_FUSE_CASTS", v, "is not on or off; conversions are fused into their producers where they can be (on)");
  return true;
}

/* Remove the entry at `at` (lock held). */
static void withdraw(tb_cu_deviceptr at) {
  for (size_t i = 0; i < count; i++)
    if (table[i].at == at) {
      table[i] = table[--count];
      return;
    }
}

static bool same_shape(const tb_tensor *a, const tb_tensor *b) {
  if (a->ndim != b->ndim) return false;
  for (size_t d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d]) return false;
  return true;
}

tb_status tb_cuda_handoff_out(tb_kernel_ctx *ctx, tb_cuda_handoff *h, size_t output, const tb_tensor *out, tb_tensor **copy,
                              int *f16) {
  *copy = NULL;
  *f16 = 0;
  const tb_cu_deviceptr at = out ? tb_cuda_address_of(out) : 0;
  pthread_mutex_lock(&lock);
  if (at) withdraw(at);
  if (h->at && h->at != at) withdraw(h->at);
  pthread_mutex_unlock(&lock);
  h->at = 0;
  h->publisher = NULL;
  h->run = 0;
  tb_dtype dtype = TB_DTYPE_F32;
  const uint64_t wanted = tb_kernel_reduced_outputs(ctx, &dtype);
  const tb_tensor *one[1] = {out};
  const void *publisher;
  uint64_t run;
  if (!tb_kernel_reduced_source(ctx, SIZE_MAX, &publisher, &run)) return TB_OK;
  if (!out || output >= 64 || !(wanted >> output & 1u) || (dtype != TB_DTYPE_BF16 && dtype != TB_DTYPE_F16) ||
      out->dtype != TB_DTYPE_F32 || tb_tensor_numel(out) == 0 || !tb_cuda_tensors_plain(ctx, one, 1))
    return TB_OK;
  if (h->t && (h->t->dtype != dtype || !same_shape(h->t, out))) {
    tb_tensor_destroy(h->t); /* queued work still reading it keeps its block until the stream is done */
    h->t = NULL;
  }
  if (!h->t) {
    tb_status st = tb_tensor_create(ctx->backend, dtype, out->ndim, out->shape, &h->t);
    if (st != TB_OK) return st;
  }
  *copy = h->t;
  *f16 = dtype == TB_DTYPE_F16;
  h->publisher = publisher;
  h->run = run;
  return TB_OK;
}

void tb_cuda_handoff_publish(tb_cuda_handoff *h, const tb_tensor *out) {
  const tb_cu_deviceptr at = tb_cuda_address_of(out);
  if (!h->t || !at || !h->publisher) return;
  pthread_mutex_lock(&lock);
  withdraw(at);
  if (count == cap) {
    size_t n = cap ? cap * 2 : 16;
    entry *grown = realloc(table, n * sizeof *grown);
    if (!grown) { /* not published: the consumer converts for itself */
      pthread_mutex_unlock(&lock);
      return;
    }
    table = grown;
    cap = n;
  }
  table[count++] = (entry){at, h->t, h->publisher, h->run};
  h->at = at;
  pthread_mutex_unlock(&lock);
}

const tb_tensor *tb_cuda_handoff_find(const tb_kernel_ctx *ctx, size_t input, const tb_tensor *x, tb_dtype dtype) {
  if (input >= 64 || !(tb_kernel_reduced_inputs(ctx) >> input & 1u) || !x || x->dtype != TB_DTYPE_F32) return NULL;
  const void *publisher;
  uint64_t run;
  if (!tb_kernel_reduced_source(ctx, input, &publisher, &run)) return NULL;
  const tb_cu_deviceptr at = tb_cuda_address_of(x);
  const tb_tensor *t = NULL;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; at && i < count; i++)
    if (table[i].at == at) {
      if (table[i].publisher == publisher && table[i].run == run && table[i].t->dtype == dtype && same_shape(table[i].t, x))
        t = table[i].t;
      break;
    }
  pthread_mutex_unlock(&lock);
  return t;
}

void tb_cuda_handoff_release(tb_cuda_handoff *h) {
  if (!h) return;
  pthread_mutex_lock(&lock);
  if (h->at) withdraw(h->at);
  if (count == 0) { /* the last one gone: nothing held for the process */
    free(table);
    table = NULL;
    cap = 0;
  }
  pthread_mutex_unlock(&lock);
  tb_tensor_destroy(h->t);
  h->t = NULL;
  h->at = 0;
  h->publisher = NULL;
}
