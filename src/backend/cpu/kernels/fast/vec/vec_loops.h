/* Internal: the body of one vec_ops table (see vec_ops.h), included once by each of vec_isa_avx512.c,
 * vec_isa_avx2.c and vec_isa_portable.c. The includer defines VW, the vector types vf / vi, V_FMA, V_SQRT
 * and VEC_TABLE / VEC_TABLE_NAME; everything here is static, so each inclusion compiles for its own ISA.
 * Full vectors are loaded with memcpy (unaligned moves); the tail of a row goes through a padded vector. */
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "backend/cpu/kernels/fast/vec/vec_math.h"

enum { VL_BLOCK = 1024 }; /* elements summed in fp32 before the partial sum joins the double total */

static inline vf vl_load(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void vl_store(float *p, vf v) { memcpy(p, &v, sizeof v); }
/* n < VW elements, the other lanes `fill`: the includer's masked load and store (V_LOAD_PART,
 * V_STORE_PART) where the ISA has them, else through memcpy (a library call per tail: the activations of a
 * convolution's short output rows, 14 to 16 values each, are mostly tail). */
#ifdef V_LOAD_PART
static inline vf vl_load_part(const float *p, int64_t n, float fill) { return V_LOAD_PART(p, n, fill); }
static inline void vl_store_part(float *p, vf v, int64_t n) { V_STORE_PART(p, v, n); }
#else
static inline vf vl_load_part(const float *p, int64_t n, float fill) {
  vf v = vm_splat(fill);
  memcpy(&v, p, (size_t)n * sizeof(float));
  return v;
}
static inline void vl_store_part(float *p, vf v, int64_t n) { memcpy(p, &v, (size_t)n * sizeof(float)); }
#endif
static inline double vl_hsum(vf v) {
  double s = 0;
  for (int i = 0; i < VW; i++) s += (double)v[i];
  return s;
}

/* y[i] = EXPR over v = the input vector, full vectors then the padded tail. */
#define VL_MAP(in, out, n, EXPR)                    \
  do {                                              \
    int64_t i_ = 0;                                 \
    for (; i_ + VW <= (n); i_ += VW) {              \
      vf v = vl_load((in) + i_);                    \
      vl_store((out) + i_, (EXPR));                 \
    }                                               \
    if (i_ < (n)) {                                 \
      vf v = vl_load_part((in) + i_, (n)-i_, 1.0f); \
      vl_store_part((out) + i_, (EXPR), (n)-i_);    \
    }                                               \
  } while (0)

/* min(max(t, 0), 1) keeping NaN (maxps / minps return their second operand for NaN). */
static inline vf vl_clamp01(vf t) { return V_MIN(vm_splat(1.0f), V_MAX(vm_splat(0.0f), t)); }

static void vl_unary_p(vec_unop op, float p0, float p1, const float *in, float *out, int64_t n) {
  const vf a = vm_splat(p0), b = vm_splat(p1), zero = vm_splat(0.0f);
  switch (op) {
    case VEC_RELU: VL_MAP(in, out, n, vm_sel((vi)(v < 0.0f), zero, v)); break;
    case VEC_SIGMOID: VL_MAP(in, out, n, vm_sigmoid(v)); break;
    case VEC_TANH: VL_MAP(in, out, n, vm_tanh(v)); break;
    case VEC_ERF: VL_MAP(in, out, n, vm_erf(v)); break;
    case VEC_EXP: VL_MAP(in, out, n, vm_exp(v)); break;
    case VEC_SQRT: VL_MAP(in, out, n, V_SQRT(v)); break;
    case VEC_NEG: VL_MAP(in, out, n, -v); break;
    case VEC_RECIPROCAL: VL_MAP(in, out, n, 1.0f / v); break;
    case VEC_GELU_ERF: VL_MAP(in, out, n, vm_gelu_erf(v)); break;
    case VEC_GELU_TANH: VL_MAP(in, out, n, vm_gelu_tanh(v)); break;
    case VEC_LEAKY_RELU: VL_MAP(in, out, n, vm_sel((vi)(v < 0.0f), v * a, v)); break;
    case VEC_CLIP: VL_MAP(in, out, n, vm_sel((vi)(v < a), a, vm_sel((vi)(v > b), b, v))); break;
    case VEC_HARD_SIGMOID: VL_MAP(in, out, n, vl_clamp01(V_FMA(v, a, b))); break;
    case VEC_HARD_SWISH: VL_MAP(in, out, n, v * vl_clamp01(V_FMA(v, vm_splat(1.0f / 6.0f), vm_splat(0.5f)))); break;
    case VEC_SILU: VL_MAP(in, out, n, v * vm_sigmoid(v)); break;
    case VEC_MISH: VL_MAP(in, out, n, vm_mish(v)); break;
    case VEC_UNOP_COUNT: break;
  }
}

static void vl_unary(vec_unop op, const float *in, float *out, int64_t n) { vl_unary_p(op, 0.0f, 0.0f, in, out, n); }

/* y = a OP b with either side a broadcast scalar. */
#define VL_BIN(OP)                                                                    \
  do {                                                                                \
    if (a_scalar) {                                                                   \
      vf av = vm_splat(*a);                                                           \
      VL_MAP(b, y, n, av OP v);                                                       \
    } else if (b_scalar) {                                                            \
      vf bv = vm_splat(*b);                                                           \
      VL_MAP(a, y, n, v OP bv);                                                       \
    } else {                                                                          \
      int64_t i = 0;                                                                  \
      for (; i + VW <= n; i += VW) vl_store(y + i, vl_load(a + i) OP vl_load(b + i)); \
      if (i < n) {                                                                    \
        vf r = vl_load_part(a + i, n - i, 1.0f) OP vl_load_part(b + i, n - i, 1.0f);  \
        vl_store_part(y + i, r, n - i);                                               \
      }                                                                               \
    }                                                                                 \
  } while (0)

static void vl_binary(vec_binop op, const float *a, bool a_scalar, const float *b, bool b_scalar, float *y, int64_t n) {
  switch (op) {
    case VEC_ADD: VL_BIN(+); break;
    case VEC_SUB: VL_BIN(-); break;
    case VEC_MUL: VL_BIN(*); break;
    case VEC_DIV: VL_BIN(/); break;
  }
}

static double vl_sum(const float *x, int64_t n) {
  double total = 0;
  for (int64_t i = 0; i < n;) {
    int64_t end = n - i > VL_BLOCK ? i + VL_BLOCK : n;
    vf acc0 = vm_splat(0.0f), acc1 = vm_splat(0.0f);
    for (; i + 2 * VW <= end; i += 2 * VW) {
      acc0 += vl_load(x + i);
      acc1 += vl_load(x + i + VW);
    }
    for (; i + VW <= end; i += VW) acc0 += vl_load(x + i);
    if (i < end) {
      acc1 += vl_load_part(x + i, end - i, 0.0f);
      i = end;
    }
    total += vl_hsum(acc0 + acc1);
  }
  return total;
}

static void vl_moments(const float *x, int64_t n, float shift, double *sum, double *sum_sq) {
  double s1 = 0, s2 = 0;
  vf sh = vm_splat(shift);
  for (int64_t i = 0; i < n;) {
    int64_t end = n - i > VL_BLOCK ? i + VL_BLOCK : n;
    vf a1 = vm_splat(0.0f), a2 = vm_splat(0.0f);
    for (; i + VW <= end; i += VW) {
      vf d = vl_load(x + i) - sh;
      a1 += d;
      a2 = V_FMA(d, d, a2);
    }
    if (i < end) {
      vf d = vl_load_part(x + i, end - i, shift) - sh;
      a1 += d;
      a2 = V_FMA(d, d, a2);
      i = end;
    }
    s1 += vl_hsum(a1);
    s2 += vl_hsum(a2);
  }
  *sum = s1;
  *sum_sq = s2;
}

static void vl_normalize(const float *x, int64_t n, float mean_hi, float mean_lo, float inv, const float *g,
                         const float *b, float *y) {
  vf mh = vm_splat(mean_hi), ml = vm_splat(mean_lo), iv = vm_splat(inv);
  int64_t i = 0;
  for (; i < n; i += VW) {
    int64_t len = n - i < VW ? n - i : VW;
    vf xv = len == VW ? vl_load(x + i) : vl_load_part(x + i, len, 0.0f);
    vf t = ((xv - mh) - ml) * iv;
    if (g) t *= len == VW ? vl_load(g + i) : vl_load_part(g + i, len, 0.0f);
    if (b) t += len == VW ? vl_load(b + i) : vl_load_part(b + i, len, 0.0f);
    if (len == VW)
      vl_store(y + i, t);
    else
      vl_store_part(y + i, t, len);
  }
}

static void vl_affine(const float *x, int64_t n, float sub, float mul, float add, float *y) {
  vf s = vm_splat(sub), m = vm_splat(mul), a = vm_splat(add);
  VL_MAP(x, y, n, V_FMA(v - s, m, a));
}

static void vl_affine_vec(const float *x, int64_t n, const float *sub, const float *mul, const float *add, float *y) {
  int64_t i = 0;
  for (; i + VW <= n; i += VW)
    vl_store(y + i, V_FMA(vl_load(x + i) - vl_load(sub + i), vl_load(mul + i), vl_load(add + i)));
  if (i < n) {
    int64_t r = n - i;
    vf t = V_FMA(vl_load_part(x + i, r, 0.0f) - vl_load_part(sub + i, r, 0.0f), vl_load_part(mul + i, r, 0.0f),
                 vl_load_part(add + i, r, 0.0f));
    vl_store_part(y + i, t, r);
  }
}

static void vl_softmax_row(const float *x, int64_t n, float *y) {
  const float ninf = -__builtin_inff();
  vf mv = vm_splat(ninf);
  int64_t i = 0;
  for (; i + VW <= n; i += VW) {
    vf v = vl_load(x + i);
    mv = vm_sel((vi)(v > mv), v, mv);
  }
  if (i < n) {
    vf v = vl_load_part(x + i, n - i, ninf);
    mv = vm_sel((vi)(v > mv), v, mv);
  }
  float m = ninf;
  for (int l = 0; l < VW; l++)
    if (mv[l] > m) m = mv[l];
  vf ms = vm_splat(m);
  double total = 0;
  for (i = 0; i < n;) {
    int64_t end = n - i > VL_BLOCK ? i + VL_BLOCK : n;
    vf acc = vm_splat(0.0f);
    for (; i + VW <= end; i += VW) {
      vf e = vm_exp(vl_load(x + i) - ms);
      vl_store(y + i, e);
      acc += e;
    }
    if (i < end) {
      vf e = vm_exp(vl_load_part(x + i, end - i, ninf) - ms);
      vl_store_part(y + i, e, end - i);
      /* padding lanes: exp(-inf - m) = 0 for a finite m; a non-finite m makes the row NaN anyway */
      acc += e;
      i = end;
    }
    total += vl_hsum(acc);
  }
  float inv = (float)(1.0 / total);
  vf iv = vm_splat(inv);
  VL_MAP(y, y, n, v * iv);
}

static void vl_max_acc(float *acc, const float *x, int64_t stride, int64_t n) {
  int64_t i = 0;
  if (stride == 1)
    for (; i + VW <= n; i += VW) {
      vf v = vl_load(x + i), a = vl_load(acc + i);
      vl_store(acc + i, vm_sel((vi)(v > a), v, a));
    }
  for (; i < n; i++) {
    float v = x[i * stride];
    if (v > acc[i]) acc[i] = v;
  }
}

static void vl_add_acc(float *acc, const float *x, int64_t stride, int64_t n) {
  int64_t i = 0;
  if (stride == 1)
    for (; i + VW <= n; i += VW) vl_store(acc + i, vl_load(acc + i) + vl_load(x + i));
  for (; i < n; i++) acc[i] += x[i * stride];
}

const vec_ops VEC_TABLE = {
    .name = VEC_TABLE_NAME,
    .binary = vl_binary,
    .unary = vl_unary,
    .unary_p = vl_unary_p,
    .sum = vl_sum,
    .moments = vl_moments,
    .normalize = vl_normalize,
    .affine = vl_affine,
    .affine_vec = vl_affine_vec,
    .softmax_row = vl_softmax_row,
    .max_acc = vl_max_acc,
    .add_acc = vl_add_acc,
};
