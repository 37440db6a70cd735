/* Forward convolutions through cuDNN 9's graph API (cuda_dnn.h). A plan is built as cuDNN's documentation
 * lays out: tensor descriptors (X, W, Y, the bias, virtual tensors between fused operations), the
 * convolution descriptor, the operations (convolution, then pointwise add and ReLU when asked), the
 * operation graph, the engine heuristics (mode A, then the fallback list), and the first execution plan
 * that finalizes; every descriptor it made lives as long as the plan. At run time a variant pack binds
 * the pointers and the workspace to the tensors' ids. */
#include "backend/cuda/cuda_dnn.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "runtime/cudnn_api.h"

enum { UID_X = 1, UID_W = 2, UID_Y = 3, UID_BIAS = 4, UID_CONV_OUT = 5, UID_BIASED = 6, UID_X_SCALE = 7, UID_W_SCALE = 8,
       UID_X_SCALED = 9, UID_W_SCALED = 10 };
/* A plan's descriptors: 12 for the fused graph (20 with fp8's two scalings), then per heuristic mode 1 + 8
 * configurations + 8 engines (their numerical notes) + 8 plans. */
enum { MAX_DESCS = 96, MAX_ENGINES = 8 };

/* Everything a plan depends on; zeroed before it is filled, so memcmp compares it. */
typedef struct conv_key {
  int64_t n, c, h, w, k, groups, kh, kw, pt, pl, pb, pr, sh, sw, dh, dw, oh, ow;
  int32_t bias, relu, data, tf32;
  int64_t align_x, align_w, align_y, align_bias, align_x_scale, align_w_scale;
} conv_key;

typedef struct dnn_plan {
  conv_key key;
  tb_cudnn_desc descs[MAX_DESCS]; /* every descriptor made for it */
  size_t count;
  tb_cudnn_desc plan;
  int64_t workspace;
  bool fused;
} dnn_plan;

struct tb_cuda_dnn {
  char who[64];
  tb_cudnn_api api;
  tb_cudnn_handle handle;
  pthread_mutex_t lock;
  dnn_plan *plans[TB_CUDA_DNN_MAX_PLANS];
  size_t count;
  tb_cuda_dnn_stats stats;
};

/* One attempt at a plan; the first failure of a cuDNN call is kept for the sentence. */
typedef struct builder {
  tb_cuda_dnn *dnn;
  dnn_plan *p;
  const char *call, *what;
  tb_cudnn_status status;
  bool ops_only; /* stop before the operation graph (tb_cuda_dnn_test_operations) */
} builder;

static void describe(const conv_key *k, char *out, size_t cap) {
  snprintf(out, cap,
           "the convolution of X [%lld x %lld x %lld x %lld] with W [%lld x %lld x %lld x %lld] (groups %lld, strides "
           "%lld x %lld, pads %lld,%lld,%lld,%lld, dilations %lld x %lld%s%s%s)",
           (long long)k->n, (long long)k->c, (long long)k->h, (long long)k->w, (long long)k->k,
           (long long)(k->c / k->groups), (long long)k->kh, (long long)k->kw, (long long)k->groups, (long long)k->sh,
           (long long)k->sw, (long long)k->pt, (long long)k->pl, (long long)k->pb, (long long)k->pr, (long long)k->dh,
           (long long)k->dw, k->bias ? ", bias" : "", k->relu ? ", ReLU" : "",
           k->data == TB_CUDA_DNN_BF16   ? ", bfloat16 X and W"
           : k->data == TB_CUDA_DNN_F16  ? ", float16 X and W"
           : k->data == TB_CUDA_DNN_E4M3 ? ", fp8 e4m3 X and W with per-tensor scales"
           : k->tf32                     ? ", TF32"
                                         : "");
}

static tb_status cudnn_failed(const tb_cuda_dnn *dnn, const builder *b, const conv_key *k) {
  char name[400], conv[400];
  tb_cudnn_status_name(&dnn->api, b->status, name, sizeof name);
  describe(k, conv, sizeof conv);
  bool oom = b->status == TB_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
             b->status == TB_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
  return tb_error(oom ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER, "%s: %s (%s) failed with %d %s for %s (cuDNN %zu at %s)%s",
                  dnn->who, b->call, b->what, b->status, name, conv, dnn->api.version, dnn->api.path,
                  oom ? "; free device memory or run a smaller batch" : "");
}

static bool failed(builder *b, const char *call, const char *what, tb_cudnn_status st) {
  if (st == TB_CUDNN_STATUS_SUCCESS) return false;
  if (!b->call) {
    b->call = call;
    b->what = what;
    b->status = st;
  }
  return true;
}

