// Einsum on float32 or float64 (tb_cu_dm_einsum_f32, _f64), one or two inputs, on 70_data.cu's calling convention (a, b, c, y, n, tb_dm): one thread
// per output element sums, over the summed labels (at most 4) in row-major order, the product of one element
// of each input, in double, in the order of the CPU reference's loop (the output labels, then the summed ones
// by label), so the values are the CPU's. Each input steps st[0] / st[1] (a / b) per unit of each output label
// (dims, rank of them) and st[2] / st[3] per unit of each summed label (sizes p[0..3]): a repeated label adds
// its axes' strides (a diagonal), an axis of size 1 steps 0 (the ellipsis' broadcast). mode: the summed labels
// | the inputs << 8. The products the backend's GEMMs could run are not routed there (docs/cuda.md).
template <typename T>
__device__ inline void tb_dm_einsum(const void *a, const void *b, void *y, tb_index n, const tb_dm &d) {
  const T *x = (const T *)a, *z = (const T *)b;
  T *o = (T *)y;
  int n_sum = d.mode & 0xff, two = (d.mode >> 8) == 2;
  tb_index space = 1;
  for (int k = 0; k < n_sum; k++) space *= d.p[k];
  TB_GRID_LOOP(i, n) {
    tb_index off[2];
    tb_dm_offsets(d, i, 2, off);
    double acc = 0.0;
    for (tb_index s = 0; s < space; s++) {
      tb_index rem = s, oa = off[0], ob = off[1];
      for (int k = n_sum - 1; k >= 0; k--) {
        tb_index at = rem % d.p[k];
        rem /= d.p[k];
        oa += at * d.st[2][k];
        ob += at * d.st[3][k];
      }
      double prod = 1.0 * (double)x[oa];
      if (two) prod *= (double)z[ob];
      acc += prod;
    }
    o[i] = (T)acc;
  }
}

extern "C" __global__ void tb_cu_dm_einsum_f32(TB_DM_PARAMS) TB_DM_BODY(tb_dm_einsum<float>(a, b, y, n, d))
extern "C" __global__ void tb_cu_dm_einsum_f64(TB_DM_PARAMS) TB_DM_BODY(tb_dm_einsum<double>(a, b, y, n, d))
