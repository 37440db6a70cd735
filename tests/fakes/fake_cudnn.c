/* A fake cuDNN 9 for tests: exports the graph ("backend") API calls the CUDA backend uses, with the real C
 * ABI, keeps typed attributes per descriptor and checks them at finalize as cuDNN does (required
 * attributes, a convolution's Y shape against X, W and its parameters, groups from the channel counts, a
 * descriptor changed after finalize), ranks "engines", and executes the graph on host memory (direct
 * convolution, then the pointwise add and ReLU), so a test passing host pointers checks the numbers too
 * (fake_cuda's device pointers, tagged host addresses (fake_devmem.h), are read through their host bytes).
 * What it saw goes to fake_cudnn_state_get() (fake_cudnn.h). The environment chooses the rest:
 *   FAKE_CUDNN_VERSION          cudnnGetVersion (default 91900)
 *   FAKE_CUDNN_ENGINES_A        engines heuristic mode A lists (default 2); FAKE_CUDNN_ENGINES_FALLBACK (1)
 *   FAKE_CUDNN_PLAN_FAIL        N: the first N engines of each list refuse (finalize 3002 NOT_SUPPORTED_SHAPE)
 *   FAKE_CUDNN_FUSION           none: a graph of more than one operation is refused (3001 at its finalize)
 *   FAKE_CUDNN_WORKSPACE        an execution plan's workspace size (default 0)
 *   FAKE_CUDNN_TF32_ENGINES     N: the first N engines of each list carry the numerical notes TENSOR_CORE and
 *                               DOWN_CONVERT_INPUTS (on float data they compute in TF32; the fake computes fp32)
 *   FAKE_CUDNN_REDUCED_ENGINES  N: the first N carry REDUCED_PRECISION_REDUCTION
 * Data types as cuDNN 9 takes them for a forward convolution: X and W float, half, bfloat16 or fp8 e4m3 and the
 * same, Y float or X's 16-bit type, the compute type float (half also for half data); anything else is refused at the
 * convolution operation's finalize (3000 NOT_SUPPORTED), and the execute reads 16-bit and fp8 X and W widened to
 * float. An fp8 graph must scale the convolution's float output at once by X's and then W's per-tensor scale (two
 * pointwise multiplications by float [1, 1, 1, 1] tensors that are not virtual), else its finalize refuses it (3001).
 *   FAKE_CUDNN_FP8              none: every fp8 graph is refused at its finalize (3001: no engine for the pattern)
 *   FAKE_CUDNN_FAIL             create | stream | execute | desc:<type> | set:<attribute> | finalize:<type>: that call
 *                               returns FAKE_CUDNN_FAIL_CODE (default 4000 CUDNN_STATUS_INTERNAL_ERROR) */
#include "fake_cudnn.h"
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_CUDNN", "fake_cudnn")

typedef int cudnnStatus_t;
enum { D_FLOAT = 0, D_HALF = 2, D_BF16 = 9, D_E4M3 = 12 };
enum { OK = 0, BAD_PARAM = 2000, NOT_FINALIZED = 2004, SHAPE_MISMATCH = 2008, NOT_SUPPORTED = 3000,
       GRAPH_PATTERN = 3001, UNSUPPORTED_SHAPE = 3002, INTERNAL = 4000, EXEC_FAILED = 5000 };
enum { T_POINTWISE = 0, T_CONV = 1, T_ENGINE = 2, T_ENGINECFG = 3, T_HEUR = 4, T_PLAN = 5, T_OP_CONV = 10, T_OP_PW = 13, T_GRAPH = 15,
       T_PACK = 16, T_TENSOR = 17 };

typedef struct attr {
  int name, type;
  int64_t count;
  unsigned char data[64];
} attr;

typedef struct desc {
  int type, finalized;
  attr attrs[16];
  int nattrs;
  struct desc *heur; /* an engine configuration: the heuristics that listed it */
  int engine_index;
} desc;

