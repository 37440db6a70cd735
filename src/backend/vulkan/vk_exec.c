/* Recording and submitting the Vulkan backend's dispatches: one command buffer collects the dispatches of
 * consecutive kernels (a compute-to-compute barrier between them); any transfer, free or synchronize
 * submits it first and waits, so the backend's copy ops see every kernel's results. Per prepared node a
 * descriptor pool holds its sets, updated in place at each run. Also the compute stats and test switches. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_compute.h"
#include "core/error.h"

#define FENCE_TIMEOUT_NS (300ull * 1000 * 1000 * 1000)

static void memory_barrier(vk_state *s, tb_vk_command_buffer cmd, tb_vk_flags src_stage, tb_vk_flags src_access,
                           tb_vk_flags dst_stage, tb_vk_flags dst_access) {
  tb_vk_memory_barrier b = {.sType = TB_VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access, .dstAccessMask = dst_access};
  s->vk.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

tb_status tb_vk_exec_flush(vk_state *s) {
  vk_compute *c = s->compute;
  if (!c || !c->recording) return TB_OK;
  c->recording = false;
  c->batch++;
  memory_barrier(s, c->cmd, TB_VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, TB_VK_ACCESS_SHADER_WRITE_BIT,
                 TB_VK_PIPELINE_STAGE_TRANSFER_BIT | TB_VK_PIPELINE_STAGE_HOST_BIT,
                 TB_VK_ACCESS_TRANSFER_READ_BIT | TB_VK_ACCESS_TRANSFER_WRITE_BIT | TB_VK_ACCESS_HOST_READ_BIT);
  tb_vk_result r = s->vk.vkEndCommandBuffer(c->cmd);
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkEndCommandBuffer (kernels)", r);
  r = s->vk.vkResetFences(s->device, 1, &s->fence);
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkResetFences", r);
  tb_vk_submit_info submit = {.sType = TB_VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &c->cmd};
  if (c->fail_next_submit) { /* test switch: the recorded work is dropped, as a lost device would */
    r = c->fail_next_submit;
    c->fail_next_submit = 0;
  } else {
    r = s->vk.vkQueueSubmit(s->queue, 1, &submit, s->fence);
  }
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkQueueSubmit (kernels)", r);
  c->stats.submits++;
  r = s->vk.vkWaitForFences(s->device, 1, &s->fence, 1, FENCE_TIMEOUT_NS);
  if (r == TB_VK_TIMEOUT)
    return tb_error(TB_ERR_DRIVER, "%s: kernels did not finish within %llu s (vkWaitForFences returned %d VK_TIMEOUT)", s->label,
                    FENCE_TIMEOUT_NS / 1000000000ull, (int)r);
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, "vkWaitForFences (kernels)", r);
}

/* Start the batch (after a barrier making earlier transfers visible to shaders) or, in one, a barrier
 * making the previous dispatches' writes visible to the next. */
static tb_status begin_dispatch(vk_state *s, vk_compute *c) {
  if (c->recording) {
    memory_barrier(s, c->cmd, TB_VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, TB_VK_ACCESS_SHADER_WRITE_BIT,
                   TB_VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, TB_VK_ACCESS_SHADER_READ_BIT | TB_VK_ACCESS_SHADER_WRITE_BIT);
    return TB_OK;
  }
  tb_vk_command_buffer_begin_info begin = {
      .sType = TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
      .flags = TB_VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
  };
  tb_vk_result r = s->vk.vkBeginCommandBuffer(c->cmd, &begin);
  if (r != TB_VK_SUCCESS) return tb_vk_fail(s, "vkBeginCommandBuffer (kernels)", r);
  c->recording = true;
  memory_barrier(s, c->cmd, TB_VK_PIPELINE_STAGE_TRANSFER_BIT | TB_VK_PIPELINE_STAGE_HOST_BIT,
                 TB_VK_ACCESS_TRANSFER_WRITE_BIT | TB_VK_ACCESS_HOST_WRITE_BIT, TB_VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 TB_VK_ACCESS_SHADER_READ_BIT | TB_VK_ACCESS_SHADER_WRITE_BIT);
  return TB_OK;
}

