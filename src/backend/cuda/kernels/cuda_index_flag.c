/* Gather's indices checked by the device, not read back in the middle of the run (docs/cuda.md "No host
 * round-trips"): a zeroed int32 flag on the device, which tb_cu_dm_gather_* sets when an index is outside
 * [-dim, dim) (that element is written 0), and a check at the end of the run (backend/run_checks.h) that reads the
 * flag and, when it is set, the indices, to name the first bad one in the sentence the host check gives
 * (tb_cuda_check_indices). A captured graph holds the flag's reset and the kernel, and runs the check after each
 * replay. */
#include <stdlib.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/run_checks.h"
#include "core/error.h"

typedef struct index_check {
  tb_kernel_ctx label; /* a copy of the node's context: only what tb_kernel_error reads is used */
  tb_tensor *flag;     /* int32 on the device */
  tb_tensor *idx;      /* a view of the indices the kernel read (holds their memory) */
  int64_t dim;
  size_t axis;
} index_check;

static void free_check(void *p) {
  index_check *c = p;
  tb_tensor_destroy(c->flag);
  tb_tensor_destroy(c->idx);
  free(c);
}

static tb_status run_check(void *p) {
  index_check *c = p;
  int32_t set = 0;
  tb_status st = tb_tensor_copy_to_host(c->flag, &set, sizeof set);
  if (st != TB_OK || !set) return st;
  const int32_t zero = 0;
  st = tb_tensor_copy_from_host(c->flag, &zero, sizeof zero); /* a replay's check starts from 0 again */
  if (st != TB_OK) return st;
  st = tb_cuda_check_indices(&c->label, c->idx, c->dim, c->axis);
  if (st != TB_OK) return st;
  /* the node ran more than once in the run (a loop's body) and the bad indices were an earlier run's */
  return tb_kernel_error(&c->label, TB_ERR_INVALID_ARGUMENT,
                         "an index of the indices was outside [-%lld, %lld) for axis %zu of size %lld in one of the node's "
                         "runs; fix the indices",
                         (long long)c->dim, (long long)c->dim, c->axis, (long long)c->dim);
}

tb_status tb_cuda_index_flag(tb_kernel_ctx *ctx, tb_tensor *idx, int64_t dim, size_t axis, tb_tensor **flag) {
  *flag = NULL;
  index_check *c = calloc(1, sizeof *c);
  if (!c) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the check of the indices");
  c->label = *ctx;
  c->dim = dim;
  c->axis = axis;
  const int32_t zero = 0;
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_I32, 0, NULL, &c->flag);
  if (st == TB_OK) st = tb_tensor_fill(c->flag, &zero); /* a device fill: a captured graph holds it */
  if (st == TB_OK)
    st = tb_tensor_view(idx, tb_tensor_ndim(idx), tb_tensor_shape(idx), tb_tensor_strides(idx), tb_tensor_offset(idx), &c->idx);
  if (st != TB_OK) {
    free_check(c);
    return st;
  }
  *flag = c->flag;
  return tb_run_checks_add(run_check, c, free_check);
}