static fake_cudnn_state state;
static char last_error[200];

const fake_cudnn_state *fake_cudnn_state_get(void) { return &state; }

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v && *v ? v : fallback;
}

/* FAKE_CUDNN_FAIL names this call ("execute") or this call and number ("set:901"). */
static cudnnStatus_t injected(const char *call, int what) {
  char want[64];
  if (what >= 0) snprintf(want, sizeof want, "%s:%d", call, what);
  else snprintf(want, sizeof want, "%s", call);
  if (strcmp(env_or("FAKE_CUDNN_FAIL", ""), want) != 0) return OK;
  snprintf(last_error, sizeof last_error, "fake_cudnn: %s failed as FAKE_CUDNN_FAIL asked", want);
  return atoi(env_or("FAKE_CUDNN_FAIL_CODE", "4000"));
}

size_t cudnnGetVersion(void) { return (size_t)atol(env_or("FAKE_CUDNN_VERSION", "91900")); }

const char *cudnnGetErrorString(cudnnStatus_t s) {
  switch (s) {
    case OK: return "CUDNN_STATUS_SUCCESS";
    case BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case NOT_FINALIZED: return "CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED";
    case SHAPE_MISMATCH: return "CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH";
    case NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case GRAPH_PATTERN: return "CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN";
    case UNSUPPORTED_SHAPE: return "CUDNN_STATUS_NOT_SUPPORTED_SHAPE";
    case INTERNAL: return "CUDNN_STATUS_INTERNAL_ERROR";
    case 4004: return "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED";
    case EXEC_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    default: return "CUDNN_STATUS_UNKNOWN";
  }
}

/* Like cuDNN: the message of the last failure, then cleared. */
void cudnnGetLastErrorString(char *message, size_t max) {
  if (!max) return;
  snprintf(message, max, "%s", last_error);
  last_error[0] = '\0';
}

static cudnnStatus_t refuse(cudnnStatus_t st, const char *why) {
  snprintf(last_error, sizeof last_error, "fake_cudnn: %s", why);
  return st;
}

cudnnStatus_t cudnnCreate(void **handle) {
  cudnnStatus_t st = injected("create", -1);
  if (st) return st;
  *handle = malloc(8);
  state.live_handles++;
  return OK;
}

cudnnStatus_t cudnnDestroy(void *handle) {
  free(handle);
  state.live_handles--;
  return OK;
}

cudnnStatus_t cudnnSetStream(void *handle, void *stream) {
  if (!handle) return BAD_PARAM;
  cudnnStatus_t st = injected("stream", -1);
  if (st) return st;
  state.stream = stream;
  return OK;
}