static tb_cudnn_desc make(builder *b, int type, const char *what) {
  if (b->call) return NULL;
  if (b->p->count == MAX_DESCS) {
    failed(b, "cudnnBackendCreateDescriptor", "too many descriptors for one plan", TB_CUDNN_STATUS_BAD_PARAM);
    return NULL;
  }
  tb_cudnn_desc d = NULL;
  if (failed(b, "cudnnBackendCreateDescriptor", what, b->dnn->api.cudnnBackendCreateDescriptor(type, &d))) return NULL;
  b->p->descs[b->p->count++] = d;
  return d;
}

static void set(builder *b, tb_cudnn_desc d, int name, int type, int64_t count, const void *value, const char *what) {
  if (b->call || !d) return;
  failed(b, "cudnnBackendSetAttribute", what, b->dnn->api.cudnnBackendSetAttribute(d, name, type, count, value));
}

static tb_cudnn_status finalize(builder *b, tb_cudnn_desc d, const char *what) {
  if (b->call || !d) return TB_CUDNN_STATUS_BAD_PARAM;
  tb_cudnn_status st = b->dnn->api.cudnnBackendFinalize(d);
  failed(b, "cudnnBackendFinalize", what, st);
  return st;
}

static const int32_t data_float = TB_CUDNN_DATA_FLOAT;

/* cuDNN's data type for X and W. */
static int32_t data_type(int32_t data) {
  return data == TB_CUDA_DNN_BF16   ? TB_CUDNN_DATA_BFLOAT16
         : data == TB_CUDA_DNN_F16  ? TB_CUDNN_DATA_HALF
         : data == TB_CUDA_DNN_E4M3 ? TB_CUDNN_DATA_FP8_E4M3
                                    : TB_CUDNN_DATA_FLOAT;
}

/* A packed NCHW tensor of cuDNN data type `type`. */
static tb_cudnn_desc tensor(builder *b, int64_t uid, int32_t type, int64_t n, int64_t c, int64_t h, int64_t w, int64_t align,
                            bool is_virtual, const char *what) {
  tb_cudnn_desc t = make(b, TB_CUDNN_TENSOR_DESCRIPTOR, what);
  const int64_t dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1};
  set(b, t, TB_CUDNN_ATTR_TENSOR_DATA_TYPE, TB_CUDNN_TYPE_DATA_TYPE, 1, &type, what);
  set(b, t, TB_CUDNN_ATTR_TENSOR_DIMENSIONS, TB_CUDNN_TYPE_INT64, 4, dims, what);
  set(b, t, TB_CUDNN_ATTR_TENSOR_STRIDES, TB_CUDNN_TYPE_INT64, 4, strides, what);
  set(b, t, TB_CUDNN_ATTR_TENSOR_UNIQUE_ID, TB_CUDNN_TYPE_INT64, 1, &uid, what);
  set(b, t, TB_CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, TB_CUDNN_TYPE_INT64, 1, &align, what);
  if (is_virtual) {
    const bool yes = true;
    set(b, t, TB_CUDNN_ATTR_TENSOR_IS_VIRTUAL, TB_CUDNN_TYPE_BOOLEAN, 1, &yes, what);
  }
  finalize(b, t, what);
  return t;
}

