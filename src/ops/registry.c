/* The table of operator definitions: the families' arrays, searched by (domain, name, opset). */
#include <string.h>
#include "ops/op.h"

static const tb_op_family *const families[] = {&tb_ops_elementwise, &tb_ops_tensor, &tb_ops_nn, &tb_ops_rnn_control,
                                               &tb_ops_fused};
enum { FAMILY_COUNT = sizeof families / sizeof families[0] };

size_t tb_op_count(void) {
  size_t n = 0;
  for (size_t f = 0; f < FAMILY_COUNT; f++) n += families[f]->count;
  return n;
}

const tb_op_def *tb_op_at(size_t i) {
  for (size_t f = 0; f < FAMILY_COUNT; f++) {
    if (i < families[f]->count) return families[f]->defs[i];
    i -= families[f]->count;
  }
  return NULL;
}

const tb_op_def *tb_op_find(const char *domain, const char *name, int opset) {
  if (!domain || strcmp(domain, "ai.onnx") == 0) domain = "";
  const tb_op_def *best = NULL;
  for (size_t f = 0; f < FAMILY_COUNT; f++) {
    for (size_t i = 0; i < families[f]->count; i++) {
      const tb_op_def *d = families[f]->defs[i];
      if (strcmp(d->name, name) != 0 || strcmp(d->domain, domain) != 0 || d->since_version > opset) continue;
      if (!best || d->since_version > best->since_version) best = d;
    }
  }
  return best;
}
