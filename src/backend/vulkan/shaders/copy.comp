// Strided copy of 32-bit elements (rank <= 6): dst[dst_off + sum(i_d * ds_d)] = src[src_off + sum(i_d * ss_d)].
// Transpose, Slice, Concat, Split, Expand and the reshaping ops are all this copy (mode 0).
// Pad (modes 1..4) walks the contiguous output (shape) and maps each coordinate k to the input's
// c = k - begin, the input's sizes in ds: outside [0, size) mode 1 writes `fill`, 2 clamps (edge),
// 3 mirrors without repeating the border (reflect), 4 writes nothing (the constant came first).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer S { uint src[]; };
layout(std430, binding = 1) buffer D { uint dst[]; };
layout(push_constant) uniform P {
  uint n, rank, src_off, dst_off;
  uint shape[6]; uint ss[6]; uint ds[6];
  uint mode, fill;
  int begin[6];
} p;

void main() {
  uint i = tb_global_index();
  if (i >= p.n) return;
  uint is_ = p.src_off, id = p.dst_off, rest = i;
  if (p.mode == 0u) {
    for (int d = int(p.rank) - 1; d >= 0; d--) {
      uint k = rest % p.shape[d];
      rest /= p.shape[d];
      is_ += k * p.ss[d];
      id += k * p.ds[d];
    }
    dst[id] = src[is_];
    return;
  }
  bool inside = true;
  for (int d = int(p.rank) - 1; d >= 0; d--) {
    uint k = rest % p.shape[d];
    rest /= p.shape[d];
    int size = int(p.ds[d]);
    int c = int(k) - p.begin[d];
    if (c < 0 || c >= size) {
      if (p.mode == 2u) {
        c = clamp(c, 0, size - 1);
      } else if (p.mode == 3u) {
        int period = 2 * (size - 1);
        c = period == 0 ? 0 : c % period;
        if (c < 0) c += period;
        if (c >= size) c = period - c;
      } else {
        inside = false;
        c = 0;
      }
    }
    is_ += uint(c) * p.ss[d];
  }
  if (inside) dst[id + i] = src[is_];
  else if (p.mode == 1u) dst[id + i] = p.fill;
}