/* A pointwise operation y = mode(x[, with]). */
static tb_cudnn_desc pointwise(builder *b, int32_t mode, tb_cudnn_desc x, tb_cudnn_desc with, tb_cudnn_desc y,
                               const char *what) {
  tb_cudnn_desc pw = make(b, TB_CUDNN_POINTWISE_DESCRIPTOR, what);
  set(b, pw, TB_CUDNN_ATTR_POINTWISE_MODE, TB_CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
  set(b, pw, TB_CUDNN_ATTR_POINTWISE_MATH_PREC, TB_CUDNN_TYPE_DATA_TYPE, 1, &data_float, what);
  finalize(b, pw, what);
  tb_cudnn_desc op = make(b, TB_CUDNN_OPERATION_POINTWISE_DESCRIPTOR, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &pw, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_POINTWISE_XDESC, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
  if (with) set(b, op, TB_CUDNN_ATTR_OPERATION_POINTWISE_BDESC, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &with, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_POINTWISE_YDESC, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
  finalize(b, op, what);
  return op;
}

/* The operation graph: the convolution, for fp8 its two scalings (X's and W's per-tensor scales, always part of it),
 * then the bias and the ReLU when fused. */
static tb_cudnn_desc graph(builder *b, const conv_key *k, bool fused) {
  bool bias = fused && k->bias, relu = fused && k->relu, fp8 = k->data == TB_CUDA_DNN_E4M3;
  const int32_t in_type = data_type(k->data); /* X and W; Y and everything after the convolution float */
  tb_cudnn_desc x = tensor(b, UID_X, in_type, k->n, k->c, k->h, k->w, k->align_x, false, "the X tensor");
  tb_cudnn_desc w = tensor(b, UID_W, in_type, k->k, k->c / k->groups, k->kh, k->kw, k->align_w, false, "the W tensor");
  tb_cudnn_desc y = tensor(b, UID_Y, data_float, k->n, k->k, k->oh, k->ow, k->align_y, false, "the Y tensor");
  tb_cudnn_desc conv_out = bias || relu || fp8
                               ? tensor(b, UID_CONV_OUT, data_float, k->n, k->k, k->oh, k->ow, 16, true, "the convolution's virtual output")
                               : y;
  const char *what = "the convolution descriptor";
  tb_cudnn_desc cd = make(b, TB_CUDNN_CONVOLUTION_DESCRIPTOR, what);
  const int64_t dims = 2, dilations[2] = {k->dh, k->dw}, strides[2] = {k->sh, k->sw}, pre[2] = {k->pt, k->pl},
                post[2] = {k->pb, k->pr};
  const int32_t mode = TB_CUDNN_CROSS_CORRELATION;
  set(b, cd, TB_CUDNN_ATTR_CONVOLUTION_COMP_TYPE, TB_CUDNN_TYPE_DATA_TYPE, 1, &data_float, what);
  set(b, cd, TB_CUDNN_ATTR_CONVOLUTION_CONV_MODE, TB_CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, what);
  set(b, cd, TB_CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, TB_CUDNN_TYPE_INT64, 1, &dims, what);
  set(b, cd, TB_CUDNN_ATTR_CONVOLUTION_DILATIONS, TB_CUDNN_TYPE_INT64, 2, dilations, what);
  set(b, cd, TB_CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, TB_CUDNN_TYPE_INT64, 2, strides, what);
  set(b, cd, TB_CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, TB_CUDNN_TYPE_INT64, 2, pre, what);
  set(b, cd, TB_CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, TB_CUDNN_TYPE_INT64, 2, post, what);
  finalize(b, cd, what);
  what = "the convolution operation";
  tb_cudnn_desc ops[5];
  int count = 0;
  tb_cudnn_desc op = ops[count++] = make(b, TB_CUDNN_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, what);
  const float alpha = 1.0f, beta = 0.0f;
  set(b, op, TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv_out, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cd, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, TB_CUDNN_TYPE_FLOAT, 1, &alpha, what);
  set(b, op, TB_CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, TB_CUDNN_TYPE_FLOAT, 1, &beta, what);
  finalize(b, op, what);
  tb_cudnn_desc last = conv_out;
  if (fp8) { /* the sums times X's scale, then times W's */
    tb_cudnn_desc xs = tensor(b, UID_X_SCALE, data_float, 1, 1, 1, 1, k->align_x_scale, false, "X's scale");
    tb_cudnn_desc ws = tensor(b, UID_W_SCALE, data_float, 1, 1, 1, 1, k->align_w_scale, false, "W's scale");
    tb_cudnn_desc xd = tensor(b, UID_X_SCALED, data_float, k->n, k->k, k->oh, k->ow, 16, true, "the X-scaled virtual output");
    tb_cudnn_desc wd = bias || relu ? tensor(b, UID_W_SCALED, data_float, k->n, k->k, k->oh, k->ow, 16, true, "the scaled virtual output") : y;
    ops[count++] = pointwise(b, TB_CUDNN_POINTWISE_MUL, last, xs, xd, "X's scaling");
    ops[count++] = pointwise(b, TB_CUDNN_POINTWISE_MUL, xd, ws, wd, "W's scaling");
    last = wd;
  }
  if (bias) {
    tb_cudnn_desc bt = tensor(b, UID_BIAS, data_float, 1, k->k, 1, 1, k->align_bias, false, "the bias tensor");
    tb_cudnn_desc out = relu ? tensor(b, UID_BIASED, data_float, k->n, k->k, k->oh, k->ow, 16, true, "the biased virtual output") : y;
    ops[count++] = pointwise(b, TB_CUDNN_POINTWISE_ADD, last, bt, out, "the bias addition");
    last = out;
  }
  if (relu) ops[count++] = pointwise(b, TB_CUDNN_POINTWISE_RELU_FWD, last, NULL, y, "the ReLU");
  if (b->ops_only) return NULL;
  what = "the operation graph";
  tb_cudnn_desc g = make(b, TB_CUDNN_OPERATIONGRAPH_DESCRIPTOR, what);
  set(b, g, TB_CUDNN_ATTR_OPERATIONGRAPH_HANDLE, TB_CUDNN_TYPE_HANDLE, 1, &b->dnn->handle, what);
  set(b, g, TB_CUDNN_ATTR_OPERATIONGRAPH_OPS, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, count, ops, what);
  finalize(b, g, what);
  return g;
}

static bool not_supported(tb_cudnn_status st) { return st / 1000 * 1000 == TB_CUDNN_STATUS_NOT_SUPPORTED; }

/* Whether the engine of configuration cfg computes as the key asks, from its numerical notes: fp32 data without
 * tf32 takes no engine on tensor cores or with down-converted inputs (TF32), 16-bit data none that reduces in
 * reduced precision (the accumulation stays fp32). false with b->call set when cuDNN fails to say. */
static bool engine_fits(builder *b, const conv_key *k, tb_cudnn_desc cfg) {
  const char *what = "an engine's numerical notes";
  tb_cudnn_desc engine = make(b, TB_CUDNN_ENGINE_DESCRIPTOR, what);
  int64_t got = 0;
  if (!engine || failed(b, "cudnnBackendGetAttribute", what,
                        b->dnn->api.cudnnBackendGetAttribute(cfg, TB_CUDNN_ATTR_ENGINECFG_ENGINE, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                                             1, &got, &engine)))
    return false;
  int32_t notes[TB_CUDNN_NUMERICAL_NOTE_TYPE_COUNT_MAX];
  int64_t count = 0;
  if (failed(b, "cudnnBackendGetAttribute", what,
             b->dnn->api.cudnnBackendGetAttribute(engine, TB_CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, TB_CUDNN_TYPE_NUMERICAL_NOTE,
                                                  TB_CUDNN_NUMERICAL_NOTE_TYPE_COUNT_MAX, &count, notes)))
    return false;
  for (int64_t i = 0; i < count && i < TB_CUDNN_NUMERICAL_NOTE_TYPE_COUNT_MAX; i++) {
    bool tf32 = notes[i] == TB_CUDNN_NUMERICAL_NOTE_TENSOR_CORE || notes[i] == TB_CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    if (k->data == TB_CUDA_DNN_F32 && !k->tf32 && tf32) return false;
    if (k->data != TB_CUDA_DNN_F32 && notes[i] == TB_CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) return false;
  }
  return true;
}

/* The engines cuDNN's heuristics list in `mode`, tried in their order; true when one finalizes. */
static bool try_engines(builder *b, const conv_key *k, tb_cudnn_desc g, int32_t mode, tb_cudnn_status *last_refusal) {
  const tb_cudnn_api *api = &b->dnn->api;
  const char *what = mode == TB_CUDNN_HEUR_MODE_A ? "the engine heuristics (mode A)" : "the engine heuristics (fallback)";
  tb_cudnn_desc heur = make(b, TB_CUDNN_ENGINEHEUR_DESCRIPTOR, what);
  set(b, heur, TB_CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g, what);
  set(b, heur, TB_CUDNN_ATTR_ENGINEHEUR_MODE, TB_CUDNN_TYPE_HEUR_MODE, 1, &mode, what);
  if (b->call) return false;
  tb_cudnn_status st = api->cudnnBackendFinalize(heur);
  if (not_supported(st)) {
    *last_refusal = st;
    return false;
  }
  if (failed(b, "cudnnBackendFinalize", what, st)) return false;
  int64_t available = 0;
  if (failed(b, "cudnnBackendGetAttribute", what,
             api->cudnnBackendGetAttribute(heur, TB_CUDNN_ATTR_ENGINEHEUR_RESULTS, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                           &available, NULL)))
    return false;
  int64_t wanted = available < MAX_ENGINES ? available : MAX_ENGINES, got = 0;
  tb_cudnn_desc configs[MAX_ENGINES];
  for (int64_t i = 0; i < wanted; i++) configs[i] = make(b, TB_CUDNN_ENGINECFG_DESCRIPTOR, "an engine configuration");
  if (b->call || wanted == 0) return false;
  if (failed(b, "cudnnBackendGetAttribute", what,
             api->cudnnBackendGetAttribute(heur, TB_CUDNN_ATTR_ENGINEHEUR_RESULTS, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                           wanted, &got, configs)))
    return false;
  for (int64_t i = 0; i < got && i < wanted; i++) {
    if (!engine_fits(b, k, configs[i])) {
      if (b->call) return false;
      b->dnn->stats.passed_over++;
      continue;
    }
    what = "an execution plan";
    tb_cudnn_desc plan = make(b, TB_CUDNN_EXECUTION_PLAN_DESCRIPTOR, what);
    set(b, plan, TB_CUDNN_ATTR_EXECUTION_PLAN_HANDLE, TB_CUDNN_TYPE_HANDLE, 1, &b->dnn->handle, what);
    set(b, plan, TB_CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, TB_CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i], what);
    if (b->call) return false;
    b->dnn->stats.engines++;
    st = api->cudnnBackendFinalize(plan);
    if (st != TB_CUDNN_STATUS_SUCCESS) { /* this engine does not take it: the next one may */
      *last_refusal = st;
      continue;
    }
    int64_t workspace = 0, n = 0;
    if (failed(b, "cudnnBackendGetAttribute", "the execution plan's workspace size",
               api->cudnnBackendGetAttribute(plan, TB_CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, TB_CUDNN_TYPE_INT64, 1,
                                             &n, &workspace)))
      return false;
    b->p->plan = plan;
    b->p->workspace = workspace;
    return true;
  }
  return false;
}

static void plan_free(const tb_cudnn_api *api, dnn_plan *p) {
  if (!p) return;
  for (size_t i = p->count; i-- > 0;) api->cudnnBackendDestroyDescriptor(p->descs[i]);
  free(p);
}

/* One attempt: TB_OK with *out, TB_ERR_UNSUPPORTED (no engine; *refusal is cuDNN's last word) or a failure. */
static tb_status attempt(tb_cuda_dnn *dnn, const conv_key *k, bool fused, dnn_plan **out, tb_cudnn_status *refusal) {
  dnn_plan *p = calloc(1, sizeof *p);
  if (!p) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for a cuDNN plan (%zu bytes)", dnn->who, sizeof *p);
  p->key = *k;
  p->fused = fused;
  builder b = {.dnn = dnn, .p = p};
  tb_cudnn_desc g = graph(&b, k, fused);
  bool found = false;
  if (b.call && b.status != TB_CUDNN_STATUS_SUCCESS && strcmp(b.call, "cudnnBackendFinalize") == 0 &&
      strcmp(b.what, "the operation graph") == 0 && not_supported(b.status)) {
    *refusal = b.status; /* no engine for this graph's pattern */
    b.call = NULL;
  } else if (!b.call) {
    found = try_engines(&b, k, g, TB_CUDNN_HEUR_MODE_A, refusal) ||
            (!b.call && try_engines(&b, k, g, TB_CUDNN_HEUR_MODE_FALLBACK, refusal));
  }
  if (b.call) {
    tb_status st = cudnn_failed(dnn, &b, k);
    plan_free(&dnn->api, p);
    return st;
  }
  if (!found) {
    plan_free(&dnn->api, p);
    return TB_ERR_UNSUPPORTED;
  }
  *out = p;
  return TB_OK;
}

tb_status tb_cuda_dnn_create(const char *who, tb_cuda_dnn **out) {
  if (!out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_cuda_dnn_create needs somewhere to put the handle (out is NULL)");
  *out = NULL;
  tb_cuda_dnn *dnn = calloc(1, sizeof *dnn);
  if (!dnn) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for the cuDNN state (%zu bytes)", who, sizeof *dnn);
  snprintf(dnn->who, sizeof dnn->who, "%s", who ? who : "cuda");
  tb_status st = tb_cudnn_open(&dnn->api, dnn->who);
  if (st != TB_OK) {
    free(dnn);
    return st;
  }
  tb_cudnn_status r = dnn->api.cudnnCreate(&dnn->handle);
  if (r != TB_CUDNN_STATUS_SUCCESS) {
    char name[400];
    tb_cudnn_status_name(&dnn->api, r, name, sizeof name);
    st = tb_error(TB_ERR_DRIVER,
                  "%s: cudnnCreate of %s (cuDNN %zu) failed with %d %s; check that the GPU's driver and CUDA version "
                  "match this cuDNN (nvidia-smi), or set TB_CUDNN_LIB to a matching libcudnn.so.9; convolutions can "
                  "run on the backend's own kernels meanwhile",
                  dnn->who, dnn->api.path, dnn->api.version, r, name);
    free(dnn);
    return st;
  }
  pthread_mutex_init(&dnn->lock, NULL);
  *out = dnn;
  return TB_OK;
}

void tb_cuda_dnn_destroy(tb_cuda_dnn *dnn) {
  if (!dnn) return;
  for (size_t i = 0; i < dnn->count; i++) plan_free(&dnn->api, dnn->plans[i]);
  dnn->api.cudnnDestroy(dnn->handle);
  pthread_mutex_destroy(&dnn->lock);
  free(dnn);
}

void tb_cuda_dnn_stats_get(tb_cuda_dnn *dnn, tb_cuda_dnn_stats *out) {
  pthread_mutex_lock(&dnn->lock);
  *out = dnn->stats;
  out->plans = dnn->count;
  pthread_mutex_unlock(&dnn->lock);
}

static tb_status bad(const char *who, const char *field, long long value, const char *rule) {
  return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a cuDNN convolution's %s is %lld; %s", who, field, value, rule);
}

tb_status tb_cuda_dnn_conv_output(const char *who, const tb_cuda_conv *c, int64_t *out_h, int64_t *out_w) {
  const struct {
    const char *name;
    int64_t value;
  } positive[] = {{"n (batch)", c->n}, {"c (input channels)", c->c}, {"h (input height)", c->h}, {"w (input width)", c->w},
                  {"k (output channels)", c->k}, {"kernel_h", c->kernel_h}, {"kernel_w", c->kernel_w}};
  for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++)
    if (positive[i].value < 1) return bad(who, positive[i].name, positive[i].value, "it must be at least 1");
  const struct {
    const char *name;
    int64_t value;
  } others[] = {{"groups", c->groups}, {"stride_h", c->stride_h}, {"stride_w", c->stride_w},
                {"dilation_h", c->dilation_h}, {"dilation_w", c->dilation_w}, {"pad_top", c->pad_top},
                {"pad_left", c->pad_left}, {"pad_bottom", c->pad_bottom}, {"pad_right", c->pad_right}};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
    if (others[i].value < 0) return bad(who, others[i].name, others[i].value, "it must be 0 or more");
  int64_t groups = c->groups ? c->groups : 1;
  if (c->c % groups || c->k % groups)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: a cuDNN convolution's groups is %lld, which divides neither c = %lld nor k = %lld evenly; both "
                    "channel counts must be multiples of it",
                    who, (long long)groups, (long long)c->c, (long long)c->k);
  int64_t sh = c->stride_h ? c->stride_h : 1, sw = c->stride_w ? c->stride_w : 1;
  int64_t dh = c->dilation_h ? c->dilation_h : 1, dw = c->dilation_w ? c->dilation_w : 1;
  int64_t span_h = dh * (c->kernel_h - 1) + 1, span_w = dw * (c->kernel_w - 1) + 1;
  int64_t in_h = c->h + c->pad_top + c->pad_bottom, in_w = c->w + c->pad_left + c->pad_right;
  if (in_h < span_h || in_w < span_w)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: a cuDNN convolution's dilated kernel (%lld x %lld) is larger than its padded input (%lld x %lld); "
                    "the output would be empty",
                    who, (long long)span_h, (long long)span_w, (long long)in_h, (long long)in_w);
  *out_h = (in_h - span_h) / sh + 1;
  *out_w = (in_w - span_w) / sw + 1;
  return TB_OK;
}

