/* The elementwise operator definitions of this family (filled in as the operators are written). */
#include "ops/op.h"

static const tb_op_def *const defs[] = {NULL};
const tb_op_family tb_ops_elementwise = {defs, 0};
