/* A fake cuBLASLt for tests: exports the cublasLt* calls the CUDA backend uses, with the real C ABI, keeps
 * what it is given (fake_cublaslt.h) and computes the product on host memory, column-major as cuBLASLt
 * does, so a test passing host pointers as "device" pointers (or fake_cuda's tagged ones) checks the numbers too:
 *   D[i] = act(alpha * op(A[i]) op(B[i]) + beta * C[i] + bias)  over the layouts' batch.
 * It refuses what the real one refuses: layouts whose shapes do not chain, a leading dimension below the
 * rows, TF32 or a scale type other than fp32 on 16-bit data, a workspace smaller than the algorithm's; 16-bit
 * A and B with a 16-bit or an fp32 C / D; fp8 e4m3 A and B only with fp32 C / D, both scale pointers, cuBLASLt's
 * "TN" form (its A transposed, its B not) and leading dims that are multiples of 16. 16-bit and fp8 products
 * accumulate in float (fp32), as the tensor cores do; fp32 ones in double.
 * The environment chooses the rest at call time:
 *   FAKE_CUBLASLT_VERSION    cublasLtGetVersion (default 130100)
 *   FAKE_CUBLASLT_FAIL       create | desc | set | layout | pref | heuristic | matmul: that call returns
 *                            FAKE_CUBLASLT_FAIL_CODE (default 13 CUBLAS_STATUS_EXECUTION_FAILED)
 *   FAKE_CUBLASLT_HEURISTIC  none (no result) | state (results whose state is 15 NOT_SUPPORTED) | workspace
 *                            (one result needing more than the preference's workspace)
 *   FAKE_CUBLASLT_WORKSPACE  the workspace the algorithm needs (default 0) */
#include "fake_cublaslt.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_once.h"

FAKE_ONCE("FAKE_LOADED_CUBLASLT", "fake_cublaslt")

typedef int cublasStatus_t;
enum { SUCCESS = 0, NOT_INITIALIZED = 1, ALLOC_FAILED = 3, INVALID_VALUE = 7, EXECUTION_FAILED = 13, NOT_SUPPORTED = 15 };
enum { R_32F = 0, R_16F = 2, R_16BF = 14, R_8F_E4M3 = 28, COMPUTE_32F = 68, COMPUTE_32F_FAST_TF32 = 77 };

typedef struct desc {
  int compute, scale;
  int32_t trans_a, trans_b, epilogue;
  const void *bias;
  const void *a_scale, *b_scale;
} desc;
typedef struct pref {
  uint64_t max_workspace;
  uint32_t align[4];
} pref;
typedef struct algo {
  uint64_t data[8];
} algo;
typedef struct heuristic {
  algo algo;
  size_t workspace_size;
  cublasStatus_t state;
  float waves;
  int reserved[4];
} heuristic;

static fake_cublaslt_state state;

const fake_cublaslt_state *fake_cublaslt_state_get(void) { return &state; }

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v && *v ? v : fallback;
}

static int failing(const char *what) { return strcmp(env_or("FAKE_CUBLASLT_FAIL", ""), what) == 0; }
static cublasStatus_t fail_code(void) { return atoi(env_or("FAKE_CUBLASLT_FAIL_CODE", "13")); }

size_t cublasLtGetVersion(void) { return (size_t)atol(env_or("FAKE_CUBLASLT_VERSION", "130100")); }

