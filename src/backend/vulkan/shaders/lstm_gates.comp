// One LSTM time step's gates for one direction, after the recurrent product G = h_prev @ R^T: per (batch
// row b, hidden unit j) the pre-activations of gates i, o, f, c (ONNX order) are XW[t] + G (when there is
// an h_prev) + Wb + Rb (when B is given); then C = f * c_prev + i * c~, H = o * tanh(C). c_prev is zero,
// the initial state C0, or the running state CS; C goes to CS, H to Y[t] (the next step's h_prev) and, at
// the direction's last step, to YH.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer XW { float xw[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) readonly buffer B { float bias[]; };
layout(std430, binding = 3) readonly buffer C0 { float c0[]; };
layout(std430, binding = 4) buffer CS { float cs[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };
layout(std430, binding = 6) writeonly buffer YH { float yh[]; };
layout(push_constant) uniform P {
  uint H, total, xw_off, g_off, b_off, c0_off, cs_off, y_off, yh_off, flags;
} p;

const uint HAS_H = 1u, HAS_B = 2u, FROM_C0 = 4u, C_ZERO = 8u, WRITE_YH = 16u;

float pre(uint row, uint gate, uint j) {
  uint k = row + gate * p.H + j;
  float v = xw[p.xw_off + k];
  if ((p.flags & HAS_H) != 0u) v += g[p.g_off + k];
  if ((p.flags & HAS_B) != 0u) v += bias[p.b_off + gate * p.H + j] + bias[p.b_off + 4u * p.H + gate * p.H + j];
  return v;
}

void main() {
  uint idx = tb_global_index();
  if (idx >= p.total) return;
  uint b = idx / p.H, j = idx % p.H, row = b * 4u * p.H;
  float i = tb_sigmoid(pre(row, 0u, j));
  float o = tb_sigmoid(pre(row, 1u, j));
  float f = tb_sigmoid(pre(row, 2u, j));
  float cand = tb_tanh(pre(row, 3u, j));
  float c_prev = 0.0;
  if ((p.flags & C_ZERO) == 0u) c_prev = (p.flags & FROM_C0) != 0u ? c0[p.c0_off + idx] : cs[p.cs_off + idx];
  float c = f * c_prev + i * cand;
  float h = o * tb_tanh(c);
  cs[p.cs_off + idx] = c;
  y[p.y_off + idx] = h;
  if ((p.flags & WRITE_YH) != 0u) yh[p.yh_off + idx] = h;
}
