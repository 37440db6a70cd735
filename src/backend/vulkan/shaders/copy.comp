// Strided copy of 32-bit elements (rank <= 6): dst[dst_off + sum(i_d * ds_d)] = src[src_off + sum(i_d * ss_d)].
// Transpose, Slice, Concat, Split, Expand and the reshaping ops are all this copy.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer S { uint src[]; };
layout(std430, binding = 1) buffer D { uint dst[]; };
layout(push_constant) uniform P { uint n, rank, src_off, dst_off; uint shape[6]; uint ss[6]; uint ds[6]; } p;

void main() {
  uint i = tb_global_index();
  if (i >= p.n) return;
  uint is_ = p.src_off, id = p.dst_off, rest = i;
  for (int d = int(p.rank) - 1; d >= 0; d--) {
    uint k = rest % p.shape[d];
    rest /= p.shape[d];
    is_ += k * p.ss[d];
    id += k * p.ds[d];
  }
  dst[id] = src[is_];
}
