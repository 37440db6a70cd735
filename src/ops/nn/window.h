/* Internal: the sliding-window geometry shared by Conv, ConvTranspose and the pools — kernel, strides,
 * dilations, pads, auto_pad and ceil_mode read and checked once, and the output size of each spatial axis
 * with the pads auto_pad resolves to. Infer and the kernels both use it, so they agree. */
#ifndef TB_OPS_NN_WINDOW_H
#define TB_OPS_NN_WINDOW_H
#include "ir/ir.h"

typedef enum nn_auto_pad { NN_PAD_NOTSET, NN_PAD_VALID, NN_PAD_SAME_UPPER, NN_PAD_SAME_LOWER } nn_auto_pad;

typedef struct nn_window {
  size_t n;                          /* spatial axes */
  int64_t kernel[TB_MAX_DIMS];       /* -1 when unknown (Conv before W's shape is known) */
  int64_t stride[TB_MAX_DIMS];
  int64_t dilation[TB_MAX_DIMS];
  int64_t pad_begin[TB_MAX_DIMS];    /* from pads, or resolved by tb_nn_window_out for SAME_* */
  int64_t pad_end[TB_MAX_DIMS];      /* negative for a ConvTranspose output_shape beyond the full output */
  int64_t output_padding[TB_MAX_DIMS]; /* ConvTranspose only */
  nn_auto_pad auto_pad;
  bool ceil_mode;
} nn_window;

/* Read the window attributes of a node with n spatial axes. kernel: the kernel_shape attribute when
 * present (checked against `kernel` where both are known), else `kernel` (may be NULL: then
 * kernel_shape is required). Pools pass with_ceil to read ceil_mode. Bad values (a stride, dilation or
 * kernel < 1, a negative pad, a list of the wrong length, an unknown auto_pad) are TB_ERR_MODEL naming
 * the node, the attribute and the value. */
tb_status tb_nn_window_read(const tb_graph *g, const tb_node *node, size_t n, const int64_t *kernel, bool with_ceil,
                         nn_window *w);
/* The output size of spatial axis i for an input of size `in` (-1: unknown, giving -1), resolving the
 * SAME_* pads of the axis. A kernel larger than the padded input, or sizes that overflow, are TB_ERR_MODEL. */
tb_status tb_nn_window_out(const tb_graph *g, const tb_node *node, nn_window *w, size_t i, int64_t in, int64_t *out);
/* ConvTranspose, after tb_nn_window_read: read and check output_padding; then the output size of axis i
 * for input `in` — from the pads, or (with `want` >= 0 from output_shape, or SAME_* auto_pad) the
 * requested size with the pads that give it. */
tb_status tb_nn_window_read_transpose(const tb_graph *g, const tb_node *node, nn_window *w);
tb_status tb_nn_window_out_transpose(const tb_graph *g, const tb_node *node, nn_window *w, size_t i, int64_t in,
                                  int64_t want, int64_t *out);
/* ConvTranspose's output_shape attribute for a node of `rank` dims: its n = rank - 2 spatial sizes (*vals,
 * *count 0 when absent; the N and C entries skipped when it lists all rank dims), for `want` of
 * tb_nn_window_out_transpose (the kernels take a negative size as 0; inference rejects it). Another length is
 * TB_ERR_MODEL naming the node, the count and the counts it may have. */
tb_status tb_nn_window_output_shape(const tb_graph *g, const tb_node *node, size_t rank, const int64_t **vals,
                                    size_t *count);

#endif
