/* Launches of the embedded CUDA kernels (cuda_launch.h): grid choice, argument packing, cuLaunchKernel on
 * the stream this thread has bound (the prepared model's, cuda_stream.c), the per-node function cache, and errors naming the kernel, the node and the
 * driver's code. */
#include "backend/cuda/kernels/cuda_launch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_module.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"

tb_cuda_dims tb_cuda_grid_elements(int64_t n, int sm_count) {
  int64_t blocks = (n + TB_CUDA_BLOCK_ELEMENTS - 1) / TB_CUDA_BLOCK_ELEMENTS;
  int64_t cap = (int64_t)(sm_count > 0 ? sm_count : 1) * TB_CUDA_BLOCKS_PER_SM;
  if (blocks > cap) blocks = cap;
  if (blocks < 1) blocks = 1;
  return (tb_cuda_dims){(unsigned)blocks, TB_CUDA_BLOCK_ELEMENTS};
}

tb_cuda_dims tb_cuda_grid_rows(int64_t rows, int64_t cols) {
  int64_t threads = (cols + TB_CUDA_WARP - 1) / TB_CUDA_WARP * TB_CUDA_WARP;
  if (threads < TB_CUDA_WARP) threads = TB_CUDA_WARP;
  if (threads > TB_CUDA_MAX_BLOCK) threads = TB_CUDA_MAX_BLOCK;
  int64_t blocks = rows < 1 ? 1 : rows > TB_CUDA_MAX_GRID_ROWS ? TB_CUDA_MAX_GRID_ROWS : rows;
  return (tb_cuda_dims){(unsigned)blocks, (unsigned)threads};
}

cuda_state *tb_cuda_state_of(const tb_kernel_ctx *ctx) {
  return ctx->backend && ctx->backend->ops == &tb_cuda_ops ? ctx->backend->state : NULL;
}

tb_cu_deviceptr tb_cuda_address_of(const tb_tensor *t) {
  if (!t || !t->storage || !t->storage->block) return 0;
  const tb_block *b = t->storage->block;
  return (tb_cu_deviceptr)((uintptr_t)b->mem.handle + b->offset + (size_t)t->offset * tb_dtype_size(t->dtype));
}

tb_status tb_cuda_prepare_sized(tb_kernel_ctx *ctx, size_t size, void **state) {
  *state = NULL;
  cuda_state *s = tb_cuda_state_of(ctx);
  if (!s) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "a CUDA kernel was prepared for a backend that is not an open CUDA device");
  tb_cu_module module = NULL;
  tb_status st = tb_cuda_module_get(s, &module);
  if (st != TB_OK) return st;
  tb_cuda_node *node = calloc(1, size > sizeof *node ? size : sizeof *node);
  if (!node) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the CUDA kernel's state");
  *state = node;
  return TB_OK;
}

tb_status tb_cuda_prepare(tb_kernel_ctx *ctx, void **state) { return tb_cuda_prepare_sized(ctx, sizeof(tb_cuda_node), state); }

void tb_cuda_release(void *state) { free(state); }

/* The node's function `kernel`: from its state when launched before, else from the module (and kept). */
static tb_status find_function(tb_kernel_ctx *ctx, cuda_state *s, const char *kernel, tb_cu_function *out) {
  tb_cuda_node *node = ctx->state;
  int free_slot = -1;
  for (int i = 0; node && i < TB_CUDA_NODE_FUNCTIONS; i++) {
    if (node->names[i] && strcmp(node->names[i], kernel) == 0) {
      *out = node->fns[i];
      return TB_OK;
    }
    if (!node->names[i] && free_slot < 0) free_slot = i;
  }
  tb_status st = tb_cuda_module_function(s, kernel, out);
  if (st != TB_OK) {
    char label[128], why[1024];
    snprintf(why, sizeof why, "%s", tb_last_error());
    return tb_error(st, "%s: %s", tb_kernel_label(ctx->name, ctx->op_type, label, sizeof label), why);
  }
  if (node && free_slot >= 0) {
    node->names[free_slot] = kernel;
    node->fns[free_slot] = *out;
  }
  return TB_OK;
}

tb_status tb_cuda_begin(tb_cuda_launch *l, tb_kernel_ctx *ctx, const char *kernel) {
  l->ctx = ctx;
  l->s = tb_cuda_state_of(ctx);
  l->kernel = kernel;
  l->fn = NULL;
  l->n_args = 0;
  l->used = 0;
  l->status = TB_OK;
  if (!l->s) return l->status = tb_kernel_error(ctx, TB_ERR_INTERNAL, "CUDA kernel %s run on a backend that is not an open CUDA device", kernel);
  return l->status = find_function(ctx, l->s, kernel, &l->fn);
}

void tb_cuda_arg_bytes(tb_cuda_launch *l, const void *p, size_t size, size_t align) {
  if (l->status != TB_OK) return;
  size_t at = (l->used + align - 1) / align * align;
  if (l->n_args >= TB_CUDA_MAX_ARGS || at + size > sizeof l->bytes) {
    l->status = tb_kernel_error(l->ctx, TB_ERR_INTERNAL, "CUDA kernel %s: more arguments than a launch holds (%u, %zu bytes)",
                                l->kernel, l->n_args + 1, at + size);
    return;
  }
  memcpy(l->bytes + at, p, size);
  l->args[l->n_args++] = l->bytes + at;
  l->used = at + size;
}