static tb_status node_sets(vk_state *s, vk_compute *c, vk_node *node, tb_vk_shader_id id) {
  uint32_t bindings = tb_vk_shader_bindings(id);
  tb_vk_descriptor_pool_size size = {TB_VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, bindings * node->n_sets};
  tb_vk_descriptor_pool_create_info info = {
      .sType = TB_VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
      .maxSets = node->n_sets,
      .poolSizeCount = 1,
      .pPoolSizes = &size,
  };
  tb_vk_result r = s->vk.vkCreateDescriptorPool(s->device, &info, NULL, &node->pool);
  if (r != TB_VK_SUCCESS) {
    node->pool = 0;
    return tb_vk_fail(s, "vkCreateDescriptorPool", r);
  }
  c->stats.descriptor_pools++;
  tb_vk_descriptor_set_layout *layouts = malloc(node->n_sets * sizeof *layouts);
  if (!layouts) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: %s: out of host memory", s->label, node->who);
  for (uint32_t i = 0; i < node->n_sets; i++) layouts[i] = c->shaders[id].set_layout;
  tb_vk_descriptor_set_allocate_info alloc = {
      .sType = TB_VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
      .descriptorPool = node->pool,
      .descriptorSetCount = node->n_sets,
      .pSetLayouts = layouts,
  };
  r = s->vk.vkAllocateDescriptorSets(s->device, &alloc, node->sets);
  free(layouts);
  return r == TB_VK_SUCCESS ? TB_OK : tb_vk_fail(s, "vkAllocateDescriptorSets", r);
}

tb_status tb_vk_node_create(vk_state *s, const char *who, tb_vk_shader_id id, const uint32_t *spec, uint32_t n_spec, uint32_t n_sets,
                         vk_node **out) {
  *out = NULL;
  if (n_sets == 0) n_sets = 1;
  vk_node *node = calloc(1, sizeof *node);
  if (node) {
    node->sets = calloc(n_sets, sizeof *node->sets);
    node->recorded = calloc(n_sets, sizeof *node->recorded);
    node->bound = calloc((size_t)n_sets * VK_NODE_BINDINGS, sizeof *node->bound);
  }
  if (!node || !node->sets || !node->recorded || !node->bound) {
    if (node) {
      free(node->sets);
      free(node->recorded);
      free(node->bound);
    }
    free(node);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: %s: out of host memory", s->label, who);
  }
  node->s = s;
  node->n_sets = n_sets;
  snprintf(node->who, sizeof node->who, "%s", who);
  pthread_mutex_lock(&s->lock);
  tb_status st = tb_vk_pipeline_get(s, id, spec, n_spec, who, &node->pipe);
  if (st == TB_OK) st = node_sets(s, s->compute, node, id);
  pthread_mutex_unlock(&s->lock);
  if (st != TB_OK) {
    tb_vk_node_destroy(node);
    return st;
  }
  *out = node;
  return TB_OK;
}

void tb_vk_node_destroy(vk_node *node) {
  if (!node) return;
  vk_state *s = node->s;
  pthread_mutex_lock(&s->lock);
  vk_compute *c = s->compute;
  bool pending = false;
  for (uint32_t i = 0; c && c->recording && i < node->n_sets; i++) pending = pending || node->recorded[i] == c->batch;
  if (pending && tb_vk_exec_flush(s) != TB_OK) s->vk.vkDeviceWaitIdle(s->device);
  if (node->pool) s->vk.vkDestroyDescriptorPool(s->device, node->pool, NULL); /* frees its sets */
  pthread_mutex_unlock(&s->lock);
  free(node->sets);
  free(node->recorded);
  free(node->bound);
  free(node);
}

