/* Indices checked by the device, not read back in the middle of the run (docs/cuda.md "No host round-trips"): the
 * index kernels set an int32 flag on the device when an index is outside its dim (that element is written 0 or
 * skipped), and a check (backend/run_checks.h) reads the flag at the run's next host synchronisation (a Loop's
 * condition, the end of the run) and, when it is set, the indices of the node's last call, to name the first bad one
 * in the CPU kernel's sentence (tb_cuda_check_indices). One flag per node, made and zeroed by its prepare (on the
 * model's stream) and reset by the check that finds it set; one record per node and run, not per call: a Loop body
 * of 10^4 iterations makes one flag and one record, and holds one view of the indices. A captured graph holds the
 * kernel and runs the check after each replay. The recurrent kernels check their sequence_lens the same way
 * (tb_cuda_lens_flag, with a flag their own state keeps). Every flag also points at the run-wide word of its model
 * (one int32 per model's stream, kept in its run slot), which the kernels set with the flag (tb_flag_raise,
 * 00_common.cu): the word is a gate of the run's checks, read first at each synchronisation (one 4-byte read whatever
 * the number of checked nodes), the flags only when it is set; it is cleared on the stream at each run's first
 * checked call (in a captured run by the graph, at each replay) and by the pass that found it set. The device also
 * records the run's first bad input (tb_flag_raise_at: the call's number, which the host writes into the flag before
 * each call, the position and the value), so a bad index in any call of the run, a Scan body's earlier iteration's
 * too, is named in the CPU's sentence. */
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/run_checks.h"
#include "core/error.h"

/* The run-wide word of a model's runs: kept in the run slot of its stream, and by its flags and gate records. */
typedef struct run_word {
  int refs;
  tb_tensor *word; /* int32 on the device */
} run_word;

/* The node's flag, shared by its state and the records of its runs (a record may outlive the state: a graph's). */
struct tb_cuda_flag {
  int refs;
  tb_tensor *all;   /* int32 [10] on the device, what the kernels get (00_common.cu): [0] set, [1] the call's number,
                       [2..3] the word's address, [4..9] the run's first bad input */
  tb_tensor *flag;  /* a view of [0]: what the host reads and resets */
  tb_tensor *call;  /* a view of [1] */
  tb_tensor *first; /* a view of [4..9] */
  int64_t call_on_device; /* what [1] holds (its last fill on the stream) */
  run_word *w;     /* NULL when made with no model's stream bound: the check is then read at every synchronisation */
  bool zeroed;     /* its fill ran on the stream; false when it was made inside a capture, whose graph holds it */
};
typedef tb_cuda_flag index_flag;

/* The state of an index node: the shared CUDA state first (cuda_launch.c's functions read it), then its flag. */
typedef struct index_state {
  tb_cuda_node node;
  index_flag *f;
} index_state;

/* What the indices of the last call are checked against: one dim along `axis`, or (k > 0) column j of rows of k
 * against dims[j], named as axis first_axis + j; or (lens) a recurrent node's sequence_lens against 0..dim. */
typedef struct index_rule {
  bool lens;
  int64_t dim;
  size_t axis, k;
  int64_t dims[TB_MAX_DIMS];
} index_rule;

/* A run's record for one node: the flag, the node's label and the indices of its last call in the run. */
typedef struct index_record {
  index_flag *f;
  tb_kernel_ctx label; /* a copy of the node's context: only what tb_kernel_error reads (graph, node) is used */
  tb_tensor *idx;      /* a view of the indices the kernel read last (holds their memory) */
  index_rule rule;
  int64_t calls; /* the node's calls in the run so far, less one: the number of the last */
} index_record;

static void word_unref(void *p) {
  run_word *w = p;
  if (!w || --w->refs > 0) return;
  tb_tensor_destroy(w->word);
  free(w);
}

static void flag_unref(index_flag *f) {
  if (!f || --f->refs > 0) return;
  tb_tensor_destroy(f->flag);
  tb_tensor_destroy(f->call);
  tb_tensor_destroy(f->first);
  tb_tensor_destroy(f->all);
  word_unref(f->w);
  free(f);
}

/* The run-wide word of the model whose stream is bound (made at the first flag of the model), or NULL when none is
 * bound. */
