/* Internal, transitional: until the kernel contract hands kernels their node's parsed parameters
 * (ctx->params, q->params), a kernel parses them itself with the op's parse function. */
#ifndef TB_BACKEND_PARAMS_INTERIM_H
#define TB_BACKEND_PARAMS_INTERIM_H
#define TB_KPARAMS(type, var, parse)                                 \
  type var##_block = {0};                                            \
  {                                                                  \
    tb_status pst_ = parse(ctx->graph, ctx->node, &var##_block);     \
    if (pst_ != TB_OK) return pst_;                                  \
  }                                                                  \
  const type *var = &var##_block
#define TB_QPARAMS(type, var, parse)                                 \
  type var##_block = {0};                                            \
  if (parse(g, n, &var##_block) != TB_OK) return false;              \
  const type *var = &var##_block
#endif
