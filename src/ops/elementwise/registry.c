/* The elementwise operator definitions: arithmetic, math functions, activations, comparisons and logic,
 * casts, and the pass-through ops (Identity, Dropout). */
#include "ops/op.h"

#define EW_OPS(X)                                                                                      \
  X(add) X(sub) X(mul) X(div) X(pow) X(mod) X(bitshift) X(identity) X(dropout) X(relu) X(leakyrelu)   \
  X(prelu) X(sigmoid) X(hardsigmoid) X(hardswish) X(elu) X(selu) X(celu) X(softplus)                  \
  X(thresholdedrelu) X(shrink) X(clip) X(sqrt) X(exp) X(log) X(tanh) X(erf) X(neg) X(reciprocal)      \
  X(abs) X(floor) X(ceil) X(round) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh)      \
  X(asinh) X(acosh) X(atanh) X(softsign) X(sign) X(isnan) X(isinf) X(equal) X(less) X(greater)        \
  X(lessorequal) X(greaterorequal) X(and) X(or) X(xor) X(not) X(where) X(cast) X(castlike) X(sum)     \
  X(mean) X(min) X(max)

#define DECLARE(name) extern const tb_op_def tb_op_##name;
EW_OPS(DECLARE)
#define ADDRESS(name) &tb_op_##name,
static const tb_op_def *const defs[] = {EW_OPS(ADDRESS)};
const tb_op_family tb_ops_elementwise = {defs, sizeof defs / sizeof defs[0]};