/* The largest power of two, up to 16 bytes, dividing the address. */
static int64_t alignment(tb_cu_deviceptr address) {
  uint64_t bits = address | 16u;
  return (int64_t)(bits & (~bits + 1));
}

static tb_status make_key(const char *who, const tb_cuda_conv *c, conv_key *k) {
  memset(k, 0, sizeof *k);
  tb_status st = tb_cuda_dnn_conv_output(who, c, &k->oh, &k->ow);
  if (st != TB_OK) return st;
  if (!c->x || !c->weight || !c->y)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a cuDNN convolution needs device pointers for X, W and Y (%s is 0)", who,
                    !c->x ? "X" : !c->weight ? "W" : "Y");
  k->n = c->n, k->c = c->c, k->h = c->h, k->w = c->w, k->k = c->k;
  k->groups = c->groups ? c->groups : 1;
  k->kh = c->kernel_h, k->kw = c->kernel_w;
  k->pt = c->pad_top, k->pl = c->pad_left, k->pb = c->pad_bottom, k->pr = c->pad_right;
  k->sh = c->stride_h ? c->stride_h : 1, k->sw = c->stride_w ? c->stride_w : 1;
  k->dh = c->dilation_h ? c->dilation_h : 1, k->dw = c->dilation_w ? c->dilation_w : 1;
  k->bias = c->bias != 0;
  k->relu = c->relu;
  if (c->data != TB_CUDA_DNN_F32 && c->data != TB_CUDA_DNN_BF16 && c->data != TB_CUDA_DNN_F16 && c->data != TB_CUDA_DNN_E4M3)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a cuDNN convolution's data type is %d; use float32, bfloat16, float16 or fp8 e4m3",
                    who, (int)c->data);
  if ((c->data == TB_CUDA_DNN_E4M3) != (c->x_scale && c->w_scale))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: %s; fp8 e4m3 X and W take one float32 scale each on the device (x_scale, w_scale), other data none", who,
                    c->data == TB_CUDA_DNN_E4M3 ? "an fp8 convolution lacks a scale pointer" : "scale pointers were given for data that is not fp8");
  k->align_x_scale = c->x_scale ? alignment(c->x_scale) : 0;
  k->align_w_scale = c->w_scale ? alignment(c->w_scale) : 0;
  k->data = (int32_t)c->data;
  k->tf32 = c->data == TB_CUDA_DNN_F32 && c->tf32;
  k->align_x = alignment(c->x);
  k->align_w = alignment(c->weight);
  k->align_y = alignment(c->y);
  k->align_bias = c->bias ? alignment(c->bias) : 0;
  return TB_OK;
}