static tb_status word_of(tb_kernel_ctx *ctx, run_word **out) {
  *out = NULL;
  cuda_state *cs = tb_cuda_state_of(ctx);
  tb_cuda_run_slot *slot = cs ? tb_cuda_run_slot_of(cs) : NULL;
  if (!slot) return TB_OK;
  if (!slot->data) {
    run_word *w = calloc(1, sizeof *w);
    if (!w) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the run-wide word of the checks");
    w->refs = 1;
    tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_I32, 0, NULL, &w->word);
    if (st != TB_OK) {
      free(w);
      return st;
    }
    slot->data = w;
    slot->release = word_unref;
  }
  *out = slot->data;
  (*out)->refs++;
  return TB_OK;
}

/* A view of n ints of f's at `at`. */
static tb_status ints_of(index_flag *f, int64_t at, int64_t n, tb_tensor **out) {
  const int64_t unit = 1;
  return tb_tensor_view(f->all, 1, &n, &unit, at, out);
}

/* value written over v on the stream. */
static tb_status fill_ints(tb_tensor *v, int32_t value) { return tb_tensor_fill(v, &value); }

/* f's ints written on the stream: [0] 0, [1] 0 (the first call), [2..3] the word's address (0 without a word), [4..9]
 * all ones (no bad input yet). */
static tb_status flag_fill(index_flag *f) {
  uint64_t at = f->w ? (uint64_t)tb_cuda_address_of(f->w->word) : 0;
  tb_status st = fill_ints(f->flag, 0);
  if (st == TB_OK) st = fill_ints(f->call, 0);
  for (int i = 0; st == TB_OK && i < 2; i++) {
    tb_tensor *half = NULL;
    st = ints_of(f, 2 + i, 1, &half);
    if (st == TB_OK) st = fill_ints(half, (int32_t)(uint32_t)(i ? at >> 32 : at));
    tb_tensor_destroy(half);
  }
  if (st == TB_OK) st = fill_ints(f->first, -1);
  f->call_on_device = 0;
  return st;
}

/* The gate of a run's checks (run_checks.h): the word read, or cleared. */
static tb_status run_gate(void *p, bool clear, bool *set) {
  run_word *w = p;
  int32_t v = 0;
  if (clear) return tb_tensor_copy_from_host(w->word, &v, sizeof v);
  tb_status st = tb_tensor_copy_to_host(w->word, &v, sizeof v);
  *set = v != 0;
  return st;
}

/* The word's gate in this run's list: at the run's first checked call the word is cleared on the stream (in a
 * captured run by the graph) and its gate added. */
static tb_status arm_gate(run_word *w) {
  if (!w || tb_run_checks_find(w)) return TB_OK;
  const int32_t zero = 0;
  tb_status st = tb_tensor_fill(w->word, &zero);
  if (st != TB_OK) return st;
  w->refs++;
  return tb_run_checks_add_gate(w, run_gate, w, word_unref);
}

static void free_record(void *p) {
  index_record *r = p;
  flag_unref(r->f);
  tb_tensor_destroy(r->idx);
  free(r);
}

/* The first of sequence_lens outside 0..seq: the CPU reference's status and sentence (rnn_control/rnn_seq.c). */
static tb_status check_lens(index_record *r) {
  size_t n = (size_t)tb_tensor_numel(r->idx);
  int64_t *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return tb_kernel_error(&r->label, TB_ERR_OUT_OF_MEMORY, "out of host memory for %zu sequence lengths", n);
  tb_status st = tb_tensor_copy_to_host(r->idx, v, n * tb_dtype_size(tb_tensor_dtype(r->idx)));
  if (st == TB_OK && tb_tensor_dtype(r->idx) == TB_DTYPE_I32)
    for (size_t b = n; b-- > 0;) v[b] = ((const int32_t *)v)[b]; /* widened in place, from the end */
  for (size_t b = 0; st == TB_OK && b < n; b++)
    if (v[b] < 0 || v[b] > r->rule.dim)
      st = tb_kernel_error(&r->label, TB_ERR_MODEL, "sequence_lens[%lld] is %lld, outside 0..%lld", (long long)b, (long long)v[b],
                           (long long)r->rule.dim);
  free(v);
  return st;
}

static tb_status check_rule(index_record *r) {
  const index_rule *u = &r->rule;
  if (u->lens) return check_lens(r);
  return u->k ? tb_cuda_check_nd_indices(&r->label, r->idx, u->k, u->dims, u->axis)
              : tb_cuda_check_indices(&r->label, r->idx, u->dim, u->axis);
}