const char *cublasLtGetStatusName(cublasStatus_t s) {
  switch (s) {
    case SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char *cublasLtGetStatusString(cublasStatus_t s) { return cublasLtGetStatusName(s); }

cublasStatus_t cublasLtCreate(void **handle) {
  if (!handle) return INVALID_VALUE;
  if (failing("create")) return fail_code();
  *handle = malloc(16);
  if (!*handle) return ALLOC_FAILED;
  state.live_handles++;
  return SUCCESS;
}

cublasStatus_t cublasLtDestroy(void *handle) {
  if (!handle) return NOT_INITIALIZED;
  free(handle);
  state.live_handles--;
  return SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(desc **out, int compute, int scale) {
  if (failing("desc")) return fail_code();
  if (compute != COMPUTE_32F && compute != COMPUTE_32F_FAST_TF32) return INVALID_VALUE;
  *out = calloc(1, sizeof **out);
  if (!*out) return ALLOC_FAILED;
  (*out)->compute = compute;
  (*out)->scale = scale;
  (*out)->epilogue = 1;
  state.live_descs++;
  return SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(desc *d) {
  free(d);
  state.live_descs--;
  return SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(desc *d, int attr, const void *buf, size_t size) {
  if (failing("set")) return fail_code();
  switch (attr) {
    case 3: if (size != 4) return INVALID_VALUE; memcpy(&d->trans_a, buf, 4); return SUCCESS;
    case 4: if (size != 4) return INVALID_VALUE; memcpy(&d->trans_b, buf, 4); return SUCCESS;
    case 7: if (size != 4) return INVALID_VALUE; memcpy(&d->epilogue, buf, 4); return SUCCESS;
    case 8: if (size != sizeof(void *)) return INVALID_VALUE; memcpy(&d->bias, buf, sizeof(void *)); return SUCCESS;
    case 17: if (size != sizeof(void *)) return INVALID_VALUE; memcpy(&d->a_scale, buf, sizeof(void *)); return SUCCESS;
    case 18: if (size != sizeof(void *)) return INVALID_VALUE; memcpy(&d->b_scale, buf, sizeof(void *)); return SUCCESS;
    default: return INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(fake_cublaslt_layout **out, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (failing("layout")) return fail_code();
  if (type != R_32F && type != R_16F && type != R_16BF && type != R_8F_E4M3) return INVALID_VALUE;
  if (ld < (int64_t)rows) return INVALID_VALUE;
  *out = calloc(1, sizeof **out);
  if (!*out) return ALLOC_FAILED;
  **out = (fake_cublaslt_layout){type, rows, cols, ld, 1, 0};
  state.live_layouts++;
  return SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(fake_cublaslt_layout *l) {
  free(l);
  state.live_layouts--;
  return SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(fake_cublaslt_layout *l, int attr, const void *buf, size_t size) {
  if (attr == 5 && size == 4) {
    memcpy(&l->batch, buf, 4);
    return l->batch >= 1 ? SUCCESS : INVALID_VALUE;
  }
  if (attr == 6 && size == 8) {
    memcpy(&l->stride, buf, 8);
    return SUCCESS;
  }
  return INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(pref **out) {
  if (failing("pref")) return fail_code();
  *out = calloc(1, sizeof **out);
  if (!*out) return ALLOC_FAILED;
  for (int i = 0; i < 4; i++) (*out)->align[i] = 256;
  state.live_prefs++;
  return SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(pref *p) {
  free(p);
  state.live_prefs--;
  return SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(pref *p, int attr, const void *buf, size_t size) {
  if (attr == 1 && size == 8) {
    memcpy(&p->max_workspace, buf, 8);
    return SUCCESS;
  }
  if (attr >= 5 && attr <= 8 && size == 4) {
    memcpy(&p->align[attr - 5], buf, 4);
    return SUCCESS;
  }
  return INVALID_VALUE;
}

/* The shapes chain as cuBLASLt requires: op(A) [m, k], op(B) [k, n], C and D [m, n], one batch count;
 * 16-bit data with fp32 compute (no TF32) and an fp32 scale. */
static cublasStatus_t check(const desc *d, const fake_cublaslt_layout *a, const fake_cublaslt_layout *b,
                            const fake_cublaslt_layout *c, const fake_cublaslt_layout *dl) {
  uint64_t m = dl->rows, n = dl->cols;
  uint64_t am = d->trans_a ? a->cols : a->rows, ak = d->trans_a ? a->rows : a->cols;
  uint64_t bk = d->trans_b ? b->cols : b->rows, bn = d->trans_b ? b->rows : b->cols;
  if (am != m || bn != n || ak != bk || c->rows != m || c->cols != n) return INVALID_VALUE;
  if (a->batch != dl->batch || b->batch != dl->batch || c->batch != dl->batch) return INVALID_VALUE;
  if (a->type != b->type || c->type != dl->type) return INVALID_VALUE;
  if (a->type == R_8F_E4M3) { /* fp32 out, both scales, TN, leading dims of 16 */
    if (c->type != R_32F || !d->a_scale || !d->b_scale || d->trans_a != 1 || d->trans_b != 0) return NOT_SUPPORTED;
    if (d->epilogue & 4) return NOT_SUPPORTED; /* a bias of the default (fp32) type: cuBLASLt's fp8 forms take bf16 */
    if (a->ld % 16 || b->ld % 16) return NOT_SUPPORTED;
  } else if (c->type != a->type && !(c->type == R_32F && (a->type == R_16F || a->type == R_16BF))) {
    return INVALID_VALUE;
  }
  if (d->scale != R_32F) return INVALID_VALUE;
  if (a->type != R_32F && d->compute == COMPUTE_32F_FAST_TF32) return INVALID_VALUE;
  return SUCCESS;
}

static void record(fake_cublaslt_call *call, const desc *d, const fake_cublaslt_layout *a, const fake_cublaslt_layout *b,
                   const fake_cublaslt_layout *c, const fake_cublaslt_layout *dl) {
  memset(call, 0, sizeof *call);
  call->compute_type = d->compute;
  call->scale_type = d->scale;
  call->trans_a = d->trans_a;
  call->trans_b = d->trans_b;
  call->epilogue = d->epilogue;
  call->bias = d->bias;
  call->a_scale = d->a_scale;
  call->b_scale = d->b_scale;
  call->a = *a;
  call->b = *b;
  call->c = *c;
  call->d = *dl;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(void *handle, desc *d, fake_cublaslt_layout *a, fake_cublaslt_layout *b,
                                              fake_cublaslt_layout *c, fake_cublaslt_layout *dl, pref *p, int requested,
                                              heuristic *results, int *returned) {
  if (!handle || !d || !a || !b || !c || !dl || !p || !results || !returned || requested < 1) return INVALID_VALUE;
  state.heuristics++;
  record(&state.heuristic, d, a, b, c, dl);
  state.heuristic.max_workspace = p->max_workspace;
  state.heuristic.align_a = p->align[0];
  state.heuristic.align_b = p->align[1];
  state.heuristic.align_c = p->align[2];
  state.heuristic.align_d = p->align[3];
  state.heuristic.requested = requested;
  *returned = 0;
  if (failing("heuristic")) return fail_code();
  cublasStatus_t st = check(d, a, b, c, dl);
  if (st != SUCCESS) return st;
  const char *mode = env_or("FAKE_CUBLASLT_HEURISTIC", "");
  if (strcmp(mode, "none") == 0) return SUCCESS;
  size_t need = (size_t)atol(env_or("FAKE_CUBLASLT_WORKSPACE", "0"));
  if (strcmp(mode, "workspace") == 0) need = p->max_workspace + 1;
  int count = requested < 2 ? requested : 2;
  for (int i = 0; i < count; i++) {
    memset(&results[i], 0, sizeof results[i]);
    results[i].algo.data[0] = 0xa160u + (uint64_t)i;
    results[i].workspace_size = need;
    results[i].state = strcmp(mode, "state") == 0 ? NOT_SUPPORTED : SUCCESS;
    results[i].waves = 1.0f;
  }
  *returned = count;
  return SUCCESS;
}

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* An fp8 e4m3 byte: 4 exponent bits (bias 7), 3 mantissa bits, subnormals, 0x7f / 0xff NaN. */
static float e4m3(uint8_t v) {
  int e = (v >> 3) & 15, m = v & 7;
  float f = (v & 0x7f) == 0x7f ? NAN : e == 0 ? (float)m / 512.0f : (1.0f + (float)m / 8.0f) * (float)(1 << e) / 128.0f;
  return v & 0x80 ? -f : f;
}

static float load(int type, const void *base, int64_t i) {
  if (type == R_32F) return ((const float *)base)[i];
  if (type == R_8F_E4M3) return e4m3(((const uint8_t *)base)[i]);
  uint32_t h = ((const uint16_t *)base)[i];
  if (type == R_16BF) return from_bits(h << 16);
  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 31, mant = h & 1023;
  if (e == 31) return from_bits(sign | 0x7f800000u | (mant << 13));
  if (e == 0) { /* zero or subnormal: mant * 2^-24 */
    float v = (float)mant / 16777216.0f;
    return sign ? -v : v;
  }
  return from_bits(sign | ((e - 15 + 127) << 23) | (mant << 13));
}

/* float to fp16 or bf16, rounding to nearest even (the fp16 range the tests use: normal numbers and zero). */
static void store(int type, void *base, int64_t i, float v) {
  if (type == R_32F) {
    ((float *)base)[i] = v;
    return;
  }
  uint32_t u;
  memcpy(&u, &v, 4);
  if (type == R_16BF) {
    ((uint16_t *)base)[i] = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
    return;
  }
  uint32_t sign = (u >> 16) & 0x8000u, e = (u >> 23) & 255, mant = u & 0x7fffffu;
  if (e < 113) { /* below fp16's normal range: zero here */
    ((uint16_t *)base)[i] = (uint16_t)sign;
    return;
  }
  uint32_t h = ((e - 112) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) h++; /* a carry into the exponent is still right */
  ((uint16_t *)base)[i] = (uint16_t)(sign | (h > 0x7c00u ? 0x7c00u : h));
}

/* The host bytes behind a pointer: itself, or for one of fake_cuda's device pointers (a host address with
 * fake_devmem.h's tag 0xd1ce in its top 16 bits) the address without the tag, so the CUDA backend's kernels
 * on the fake GPU get their products computed too. */
static void *host_of(const void *p) {
  uint64_t u = (uint64_t)(uintptr_t)p;
  if ((u & 0xffff000000000000ull) == 0xd1ce000000000000ull) u &= 0x0000ffffffffffffull;
  return (void *)(uintptr_t)u;
}

cublasStatus_t cublasLtMatmul(void *handle, desc *d, const void *alpha, const void *A, fake_cublaslt_layout *a,
                              const void *B, fake_cublaslt_layout *b, const void *beta, const void *C,
                              fake_cublaslt_layout *c, void *D, fake_cublaslt_layout *dl, const algo *al,
                              void *workspace, size_t workspace_bytes, void *stream) {
  if (!handle || !d || !alpha || !beta || !A || !B || !C || !D || !a || !b || !c || !dl || !al) return INVALID_VALUE;
  record(&state.matmul, d, a, b, c, dl);
  state.matmul.pa = A;
  state.matmul.pb = B;
  state.matmul.pc = C;
  state.matmul.pd = D;
  state.matmul.alpha = *(const float *)alpha;
  state.matmul.beta = *(const float *)beta;
  state.matmul.workspace = workspace;
  state.matmul.workspace_bytes = workspace_bytes;
  state.matmul.stream = stream;
  if (failing("matmul")) return fail_code();
  cublasStatus_t st = check(d, a, b, c, dl);
  if (st != SUCCESS) return st;
  if ((al->data[0] & ~(uint64_t)0xf) != 0xa160u) return INVALID_VALUE; /* not an algorithm the heuristic gave */
  if (workspace_bytes < (size_t)atol(env_or("FAKE_CUBLASLT_WORKSPACE", "0")) || (workspace_bytes && !workspace))
    return INVALID_VALUE;
  int bias = d->epilogue & 4, relu = d->epilogue & 2;
  if (bias && !d->bias) return INVALID_VALUE;
  A = host_of(A);
  B = host_of(B);
  C = host_of(C);
  D = host_of(D);
  const void *bias_data = host_of(d->bias);
  int64_t m = (int64_t)dl->rows, n = (int64_t)dl->cols, k = (int64_t)(d->trans_a ? a->rows : a->cols);
  float al_ = *(const float *)alpha, be = *(const float *)beta;
  float scale = 1.0f; /* fp8: the product of the two per-tensor scales */
  if (a->type == R_8F_E4M3) scale = *(const float *)host_of(d->a_scale) * *(const float *)host_of(d->b_scale);
  for (int32_t p = 0; p < dl->batch; p++) {
    for (int64_t j = 0; j < n; j++) {
      for (int64_t i = 0; i < m; i++) {
        double sum = 0;
        float sum32 = 0;
        for (int64_t l = 0; l < k; l++) {
          int64_t ia = p * a->stride + (d->trans_a ? l + i * a->ld : i + l * a->ld);
          int64_t ib = p * b->stride + (d->trans_b ? j + l * b->ld : l + j * b->ld);
          float x = load(a->type, A, ia), y = load(b->type, B, ib);
          sum += (double)x * y;
          sum32 += x * y;
        }
        float v = al_ * scale * (a->type == R_32F ? (float)sum : sum32);
        if (be != 0) v += be * load(c->type, C, p * c->stride + i + j * c->ld);
        if (bias) v += load(dl->type, bias_data, i);
        if (relu && v < 0) v = 0;
        store(dl->type, D, p * dl->stride + i + j * dl->ld, v);
      }
    }
  }
  state.matmuls++;
  return SUCCESS;
}
