/* The elementwise operator definitions: arithmetic, math functions, activations, comparisons and logic,
 * casts, and the pass-through ops (Identity, Dropout). */
#include "ops/elementwise/ew_names.h"
#include "ops/op.h"

#define DECLARE(name) extern const tb_op_def tb_op_##name;
TB_EW_NAMES(DECLARE)
#define ADDRESS(name) &tb_op_##name,
static const tb_op_def *const defs[] = {TB_EW_NAMES(ADDRESS)};
const tb_op_family tb_ops_elementwise = {defs, sizeof defs / sizeof defs[0]};
