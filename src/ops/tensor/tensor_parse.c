/* The parse functions of the tensor-family operators whose parameters are axes, index lists and shapes
 * (tensor_params.h): the node's attributes read and checked once, into the op's params struct. */
#include <string.h>
#include "ops/tensor/tensor_params.h"

/* An ints attribute copied into a fixed array of cap entries; *given false when absent. */
static tb_status ints_into(const tb_graph *g, const tb_node *n, const char *name, int64_t *out, size_t cap,
                           size_t *count, bool *given) {
  const int64_t *v;
  tb_status st = tb_attr_ints(g, n, name, &v, count);
  if (st != TB_OK) return st;
  if (given) *given = v != NULL;
  if (*count > cap)
    return tb_node_error(g, n, TB_ERR_UNSUPPORTED,
                         "attribute '%s' has %zu entries; at most %zu are supported (one per dim, up to %d dims)", name,
                         *count, cap, TB_MAX_DIMS);
  if (*count) memcpy(out, v, *count * sizeof *v);
  return TB_OK;
}

tb_status tb_transpose_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_transpose_params *p = params;
  return ints_into(g, n, "perm", p->perm, TB_MAX_DIMS, &p->n_perm, &p->has_perm);
}

tb_status tb_concat_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_axis_params *p = params;
  if (n->opset >= 4 && !tb_node_attr(n, "axis"))
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'axis' is required from opset 4; give the axis to join along");
  return tb_attr_int(g, n, "axis", 1, &p->axis);
}

tb_status tb_axis0_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_axis_params *p = params;
  return tb_attr_int(g, n, "axis", 0, &p->axis);
}

tb_status tb_flatten_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_axis_params *p = params;
  return tb_attr_int(g, n, "axis", 1, &p->axis);
}

tb_status tb_onehot_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_axis_params *p = params;
  return tb_attr_int(g, n, "axis", -1, &p->axis);
}

tb_status tb_gather_nd_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_gather_nd_params *p = params;
  if (n->opset < 12) return TB_OK;
  tb_status st = tb_attr_int(g, n, "batch_dims", 0, &p->batch_dims);
  if (st == TB_OK && p->batch_dims < 0)
    return tb_node_error(g, n, TB_ERR_MODEL, "batch_dims is %lld; it must be 0 or more", (long long)p->batch_dims);
  return st;
}

tb_status tb_scatter_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_scatter_params *p = params;
  tb_status st = tb_attr_int(g, n, "axis", 0, &p->axis);
  if (st != TB_OK || n->opset < 16) return st;
  const char *red;
  if ((st = tb_attr_string(g, n, "reduction", "none", &red)) != TB_OK) return st;
  static const char *const names[] = {"none", "add", "mul", "min", "max"};
  int r = -1;
  for (int i = 0; i < 5; i++)
    if (strcmp(red, names[i]) == 0) r = i;
  if (r < 0 || (r >= TB_SCATTER_MIN && n->opset < 18))
    return tb_node_error(g, n, TB_ERR_MODEL, "unknown reduction '%s' (none, add, mul%s)", red,
                         n->opset >= 18 ? ", min, max" : "");
  p->reduction = (tb_scatter_reduction)r;
  return TB_OK;
}

tb_status tb_split_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_split_params *p = params;
  tb_status st = tb_attr_int(g, n, "axis", 0, &p->axis);
  if (st != TB_OK) return st;
  if (n->opset < 13) {
    if ((st = tb_attr_ints(g, n, "split", &p->split, &p->n_split)) != TB_OK) return st;
    for (size_t i = 0; i < p->n_split; i++)
      if (p->split[i] < 0)
        return tb_node_error(g, n, TB_ERR_MODEL, "split has the negative size %lld", (long long)p->split[i]);
  } else {
    p->split_input = true;
  }
  if (n->opset >= 18) {
    if ((st = tb_attr_int(g, n, "num_outputs", 0, &p->num_outputs)) != TB_OK) return st;
    if (p->num_outputs < 0)
      return tb_node_error(g, n, TB_ERR_MODEL, "num_outputs is %lld; it must be positive", (long long)p->num_outputs);
    if (p->num_outputs && (size_t)p->num_outputs != n->n_outputs)
      return tb_node_error(g, n, TB_ERR_MODEL, "num_outputs is %lld but the node has %zu outputs",
                           (long long)p->num_outputs, n->n_outputs);
  }
  return TB_OK;
}

