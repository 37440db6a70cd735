/* What fake_cuda.c records of each cuLaunchKernel, for tests to read through fake_cuda_launch_at: the
 * function's name, the grid and block, and the arguments' bytes, laid out as the embedded kernels take
 * them (the fake knows their parameter lists by the kernels' naming scheme, docs/cuda.md). */
#ifndef TB_FAKE_CUDA_LAUNCH_H
#define TB_FAKE_CUDA_LAUNCH_H

enum { FAKE_LAUNCH_MAX_ARGS = 16, FAKE_LAUNCH_ARG_BYTES = 512 }; /* the driver has no such limit; 13 is the most a kernel takes */

typedef struct fake_launch {
  char name[128];
  unsigned grid[3], block[3], shared;
  int n_args;                                 /* -1: a kernel whose parameters the fake does not know */
  unsigned arg_offset[FAKE_LAUNCH_MAX_ARGS];  /* where each argument starts in args */
  unsigned arg_size[FAKE_LAUNCH_MAX_ARGS];
  unsigned char args[FAKE_LAUNCH_ARG_BYTES];
} fake_launch;

#endif
