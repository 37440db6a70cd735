/* Shared parts of the TensorBridge OpenCL kernels. Shapes and strides of up to 8 dims come in as int8
 * vectors (unpacked into private arrays); element offsets and counts are ints (the host checks that every
 * buffer it passes holds fewer than 2^31 elements). Built with -DTB_TS=<GEMM tile> and, on devices with
 * cl_khr_fp16, -DTB_HAS_FP16. */
#ifdef TB_HAS_FP16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

/* The element offset of flat index i over shape (row-major) with these strides. */
int tb_offset(int i, int nd, const int *shape, const int *stride) {
  int off = 0;
  for (int d = nd - 1; d >= 0; d--) {
    int q = i / shape[d];
    off += (i - q * shape[d]) * stride[d];
    i = q;
  }
  return off;
}

/* Unary ops by code; the first eight are the fused activations (tb_fused_act kinds). */
float tb_unary(int op, float x, float a, float b) {
  switch (op) {
    case 1: return x < 0.0f ? 0.0f : x;                                  /* Relu */
    case 2: return x < 0.0f ? a * x : x;                                 /* LeakyRelu */
    case 3: return x < a ? a : (x > b ? b : x);                          /* Clip */
    case 4: return 1.0f / (1.0f + exp(-x));                              /* Sigmoid */
    case 5: return tanh(x);                                              /* Tanh */
    case 6: return fmax(0.0f, fmin(1.0f, a * x + b));                    /* HardSigmoid */
    case 7: return x * fmax(0.0f, fmin(1.0f, x / 6.0f + 0.5f));          /* HardSwish */
    case 8: return sqrt(x);
    case 9: return erf(x);
    case 10: return exp(x);
    case 11: return -x;
    case 12: return fabs(x);
    case 13: return 0.5f * x * (1.0f + erf(x * 0.70710678118654752f));  /* Gelu */
    case 14: return 0.5f * x * (1.0f + tanh(0.79788456080286535f * (x + 0.044715f * x * x * x))); /* Gelu tanh */
    case 15: return 1.0f / x;                                            /* Reciprocal */
    case 16: return log(x);
    case 17: return floor(x);
    case 18: return ceil(x);
    case 19: return x > 0.0f ? x : a * (exp(x) - 1.0f);                  /* Elu */
    case 20: return log(1.0f + exp(x));                                  /* Softplus */
    case 21: return sin(x);
    case 22: return cos(x);
    case 23: return acos(x);
    case 24: return asin(x);
    case 25: return atan(x);
    case 26: return acosh(x);
    case 27: return asinh(x);
    case 28: return atanh(x);
    case 29: return cosh(x);
    case 30: return sinh(x);
    case 31: return tan(x);
    case 32: return x > 0.0f ? b * x : b * (a * exp(x) - a);            /* Selu: a alpha, b gamma */
    case 33: return x > a ? x : 0.0f;                                    /* ThresholdedRelu */
    case 34: return fmax(0.0f, x) + fmin(0.0f, a * (exp(x / a) - 1.0f)); /* Celu */
    case 35: return x / (1.0f + fabs(x));                                /* Softsign */
    case 36: return rint(x);                                             /* Round: half to even */
    case 37: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);           /* Sign (0 and NaN kept) */
    case 38: return x < -b ? x + a : (x > b ? x - a : 0.0f);            /* Shrink: a bias, b lambd */
    case 39: return a * x;                                               /* scale (Mean of n inputs) */
    default: return x;                                                   /* 0: Identity */
  }
}

float tb_pow(float a, float b) {
  if (b == 2.0f) return a * a;
  if (b == 1.0f) return a;
  if (b == floor(b) && fabs(b) < 16777216.0f) return pown(a, (int)b);
  return pow(a, b);
}

float tb_binary(int op, float a, float b) {
  switch (op) {
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a / b;
    case 4: return tb_pow(a, b);
    case 5: return fmax(a, b);
    case 6: return fmin(a, b);
    case 7: return a < 0.0f ? a * b : a;                                 /* PRelu: b the slope */
    case 8: return a < b ? b : a;                                        /* Clip's min (NaN kept) */
    case 9: return a > b ? b : a;                                        /* Clip's max (NaN kept) */
    case 10: return fmod(a, b);                                          /* Mod, fmod = 1 */
    default: return a + b;
  }
}