/* The run's first bad input, recorded by the device (00_common.cu): the value at position `at` of the node's first bad
 * call, in the CPU's sentence (the CPU stops at that call). */
static tb_status first_bad(index_record *r, size_t at, int64_t value) {
  const index_rule *u = &r->rule;
  if (u->lens)
    return tb_kernel_error(&r->label, TB_ERR_MODEL, "sequence_lens[%zu] is %lld, outside 0..%lld", at, (long long)value, (long long)u->dim);
  size_t axis = u->k ? u->axis + at % u->k : u->axis;
  int64_t dim = u->k ? u->dims[at % u->k] : u->dim;
  return tb_kernel_error(&r->label, TB_ERR_INVALID_ARGUMENT, "index %lld (indices element %zu) is out of range for axis %zu of size %lld",
                         (long long)value, at, axis, (long long)dim); /* the CPU kernels' sentence (tb_tk_check_index) */
}

static tb_status run_record(void *p, bool *found) {
  index_record *r = p;
  int32_t set = 0;
  tb_status st = tb_tensor_copy_to_host(r->f->flag, &set, sizeof set);
  if (st != TB_OK || !set) return st;
  uint64_t first[3];
  st = tb_tensor_copy_to_host(r->f->first, first, sizeof first);
  if (st != TB_OK) return st;
  const int32_t zero = 0, none[6] = {-1, -1, -1, -1, -1, -1};
  st = tb_tensor_copy_from_host(r->f->flag, &zero, sizeof zero); /* the next run (or replay) starts from 0 again */
  if (st == TB_OK) st = tb_tensor_copy_from_host(r->f->first, none, sizeof none);
  if (st != TB_OK) return st;
  *found = true;
  uint64_t at = first[0] & 0xffffffffu;
  if (at != 0xffffffffu && first[1] >> 32 == at && first[2] >> 32 == at) /* else none, or past 2^32 - 1 */
    return first_bad(r, (size_t)at, (int64_t)((first[1] & 0xffffffffu) | (first[2] << 32)));
  if ((st = check_rule(r)) != TB_OK) return st;
  /* the bad indices were an earlier call's in this run (a Scan's body, which has no host synchronisation per
   * iteration) */
  const index_rule *u = &r->rule;
  if (u->lens)
    return tb_kernel_error(&r->label, TB_ERR_MODEL,
                           "a sequence_lens value outside 0..%lld in an earlier call of the node (the last call's are "
                           "good); give lengths in 0..%lld",
                           (long long)u->dim, (long long)u->dim);
  if (u->k)
    return tb_kernel_error(&r->label, TB_ERR_INVALID_ARGUMENT,
                           "an index was out of range for axes %zu..%zu in one of the node's runs before its last one "
                           "(the last one's indices are good); fix the indices",
                           u->axis, u->axis + u->k - 1);
  return tb_kernel_error(&r->label, TB_ERR_INVALID_ARGUMENT,
                         "an index was out of range for axis %zu of size %lld in one of the node's runs before its last "
                         "one (the last one's indices are good); fix the indices",
                         u->axis, (long long)u->dim);
}

tb_status tb_cuda_flag_make(tb_kernel_ctx *ctx, tb_cuda_flag **out) {
  *out = NULL;
  tb_cuda_flag *f = calloc(1, sizeof *f);
  if (!f) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the check of the indices");
  f->refs = 1;
  const int64_t ints = 10;
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_I32, 1, &ints, &f->all);
  if (st == TB_OK) st = tb_tensor_view(f->all, 0, NULL, NULL, 0, &f->flag);
  if (st == TB_OK) st = tb_tensor_view(f->all, 0, NULL, NULL, 1, &f->call);
  if (st == TB_OK) st = ints_of(f, 4, 6, &f->first);
  if (st == TB_OK) st = word_of(ctx, &f->w);
  if (st == TB_OK) st = flag_fill(f); /* on the model's stream, which prepare binds */
  if (st != TB_OK) {
    flag_unref(f);
    return st;
  }
  /* made at a node's first run inside a capture: the fill is the graph's, and a dropped graph never runs it */
  cuda_state *cs = tb_cuda_state_of(ctx);
  f->zeroed = !cs || !tb_cuda_capturing(cs);
  *out = f;
  return TB_OK;
}

