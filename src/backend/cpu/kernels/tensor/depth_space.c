/* DepthToSpace and SpaceToDepth: the input seen as a 6-d tensor, transposed by a strided copy. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status run_depth_space(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  const tb_depth_space_params *dp = ctx->params;
  int64_t b = dp->blocksize;
  bool to_space = dp->to_space;
  const int64_t *s = tb_tensor_shape(x);
  int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  int64_t view[6];
  int perm[6];
  if (to_space && !dp->crd) {
    int64_t v[6] = {n, b, b, c / (b * b), h, w};
    int p[6] = {0, 3, 4, 1, 5, 2};
    memcpy(view, v, sizeof v);
    memcpy(perm, p, sizeof p);
  } else if (to_space) {
    int64_t v[6] = {n, c / (b * b), b, b, h, w};
    int p[6] = {0, 1, 4, 2, 5, 3};
    memcpy(view, v, sizeof v);
    memcpy(perm, p, sizeof p);
  } else {
    int64_t v[6] = {n, c, h / b, b, w / b, b};
    int p[6] = {0, 3, 5, 1, 2, 4};
    memcpy(view, v, sizeof v);
    memcpy(perm, p, sizeof p);
  }
  size_t elem = tb_dtype_size(tb_tensor_dtype(x));
  int64_t vstrides[6], strides[6], shape[6];
  tb_shape_strides(6, view, vstrides);
  for (int d = 0; d < 6; d++) {
    shape[d] = view[perm[d]];
    strides[d] = vstrides[perm[d]] * (int64_t)elem;
  }
  tb_tk_strided_copy_pool(ctx->pool, tb_tk_data(outs[0]), src, elem, 6, shape, strides, 0);
  return TB_OK;
}

const tb_kernel tb_kernel_depth_to_space = {.domain = "", .name = "DepthToSpace", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_depth_space};
const tb_kernel tb_kernel_space_to_depth = {.domain = "", .name = "SpaceToDepth", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_depth_space};