tb_status tb_vk_node_dispatch(vk_node *node, uint32_t set, const tb_vk_buffer *buffers, uint32_t n_buffers, const void *push,
                           uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz) {
  vk_state *s = node->s;
  tb_vk_shader_id id = node->pipe->shader;
  if (set >= node->n_sets || n_buffers != tb_vk_shader_bindings(id) || n_buffers > VK_NODE_BINDINGS || push_size > VK_PUSH_BYTES)
    return tb_error(TB_ERR_INTERNAL, "%s: %s: dispatch of set %u with %u buffers", s->label, node->who, set, n_buffers);
  if (gx == 0 || gy == 0 || gz == 0) return TB_OK;
  /* An empty tensor has no buffer (the shader does not read it): bind another of the dispatch's. */
  tb_vk_buffer bound[8], any = 0;
  for (uint32_t i = 0; i < n_buffers; i++) any = any ? any : buffers[i];
  if (!any) return TB_OK;
  for (uint32_t i = 0; i < n_buffers; i++) bound[i] = buffers[i] ? buffers[i] : any;
  buffers = bound;
  const uint32_t *max_groups = s->props.limits.maxComputeWorkGroupCount;
  if (gx > max_groups[0] || gy > max_groups[1] || gz > max_groups[2])
    return tb_error(TB_ERR_UNSUPPORTED, "%s: %s: %u x %u x %u workgroups exceed the device's limit %u x %u x %u", s->label, node->who,
                    gx, gy, gz, max_groups[0], max_groups[1], max_groups[2]);
  pthread_mutex_lock(&s->lock);
  vk_compute *c = s->compute;
  tb_status st = TB_OK;
  /* A set recorded in the batch still open cannot be rewritten: submit that batch first (or, with
   * reuse_sets, reuse the set as is when its buffers are the same). */
  tb_vk_buffer *last = node->bound + (size_t)set * VK_NODE_BINDINGS;
  bool same = node->reuse_sets && c->recording && node->recorded[set] == c->batch &&
              memcmp(last, buffers, n_buffers * sizeof *buffers) == 0;
  if (!same && c->recording && node->recorded[set] == c->batch) st = tb_vk_exec_flush(s);
  if (st == TB_OK && !same) {
    tb_vk_descriptor_buffer_info info[8];
    tb_vk_write_descriptor_set writes[8];
    for (uint32_t i = 0; i < n_buffers; i++) {
      info[i] = (tb_vk_descriptor_buffer_info){buffers[i], 0, TB_VK_WHOLE_SIZE};
      writes[i] = (tb_vk_write_descriptor_set){.sType = TB_VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                               .dstSet = node->sets[set],
                                               .dstBinding = i,
                                               .descriptorCount = 1,
                                               .descriptorType = TB_VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                               .pBufferInfo = &info[i]};
    }
    s->vk.vkUpdateDescriptorSets(s->device, n_buffers, writes, 0, NULL);
    memcpy(last, buffers, n_buffers * sizeof *buffers);
    c->stats.descriptor_updates++;
  }
  if (st == TB_OK) st = begin_dispatch(s, c);
  if (st == TB_OK) {
    tb_vk_pipeline_layout layout = c->shaders[id].layout;
    s->vk.vkCmdBindPipeline(c->cmd, TB_VK_PIPELINE_BIND_POINT_COMPUTE, node->pipe->pipeline);
    s->vk.vkCmdBindDescriptorSets(c->cmd, TB_VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &node->sets[set], 0, NULL);
    if (push_size) s->vk.vkCmdPushConstants(c->cmd, layout, TB_VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    s->vk.vkCmdDispatch(c->cmd, gx, gy, gz);
    node->recorded[set] = c->batch;
    c->stats.dispatches++;
  }
  pthread_mutex_unlock(&s->lock);
  return st;
}

tb_status tb_vk_compute_stats_get(void *state, tb_vk_compute_stats *out) {
  vk_state *s = state;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&s->lock);
  vk_compute *c = NULL;
  tb_status st = tb_vk_compute_get(s, &c);
  if (st == TB_OK) {
    *out = c->stats;
    out->subgroups_used = tb_vk_use_subgroups(s);
  }
  pthread_mutex_unlock(&s->lock);
  return st;
}

void tb_vk_force_no_subgroups(void *state, bool on) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  vk_compute *c = NULL;
  if (tb_vk_compute_get(s, &c) == TB_OK) c->subgroups_off = on;
  pthread_mutex_unlock(&s->lock);
}

void tb_vk_fail_next_pipeline(void *state, int32_t result) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  vk_compute *c = NULL;
  if (tb_vk_compute_get(s, &c) == TB_OK) c->fail_next_pipeline = result;
  pthread_mutex_unlock(&s->lock);
}

void tb_vk_fail_next_submit(void *state, int32_t result) {
  vk_state *s = state;
  pthread_mutex_lock(&s->lock);
  vk_compute *c = NULL;
  if (tb_vk_compute_get(s, &c) == TB_OK) c->fail_next_submit = result;
  pthread_mutex_unlock(&s->lock);
}