/* Under the lock: the cached plan, or a new one (fused when asked and an engine takes it). */
static tb_status find_or_make(tb_cuda_dnn *dnn, const conv_key *k, dnn_plan **out) {
  for (size_t i = 0; i < dnn->count; i++)
    if (memcmp(&dnn->plans[i]->key, k, sizeof *k) == 0) {
      *out = dnn->plans[i];
      return TB_OK;
    }
  tb_cudnn_status refusal = TB_CUDNN_STATUS_SUCCESS;
  dnn_plan *p = NULL;
  tb_status st = TB_ERR_UNSUPPORTED;
  size_t passed_before = dnn->stats.passed_over;
  if (k->bias || k->relu) st = attempt(dnn, k, true, &p, &refusal);
  if (st == TB_ERR_UNSUPPORTED) st = attempt(dnn, k, false, &p, &refusal);
  if (st == TB_ERR_UNSUPPORTED) {
    char conv[400], name[400];
    describe(k, conv, sizeof conv);
    tb_cudnn_status_name(&dnn->api, refusal, name, sizeof name);
    char why[700];
    size_t passed = dnn->stats.passed_over - passed_before;
    int len = refusal != TB_CUDNN_STATUS_SUCCESS ? snprintf(why, sizeof why, "its last word: %d %s", refusal, name) : 0;
    if (passed && len >= 0 && (size_t)len < sizeof why)
      snprintf(why + len, sizeof why - (size_t)len, "%s%zu engine%s passed over for computing %s", len ? "; " : "", passed,
               passed == 1 ? "" : "s", k->data == TB_CUDA_DNN_F32 ? "in TF32 where fp32 was asked" : "sums in reduced precision");
    return tb_error(TB_ERR_UNSUPPORTED, "%s: no engine of cuDNN %zu (%s) runs %s (%s); the backend's own convolution runs it instead",
                    dnn->who, dnn->api.version, dnn->api.path, conv, why);
  }
  if (st != TB_OK) return st;
  if (dnn->count == TB_CUDA_DNN_MAX_PLANS) { /* full: the oldest plan makes room (no call is using it: we hold the lock) */
    plan_free(&dnn->api, dnn->plans[0]);
    memmove(dnn->plans, dnn->plans + 1, (dnn->count - 1) * sizeof dnn->plans[0]);
    dnn->count--;
  }
  dnn->plans[dnn->count++] = p;
  *out = p;
  return TB_OK;
}

