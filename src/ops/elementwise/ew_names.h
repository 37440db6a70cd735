/* The elementwise family's operators, one X(name) each: the definitions (ops/elementwise/registry.c,
 * tb_op_<name>) and the CPU reference kernels (backend/cpu/kernels/elementwise/registry.c,
 * tb_kernel_<name>) are listed from it, so the two stay the same set. */
#ifndef TB_OPS_ELEMENTWISE_EW_NAMES_H
#define TB_OPS_ELEMENTWISE_EW_NAMES_H

#define TB_EW_NAMES(X)                                                                                 \
  X(add) X(sub) X(mul) X(div) X(pow) X(mod) X(bitshift) X(identity) X(dropout) X(relu) X(leakyrelu)   \
  X(prelu) X(sigmoid) X(hardsigmoid) X(hardswish) X(elu) X(selu) X(celu) X(softplus)                  \
  X(thresholdedrelu) X(shrink) X(clip) X(sqrt) X(exp) X(log) X(tanh) X(erf) X(neg) X(reciprocal)      \
  X(abs) X(floor) X(ceil) X(round) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh)      \
  X(asinh) X(acosh) X(atanh) X(softsign) X(sign) X(isnan) X(isinf) X(equal) X(less) X(greater)        \
  X(lessorequal) X(greaterorequal) X(and) X(or) X(xor) X(not) X(where) X(cast) X(castlike) X(sum)     \
  X(mean) X(min) X(max)

#endif
