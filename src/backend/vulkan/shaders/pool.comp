// 2-D max (MODE 0) or average (MODE 1) pooling on fp32 NCHW; GlobalAveragePool is the average over the
// whole plane. Average divides, with count_include_pad, by the window's positions inside the padded input
// (begin pads ph/pw, end pads eh/ew), else by the elements inside the input.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(constant_id = 0) const uint MODE = 0u;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint H, W, OH, OW, KH, KW, sh, sw, ph, pw, eh, ew, dh, dw, total, x_off, y_off, include_pad;
} p;

void main() {
  uint i = tb_global_index();
  if (i >= p.total) return;
  uint ow = i % p.OW, oh = (i / p.OW) % p.OH, nc = i / (p.OW * p.OH);
  uint base = p.x_off + nc * p.H * p.W;
  float acc = MODE == 0u ? uintBitsToFloat(0xff800000u) : 0.0;
  uint inside = 0u, window = 0u;
  for (uint kh = 0u; kh < p.KH; kh++) {
    int ih = int(oh * p.sh + kh * p.dh) - int(p.ph);
    for (uint kw = 0u; kw < p.KW; kw++) {
      int iw = int(ow * p.sw + kw * p.dw) - int(p.pw);
      if (ih < int(p.H + p.eh) && iw < int(p.W + p.ew)) window++;
      if (ih < 0 || ih >= int(p.H) || iw < 0 || iw >= int(p.W)) continue;
      float v = x[base + uint(ih) * p.W + uint(iw)];
      acc = MODE == 0u ? max(acc, v) : acc + v;
      inside++;
    }
  }
  if (MODE == 1u) acc /= float(p.include_pad != 0u ? window : max(inside, 1u));
  y[p.y_off + i] = acc;
}