void tb_cuda_arg_i64(tb_cuda_launch *l, int64_t v) {
  long long k = v;
  tb_cuda_arg_bytes(l, &k, sizeof k, sizeof k);
}

void tb_cuda_arg_f32(tb_cuda_launch *l, float v) { tb_cuda_arg_bytes(l, &v, sizeof v, sizeof v); }

void tb_cuda_arg_tensor(tb_cuda_launch *l, const tb_tensor *t) {
  if (l->status != TB_OK) return;
  if (!t || !t->storage || tb_tensor_backend(t) != l->ctx->backend) {
    l->status = tb_kernel_error(l->ctx, TB_ERR_INTERNAL, "a tensor given to CUDA kernel %s is not on %s", l->kernel, l->s->base.label);
    return;
  }
  if (!tb_tensor_is_contiguous(t)) {
    l->status = tb_kernel_error(l->ctx, TB_ERR_UNSUPPORTED, "CUDA kernel %s takes contiguous tensors; this one is a strided view",
                                l->kernel);
    return;
  }
  const tb_block *b = t->storage->block;
  if (!b || (!b->mem.handle && tb_tensor_nbytes(t) > 0)) {
    l->status = tb_kernel_error(l->ctx, TB_ERR_INTERNAL, "a tensor without device memory reached CUDA kernel %s", l->kernel);
    return;
  }
  unsigned long long address = (unsigned long long)tb_cuda_address_of(t);
  tb_cuda_arg_bytes(l, &address, sizeof address, sizeof address);
}

void tb_cuda_arg_optional(tb_cuda_launch *l, const tb_tensor *t) {
  if (t && tb_tensor_numel(t) > 0) {
    tb_cuda_arg_tensor(l, t);
    return;
  }
  unsigned long long none = 0;
  tb_cuda_arg_bytes(l, &none, sizeof none, sizeof none);
}

bool tb_cuda_tensors_plain(const tb_kernel_ctx *ctx, const tb_tensor *const *ts, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const tb_tensor *t = ts[i];
    if (!t) continue;
    if (!t->storage || tb_tensor_backend(t) != ctx->backend || !tb_tensor_is_contiguous(t)) return false;
    const tb_block *b = t->storage->block;
    if (!b || (!b->mem.handle && tb_tensor_nbytes(t) > 0)) return false;
  }
  return true;
}

/* What a person can do after cuLaunchKernel returned `code`. */
static const char *launch_fix(tb_cu_result code) {
  switch (code) {
    case 2: return "free device memory (other processes, a smaller batch) and run again";
    case 1: case 9: return "the launch's arguments or shape are invalid for this kernel; report it with the model";
    case 400: case 500: case 201: return "the kernels' module or context is gone; open the device again";
    case 700: case 701: case 702: case 714: case 715: case 716: case 719:
      return "a kernel faulted, which leaves the CUDA context unusable: restart the process, run the model on the CPU "
             "(TB_BACKEND=cpu) and report it";
    default: return "update the NVIDIA driver, or run the model on the CPU (TB_BACKEND=cpu)";
  }
}

static tb_status enqueue(tb_cuda_launch *l, tb_cuda_dims d) {
  if (l->status != TB_OK) return l->status;
  cuda_state *s = l->s;
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r == TB_CUDA_SUCCESS) {
    r = s->api.cuLaunchKernel(l->fn, d.grid, 1, 1, d.block, 1, 1, 0, tb_cuda_stream_of(s), l->args, NULL);
    tb_cu_context popped = NULL;
    s->api.cuCtxPopCurrent_v2(&popped);
  }
  if (r == TB_CUDA_SUCCESS) return TB_OK;
  char label[128], what[384], then[320];
  snprintf(what, sizeof what, "of %s for %s (grid %u x 1 x 1 of %u threads)", l->kernel,
           tb_kernel_label(l->ctx->name, l->ctx->op_type, label, sizeof label), d.grid, d.block);
  snprintf(then, sizeof then, "; %s", launch_fix(r));
  return l->status = tb_devmem_call_failed(&s->base, "cuLaunchKernel", what, r, then);
}

tb_status tb_cuda_go_elements(tb_cuda_launch *l, int64_t n) {
  if (l->status != TB_OK || n <= 0) return l->status;
  return enqueue(l, tb_cuda_grid_elements(n, l->s->sm_count));
}

tb_status tb_cuda_go_rows(tb_cuda_launch *l, int64_t rows, int64_t cols) {
  if (l->status != TB_OK || rows <= 0) return l->status;
  return enqueue(l, tb_cuda_grid_rows(rows, cols));
}

tb_status tb_cuda_go(tb_cuda_launch *l, tb_cuda_dims dims) { return enqueue(l, dims); }

bool tb_cuda_all_f32(const tb_kernel_query *q) {
  bool any = false;
  for (size_t i = 0; i < q->n_inputs; i++) {
    if (!q->in[i]) continue;
    if (!q->in[i]->has_dtype || q->in[i]->dtype != TB_DTYPE_F32) return false;
    any = true;
  }
  return any && q->n_outputs == 1;
}
