/* What the fake cuDNN (fake_cudnn.c) saw, for tests, through fake_cudnn_state_get() found with dlsym. */
#ifndef TB_FAKE_CUDNN_H
#define TB_FAKE_CUDNN_H
#include <stdint.h>

typedef struct fake_cudnn_state {
  int live_handles, live_descs;
  int graphs;          /* operation graphs finalized */
  int plans_tried;     /* execution plans finalize was called on */
  int executes;        /* successful cudnnBackendExecute */
  /* the last finalized convolution */
  int64_t pre[2], post[2], strides[2], dilations[2], spatial_dims;
  int32_t comp_type, conv_mode;
  int64_t x_dims[4], w_dims[4], y_dims[4], x_strides[4];
  int64_t x_align, w_align, y_align;
  float alpha, beta;
  /* the last finalized graph: its ops' types in order (10 convolution, 13 pointwise) and pointwise modes (-1: the
   * convolution; 0 add, 1 multiply, 100 ReLU) */
  int ops, pointwise_modes[5];
  /* the last finalized fp8 graph's scalings: the ids of the X and W scale tensors (float [1, 1, 1, 1], not virtual)
   * the two multiplications after the convolution take; and the last execute's values behind them */
  int64_t x_scale_uid, w_scale_uid;
  float x_scale, w_scale;
  /* the last heuristics and plan */
  int32_t heur_mode;
  int engine_index;
  /* the last execute */
  void *stream, *workspace;
  int64_t uids[8], pack_count;
  /* the last finalized convolution's data types (cudnnDataType_t: 0 float, 2 half, 9 bfloat16, 12 fp8 e4m3) */
  int32_t x_type, w_type, y_type;
  int notes_read; /* engines whose numerical notes were asked for */
} fake_cudnn_state;

#endif
