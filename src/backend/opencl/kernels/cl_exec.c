/* The OpenCL kernels' shared machinery: node state, kernel objects, arguments, launches, device buffers
 * of tensors and run-time output allocation. */
#include "backend/opencl/kernels/cl_exec.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/opencl/cl_clblast.h"
#include "backend/opencl/cl_program.h"
#include "core/error.h"
#include "ops/op.h"
#include "ops/op_params.h"
#include "backend/tensor/tensor_impl.h"

tb_cl_device *tb_cl_dev(const tb_kernel_ctx *ctx) { return ctx->backend->state; }

static void node_who(const tb_kernel_ctx *ctx, char *buf, size_t cap) {
  char label[128];
  snprintf(buf, cap, "%s (%s)", tb_kernel_label(ctx->name, ctx->op_type, label, sizeof label), ctx->op_type);
}

tb_status tb_cl_prepare(tb_kernel_ctx *ctx, void **state) {
  *state = NULL;
  if (!ctx->backend || ctx->backend->ops != &tb_opencl_ops || !ctx->backend->state)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "an OpenCL kernel was prepared for a backend that is not an open OpenCL device");
  char who[192];
  node_who(ctx, who, sizeof who);
  tb_cl_program prog = NULL;
  tb_status s = tb_cl_program_get(tb_cl_dev(ctx), who, &prog);
  if (s != TB_OK) return s;
  cl_node *node = calloc(1, sizeof *node);
  if (!node) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the OpenCL kernel state");
  char why[256];
  node->clblast = tb_clblast_available(why, sizeof why);
  node->release = tb_cl_dev(ctx)->rt.cl.clReleaseKernel;
  *state = node;
  return TB_OK;
}

void tb_cl_release(void *state) {
  cl_node *node = state;
  if (!node) return;
  for (int i = 0; i < CL_NODE_KERNELS; i++)
    if (node->kernels[i] && node->release) node->release(node->kernels[i]);
  free(node);
}

tb_status tb_cl_kernel_get(tb_kernel_ctx *ctx, int slot, const char *name, tb_cl_kernel *out) {
  cl_node *node = ctx->state;
  if (!node || slot < 0 || slot >= CL_NODE_KERNELS)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "OpenCL kernel %s run without its prepared state (slot %d)", name, slot);
  if (node->kernels[slot] && node->names[slot] == name) {
    *out = node->kernels[slot];
    return TB_OK;
  }
  tb_cl_device *dev = tb_cl_dev(ctx);
  char who[192];
  node_who(ctx, who, sizeof who);
  tb_cl_kernel k = NULL;
  tb_status s = tb_cl_kernel_create(dev, who, name, &k);
  if (s != TB_OK) return s;
  if (node->kernels[slot]) dev->rt.cl.clReleaseKernel(node->kernels[slot]);
  node->kernels[slot] = k;
  node->names[slot] = name;
  *out = k;
  return TB_OK;
}

tb_status tb_cl_begin(cl_launch *l, tb_kernel_ctx *ctx, int slot, const char *name) {
  memset(l, 0, sizeof *l);
  l->ctx = ctx;
  l->name = name;
  l->status = tb_cl_kernel_get(ctx, slot, name, &l->kernel);
  return l->status;
}

static void set_arg(cl_launch *l, size_t size, const void *value) {
  if (l->status != TB_OK) return;
  tb_cl_device *dev = tb_cl_dev(l->ctx);
  tb_cl_int err = dev->rt.cl.clSetKernelArg(l->kernel, l->arg, size, value);
  if (err != TB_CL_SUCCESS) {
    char detail[160];
    snprintf(detail, sizeof detail, "kernel %s argument %u", l->name, l->arg);
    l->status = tb_cl_fail(dev, "clSetKernelArg", detail, err);
  }
  l->arg++;
}

tb_status tb_cl_buffer(tb_kernel_ctx *ctx, const tb_tensor *t, tb_cl_mem *mem, int64_t *offset) {
  *mem = NULL;
  *offset = 0;
  if (!t || !t->storage || tb_tensor_backend(t) != ctx->backend)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "a tensor given to the OpenCL kernel is not on %s", tb_cl_dev(ctx)->label);
  if (!tb_tensor_is_contiguous(t))
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the OpenCL kernels take contiguous tensors; this one is a strided view");
  const tb_block *b = t->storage->block;
  if (!b || !b->mem.handle) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "an empty tensor reached an OpenCL launch");
  size_t elem = tb_dtype_size(t->dtype);
  if (elem == 0 || b->offset % elem)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "device block offset %zu is not a multiple of the %zu-byte element", b->offset, elem);
  if (b->mem.size / elem > (size_t)INT_MAX)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "a device buffer of %zu bytes holds 2^31 or more elements, past what the "
                           "OpenCL kernels index (int); split the model's tensors", b->mem.size);
  *mem = (tb_cl_mem)b->mem.handle;
  *offset = (int64_t)(b->offset / elem) + t->offset;
  return TB_OK;
}

