/* The Vulkan kernels' shared helpers (vk_kernel.h) and the backend's find_kernel: the first registered
 * kernel for the op whose accepts() takes the node, when the device can run kernels at all. */
#include "backend/vulkan/kernels/vk_kernel.h"
#include <stdio.h>
#include <string.h>
#include "backend/allocator.h"
#include "core/env.h"
#include "core/error.h"
#include "backend/tensor/tensor_impl.h"

vk_state *tb_vk_ctx_state(const tb_kernel_ctx *ctx) { return ctx->backend->state; }

tb_status tb_vk_check_u32(const tb_kernel_ctx *ctx, int64_t value, const char *what) {
  if (value < 0 || value > (int64_t)UINT32_MAX)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s is %lld; the Vulkan kernels take 0 .. 2^32-1", what, (long long)value);
  return TB_OK;
}

tb_status tb_vk_arg_of(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, size_t unit, vk_arg *out) {
  if (!t || !t->storage) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "%s is missing", what);
  if (t->storage->backend != ctx->backend || !t->storage->block || !t->storage->block->mem.handle) {
    if (t->numel == 0 && t->storage->backend == ctx->backend) {
      *out = (vk_arg){0, 0};
      return TB_OK;
    }
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "%s is not on %s", what, tb_vk_ctx_state(ctx)->label);
  }
  const tb_block *b = t->storage->block;
  const vk_allocation *a = b->mem.handle;
  uint32_t range = tb_vk_ctx_state(ctx)->props.limits.maxStorageBufferRange;
  if (a->size > range)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s lives in a %llu-byte buffer, over the device's maxStorageBufferRange of %u bytes",
                           what, (unsigned long long)a->size, range);
  uint64_t byte = (uint64_t)b->offset + (uint64_t)t->offset * tb_dtype_size(t->dtype);
  if (byte % unit || byte / unit > UINT32_MAX)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s starts at byte %llu of its buffer, not a multiple of %zu below 2^32 elements",
                           what, (unsigned long long)byte, unit);
  *out = (vk_arg){a->buffer, (uint32_t)(byte / unit)};
  return TB_OK;
}

tb_status tb_vk_input(const tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, vk_arg *out) {
  char what[32];
  snprintf(what, sizeof what, "input %zu", i);
  const tb_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  if (!t) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "%s is missing", what);
  if (t->dtype != dtype)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s is %s; the Vulkan kernel takes %s", what, tb_dtype_name(t->dtype), tb_dtype_name(dtype));
  if (!t->contiguous) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s is a strided view; the Vulkan kernel takes contiguous tensors", what);
  if (t->numel > (int64_t)UINT32_MAX) return tb_vk_check_u32(ctx, t->numel, what);
  size_t unit = tb_dtype_size(dtype) >= 4 ? 4 : tb_dtype_size(dtype);
  return tb_vk_arg_of(ctx, t, what, unit, out);
}

tb_status tb_vk_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, tb_tensor **t, vk_arg *out) {
  tb_status st = tb_kernel_output(ctx, i, dtype, ndim, shape, t);
  if (st != TB_OK) return st;
  char what[32];
  snprintf(what, sizeof what, "output %zu", i);
  if (!(*t)->contiguous) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%s is a strided view", what);
  if ((*t)->numel > (int64_t)UINT32_MAX) return tb_vk_check_u32(ctx, (*t)->numel, what);
  size_t unit = tb_dtype_size(dtype) >= 4 ? 4 : tb_dtype_size(dtype);
  return tb_vk_arg_of(ctx, *t, what, unit, out);
}

tb_status tb_vk_prepare_node(tb_kernel_ctx *ctx, tb_vk_shader_id id, const uint32_t *spec, uint32_t n_spec, uint32_t n_sets, void **state) {
  char who[96];
  snprintf(who, sizeof who, "node '%s' (%s)", ctx->name && ctx->name[0] ? ctx->name : "?", ctx->op_type);
  vk_node *node = NULL;
  tb_status st = tb_vk_node_create(tb_vk_ctx_state(ctx), who, id, spec, n_spec, n_sets, &node);
  *state = node;
  return st;
}

void tb_vk_release_node(void *state) { tb_vk_node_destroy(state); }

tb_status tb_vk_node_of(const tb_kernel_ctx *ctx, vk_node **out) {
  *out = ctx->state;
  if (!*out) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the Vulkan kernel ran without its prepare()");
  return TB_OK;
}

