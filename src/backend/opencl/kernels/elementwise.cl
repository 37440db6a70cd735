/* Elementwise kernels: unary ops, binary ops with broadcasting (per-input strides, 0 on broadcast dims),
 * and Cast between float32 and float16. float16 tensors are computed in float32 and rounded to nearest
 * even once per op: through half pointers with cl_khr_fp16, else through vload_half / vstore_half_rte
 * (core OpenCL C, so every device runs them). */

kernel void tb_unary_f32(global const float *x, int xo, global float *y, int yo, int n, int op, float a, float b) {
  int i = get_global_id(0);
  if (i < n) y[yo + i] = tb_unary(op, x[xo + i], a, b);
}

kernel void tb_binary_f32(global const float *x, int xo, global const float *z, int zo, global float *y, int yo, int n,
                          int nd, int8 shape, int8 sx, int8 sz, int op) {
  int i = get_global_id(0);
  if (i >= n) return;
  int s[8], tx[8], tz[8];
  vstore8(shape, 0, s);
  vstore8(sx, 0, tx);
  vstore8(sz, 0, tz);
  y[yo + i] = tb_binary(op, x[xo + tb_offset(i, nd, s, tx)], z[zo + tb_offset(i, nd, s, tz)]);
}

#ifdef TB_HAS_FP16
#define TB_LOAD_HALF(p, i) convert_float((p)[i])
#define TB_STORE_HALF(v, p, i) ((p)[i] = convert_half_rte(v))
#else
#define TB_LOAD_HALF(p, i) vload_half((i), (p))
#define TB_STORE_HALF(v, p, i) vstore_half_rte((v), (i), (p))
#endif

kernel void tb_unary_f16(global const half *x, int xo, global half *y, int yo, int n, int op, float a, float b) {
  int i = get_global_id(0);
  if (i < n) TB_STORE_HALF(tb_unary(op, TB_LOAD_HALF(x, xo + i), a, b), y, yo + i);
}

kernel void tb_binary_f16(global const half *x, int xo, global const half *z, int zo, global half *y, int yo, int n,
                          int nd, int8 shape, int8 sx, int8 sz, int op) {
  int i = get_global_id(0);
  if (i >= n) return;
  int s[8], tx[8], tz[8];
  vstore8(shape, 0, s);
  vstore8(sx, 0, tx);
  vstore8(sz, 0, tz);
  float v = tb_binary(op, TB_LOAD_HALF(x, xo + tb_offset(i, nd, s, tx)), TB_LOAD_HALF(z, zo + tb_offset(i, nd, s, tz)));
  TB_STORE_HALF(v, y, yo + i);
}

kernel void tb_cast_f32_f16(global const float *x, int xo, global half *y, int yo, int n) {
  int i = get_global_id(0);
  if (i < n) TB_STORE_HALF(x[xo + i], y, yo + i);
}

kernel void tb_cast_f16_f32(global const half *x, int xo, global float *y, int yo, int n) {
  int i = get_global_id(0);
  if (i < n) y[yo + i] = TB_LOAD_HALF(x, xo + i);
}