tb_status tb_squeeze_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_squeeze_params *p = params;
  if (n->opset >= 13) {
    p->axes_input = true;
    return TB_OK;
  }
  return ints_into(g, n, "axes", p->axes, TB_MAX_DIMS, &p->n_axes, &p->has_axes);
}

tb_status tb_reshape_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_reshape_params *p = params;
  if (n->opset < 5) {
    bool given;
    p->shape_attr = true;
    tb_status st = ints_into(g, n, "shape", p->shape, TB_MAX_DIMS, &p->n_shape, &given);
    if (st == TB_OK && !given)
      return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'shape' is required before opset 5");
    return st;
  }
  int64_t allowzero = 0;
  if (n->opset >= 14) {
    tb_status st = tb_attr_int(g, n, "allowzero", 0, &allowzero);
    if (st != TB_OK) return st;
  }
  p->allowzero = allowzero != 0;
  return TB_OK;
}

tb_status tb_shape_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_shape_params *p = params;
  p->start = 0;
  p->end = INT64_MAX;
  if (n->opset < 15) return TB_OK;
  tb_status st = tb_attr_int(g, n, "start", 0, &p->start);
  if (st == TB_OK) st = tb_attr_int(g, n, "end", INT64_MAX, &p->end);
  return st;
}

tb_status tb_slice_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_slice_params *p = params;
  if (n->opset >= 10) {
    p->from_inputs = true;
    return TB_OK;
  }
  size_t ns, ne, na;
  bool gs, ge;
  tb_status st = ints_into(g, n, "starts", p->starts, TB_MAX_DIMS, &ns, &gs);
  if (st == TB_OK) st = ints_into(g, n, "ends", p->ends, TB_MAX_DIMS, &ne, &ge);
  if (st == TB_OK) st = ints_into(g, n, "axes", p->axes, TB_MAX_DIMS, &na, &p->has_axes);
  if (st != TB_OK) return st;
  if (!gs || !ge)
    return tb_node_error(g, n, TB_ERR_MODEL, "attributes 'starts' and 'ends' are required before opset 10");
  if (ns != ne || (p->has_axes && na != ns))
    return tb_node_error(g, n, TB_ERR_MODEL, "starts (%zu), ends (%zu) and axes (%zu) differ in length", ns, ne, na);
  p->n = ns;
  return TB_OK;
}

tb_status tb_topk_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_topk_params *p = params;
  int64_t largest = 1, sorted = 1;
  tb_status st = tb_attr_int(g, n, "axis", -1, &p->axis);
  if (st == TB_OK) st = tb_attr_int(g, n, "largest", 1, &largest);
  if (st == TB_OK) st = tb_attr_int(g, n, "sorted", 1, &sorted);
  if (st != TB_OK) return st;
  p->largest = largest != 0;
  p->sorted = sorted != 0;
  if (n->opset >= 10) return TB_OK;
  if (!tb_node_attr(n, "k"))
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'k' is required before opset 10");
  p->k_attr = true;
  return tb_attr_int(g, n, "k", 0, &p->k);
}

tb_status tb_trilu_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_trilu_params *p = params;
  int64_t upper;
  tb_status st = tb_attr_int(g, n, "upper", 1, &upper);
  p->upper = upper != 0;
  return st;
}

tb_status tb_cumsum_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_cumsum_params *p = params;
  int64_t exclusive, reverse;
  tb_status st = tb_attr_int(g, n, "exclusive", 0, &exclusive);
  if (st == TB_OK) st = tb_attr_int(g, n, "reverse", 0, &reverse);
  if (st != TB_OK) return st;
  p->exclusive = exclusive != 0;
  p->reverse = reverse != 0;
  return TB_OK;
}

tb_status tb_reverse_sequence_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_reverse_sequence_params *p = params;
  tb_status st = tb_attr_int(g, n, "batch_axis", 1, &p->batch_axis);
  if (st == TB_OK) st = tb_attr_int(g, n, "time_axis", 0, &p->time_axis);
  if (st != TB_OK) return st;
  if (!((p->batch_axis == 0 && p->time_axis == 1) || (p->batch_axis == 1 && p->time_axis == 0)))
    return tb_node_error(g, n, TB_ERR_MODEL, "batch_axis (%lld) and time_axis (%lld) must be 0 and 1 in some order",
                         (long long)p->batch_axis, (long long)p->time_axis);
  return TB_OK;
}
