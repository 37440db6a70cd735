/* Internal: the typed parameters of the fused operators (domain "tb", made by the O1 passes), read once
 * at prepare by their parse functions. A fused op that extends an ONNX op puts that op's parameters first
 * (tb_fused_conv_params.conv is a tb_conv_params), so a kernel may hand them to the ONNX op's kernel as is. */
#ifndef TB_OPS_FUSED_FUSED_PARAMS_H
#define TB_OPS_FUSED_FUSED_PARAMS_H
#include "ops/nn/nn_params.h"

/* The activation epilogue (attribute activation). The numbering is tb_gemm_epilogue's act (gemm_f32.h). */
typedef enum tb_fused_act_kind {
  TB_FUSED_ACT_NONE = 0,
  TB_FUSED_ACT_RELU,
  TB_FUSED_ACT_LEAKY_RELU,
  TB_FUSED_ACT_CLIP,
  TB_FUSED_ACT_SIGMOID,
  TB_FUSED_ACT_TANH,
  TB_FUSED_ACT_HARD_SIGMOID,
  TB_FUSED_ACT_HARD_SWISH,
  TB_FUSED_ACT_GELU,      /* activation Gelu, activation_approximate "none": x * Phi(x) through erf */
  TB_FUSED_ACT_GELU_TANH, /* activation Gelu, activation_approximate "tanh" */
  TB_FUSED_ACT_SILU,      /* activation Silu: x * Sigmoid(x) (the SiLU / Swish pattern) */
  TB_FUSED_ACT_MISH,      /* activation Mish: x * Tanh(Softplus(x)) */
} tb_fused_act_kind;

typedef struct tb_activation_params {
  tb_fused_act_kind kind;
  float alpha; /* activation_alpha (default 0.01): LeakyRelu's slope, HardSigmoid's alpha */
  float beta;  /* activation_beta (default 0.5): HardSigmoid's beta */
  float min;   /* activation_min (default -inf): Clip */
  float max;   /* activation_max (default +inf): Clip */
} tb_activation_params;

/* tb::FusedConv: Conv's parameters, then the activation. */
typedef struct tb_fused_conv_params {
  tb_conv_params conv;
  tb_activation_params act;
} tb_fused_conv_params;

/* tb::FusedGemm: Gemm's parameters, then the activation. */
typedef struct tb_fused_gemm_params {
  tb_gemm_params gemm;
  tb_activation_params act;
} tb_fused_gemm_params;

/* tb::FusedMatMul (MatMul has no attributes). */
typedef struct tb_fused_matmul_params {
  tb_activation_params act;
} tb_fused_matmul_params;

/* tb::Gelu. */
typedef struct tb_gelu_params {
  bool tanh; /* approximate "tanh" (else "none": erf) */
} tb_gelu_params;

/* tb::Attention: S = (Q @ K_T) * scale, or / scale with scale_divide; no scale attribute: unscaled. */
typedef struct tb_attention_params {
  float scale;       /* default 1 */
  bool has_scale;    /* the node has the scale attribute */
  bool scale_divide; /* 1: the scores are divided by scale */
} tb_attention_params;

tb_status tb_fused_conv_parse(const tb_graph *g, const tb_node *n, void *params);   /* tb_fused_conv_params */
tb_status tb_fused_gemm_parse(const tb_graph *g, const tb_node *n, void *params);   /* tb_fused_gemm_params */
tb_status tb_fused_matmul_parse(const tb_graph *g, const tb_node *n, void *params); /* tb_fused_matmul_params */
tb_status tb_gelu_parse(const tb_graph *g, const tb_node *n, void *params);         /* tb_gelu_params */
tb_status tb_attention_parse(const tb_graph *g, const tb_node *n, void *params);    /* tb_attention_params */
/* tb::LayerNormalization parses with tb_norm_parse (tb_norm_params), as ONNX's. */

/* The activation in the parameters of a FusedConv, FusedGemm or FusedMatMul node (params: its parsed
 * struct); NULL for any other op (an ONNX Conv, Gemm or MatMul has none). */
const tb_activation_params *tb_fused_activation(const char *domain, const char *op_type, const void *params);
/* The activation attributes of n; gelu_allowed: the op takes Gelu (FusedMatMul, FusedGemm). */
tb_status tb_activation_parse(const tb_graph *g, const tb_node *n, bool gelu_allowed, tb_activation_params *act);

#endif