void tb_cl_arg_tensor_at(cl_launch *l, const tb_tensor *t, int64_t extra) {
  if (l->status != TB_OK) return;
  tb_cl_mem mem = NULL;
  int64_t off = 0;
  l->status = tb_cl_buffer(l->ctx, t, &mem, &off);
  if (l->status != TB_OK) return;
  set_arg(l, sizeof mem, &mem);
  tb_cl_arg_int(l, off + extra);
}

void tb_cl_arg_tensor(cl_launch *l, const tb_tensor *t) { tb_cl_arg_tensor_at(l, t, 0); }

void tb_cl_arg_int(cl_launch *l, int64_t v) {
  if (l->status == TB_OK && (v < INT_MIN || v > INT_MAX))
    l->status = tb_kernel_error(l->ctx, TB_ERR_UNSUPPORTED, "argument %u of OpenCL kernel %s is %lld, outside the kernels' int range",
                                l->arg, l->name, (long long)v);
  int32_t i = (int32_t)v;
  set_arg(l, sizeof i, &i);
}

void tb_cl_arg_float(cl_launch *l, float v) { set_arg(l, sizeof v, &v); }

void tb_cl_arg_int8(cl_launch *l, const int64_t *v, size_t n) {
  int32_t vec[8] = {0};
  for (size_t i = 0; i < n && i < 8; i++) {
    if (l->status == TB_OK && (v[i] < INT_MIN || v[i] > INT_MAX))
      l->status = tb_kernel_error(l->ctx, TB_ERR_UNSUPPORTED, "a shape or stride of %lld is outside the OpenCL kernels' int range",
                                  (long long)v[i]);
    vec[i] = (int32_t)v[i];
  }
  if (l->status == TB_OK && n > 8) l->status = tb_kernel_error(l->ctx, TB_ERR_UNSUPPORTED, "rank %zu; the OpenCL kernels take up to 8 dims", n);
  set_arg(l, sizeof vec, vec);
}

static tb_status enqueue(cl_launch *l, unsigned dims, const size_t *global, const size_t *local) {
  if (l->status != TB_OK) return l->status;
  tb_cl_device *dev = tb_cl_dev(l->ctx);
  tb_status s = tb_cl_queue_check(dev, l->name);
  if (s != TB_OK) return s;
  tb_cl_int err = dev->rt.cl.clEnqueueNDRangeKernel(dev->queue, l->kernel, dims, NULL, global, local, 0, NULL, NULL);
  if (err == TB_CL_SUCCESS) return TB_OK;
  char label[128], detail[256];
  snprintf(detail, sizeof detail, "kernel %s for %s (%s), %zu work-items", l->name,
           tb_kernel_label(l->ctx->name, l->ctx->op_type, label, sizeof label), l->ctx->op_type, dims == 1 ? global[0] : global[0] * global[1]);
  return tb_cl_queue_fail(dev, "clEnqueueNDRangeKernel", detail, err);
}

tb_status tb_cl_go(cl_launch *l, size_t n) {
  if (l->status != TB_OK || n == 0) return l->status;
  if (n > (size_t)INT_MAX) return tb_kernel_error(l->ctx, TB_ERR_UNSUPPORTED, "%zu work-items; the OpenCL kernels index with int", n);
  return enqueue(l, 1, &n, NULL);
}

tb_status tb_cl_go2(cl_launch *l, size_t gx, size_t gy, size_t lx, size_t ly) {
  if (l->status != TB_OK || gx == 0 || gy == 0) return l->status;
  const size_t global[2] = {gx, gy}, local[2] = {lx, ly};
  return enqueue(l, 2, global, local);
}

bool tb_cl_float_type(tb_dtype dt) { return dt == TB_DTYPE_F32 || dt == TB_DTYPE_F16; }

