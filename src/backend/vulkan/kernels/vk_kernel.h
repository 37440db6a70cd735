/* Internal: what the Vulkan kernels share (vk_kernel.c): the backend's find_kernel, a device tensor as
 * (VkBuffer, element offset), the per-node state made at prepare (vk_node: the pipeline and descriptor
 * sets), workgroup counts, and int lists read from attributes or value inputs (CPU tensors). Each kernel
 * file (vk_elementwise.c, vk_nn.c, vk_norm.c, vk_tensor.c, vk_lstm.c) defines tb_kernel structs with level 0 and
 * registers them in vk_registry.c. */
#ifndef TB_BACKEND_VK_KERNEL_H
#define TB_BACKEND_VK_KERNEL_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/kernel.h"
#include "backend/vulkan/vk_compute.h"

#define VK_MAX_RANK 6

const tb_kernel *tb_vk_find_kernel(void *state, const tb_kernel_query *q);

/* A device tensor for a shader: its buffer and the index of its first element in units of `unit` bytes. */
typedef struct vk_arg {
  tb_vk_buffer buffer;
  uint32_t offset;
} vk_arg;

vk_state *tb_vk_ctx_state(const tb_kernel_ctx *ctx);
/* Input or output tensor `t` (named `what` in messages) on this device, with `unit`-aligned offset. */
tb_status tb_vk_arg_of(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, size_t unit, vk_arg *out);
/* Input i present, fp32 (or `dtype`), contiguous, on the device. */
tb_status tb_vk_input(const tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, vk_arg *out);
/* Output i with this shape (allocated when not preallocated) as an argument. */
tb_status tb_vk_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, tb_tensor **t, vk_arg *out);

/* prepare/release for kernels whose state is just a vk_node. */
tb_status tb_vk_prepare_node(tb_kernel_ctx *ctx, tb_vk_shader_id id, const uint32_t *spec, uint32_t n_spec, uint32_t n_sets, void **state);
void tb_vk_release_node(void *state);
/* The node's state, or an error when prepare did not run. */
tb_status tb_vk_node_of(const tb_kernel_ctx *ctx, vk_node **out);

/* Workgroups for `items` items in groups of `per_group`, wrapped from x into y beyond 65535. */
void tb_vk_groups(uint64_t items, uint32_t per_group, uint32_t *gx, uint32_t *gy);
/* Sizes and offsets pushed to shaders are 32-bit: TB_ERR_UNSUPPORTED naming the node when not. */
tb_status tb_vk_check_u32(const tb_kernel_ctx *ctx, int64_t value, const char *what);

/* Input types: fp32 (or absent) for inputs whose bit is in `float_mask`. */
bool tb_vk_inputs_f32(const tb_node *n, const tb_value_type *const *in, uint32_t float_mask);
/* The same with fp32 or fp16, all alike (find_kernel declines fp16 on devices without fp16 kernels). */
bool tb_vk_inputs_float(const tb_node *n, const tb_value_type *const *in, uint32_t float_mask);
/* tb_vk_inputs_f32 and tb_vk_inputs_float of a query (its omitted inputs have no type). */
bool tb_vk_query_f32(const tb_kernel_query *q, uint32_t float_mask);
bool tb_vk_query_float(const tb_kernel_query *q, uint32_t float_mask);
/* The ints of a value input (a CPU tensor of int64 or int32) into out (at most cap); count in *count. */
tb_status tb_vk_value_ints(const tb_kernel_ctx *ctx, size_t i, int64_t *out, size_t cap, size_t *count);

extern const tb_kernel *const tb_vk_kernels[];
extern const size_t tb_vk_kernel_count;

#endif