tb_status tb_cuda_dnn_conv_prepare(tb_cuda_dnn *dnn, const tb_cuda_conv *conv, size_t *workspace_bytes, bool *fused) {
  if (!dnn || !conv)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_cuda_dnn_conv_prepare needs a cuDNN state and a convolution (%s is NULL)",
                    !dnn ? "dnn" : "conv");
  conv_key k;
  tb_status st = make_key(dnn->who, conv, &k);
  if (st != TB_OK) return st;
  pthread_mutex_lock(&dnn->lock);
  dnn_plan *p = NULL;
  st = find_or_make(dnn, &k, &p);
  if (st == TB_OK) {
    if (workspace_bytes) *workspace_bytes = (size_t)p->workspace;
    if (fused) *fused = p->fused || (!k.bias && !k.relu);
  }
  pthread_mutex_unlock(&dnn->lock);
  return st;
}

static tb_status execute(tb_cuda_dnn *dnn, const dnn_plan *p, const tb_cuda_conv *c, tb_cu_stream stream,
                         tb_cu_deviceptr workspace) {
  const tb_cudnn_api *api = &dnn->api;
  int64_t uids[6] = {UID_X, UID_W, UID_Y};
  void *pointers[6] = {(void *)(uintptr_t)c->x, (void *)(uintptr_t)c->weight, (void *)(uintptr_t)c->y};
  int64_t count = 3;
  if (p->fused && p->key.bias) {
    uids[count] = UID_BIAS;
    pointers[count++] = (void *)(uintptr_t)c->bias;
  }
  if (p->key.data == TB_CUDA_DNN_E4M3) {
    uids[count] = UID_X_SCALE;
    pointers[count++] = (void *)(uintptr_t)c->x_scale;
    uids[count] = UID_W_SCALE;
    pointers[count++] = (void *)(uintptr_t)c->w_scale;
  }
  void *ws = p->workspace ? (void *)(uintptr_t)workspace : NULL;
  dnn_plan pack_owner = {.count = 0};
  builder b = {.dnn = dnn, .p = &pack_owner};
  const char *what = "the variant pack";
  tb_cudnn_desc pack = make(&b, TB_CUDNN_VARIANT_PACK_DESCRIPTOR, what);
  set(&b, pack, TB_CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, TB_CUDNN_TYPE_INT64, count, uids, what);
  set(&b, pack, TB_CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, TB_CUDNN_TYPE_VOID_PTR, count, pointers, what);
  set(&b, pack, TB_CUDNN_ATTR_VARIANT_PACK_WORKSPACE, TB_CUDNN_TYPE_VOID_PTR, 1, &ws, what);
  finalize(&b, pack, what);
  if (!b.call) failed(&b, "cudnnSetStream", "the caller's stream", api->cudnnSetStream(dnn->handle, stream));
  if (!b.call) failed(&b, "cudnnBackendExecute", "the execution plan", api->cudnnBackendExecute(dnn->handle, p->plan, pack));
  for (size_t i = pack_owner.count; i-- > 0;) api->cudnnBackendDestroyDescriptor(pack_owner.descs[i]);
  if (b.call) return cudnn_failed(dnn, &b, &p->key);
  dnn->stats.executes++;
  return TB_OK;
}