tb_status tb_cl_copy_strided(tb_kernel_ctx *ctx, int slot, const tb_tensor *src, int64_t src_off, const int64_t *src_str,
                          tb_tensor *dst, int64_t dst_off, const int64_t *dst_str, size_t ndim, const int64_t *shape) {
  int64_t n = 1;
  for (size_t d = 0; d < ndim; d++) n *= shape[d];
  if (n == 0) return TB_OK;
  size_t elem = tb_dtype_size(src->dtype);
  if (elem != tb_dtype_size(dst->dtype) || (elem != 2 && elem != 4))
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the OpenCL copy kernels move 2- or 4-byte elements, not %s", tb_dtype_name(src->dtype));
  cl_launch l;
  tb_cl_begin(&l, ctx, slot, elem == 4 ? "tb_copy_u32" : "tb_copy_u16");
  tb_cl_arg_tensor_at(&l, src, src_off);
  tb_cl_arg_tensor_at(&l, dst, dst_off);
  tb_cl_arg_int(&l, n);
  tb_cl_arg_int(&l, (int64_t)ndim);
  tb_cl_arg_int8(&l, shape, ndim);
  tb_cl_arg_int8(&l, src_str, ndim);
  tb_cl_arg_int8(&l, dst_str, ndim);
  return tb_cl_go(&l, (size_t)n);
}

tb_status tb_cl_unary(tb_kernel_ctx *ctx, int slot, const tb_tensor *x, tb_tensor *y, int op, float a, float b) {
  if (tb_tensor_numel(y) == 0) return TB_OK;
  if (tb_tensor_numel(x) != tb_tensor_numel(y) || x->dtype != y->dtype || !tb_cl_float_type(x->dtype))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "unary op on %s input of %lld elements into %s output of %lld",
                           tb_dtype_name(x->dtype), (long long)tb_tensor_numel(x), tb_dtype_name(y->dtype), (long long)tb_tensor_numel(y));
  cl_launch l;
  tb_cl_begin(&l, ctx, slot, x->dtype == TB_DTYPE_F32 ? "tb_unary_f32" : "tb_unary_f16");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, tb_tensor_numel(y));
  tb_cl_arg_int(&l, op);
  tb_cl_arg_float(&l, a);
  tb_cl_arg_float(&l, b);
  return tb_cl_go(&l, (size_t)tb_tensor_numel(y));
}

tb_status tb_cl_binary(tb_kernel_ctx *ctx, int slot, const tb_tensor *x, const tb_tensor *z, tb_tensor *y, int op) {
  int64_t n = tb_tensor_numel(y);
  if (n == 0) return TB_OK;
  if (x->dtype != y->dtype || z->dtype != y->dtype || !tb_cl_float_type(y->dtype))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "binary op on %s and %s inputs into %s", tb_dtype_name(x->dtype),
                           tb_dtype_name(z->dtype), tb_dtype_name(y->dtype));
  if (x->ndim > y->ndim || z->ndim > y->ndim)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inputs of rank %zu and %zu do not broadcast to the output's rank %zu",
                           x->ndim, z->ndim, y->ndim);
  int64_t sx[TB_MAX_DIMS], sz[TB_MAX_DIMS], shape[TB_MAX_DIMS];
  size_t nd = y->ndim;
  for (size_t d = 0; d < nd; d++) {
    size_t lx = nd - x->ndim, lz = nd - z->ndim;
    int64_t dx = d < lx ? 1 : x->shape[d - lx], dz = d < lz ? 1 : z->shape[d - lz];
    if ((dx != 1 && dx != y->shape[d]) || (dz != 1 && dz != y->shape[d]))
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input dims %lld and %lld do not broadcast to %lld (axis %zu)",
                             (long long)dx, (long long)dz, (long long)y->shape[d], d);
  }
  tb_shape_bcast_strides(nd, y->shape, x->ndim, x->shape, sx);
  tb_shape_bcast_strides(nd, y->shape, z->ndim, z->shape, sz);
  memcpy(shape, y->shape, nd * sizeof(int64_t));
  if (tb_tensor_numel(x) == n && tb_tensor_numel(z) == n) { /* same shapes: one flat dim */
    nd = 1;
    shape[0] = n;
    sx[0] = sz[0] = 1;
  }
  cl_launch l;
  tb_cl_begin(&l, ctx, slot, y->dtype == TB_DTYPE_F32 ? "tb_binary_f32" : "tb_binary_f16");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, z);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, n);
  tb_cl_arg_int(&l, (int64_t)nd);
  tb_cl_arg_int8(&l, shape, nd);
  tb_cl_arg_int8(&l, sx, nd);
  tb_cl_arg_int8(&l, sz, nd);
  tb_cl_arg_int(&l, op);
  return tb_cl_go(&l, (size_t)n);
}