void tb_cuda_flag_release(tb_cuda_flag *f) { flag_unref(f); }

tb_status tb_cuda_index_prepare(tb_kernel_ctx *ctx, void **state) {
  void *shared = NULL;
  tb_status st = tb_cuda_prepare_sized(ctx, sizeof(index_state), &shared);
  if (st != TB_OK) return st;
  index_state *s = shared; /* the shared state at its start */
  if ((st = tb_cuda_flag_make(ctx, &s->f)) != TB_OK) {
    free(s);
    return st;
  }
  *state = s;
  return TB_OK;
}

void tb_cuda_index_release(void *state) {
  index_state *s = state;
  if (!s) return;
  flag_unref(s->f);
  free(s);
}

/* This run's record for the node of flag f (made at its first call in the run), its indices now idx, checked by
 * rule. */
static tb_status arm(tb_kernel_ctx *ctx, tb_cuda_flag *f, tb_tensor *idx, const index_rule *rule, tb_tensor **flag) {
  *flag = NULL;
  if (!f) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the kernel has no prepared flag for the check of its indices");
  tb_status st = TB_OK;
  cuda_state *cs = tb_cuda_state_of(ctx);
  /* zeroed on the stream, before the kernel that reads it, at the node's first call in the run; inside a capture the
   * fill is the graph's (each replay clears the flag), and the flag counts as zeroed only once an eager fill ran */
  if (!f->zeroed && !tb_run_checks_find(f)) {
    if ((st = flag_fill(f)) != TB_OK) return st;
    f->zeroed = !cs || !tb_cuda_capturing(cs);
  }
  if ((st = arm_gate(f->w)) != TB_OK) return st;
  tb_tensor *view = NULL;
  st = tb_tensor_view(idx, tb_tensor_ndim(idx), tb_tensor_shape(idx), tb_tensor_strides(idx), tb_tensor_offset(idx), &view);
  if (st != TB_OK) return st;
  index_record *r = tb_run_checks_find(f);
  int64_t call = r ? r->calls + 1 : 0;
  if (call > 0xfffffffe) call = 0xfffffffe; /* [1] holds 32 bits: later calls count as the last recordable one */
  if (call != f->call_on_device) {
    if ((st = fill_ints(f->call, (int32_t)(uint32_t)call)) != TB_OK) {
      tb_tensor_destroy(view);
      return st;
    }
    f->call_on_device = call;
  }
  if (!r) {
    if (!(r = calloc(1, sizeof *r))) {
      tb_tensor_destroy(view);
      return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the check of the indices");
    }
    r->f = f;
    f->refs++;
    r->idx = view;
    r->label = *ctx;
    r->rule = *rule;
    if ((st = tb_run_checks_add_behind(f, f->w, run_record, r, free_record)) != TB_OK) return st;
  } else {
    tb_tensor_destroy(r->idx);
    r->idx = view;
    r->label = *ctx;
    r->rule = *rule;
  }
  r->calls = call;
  *flag = f->all;
  return TB_OK;
}

static tb_cuda_flag *flag_of(const tb_kernel_ctx *ctx) {
  const index_state *s = ctx->state;
  return s ? s->f : NULL;
}

tb_status tb_cuda_lens_flag(tb_kernel_ctx *ctx, tb_cuda_flag *f, tb_tensor *lens, int64_t seq, tb_tensor **flag) {
  index_rule rule = {.lens = true, .dim = seq};
  return arm(ctx, f, lens, &rule, flag);
}

tb_status tb_cuda_index_flag(tb_kernel_ctx *ctx, tb_tensor *idx, int64_t dim, size_t axis, tb_tensor **flag) {
  index_rule rule = {.dim = dim, .axis = axis};
  return arm(ctx, flag_of(ctx), idx, &rule, flag);
}

tb_status tb_cuda_index_flag_nd(tb_kernel_ctx *ctx, tb_tensor *idx, size_t k, const int64_t *dims, size_t first_axis, tb_tensor **flag) {
  if (k == 0 || k > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "%zu indexed dims for the check of the indices", k);
  index_rule rule = {.axis = first_axis, .k = k};
  memcpy(rule.dims, dims, k * sizeof *dims);
  return arm(ctx, flag_of(ctx), idx, &rule, flag);
}