void tb_vk_groups(uint64_t items, uint32_t per_group, uint32_t *gx, uint32_t *gy) {
  uint64_t groups = (items + per_group - 1) / per_group;
  if (groups <= 65535) {
    *gx = (uint32_t)groups;
    *gy = groups ? 1 : 0;
    return;
  }
  *gx = 65535;
  *gy = (uint32_t)((groups + 65534) / 65535);
}

bool tb_vk_inputs_f32(const tb_node *n, const tb_value_type *const *in, uint32_t float_mask) {
  for (size_t i = 0; i < n->n_inputs && i < 32; i++) {
    if (!((float_mask >> i) & 1u) || n->inputs[i] < 0) continue;
    if (!in || !in[i] || !in[i]->has_dtype || in[i]->dtype != TB_DTYPE_F32) return false;
  }
  return true;
}

bool tb_vk_query_f32(const tb_kernel_query *q, uint32_t float_mask) {
  for (size_t i = 0; i < q->n_inputs && i < 32; i++) {
    if (!((float_mask >> i) & 1u) || !q->in || !q->in[i]) continue;
    if (!q->in[i]->has_dtype || q->in[i]->dtype != TB_DTYPE_F32) return false;
  }
  return true;
}

bool tb_vk_query_float(const tb_kernel_query *q, uint32_t float_mask) {
  tb_dtype first = TB_DTYPE_COUNT;
  for (size_t i = 0; i < q->n_inputs && i < 32; i++) {
    if (!((float_mask >> i) & 1u) || !q->in || !q->in[i]) continue;
    const tb_value_type *t = q->in[i];
    if (!t->has_dtype || (t->dtype != TB_DTYPE_F32 && t->dtype != TB_DTYPE_F16)) return false;
    if (first == TB_DTYPE_COUNT) first = t->dtype;
    if (t->dtype != first) return false;
  }
  return true;
}

bool tb_vk_inputs_float(const tb_node *n, const tb_value_type *const *in, uint32_t float_mask) {
  tb_dtype first = TB_DTYPE_COUNT;
  for (size_t i = 0; i < n->n_inputs && i < 32; i++) {
    if (!((float_mask >> i) & 1u) || n->inputs[i] < 0) continue;
    if (!in || !in[i] || !in[i]->has_dtype || (in[i]->dtype != TB_DTYPE_F32 && in[i]->dtype != TB_DTYPE_F16)) return false;
    if (first == TB_DTYPE_COUNT) first = in[i]->dtype;
    if (in[i]->dtype != first) return false;
  }
  return true;
}

static bool any_f16(const tb_kernel_query *q) {
  for (size_t i = 0; q->in && i < q->n_inputs; i++)
    if (q->in[i] && q->in[i]->has_dtype && q->in[i]->dtype == TB_DTYPE_F16) return true;
  return false;
}

tb_status tb_vk_value_ints(const tb_kernel_ctx *ctx, size_t i, int64_t *out, size_t cap, size_t *count) {
  *count = 0;
  const tb_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  if (!t || t->numel == 0) return TB_OK; /* an empty tensor (e.g. ReduceSum's axes = []) has no host block */
  const void *data = tb_tensor_host_data(t);
  if (!data || !t->contiguous) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "value input %zu is not a CPU tensor", i);
  if (t->dtype != TB_DTYPE_I64 && t->dtype != TB_DTYPE_I32)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu is %s, not int64 or int32", i, tb_dtype_name(t->dtype));
  if ((size_t)t->numel > cap) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "input %zu has %lld values, over %zu", i, (long long)t->numel, cap);
  for (int64_t k = 0; k < t->numel; k++)
    out[k] = t->dtype == TB_DTYPE_I64 ? ((const int64_t *)data)[k] : ((const int32_t *)data)[k];
  *count = (size_t)t->numel;
  return TB_OK;
}

const tb_kernel *tb_vk_find_kernel(void *state, const tb_kernel_query *q) {
  vk_state *s = state;
  if (tb_vk_shaders_missing || s->compute_missing[0]) {
    static bool logged;
    if (!logged) {
      logged = true;
      if (tb_vk_shaders_missing)
        tb_log(TB_LOG_WARN, "%s: %s", s->label, tb_vk_shaders_missing);
      else
        tb_log(TB_LOG_WARN, "%s: the Vulkan driver does not provide %s; every node runs on the CPU", s->label, s->compute_missing);
    }
    return NULL;
  }
  if (!s->fp16 && strcmp(q->op_type, "Cast") != 0 && any_f16(q)) return NULL; /* fp16 kernels need shaderFloat16 */
  for (size_t i = 0; i < tb_vk_kernel_count; i++)
    if (tb_kernel_matches(tb_vk_kernels[i], q)) return tb_vk_kernels[i];
  return NULL;
}
