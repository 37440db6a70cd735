/* Internal: the vectorised fp32 loops behind the level-2 elementwise, softmax, normalisation, reduction and
 * pooling kernels. One table per instruction set (AVX-512, AVX2, portable GNU C vectors), built from the
 * same source (vec_loops.h) with a different vector width; the kernels (vec_*.c) pick the table their
 * registry entry names and keep every shape decision out of the loops. All pointers are packed fp32
 * arrays; n may be 0; y may alias x or a (in place). */
#ifndef TB_CPU_KERNELS_FAST_VEC_OPS_H
#define TB_CPU_KERNELS_FAST_VEC_OPS_H
#include <stdbool.h>
#include <stdint.h>

typedef enum vec_binop { VEC_ADD, VEC_SUB, VEC_MUL, VEC_DIV } vec_binop;

typedef enum vec_unop {
  VEC_RELU,
  VEC_SIGMOID,
  VEC_TANH,
  VEC_ERF,
  VEC_EXP,
  VEC_SQRT,
  VEC_NEG,
  VEC_RECIPROCAL,
  VEC_GELU_ERF,  /* x * Phi(x), Phi through erfc for accuracy in the left tail */
  VEC_GELU_TANH, /* x * sigmoid(2 * sqrt(2/pi) * (x + 0.044715 x^3)), the tanh form without cancellation */
  /* with parameters (unary_p's p0, p1): */
  VEC_LEAKY_RELU,   /* x < 0 ? p0 x : x */
  VEC_CLIP,         /* x < p0 ? p0 : x > p1 ? p1 : x (NaN kept) */
  VEC_HARD_SIGMOID, /* clamp(p0 x + p1, 0, 1) (NaN kept) */
  VEC_HARD_SWISH,   /* x clamp(x / 6 + 1/2, 0, 1) */
  VEC_SILU,         /* x sigmoid(x): the same sigmoid, then the same product, as Sigmoid then Mul */
  VEC_MISH,         /* x tanh(softplus(x)) = x n / (n + 2), n = e^x (e^x + 2) */
  VEC_UNOP_COUNT
} vec_unop;

typedef struct vec_ops {
  const char *name; /* "avx512", "avx2", "portable" */
  /* y[i] = a[i] op b[i]; with a_scalar / b_scalar that operand is the single value *a / *b. */
  void (*binary)(vec_binop op, const float *a, bool a_scalar, const float *b, bool b_scalar, float *y, int64_t n);
  void (*unary)(vec_unop op, const float *x, float *y, int64_t n);
  /* The same with the op's two parameters (LeakyRelu: alpha; Clip: min, max; HardSigmoid: alpha, beta;
   * the other ops ignore them). */
  void (*unary_p)(vec_unop op, float p0, float p1, const float *x, float *y, int64_t n);
  /* The sum of x in double: fp32 vector partial sums flushed to double every block of 1024 elements. */
  double (*sum)(const float *x, int64_t n);
  /* sum of (x - shift) and of (x - shift)^2, blocked the same way (the corrected two-pass variance). */
  void (*moments)(const float *x, int64_t n, float shift, double *sum, double *sum_sq);
  /* y = ((x - mean_hi) - mean_lo) * inv * g + b; g and b may be NULL (1 and 0). */
  void (*normalize)(const float *x, int64_t n, float mean_hi, float mean_lo, float inv, const float *g, const float *b,
                    float *y);
  /* y = (x - sub) * mul + add, the same three scalars for every element. */
  void (*affine)(const float *x, int64_t n, float sub, float mul, float add, float *y);
  /* y[i] = (x[i] - sub[i]) * mul[i] + add[i]. */
  void (*affine_vec)(const float *x, int64_t n, const float *sub, const float *mul, const float *add, float *y);
  /* Softmax of one row: y = exp(x - max) / sum, max ignoring NaN (a NaN still makes every output NaN
   * through the sum, as the reference does). */
  void (*softmax_row)(const float *x, int64_t n, float *y);
  /* acc[i] = v > acc[i] ? v : acc[i] with v = x[i * stride] (NaN in v never replaces; a NaN acc stays). */
  void (*max_acc)(float *acc, const float *x, int64_t stride, int64_t n);
  /* acc[i] += x[i * stride]. */
  void (*add_acc)(float *acc, const float *x, int64_t stride, int64_t n);
} vec_ops;

extern const vec_ops tb_vec_ops_avx512, tb_vec_ops_avx2, tb_vec_ops_portable;

#endif
