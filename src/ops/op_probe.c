/* tb_op_input_dtypes: an operator's input dtypes, from its own inference (see op_probe.h). */
#include "ops/op_probe.h"
#include <stdbool.h>
#include <string.h>

enum { PROBE_MAX_INPUTS = 16, PROBE_MAX_OUTPUTS = 16 };

/* The input whose dtype check failed last during a probe on this thread; input -1: none. */
static _Thread_local struct {
  bool on;
  long input;
  tb_dtype_set allowed;
} probe;

void tb_op_probe_refused(size_t input, tb_dtype_set allowed) {
  if (!probe.on) return;
  probe.input = (long)input;
  probe.allowed = allowed;
}

static tb_dtype lowest(tb_dtype_set set) {
  for (int d = 0; d < TB_DTYPE_COUNT; d++)
    if (set & TB_DTYPE_BIT(d)) return (tb_dtype)d;
  return TB_DTYPE_F32;
}

/* Whether the dtype checks of inference pass for a one-node graph without attributes whose inputs are
 * unranked tensors: input 0 of dtype `first`, the others `first` too unless a check refused theirs, then the
 * first dtype that check named. A failure that is not a dtype check's (a required attribute) counts as a
 * pass: the checks come before them. */
static bool accepts(const tb_op_def *def, size_t n_in, size_t n_out, tb_dtype first) {
  tb_value_type types[PROBE_MAX_INPUTS], outs[PROBE_MAX_OUTPUTS];
  const tb_value_type *in[PROBE_MAX_INPUTS];
  const tb_ir_tensor *values[PROBE_MAX_INPUTS] = {0};
  for (size_t i = 0; i < n_in; i++) {
    memset(&types[i], 0, sizeof types[i]);
    types[i].kind = TB_VALUE_TENSOR;
    types[i].has_dtype = true;
    types[i].dtype = first;
    in[i] = &types[i];
  }
  tb_node node = {.name = "probe", .op_type = def->name, .domain = def->domain, .opset = def->since_version,
                  .n_inputs = n_in, .n_outputs = n_out, .def = def};
  tb_graph graph = {.name = "probe", .nodes = &node, .n_nodes = 1};
  for (size_t attempt = 0; attempt <= n_in; attempt++) {
    memset(outs, 0, sizeof outs);
    tb_infer_ctx ctx = {.graph = &graph, .node = &node, .n_inputs = n_in, .in = in, .value = values,
                        .n_outputs = n_out, .out = outs};
    probe.input = -1;
    if (def->infer(&ctx) == TB_OK) return true;
    if (probe.input < 0) return true; /* the dtypes passed; an attribute without its default failed (Cast's `to`) */
    if (probe.input == 0 || (size_t)probe.input >= n_in || !probe.allowed) return false;
    tb_dtype want = lowest(probe.allowed);
    if (types[probe.input].dtype == want) return false;
    types[probe.input].dtype = want;
  }
  return false;
}

tb_dtype_set tb_op_input_dtypes(const tb_op_def *def) {
  if (!def || !def->infer || def->min_inputs > PROBE_MAX_INPUTS) return 0;
  size_t n_in = def->min_inputs > 0 ? (size_t)def->min_inputs : (def->max_inputs != 0 ? 1 : 0);
  if (n_in == 0) return 0;
  size_t n_out = def->min_outputs > 0 ? (size_t)def->min_outputs : 1;
  if (n_out > PROBE_MAX_OUTPUTS) return 0;
  tb_dtype_set set = 0;
  probe.on = true;
  for (int d = 0; d < TB_DTYPE_COUNT; d++)
    if (accepts(def, n_in, n_out, (tb_dtype)d)) set |= TB_DTYPE_BIT(d);
  probe.on = false;
  return set;
}
