/* Internal: the Vulkan backend's compute side, one per open device, made on the first kernel prepare
 * (vk_pipeline.c, vk_exec.c):
 *  - per shader: a VkShaderModule, a descriptor-set layout (its storage buffers) and a pipeline layout
 *    (128 bytes of push constants); pipelines per (shader, specialization constants), shared by all nodes;
 *  - one VkPipelineCache, loaded from the on-disk cache (core/disk_cache.h, kind "vulkan") under a key of
 *    vendorID, deviceID, driverVersion, pipelineCacheUUID and the shaders' hash, checked (our wrapper's
 *    length and SHA-256, then the driver's header) before the driver sees it, and saved at close when new
 *    pipelines were made;
 *  - one command buffer that records dispatches between transfers: kernels append to it (with a compute
 *    barrier between dispatches), and every copy, fill, free or synchronize submits it first and waits;
 *  - per prepared node (vk_node): a descriptor pool with the node's sets, made once at prepare and
 *    updated in place at each run, so a steady-state run allocates nothing.
 * Everything runs under the device's mutex (vk_state.lock). */
#ifndef TB_BACKEND_VK_COMPUTE_H
#define TB_BACKEND_VK_COMPUTE_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/vulkan/kernels/vk_shaders.h"
#include "backend/vulkan/vk_backend.h"
#include "backend/vulkan/vk_device.h"

#define VK_MAX_SPEC 4
#define VK_PUSH_BYTES 128u

typedef struct vk_pipeline {
  struct vk_pipeline *next;
  tb_vk_shader_id shader;
  uint32_t spec[VK_MAX_SPEC];
  uint32_t n_spec;
  tb_vk_pipeline pipeline;
} vk_pipeline;

typedef struct vk_shader_objects {
  tb_vk_shader_module module;
  tb_vk_descriptor_set_layout set_layout;
  tb_vk_pipeline_layout layout;
} vk_shader_objects;

typedef struct vk_compute {
  tb_vk_command_buffer cmd;
  bool recording;   /* cmd holds dispatches not yet submitted */
  uint64_t batch;   /* number of the batch being recorded (starts at 1) */
  tb_vk_pipeline_cache cache;
  bool cache_dirty; /* pipelines made since the cache was loaded */
  char cache_key[160];
  bool cache_on;    /* the disk cache has a folder */
  vk_shader_objects shaders[TB_VK_SHADER_COUNT];
  vk_pipeline *pipelines;
  bool subgroups_reported, subgroups_off;
  tb_vk_result fail_next_pipeline;
  tb_vk_result fail_next_submit;
  tb_vk_compute_stats stats;
} vk_compute;

/* The device's compute state, made on first use (TB_OK) or the reason it cannot run kernels. */
tb_status tb_vk_compute_get(vk_state *s, vk_compute **out);
/* At device close: save the pipeline cache when it changed, destroy pipelines and layouts. */
void tb_vk_compute_release(vk_state *s);
/* The pipeline of shader `id` with these specialization constants (each a 32-bit value, constant_id i);
 * made once per device. `who` names the node for messages. Locked by the caller. */
tb_status tb_vk_pipeline_get(vk_state *s, tb_vk_shader_id id, const uint32_t *spec, uint32_t n_spec, const char *who,
                          vk_pipeline **out);
/* Whether reductions may use the _SG shaders (subgroup arithmetic reported in compute, not switched off). */
bool tb_vk_use_subgroups(vk_state *s);

/* Submit the recorded dispatches and wait (nothing when none). Locked by the caller. Every transfer,
 * free and synchronize calls it first. */
tb_status tb_vk_exec_flush(vk_state *s);

#define VK_NODE_BINDINGS 8

/* One node's descriptor sets over one pipeline. */
typedef struct vk_node {
  vk_state *s;
  vk_pipeline *pipe;
  tb_vk_descriptor_pool pool;
  uint32_t n_sets;
  tb_vk_descriptor_set *sets;
  uint64_t *recorded; /* the batch each set was last recorded in */
  tb_vk_buffer *bound; /* per set, VK_NODE_BINDINGS buffers it was last written with */
  bool reuse_sets;     /* see tb_vk_node_dispatch */
  char who[96];       /* "node 'x' (Op)" */
} vk_node;

tb_status tb_vk_node_create(vk_state *s, const char *who, tb_vk_shader_id id, const uint32_t *spec, uint32_t n_spec,
                         uint32_t n_sets, vk_node **out);
void tb_vk_node_destroy(vk_node *node);
/* Point set `set` at the buffers (binding i: whole buffer i), push the constants and record a dispatch
 * of groups (x, y, z), after a barrier on earlier dispatches. A set already recorded in the open batch is
 * submitted first before it is rewritten; when the node has reuse_sets (set after tb_vk_node_create) and the
 * buffers are the same, the set is reused as is instead (only the push constants differ, e.g. the LSTM's
 * time steps), so the batch stays open. */
tb_status tb_vk_node_dispatch(vk_node *node, uint32_t set, const tb_vk_buffer *buffers, uint32_t n_buffers, const void *push,
                           uint32_t push_size, uint32_t gx, uint32_t gy, uint32_t gz);

#endif