cudnnStatus_t cudnnBackendCreateDescriptor(int type, desc **out) {
  cudnnStatus_t st = injected("desc", type);
  if (st) return st;
  *out = calloc(1, sizeof **out);
  (*out)->type = type;
  state.live_descs++;
  return OK;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(desc *d) {
  if (!d) return BAD_PARAM;
  free(d);
  state.live_descs--;
  return OK;
}

static size_t type_size(int type) {
  switch (type) {
    case 2: return 1;                        /* boolean */
    case 1: case 4: case 7: case 8: case 14: return 4; /* data type, float, enums */
    default: return 8;                       /* handle, int64, pointers, descriptors */
  }
}

static attr *find(desc *d, int name) {
  for (int i = 0; i < d->nattrs; i++)
    if (d->attrs[i].name == name) return &d->attrs[i];
  return NULL;
}

cudnnStatus_t cudnnBackendSetAttribute(desc *d, int name, int type, int64_t count, const void *elements) {
  if (!d || !elements || count < 0) return BAD_PARAM;
  cudnnStatus_t st = injected("set", name);
  if (st) return st;
  if (d->finalized) return refuse(BAD_PARAM, "a finalized descriptor cannot change");
  if ((size_t)count * type_size(type) > sizeof d->attrs[0].data) return refuse(BAD_PARAM, "too many elements");
  attr *a = find(d, name);
  if (!a) {
    if (d->nattrs == 16) return BAD_PARAM;
    a = &d->attrs[d->nattrs++];
  }
  a->name = name;
  a->type = type;
  a->count = count;
  memcpy(a->data, elements, (size_t)count * type_size(type));
  return OK;
}

static bool has(desc *d, int name, int type, int64_t count) {
  attr *a = find(d, name);
  return a && a->type == type && (count < 0 || a->count == count);
}

static int64_t i64(desc *d, int name, int i) {
  int64_t v = 0;
  attr *a = find(d, name);
  if (a) memcpy(&v, a->data + 8 * i, 8);
  return v;
}

static int32_t i32(desc *d, int name) {
  int32_t v = 0;
  attr *a = find(d, name);
  if (a) memcpy(&v, a->data, 4);
  return v;
}

static desc *ref(desc *d, int name, int i) {
  desc *r = NULL;
  attr *a = find(d, name);
  if (a && a->type == 15 && i < a->count) memcpy(&r, a->data + 8 * i, 8);
  return r;
}

static cudnnStatus_t finalize_conv_op(desc *op) {
  desc *x = ref(op, 704, 0), *w = ref(op, 703, 0), *y = ref(op, 705, 0), *cd = ref(op, 702, 0);
  if (!x || !w || !y || !cd || !has(op, 700, 4, 1) || !has(op, 701, 4, 1)) return refuse(BAD_PARAM, "convolution operation incomplete");
  if (!x->finalized || !w->finalized || !y->finalized || !cd->finalized) return NOT_FINALIZED;
  int64_t c = i64(x, 902, 1), wc = i64(w, 902, 1), k = i64(w, 902, 0);
  if (wc < 1 || c % wc || k % (c / wc)) return refuse(SHAPE_MISMATCH, "channels and groups do not divide");
  for (int s = 0; s < 2; s++) {
    int64_t in = i64(x, 902, 2 + s) + i64(cd, 105, s) + i64(cd, 104, s), span = i64(cd, 102, s) * (i64(w, 902, 2 + s) - 1) + 1;
    if ((in - span) / i64(cd, 103, s) + 1 != i64(y, 902, 2 + s)) return refuse(SHAPE_MISMATCH, "Y's spatial size is wrong");
  }
  if (i64(y, 902, 0) != i64(x, 902, 0) || i64(y, 902, 1) != k) return refuse(SHAPE_MISMATCH, "Y's batch or channels are wrong");
  int32_t xt = i32(x, 901), wt = i32(w, 901), yt = i32(y, 901), ct = i32(cd, 100);
  if (xt != D_FLOAT && xt != D_HALF && xt != D_BF16 && xt != D_E4M3)
    return refuse(NOT_SUPPORTED, "X's data type is not float, half, bfloat16 or fp8 e4m3");
  if (wt != xt) return refuse(NOT_SUPPORTED, "X and W have different data types");
  if (yt != D_FLOAT && (yt != xt || xt == D_E4M3)) return refuse(NOT_SUPPORTED, "Y is neither float nor X's 16-bit type");
  if (ct != D_FLOAT && !(ct == D_HALF && xt == D_HALF)) return refuse(NOT_SUPPORTED, "the compute type does not fit the data");
  state.x_type = xt;
  state.w_type = wt;
  state.y_type = yt;
  for (int i = 0; i < 2; i++) {
    state.pre[i] = i64(cd, 105, i);
    state.post[i] = i64(cd, 104, i);
    state.strides[i] = i64(cd, 103, i);
    state.dilations[i] = i64(cd, 102, i);
  }
  state.spatial_dims = i64(cd, 106, 0);
  state.comp_type = i32(cd, 100);
  state.conv_mode = i32(cd, 101);
  for (int i = 0; i < 4; i++) {
    state.x_dims[i] = i64(x, 902, i);
    state.w_dims[i] = i64(w, 902, i);
    state.y_dims[i] = i64(y, 902, i);
    state.x_strides[i] = i64(x, 903, i);
  }
  state.x_align = i64(x, 900, 0);
  state.w_align = i64(w, 900, 0);
  state.y_align = i64(y, 900, 0);
  memcpy(&state.alpha, find(op, 700)->data, 4);
  memcpy(&state.beta, find(op, 701)->data, 4);
  return OK;
}

static cudnnStatus_t finalize_graph(desc *g) {
  attr *ops = find(g, 801);
  if (!has(g, 800, 0, 1) || !ops || ops->count < 1 || ops->count > 5) return refuse(BAD_PARAM, "graph incomplete");
  for (int i = 0; i < ops->count; i++)
    if (!ref(g, 801, i) || !ref(g, 801, i)->finalized) return NOT_FINALIZED;
  if (ops->count > 1 && strcmp(env_or("FAKE_CUDNN_FUSION", ""), "none") == 0)
    return refuse(GRAPH_PATTERN, "no engine fuses this graph");
  desc *first = ref(g, 801, 0);
  if (first->type == T_OP_CONV && i32(ref(first, 704, 0), 901) == D_E4M3) { /* fp8: X's scaling, then W's, at once */
    if (strcmp(env_or("FAKE_CUDNN_FP8", ""), "none") == 0) return refuse(GRAPH_PATTERN, "no engine runs fp8 convolutions");
    desc *out = ref(first, 705, 0);
    int64_t uids[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
      desc *op = ops->count > 1 + s ? ref(g, 801, 1 + s) : NULL, *with = op && op->type == T_OP_PW ? ref(op, 752, 0) : NULL;
      if (!with || i32(ref(op, 750, 0), 0) != 1 || ref(op, 751, 0) != out)
        return refuse(GRAPH_PATTERN, "an fp8 convolution's output must be multiplied by X's and W's scales first");
      if (i32(with, 901) != D_FLOAT || has(with, 907, 2, 1) || i64(with, 902, 0) * i64(with, 902, 1) * i64(with, 902, 2) * i64(with, 902, 3) != 1)
        return refuse(GRAPH_PATTERN, "an fp8 convolution's scale must be a float [1, 1, 1, 1] tensor that is not virtual");
      uids[s] = i64(with, 906, 0);
      out = ref(op, 753, 0);
    }
    if (!has(ref(first, 705, 0), 907, 2, 1)) return refuse(GRAPH_PATTERN, "an fp8 convolution's own output must be virtual");
    state.x_scale_uid = uids[0];
    state.w_scale_uid = uids[1];
  }
  state.graphs++;
  state.ops = (int)ops->count;
  memset(state.pointwise_modes, 0, sizeof state.pointwise_modes);
  for (int i = 0; i < ops->count; i++) {
    desc *op = ref(g, 801, i);
    state.pointwise_modes[i] = op->type == T_OP_PW ? i32(ref(op, 750, 0), 0) : -1;
  }
  return OK;
}

static int engines(int32_t mode) {
  return atoi(mode == 3 ? env_or("FAKE_CUDNN_ENGINES_A", "2") : env_or("FAKE_CUDNN_ENGINES_FALLBACK", "1"));
}

cudnnStatus_t cudnnBackendFinalize(desc *d) {
  if (!d) return BAD_PARAM;
  cudnnStatus_t st = injected("finalize", d->type);
  if (st) return st;
  if (d->finalized) return BAD_PARAM;
  switch (d->type) {
    case T_TENSOR:
      if (!has(d, 901, 1, 1) || !has(d, 902, 3, 4) || !has(d, 903, 3, 4) || !has(d, 906, 3, 1) || !has(d, 900, 3, 1))
        return refuse(BAD_PARAM, "tensor incomplete");
      break;
    case T_CONV:
      if (!has(d, 100, 1, 1) || !has(d, 101, 7, 1) || !has(d, 106, 3, 1) || !has(d, 102, 3, 2) || !has(d, 103, 3, 2) ||
          !has(d, 104, 3, 2) || !has(d, 105, 3, 2))
        return refuse(BAD_PARAM, "convolution descriptor incomplete");
      break;
    case T_POINTWISE:
      if (!has(d, 0, 14, 1)) return refuse(BAD_PARAM, "pointwise mode missing");
      break;
    case T_OP_CONV:
      st = finalize_conv_op(d);
      break;
    case T_OP_PW:
      if (!ref(d, 750, 0) || !ref(d, 751, 0) || !ref(d, 753, 0) || (i32(ref(d, 750, 0), 0) == 0 && !ref(d, 752, 0)))
        return refuse(BAD_PARAM, "pointwise operation incomplete");
      break;
    case T_GRAPH:
      st = finalize_graph(d);
      break;
    case T_HEUR:
      if (!ref(d, 201, 0) || !ref(d, 201, 0)->finalized || !has(d, 200, 8, 1)) return refuse(BAD_PARAM, "heuristics incomplete");
      state.heur_mode = i32(d, 200);
      break;
    case T_PLAN: {
      desc *cfg = ref(d, 401, 0);
      if (!has(d, 400, 0, 1) || !cfg || !cfg->finalized) return refuse(BAD_PARAM, "plan incomplete");
      state.plans_tried++;
      if (cfg->engine_index < atoi(env_or("FAKE_CUDNN_PLAN_FAIL", "0")))
        return refuse(UNSUPPORTED_SHAPE, "this engine does not take the shape");
      state.engine_index = cfg->engine_index;
      break;
    }
    case T_PACK: {
      attr *u = find(d, 1000), *p = find(d, 1001);
      if (!u || !p || u->count != p->count || !has(d, 1003, 6, 1)) return refuse(BAD_PARAM, "variant pack incomplete");
      break;
    }
    default:
      return BAD_PARAM;
  }
  if (st == OK) d->finalized = 1;
  return st;
}

cudnnStatus_t cudnnBackendGetAttribute(desc *d, int name, int type, int64_t requested, int64_t *count, void *elements) {
  if (!d || !count) return BAD_PARAM;
  if (!d->finalized) return NOT_FINALIZED;
  if (d->type == T_HEUR && name == 202 && type == 15) {
    int available = engines(i32(d, 200));
    if (requested == 0) {
      *count = available;
      return OK;
    }
    int64_t n = requested < available ? requested : available;
    for (int64_t i = 0; i < n; i++) {
      desc *cfg = ((desc **)elements)[i];
      if (!cfg || cfg->type != T_ENGINECFG) return BAD_PARAM;
      cfg->heur = d;
      cfg->engine_index = (int)i;
      cfg->finalized = 1;
    }
    *count = n;
    return OK;
  }
  if (d->type == T_ENGINECFG && name == 300 && type == 15 && requested >= 1) {
    desc *engine = ((desc **)elements)[0];
    if (!engine || engine->type != T_ENGINE) return BAD_PARAM;
    engine->heur = d->heur;
    engine->engine_index = d->engine_index;
    engine->finalized = 1;
    *count = 1;
    return OK;
  }
  if (d->type == T_ENGINE && name == 603 && type == 11) {
    int32_t notes[3];
    int n = 0;
    if (d->engine_index < atoi(env_or("FAKE_CUDNN_TF32_ENGINES", "0"))) notes[n++] = 0, notes[n++] = 1;
    if (d->engine_index < atoi(env_or("FAKE_CUDNN_REDUCED_ENGINES", "0"))) notes[n++] = 2;
    state.notes_read++;
    *count = n < requested ? n : requested;
    memcpy(elements, notes, (size_t)*count * sizeof *notes);
    return OK;
  }
  if (d->type == T_PLAN && name == 402 && type == 3 && requested >= 1) {
    *(int64_t *)elements = atol(env_or("FAKE_CUDNN_WORKSPACE", "0"));
    *count = 1;
    return OK;
  }
  return BAD_PARAM;
}

/* Host buffers by tensor id while a graph executes: the variant pack's pointers, or scratch for virtual
 * tensors. */
typedef struct binding {
  int64_t uid;
  float *data;
  int owned;
} binding;

static float *bound(binding *b, int n, desc *t) {
  int64_t uid = i64(t, 906, 0);
  for (int i = 0; i < n; i++)
    if (b[i].uid == uid) return b[i].data;
  return NULL;
}

/* Element i of a tensor of cuDNN data type `type` as float (half and bfloat16 widened exactly). */
static float element(int32_t type, const void *p, int64_t i) {
  if (type == D_FLOAT) return ((const float *)p)[i];
  if (type == D_E4M3) { /* 4 exponent bits (bias 7), 3 mantissa bits, subnormals, 0x7f / 0xff NaN */
    uint8_t v = ((const uint8_t *)p)[i];
    int e = (v >> 3) & 15, m = v & 7;
    float f = (v & 0x7f) == 0x7f ? NAN : e == 0 ? (float)m / 512.0f : (1.0f + (float)m / 8.0f) * (float)(1 << e) / 128.0f;
    return v & 0x80 ? -f : f;
  }
  uint16_t h = ((const uint16_t *)p)[i];
  uint32_t bits;
  if (type == D_BF16) {
    bits = (uint32_t)h << 16;
  } else { /* IEEE half: sign, 5-bit exponent, 10-bit mantissa */
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) bits = sign | 0x7f800000u | m << 13;
    else if (e) bits = sign | (e + 112) << 23 | m << 13;
    else {
      float v = (float)m / 16777216.0f; /* m * 2^-24 */
      memcpy(&bits, &v, 4);
      bits |= sign;
    }
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static void conv(desc *op, binding *b, int n) {
  desc *xd = ref(op, 704, 0), *wd = ref(op, 703, 0), *yd = ref(op, 705, 0), *cd = ref(op, 702, 0);
  const void *x = bound(b, n, xd), *w = bound(b, n, wd);
  int32_t xt = i32(xd, 901), wt = i32(wd, 901);
  float *y = bound(b, n, yd);
  int64_t N = i64(xd, 902, 0), C = i64(xd, 902, 1), H = i64(xd, 902, 2), W = i64(xd, 902, 3);
  int64_t K = i64(wd, 902, 0), WC = i64(wd, 902, 1), R = i64(wd, 902, 2), S = i64(wd, 902, 3);
  int64_t P = i64(yd, 902, 2), Q = i64(yd, 902, 3), groups = C / WC, kpg = K / groups;
  for (int64_t nn = 0; nn < N; nn++)
    for (int64_t k = 0; k < K; k++)
      for (int64_t p = 0; p < P; p++)
        for (int64_t q = 0; q < Q; q++) {
          double s = 0;
          int64_t g = k / kpg;
          for (int64_t c = 0; c < WC; c++)
            for (int64_t r = 0; r < R; r++)
              for (int64_t u = 0; u < S; u++) {
                int64_t ih = p * i64(cd, 103, 0) - i64(cd, 105, 0) + r * i64(cd, 102, 0);
                int64_t iw = q * i64(cd, 103, 1) - i64(cd, 105, 1) + u * i64(cd, 102, 1);
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                s += (double)element(xt, x, ((nn * C + g * WC + c) * H + ih) * W + iw) * element(wt, w, ((k * WC + c) * R + r) * S + u);
              }
          y[((nn * K + k) * P + p) * Q + q] = (float)s;
        }
}

static void pointwise(desc *op, binding *b, int n) {
  desc *xd = ref(op, 751, 0), *bd = ref(op, 752, 0), *yd = ref(op, 753, 0);
  int32_t mode = i32(ref(op, 750, 0), 0);
  const float *x = bound(b, n, xd), *with = bd ? bound(b, n, bd) : NULL;
  float *y = bound(b, n, yd);
  int64_t N = i64(yd, 902, 0), K = i64(yd, 902, 1), HW = i64(yd, 902, 2) * i64(yd, 902, 3);
  bool scalar = bd && i64(bd, 902, 0) * i64(bd, 902, 1) * i64(bd, 902, 2) * i64(bd, 902, 3) == 1;
  if (mode == 1 && scalar && i64(bd, 906, 0) == state.x_scale_uid) state.x_scale = with[0];
  if (mode == 1 && scalar && i64(bd, 906, 0) == state.w_scale_uid) state.w_scale = with[0];
  for (int64_t i = 0; i < N * K * HW; i++) {
    float v = x[i];
    if (mode == 0) v += with[scalar ? 0 : (i / HW) % K];
    if (mode == 1) v *= with[scalar ? 0 : (i / HW) % K];
    if (mode == 100 && v < 0) v = 0;
    y[i] = v;
  }
}

cudnnStatus_t cudnnBackendExecute(void *handle, desc *plan, desc *pack) {
  if (!handle || !plan || !pack) return BAD_PARAM;
  if (!plan->finalized || !pack->finalized || plan->type != T_PLAN || pack->type != T_PACK) return NOT_FINALIZED;
  cudnnStatus_t st = injected("execute", -1);
  if (st) return st;
  desc *graph = ref(ref(plan, 401, 0)->heur, 201, 0);
  attr *u = find(pack, 1000), *p = find(pack, 1001);
  binding b[12];
  int n = 0;
  state.pack_count = u->count;
  for (int64_t i = 0; i < u->count && n < 12; i++) {
    memcpy(&b[n].uid, u->data + 8 * i, 8);
    uint64_t address;
    memcpy(&address, p->data + 8 * i, 8);
    if ((address & 0xffff000000000000ull) == 0xd1ce000000000000ull) address &= 0x0000ffffffffffffull; /* fake_cuda's memory */
    b[n].data = (float *)(uintptr_t)address;
    b[n].owned = 0;
    state.uids[i] = b[n].uid;
    n++;
  }
  memcpy(&state.workspace, find(pack, 1003)->data, 8);
  if (atol(env_or("FAKE_CUDNN_WORKSPACE", "0")) > 0 && !state.workspace) return refuse(BAD_PARAM, "no workspace");
  /* every tensor of the graph bound: by the pack, or scratch for a virtual one */
  attr *ops = find(graph, 801);
  for (int i = 0; i < ops->count; i++) {
    desc *op = ref(graph, 801, i);
    int names[4] = {704, 703, 705, 0};
    if (op->type == T_OP_PW) names[0] = 751, names[1] = 752, names[2] = 753;
    for (int j = 0; j < 3; j++) {
      desc *t = ref(op, names[j], 0);
      if (!t || bound(b, n, t)) continue;
      if (!has(t, 907, 2, 1) || n == 12) {
        for (int m = 0; m < n; m++) if (b[m].owned) free(b[m].data);
        return refuse(BAD_PARAM, "a tensor of the graph has no pointer in the variant pack");
      }
      int64_t size = i64(t, 902, 0) * i64(t, 902, 1) * i64(t, 902, 2) * i64(t, 902, 3);
      b[n] = (binding){i64(t, 906, 0), malloc((size_t)size * sizeof(float)), 1};
      n++;
    }
  }
  for (int i = 0; i < ops->count; i++) {
    desc *op = ref(graph, 801, i);
    if (op->type == T_OP_CONV) conv(op, b, n);
    else pointwise(op, b, n);
  }
  for (int m = 0; m < n; m++)
    if (b[m].owned) free(b[m].data);
  state.executes++;
  return OK;
}
