/* The O1+ passes in the order they run (each pass is one file in this folder; docs/passes.md). Cleanups
 * first so the fusions see the real graph: Identity/Dropout out, constants folded (the patterns' scalar
 * constants often come from Constant nodes or small subgraphs), dead nodes gone; then the rewrites, the
 * multi-node patterns before the activation fusion so a MatMul inside a pattern is not taken first. */
#include "model/passes/pass_util.h"

static const tb_pass *const passes[] = {
    &tb_pass_identity_removal,  &tb_pass_constant_folding, &tb_pass_dead_node_removal, &tb_pass_conv_bn_folding,
    &tb_pass_pattern_layernorm, &tb_pass_pattern_gelu,     &tb_pass_pattern_attention, &tb_pass_activation_fusion,
};
static const size_t pass_total = sizeof passes / sizeof passes[0];

size_t tb_pass_count(void) { return pass_total; }
const tb_pass *tb_pass_at(size_t i) { return i < pass_total ? passes[i] : NULL; }