tb_status tb_cuda_dnn_conv(tb_cuda_dnn *dnn, const tb_cuda_conv *conv, tb_cu_stream stream, tb_cu_deviceptr workspace,
                           size_t workspace_bytes, bool *fused) {
  if (!dnn || !conv)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_cuda_dnn_conv needs a cuDNN state and a convolution (%s is NULL)",
                    !dnn ? "dnn" : "conv");
  conv_key k;
  tb_status st = make_key(dnn->who, conv, &k);
  if (st != TB_OK) return st;
  pthread_mutex_lock(&dnn->lock);
  dnn_plan *p = NULL;
  st = find_or_make(dnn, &k, &p);
  if (st == TB_OK && (size_t)p->workspace > (workspace ? workspace_bytes : 0))
    st = tb_error(TB_ERR_INVALID_ARGUMENT,
                  "%s: cuDNN's plan for this convolution needs %lld bytes of workspace and was given %zu; ask "
                  "tb_cuda_dnn_conv_prepare for the size and allocate it",
                  dnn->who, (long long)p->workspace, workspace ? workspace_bytes : 0);
  if (st == TB_OK) st = execute(dnn, p, conv, stream, workspace);
  if (st == TB_OK && fused) *fused = p->fused || (!k.bias && !k.relu);
  pthread_mutex_unlock(&dnn->lock);
  return st;
}

tb_status tb_cuda_dnn_test_operations(const char *who, const tb_cuda_conv *conv, bool fused, size_t *descriptors) {
  tb_cuda_dnn *dnn = calloc(1, sizeof *dnn);
  if (!dnn) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for the cuDNN state", who);
  snprintf(dnn->who, sizeof dnn->who, "%s", who);
  conv_key k;
  tb_status st = tb_cudnn_open(&dnn->api, dnn->who);
  if (st == TB_OK) st = make_key(dnn->who, conv, &k);
  dnn_plan *p = st == TB_OK ? calloc(1, sizeof *p) : NULL;
  if (st == TB_OK && !p) st = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for a cuDNN plan", who);
  if (p) {
    builder b = {.dnn = dnn, .p = p, .ops_only = true};
    graph(&b, &k, fused);
    if (b.call) st = cudnn_failed(dnn, &b, &k);
    if (descriptors) *descriptors = p->count;
    plan_free(&dnn->api, p);
  }
  free(dnn);
  return st;
}
