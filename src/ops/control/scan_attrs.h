/* Internal: Scan's attributes (opset 9 and later), read and checked once for inference and the kernel. */
#ifndef TB_OPS_SCAN_ATTRS_H
#define TB_OPS_SCAN_ATTRS_H
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

typedef struct tb_scan_attrs {
  const tb_graph *body;
  size_t n_state;     /* N: state variables (inputs and outputs first) */
  size_t n_scan_in;   /* M = num_scan_inputs */
  size_t n_scan_out;  /* K: the body's outputs after the N states */
  const int64_t *in_axes, *in_dirs;   /* M entries each, or NULL for all 0 */
  const int64_t *out_axes, *out_dirs; /* K entries each, or NULL for all 0 */
} tb_scan_attrs;

/* Read the attributes of a Scan node with n_inputs inputs. Counts that disagree with the body, list
 * lengths other than M or K, directions other than 0/1 are TB_ERR_MODEL naming the node. */
tb_status tb_scan_attrs_read(const tb_graph *g, const tb_node *n, size_t n_inputs, tb_scan_attrs *out);

/* Entry i of an axes/directions list (0 when the list is absent). */
static inline int64_t tb_scan_attr_at(const int64_t *list, size_t i) { return list ? list[i] : 0; }

#endif
