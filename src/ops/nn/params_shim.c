/* TEMPORARY until the kernel-contract plumbing lands in ir/: tb_node_error. */
#include <stdarg.h>
#include "ops/nn/nn_params.h"

tb_status tb_node_error(const tb_graph *g, const tb_node *n, tb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tb_status st = tb_node_verror(g, n, status, fmt, ap);
  va_end(ap);
  return st;
}
