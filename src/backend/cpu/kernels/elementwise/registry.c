/* The CPU reference kernels of the elementwise family. */
#include "backend/cpu/kernels/kernel.h"

#define EW_KERNELS(X)                                                                                  \
  X(add) X(sub) X(mul) X(div) X(pow) X(mod) X(bitshift) X(identity) X(dropout) X(relu) X(leakyrelu)   \
  X(prelu) X(sigmoid) X(hardsigmoid) X(hardswish) X(elu) X(selu) X(celu) X(softplus)                  \
  X(thresholdedrelu) X(shrink) X(clip) X(sqrt) X(exp) X(log) X(tanh) X(erf) X(neg) X(reciprocal)      \
  X(abs) X(floor) X(ceil) X(round) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh)      \
  X(asinh) X(acosh) X(atanh) X(softsign) X(sign) X(isnan) X(isinf) X(equal) X(less) X(greater)        \
  X(lessorequal) X(greaterorequal) X(and) X(or) X(xor) X(not) X(where) X(cast) X(castlike) X(sum)     \
  X(mean) X(min) X(max)

#define DECLARE(name) extern const tb_cpu_kernel tb_kernel_##name;
EW_KERNELS(DECLARE)
#define ADDRESS(name) &tb_kernel_##name,
static const tb_cpu_kernel *const kernels[] = {EW_KERNELS(ADDRESS)};
const tb_kernel_family tb_kernels_elementwise = {kernels, sizeof kernels / sizeof kernels[0]};
