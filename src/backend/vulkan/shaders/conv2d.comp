// Direct 2-D convolution on fp32 NCHW (1-D as H = 1): groups, strides, pads, dilations, optional bias
// (HAS_B), optional residual added before the activation (HAS_R), activation ACT (common.glsl).
// One invocation per output element.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(constant_id = 0) const bool HAS_B = false;
layout(constant_id = 1) const bool HAS_R = false;
layout(constant_id = 2) const uint ACT = 0u;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bs { float bias[]; };
layout(std430, binding = 3) readonly buffer R { float res[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, groups;
  uint x_off, w_off, b_off, r_off, y_off, total;
  float act_a, act_b;
} p;

void main() {
  uint i = tb_global_index();
  if (i >= p.total) return;
  uint ow = i % p.OW, oh = (i / p.OW) % p.OH, m = (i / (p.OW * p.OH)) % p.M, n = i / (p.OW * p.OH * p.M);
  uint cg = p.C / p.groups, mg = p.M / p.groups, g = m / mg;
  float acc = HAS_B ? bias[p.b_off + m] : 0.0;
  for (uint c = 0u; c < cg; c++) {
    uint xc = p.x_off + (n * p.C + g * cg + c) * p.H * p.W;
    uint wc = p.w_off + (m * cg + c) * p.KH * p.KW;
    for (uint kh = 0u; kh < p.KH; kh++) {
      int ih = int(oh * p.sh + kh * p.dh) - int(p.ph);
      if (ih < 0 || ih >= int(p.H)) continue;
      for (uint kw = 0u; kw < p.KW; kw++) {
        int iw = int(ow * p.sw + kw * p.dw) - int(p.pw);
        if (iw < 0 || iw >= int(p.W)) continue;
        acc += x[xc + uint(ih) * p.W + uint(iw)] * w[wc + kh * p.KW + kw];
      }
    }
  }
  if (HAS_R) acc += res[p.r_off + i];
  y[p.y_off + i] = tb_act(ACT, acc, p.act_a, p.act_b);
}
