/* The CNN kernels' descriptor and launch (cuda_cnn.h). */
#include "backend/cuda/kernels/cuda_cnn.h"
#include <string.h>
#include "backend/tensor/tensor_impl.h"

void tb_cuda_cnn_desc_init(tb_cuda_cnn_desc *d) {
  memset(d, 0, sizeof *d);
  d->groups = 1;
  for (int a = 0; a < TB_CUDA_CNN_AXES; a++) d->in[a] = d->out[a] = d->kernel[a] = d->stride[a] = d->dilation[a] = 1;
}

void tb_cuda_cnn_desc_act(tb_cuda_cnn_desc *d, const tb_activation_params *act) {
  d->act = act ? (int32_t)act->kind : 0;
  if (!act) return;
  d->alpha = act->alpha;
  d->beta = act->beta;
  d->lo = act->min;
  d->hi = act->max;
}

tb_status tb_cuda_cnn_launch(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *const *tensors, tb_cuda_cnn_desc *d,
                             int64_t elements, int64_t rows, int64_t cols) {
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, kernel);
  for (int i = 0; i < TB_CUDA_CNN_POINTERS; i++) {
    const tb_tensor *t = tensors[i];
    d->counts[i] = t ? (int64_t)(tb_tensor_nbytes(t) / 4) : 0;
    if (t) tb_cuda_arg_tensor(&l, t);
    else tb_cuda_arg_i64(&l, 0); /* a null pointer: the kernel skips what it would read there */
  }
  tb_cuda_arg_bytes(&l, d, sizeof *d, 8);
  return rows > 0 ? tb_cuda_go_rows(&l, rows, cols) : tb_cuda_go_elements(&l, elements);
}
