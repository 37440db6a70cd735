// Resize's per-axis tap tables computed on the device (tb_cu_resize_taps), for the runs whose output size or
// scales were not known at prepare (a symbolic input dim, say): the host then launches this with the geometry
// as kernel parameters instead of uploading tables it built, so the run copies nothing from the host and can
// be captured as a graph. The tables are what tb_cu_cnn_resize_f32 (61_pool_norm.cu) reads.
//
// The rule is the CPU's (src/ops/tensor/resize_taps.c, tb_resize_taps_of) line for line, in double as it computes,
// bit for bit: every product and sum is an explicitly rounded one (__dmul_rn, __dadd_rn, __dsub_rn), so NVRTC
// cannot contract a multiply-add into a fused one the C compiler (ISO C11: contraction off) does not make; double
// division and floor / ceil / llround are exact or correctly rounded on both.
//
// Entry e of axis a (e = base[a] + output coordinate k) gets input indices taps[4e..4e+3] and weights
// weights[4e..4e+3] (unused ones 0); an axis a < pad is a size-1 one the host put in front: index 0, weight 1.
// taps[4e] = -1 marks a coordinate outside the input under tf_crop_and_resize (the extrapolation value).

// The geometry, by value: mode 1 nearest / 2 linear / 4 cubic; coord and nearest are tb_resize_coord and
// tb_resize_nearest (ops/tensor/resize.h) numbered as there. Mirrored by cuda_ops_resize.c's tb_cuda_resize_axes.
struct tb_resize_axes {
  tb_index in[4], out[4], base[4];
  double scale[4], r0[4], r1[4];
  double cubic_a;
  int mode, coord, nearest, exclude_outside;
  int pad, unused[3];
};

__device__ double tb_resize_coord_of(const tb_resize_axes &g, int a, tb_index x) {
  double xr = (double)x, in = (double)g.in[a], in1 = (double)(g.in[a] - 1), scale = g.scale[a];
  switch (g.coord) {
    case 0: return __dsub_rn(__dadd_rn(xr, 0.5) / scale, 0.5);
    case 1: return g.out[a] > 1 ? __dsub_rn(__dadd_rn(xr, 0.5) / scale, 0.5) : 0.0;
    case 2: {
      double length = __dmul_rn(in, scale);
      return length == 1 ? 0.0 : __dmul_rn(xr, in1) / __dsub_rn(length, 1.0);
    }
    case 4: return __dadd_rn(xr, 0.5) / scale;
    case 5: {
      double r0 = g.r0[a], r1 = g.r1[a];
      return g.out[a] > 1 ? __dadd_rn(__dmul_rn(r0, in1), __dmul_rn(__dmul_rn(xr, __dsub_rn(r1, r0)), in1) / (double)(g.out[a] - 1))
                          : __dmul_rn(__dmul_rn(0.5, __dadd_rn(r0, r1)), in1);
    }
    default: return xr / scale;
  }
}

__device__ tb_index tb_resize_nearest_of(const tb_resize_axes &g, double x, double scale) {
  switch (g.nearest) {
    case 0: return x == __dadd_rn(floor(x), 0.5) ? (tb_index)floor(x) : (tb_index)llround(x);
    case 1: return x == __dadd_rn(floor(x), 0.5) ? (tb_index)ceil(x) : (tb_index)llround(x);
    case 2: return (tb_index)floor(x);
    case 3: return (tb_index)ceil(x);
    default: return scale < 1 ? (tb_index)ceil(x) : (tb_index)x;
  }
}

__device__ double tb_resize_cubic_weight(double s, double A) {
  s = fabs(s);
  if (s <= 1) return __dadd_rn(__dmul_rn(__dmul_rn(__dsub_rn(__dmul_rn(__dadd_rn(A, 2.0), s), __dadd_rn(A, 3.0)), s), s), 1.0);
  if (s < 2)
    return __dsub_rn(__dmul_rn(__dadd_rn(__dmul_rn(__dsub_rn(__dmul_rn(A, s), __dmul_rn(5.0, A)), s), __dmul_rn(8.0, A)), s),
                     __dmul_rn(4.0, A));
  return 0;
}

extern "C" __global__ void tb_cu_resize_taps(long long *__restrict__ taps, float *__restrict__ weights, tb_index entries,
                                             tb_resize_axes g) {
  TB_GRID_LOOP(e, entries) {
    int a = 3;
    while (a > 0 && e < g.base[a]) a--;
    tb_index k = e - g.base[a], in = g.in[a];
    tb_index idx[4] = {0, 0, 0, 0};
    double w[4] = {0, 0, 0, 0};
    if (a < g.pad) {
      w[0] = 1;
    } else {
      double xo = tb_resize_coord_of(g, a, k);
      if (g.coord == 5 && (xo < 0 || xo > (double)(in - 1))) {
        idx[0] = -1;
        w[0] = 1;
      } else if (g.mode == 1) {
        tb_index i = tb_resize_nearest_of(g, xo, g.scale[a]);
        idx[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
        w[0] = 1;
      } else if (g.mode == 2) {
        if (xo < 0) xo = 0;
        if (xo > (double)(in - 1)) xo = (double)(in - 1);
        tb_index i0 = (tb_index)floor(xo);
        double f = __dsub_rn(xo, (double)i0);
        idx[0] = i0;
        idx[1] = i0 + 1 < in ? i0 + 1 : in - 1;
        w[0] = __dsub_rn(1.0, f);
        w[1] = f;
      } else {
        tb_index i0 = (tb_index)floor(xo);
        double f = __dsub_rn(xo, (double)i0), sum = 0;
        for (int j = 0; j < 4; j++) {
          tb_index i = i0 - 1 + j;
          double wj = tb_resize_cubic_weight(__dsub_rn(f, (double)(j - 1)), g.cubic_a);
          if (i < 0 || i >= in) {
            if (g.exclude_outside) wj = 0;
            i = i < 0 ? 0 : in - 1;
          }
          idx[j] = i;
          w[j] = wj;
          sum = __dadd_rn(sum, wj);
        }
        if (g.exclude_outside && sum != 0)
          for (int j = 0; j < 4; j++) w[j] = w[j] / sum;
      }
    }
    for (int j = 0; j < 4; j++) {
      taps[4 * e + j] = idx[j];
      weights[4 * e + j] = (float)w[j];
    }
  }
}
