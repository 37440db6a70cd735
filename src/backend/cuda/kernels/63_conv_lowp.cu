// Reduced-precision convolutions, the backend's own (cuDNN runs them on the tensor cores where it is installed;
// these run where it is absent or has no engine for the shape), so O3 and --precision bf16 / fp16 keep their
// numbers without cuDNN: X and W stored as bf16 or fp16 (W converted once at prepare, X per run by tb_cu_dm_cast),
// each element widened exactly to fp32 as it is read (41_gemm_lowp.cu's loads), the products accumulated in fp32,
// the epilogue (bias, residual, activation) in fp32 and Y fp32, so the node's neighbours stay fp32. The same
// bodies as 60_conv.cu's fp32 kernels (tb_cnn_conv_direct, tb_cnn_conv_igemm), the same descriptor, arguments and
// grids: the direct kernel for few output channels per group or a shallow reduction, the implicit GEMM
// (256-thread blocks) for the rest. No tensor-core instructions (outside the hipRTC subset).

extern "C" __global__ void tb_cu_cnn_conv_bf16(const unsigned short *__restrict__ x, const unsigned short *__restrict__ w,
                                               const float *__restrict__ bias, const float *__restrict__ residual,
                                               float *__restrict__ y, unsigned short *__restrict__ y16, tb_cnn_desc d) {
  tb_cnn_conv_direct<unsigned short, tb_gemm_load_bf16>(x, w, bias, residual, y, y16, d);
}

extern "C" __global__ void tb_cu_cnn_conv_f16(const unsigned short *__restrict__ x, const unsigned short *__restrict__ w,
                                              const float *__restrict__ bias, const float *__restrict__ residual,
                                              float *__restrict__ y, unsigned short *__restrict__ y16, tb_cnn_desc d) {
  tb_cnn_conv_direct<unsigned short, tb_gemm_load_f16>(x, w, bias, residual, y, y16, d);
}

extern "C" __global__ void tb_cu_cnn_conv_igemm_bf16(const unsigned short *__restrict__ x,
                                                     const unsigned short *__restrict__ w, const float *__restrict__ bias,
                                                     const float *__restrict__ residual, float *__restrict__ y,
                                                     unsigned short *__restrict__ y16, tb_cnn_desc d) {
  tb_cnn_conv_igemm<unsigned short, tb_gemm_load_bf16>(x, w, bias, residual, y, y16, d);
}

extern "C" __global__ void tb_cu_cnn_conv_igemm_f16(const unsigned short *__restrict__ x,
                                                    const unsigned short *__restrict__ w, const float *__restrict__ bias,
                                                    const float *__restrict__ residual, float *__restrict__ y,
                                                    unsigned short *__restrict__ y16, tb_cnn_desc d) {
  tb_cnn_conv_igemm<unsigned short, tb_gemm_load_f16>(x, w, bias, residual, y, y16, d);
}
