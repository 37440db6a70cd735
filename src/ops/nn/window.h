/* Internal: the sliding-window geometry shared by Conv, ConvTranspose and the pools, resolved for the
 * input's shape from the parsed window (tb_window_params, nn_params.h): the list lengths checked against
 * the spatial rank, defaults filled in, and the output size of each spatial axis with the pads auto_pad
 * resolves to. Infer and every backend's kernels use it, so they agree. Errors here do not name the node
 * (these helpers see only parameters and shapes): infer names it with tb_node_name_error, and a kernel's
 * failure is named by the executor. */
#ifndef TB_OPS_NN_WINDOW_H
#define TB_OPS_NN_WINDOW_H
#include "ops/nn/nn_params.h"

typedef struct nn_window {
  size_t n;                          /* spatial axes */
  int64_t kernel[TB_MAX_DIMS];       /* -1 when unknown (Conv before W's shape is known) */
  int64_t stride[TB_MAX_DIMS];
  int64_t dilation[TB_MAX_DIMS];
  int64_t pad_begin[TB_MAX_DIMS];    /* from pads, or resolved by tb_nn_window_out for SAME_* */
  int64_t pad_end[TB_MAX_DIMS];      /* negative for a ConvTranspose output_shape beyond the full output */
  int64_t output_padding[TB_MAX_DIMS]; /* ConvTranspose only */
  tb_auto_pad auto_pad;
  bool ceil_mode;
} nn_window;

/* The window of p for n spatial axes. kernel: the weight's spatial dims (-1 unknown), checked against
 * kernel_shape where both are known and used where kernel_shape is absent; NULL for the pools (then
 * kernel_shape is required). A list of the wrong length is TB_ERR_MODEL naming the attribute. */
tb_status tb_nn_window_init(const tb_window_params *p, size_t n, const int64_t *kernel, nn_window *w);
/* The output size of spatial axis i for an input of size `in` (-1: unknown, giving -1), resolving the
 * SAME_* pads of the axis. A kernel larger than the padded input, or sizes that overflow, are TB_ERR_MODEL. */
tb_status tb_nn_window_out(nn_window *w, size_t i, int64_t in, int64_t *out);
/* ConvTranspose, after tb_nn_window_init: output_padding of p (checked against the rank, the strides and
 * the dilations) into w. */
tb_status tb_nn_window_init_transpose(const tb_conv_params *p, nn_window *w);
/* ConvTranspose: the output size of axis i for input `in` — from the pads, or (with `want` >= 0 from
 * output_shape, or SAME_* auto_pad) the requested size with the pads that give it. */
tb_status tb_nn_window_out_transpose(nn_window *w, size_t i, int64_t in, int64_t want, int64_t *out);
/* ConvTranspose: the spatial output_shape entries of p for an input of this rank (*count 0 when absent); a
 * list that has neither rank - 2 nor rank values is TB_ERR_MODEL. */
tb_status tb_nn_conv_output_shape(const tb_conv_params *p, size_t rank, const int64_t **spatial, size_t *count);

#endif
