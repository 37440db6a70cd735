/* The Vulkan backend's pipelines: the device's compute features (subgroups, fp16, cooperative matrices),
 * shader modules and layouts per shader, compute pipelines per (shader, specialization constants), and
 * the VkPipelineCache kept on disk (see vk_compute.h for the key and the checks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/vk_compute.h"
#include "core/disk_cache.h"
#include "core/env.h"
#include "core/error.h"
#include "core/sha256.h"

#define CACHE_KIND "vulkan"
#define WRAP_MAGIC "TBVKPC1\n"
#define WRAP_BYTES (8 + 8 + 32) /* magic, payload size (little endian), SHA-256 of the payload */

uint32_t tb_vk_shader_bindings(tb_vk_shader_id id) {
  static const uint32_t bindings[TB_VK_SHADER_COUNT] = {
#define TB_VK_SHADER_BINDINGS(name, n) n,
      TB_VK_SHADER_LIST(TB_VK_SHADER_BINDINGS)
#undef TB_VK_SHADER_BINDINGS
  };
  return (unsigned)id < TB_VK_SHADER_COUNT ? bindings[id] : 0;
}

/* FNV-1a over every embedded shader: a new build's shaders get a new cache entry. */
static uint64_t shaders_hash(void) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < TB_VK_SHADER_COUNT; i++) {
    const unsigned char *p = (const unsigned char *)tb_vk_shader_table[i].words;
    for (size_t k = 0; p && k < tb_vk_shader_table[i].size; k++) h = (h ^ p[k]) * 1099511628211ull;
  }
  return h;
}

static void read_features(vk_state *s, vk_compute *c) {
  if (!s->has_properties2) return;
  tb_vk_subgroup_properties sub = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  tb_vk_physical_device_properties2 p2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sub};
  s->api.vkGetPhysicalDeviceProperties2(s->phys, &p2);
  const tb_vk_flags need = TB_VK_SUBGROUP_FEATURE_BASIC_BIT | TB_VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  c->stats.subgroup_size = sub.subgroupSize;
  c->stats.subgroup_arithmetic = (sub.supportedStages & TB_VK_SHADER_STAGE_COMPUTE_BIT) && (sub.supportedOperations & need) == need &&
                                 sub.subgroupSize >= 1 && sub.subgroupSize <= 64;
  if (s->api.vkGetPhysicalDeviceFeatures2) {
    tb_vk_float16_int8_features f16 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    tb_vk_physical_device_features2 f2 = {.sType = TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f16};
    s->api.vkGetPhysicalDeviceFeatures2(s->phys, &f2);
    c->stats.shader_float16 = f16.shaderFloat16 != 0;
  }
  c->stats.fp16_kernels = s->fp16;
  c->stats.cooperative_matrix =
      tb_vk_has_device_extension(s, "VK_KHR_cooperative_matrix") || tb_vk_has_device_extension(s, "VK_NV_cooperative_matrix");
}

bool tb_vk_use_subgroups(vk_state *s) {
  vk_compute *c = s->compute;
  return c && c->stats.subgroup_arithmetic && !c->subgroups_off;
}

/* Our wrapper around the driver's data, checked before the driver sees a byte: length, SHA-256, then the
 * VkPipelineCacheHeaderVersionOne fields against this device. NULL when valid, else why not. */
static const char *check_entry(const vk_state *s, const unsigned char *data, size_t size, size_t *payload_size) {
  if (size < WRAP_BYTES || memcmp(data, WRAP_MAGIC, 8) != 0) return "it does not start with the TensorBridge header";
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | data[8 + i];
  if (n != size - WRAP_BYTES) return "its length does not match its header (truncated or extended)";
  uint8_t digest[32];
  tb_sha256 h;
  tb_sha256_init(&h);
  tb_sha256_update(&h, data + WRAP_BYTES, (size_t)n);
  tb_sha256_final(&h, digest);
  if (memcmp(digest, data + 16, 32) != 0) return "its SHA-256 does not match its content";
  tb_vk_pipeline_cache_header hdr;
  if (n < sizeof hdr) return "the driver's header is shorter than 32 bytes";
  memcpy(&hdr, data + WRAP_BYTES, sizeof hdr);
  if (hdr.headerSize < sizeof hdr || hdr.headerSize > n) return "the driver's header size is out of range";
  if (hdr.headerVersion != TB_VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return "the driver's header version is not 1";
  if (hdr.vendorID != s->props.vendorID || hdr.deviceID != s->props.deviceID) return "it was made for another device";
  if (memcmp(hdr.pipelineCacheUUID, s->props.pipelineCacheUUID, 16) != 0) return "its pipelineCacheUUID is another driver's";
  *payload_size = (size_t)n;
  return NULL;
}

static tb_status create_cache(vk_state *s, vk_compute *c) {
  char uuid[33];
  for (int i = 0; i < 16; i++) snprintf(uuid + 2 * i, 3, "%02x", s->props.pipelineCacheUUID[i]);
  snprintf(c->cache_key, sizeof c->cache_key, "pipelines-%04x-%04x-%08x-%s-%016llx", s->props.vendorID, s->props.deviceID,
           s->props.driverVersion, uuid, (unsigned long long)shaders_hash());
  char dir[512];
  c->cache_on = tb_disk_cache_dir(CACHE_KIND, dir, sizeof dir) == TB_OK;
  c->stats.cache_enabled = c->cache_on;
  void *data = NULL;
  size_t size = 0, payload = 0;
  const unsigned char *initial = NULL;
  if (c->cache_on && tb_disk_cache_read(CACHE_KIND, c->cache_key, &data, &size) == TB_OK) {
    const char *why = check_entry(s, data, size, &payload);
    if (why) {
      c->stats.cache_rejected++;
      tb_log(TB_LOG_WARN, "%s: the pipeline cache entry %s/%s is not valid (%s); it is ignored and will be rebuilt", s->label, dir,
             c->cache_key, why);
    } else {
      initial = (const unsigned char *)data + WRAP_BYTES;
    }
  } else {
    c->stats.cache_misses++;
  }
  tb_vk_pipeline_cache_create_info info = {
      .sType = TB_VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
      .initialDataSize = initial ? payload : 0,
      .pInitialData = initial,
  };
  tb_vk_result r = s->vk.vkCreatePipelineCache(s->device, &info, NULL, &c->cache);
  if (r != TB_VK_SUCCESS && initial) { /* the driver refused data that passed our checks: start empty */
    c->stats.cache_rejected++;
    info.initialDataSize = 0;
    info.pInitialData = NULL;
    initial = NULL;
    r = s->vk.vkCreatePipelineCache(s->device, &info, NULL, &c->cache);
  }
  if (initial) {
    c->stats.cache_hits++;
    c->stats.cache_bytes_loaded = payload;
  }
  c->cache_dirty = !initial;
  free(data);
  if (r != TB_VK_SUCCESS) {
    c->cache = 0;
    return tb_vk_fail(s, "vkCreatePipelineCache", r);
  }
  return TB_OK;
}

static void save_cache(vk_state *s, vk_compute *c) {
  if (!c->cache || !c->cache_on || !c->cache_dirty || !c->pipelines) return;
  size_t n = 0;
  if (s->vk.vkGetPipelineCacheData(s->device, c->cache, &n, NULL) != TB_VK_SUCCESS || n == 0) return;
  if (c->stats.cache_hits && n == c->stats.cache_bytes_loaded) return; /* nothing new since the load */
  unsigned char *buf = malloc(WRAP_BYTES + n);
  if (!buf) return;
  tb_vk_result r = s->vk.vkGetPipelineCacheData(s->device, c->cache, &n, buf + WRAP_BYTES);
  if (r == TB_VK_SUCCESS) {
    memcpy(buf, WRAP_MAGIC, 8);
    for (int i = 0; i < 8; i++) buf[8 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    tb_sha256 h;
    tb_sha256_init(&h);
    tb_sha256_update(&h, buf + WRAP_BYTES, n);
    tb_sha256_final(&h, buf + 16);
    if (tb_disk_cache_write(CACHE_KIND, c->cache_key, buf, WRAP_BYTES + n) == TB_OK)
      c->stats.cache_writes++;
    else
      tb_log(TB_LOG_INFO, "%s: could not save the pipeline cache: %s", s->label, tb_last_error()); /* disk_cache warned */
  }
  free(buf);
}

tb_status tb_vk_compute_get(vk_state *s, vk_compute **out) {
  *out = s->compute;
  if (s->compute) return TB_OK;
  if (tb_vk_shaders_missing) return tb_error(TB_ERR_UNSUPPORTED, "%s: %s", s->label, tb_vk_shaders_missing);
  if (s->compute_missing[0])
    return tb_error(TB_ERR_UNSUPPORTED, "%s: the Vulkan driver does not provide %s, so kernels cannot run on it", s->label,
                    s->compute_missing);
  vk_compute *c = calloc(1, sizeof *c);
  if (!c) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for the compute state", s->label);
  c->batch = 1;
  read_features(s, c);
  tb_status st = create_cache(s, c);
  if (st == TB_OK) {
    tb_vk_command_buffer_allocate_info alloc = {
        .sType = TB_VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = s->pool,
        .level = 0,
        .commandBufferCount = 1,
    };
    tb_vk_result r = s->vk.vkAllocateCommandBuffers(s->device, &alloc, &c->cmd);
    if (r != TB_VK_SUCCESS) {
      c->cmd = NULL;
      st = tb_vk_fail(s, "vkAllocateCommandBuffers", r);
    }
  }
  s->compute = c;
  if (st != TB_OK) {
    tb_vk_compute_release(s);
    return st;
  }
  *out = c;
  return TB_OK;
}

void tb_vk_compute_release(vk_state *s) {
  vk_compute *c = s->compute;
  if (!c) return;
  save_cache(s, c);
  while (c->pipelines) {
    vk_pipeline *p = c->pipelines;
    c->pipelines = p->next;
    s->vk.vkDestroyPipeline(s->device, p->pipeline, NULL);
    free(p);
  }
  for (int i = 0; i < TB_VK_SHADER_COUNT; i++) {
    vk_shader_objects *o = &c->shaders[i];
    if (o->layout) s->vk.vkDestroyPipelineLayout(s->device, o->layout, NULL);
    if (o->set_layout) s->vk.vkDestroyDescriptorSetLayout(s->device, o->set_layout, NULL);
    if (o->module) s->vk.vkDestroyShaderModule(s->device, o->module, NULL);
  }
  if (c->cache) s->vk.vkDestroyPipelineCache(s->device, c->cache, NULL);
  /* the command buffer goes with the command pool */
  free(c);
  s->compute = NULL;
}

static tb_status shader_objects(vk_state *s, vk_compute *c, tb_vk_shader_id id, const char *who) {
  vk_shader_objects *o = &c->shaders[id];
  if (o->layout) return TB_OK;
  const tb_vk_shader_code *code = &tb_vk_shader_table[id];
  if (!code->words || code->size == 0 || code->size % 4)
    return tb_error(TB_ERR_INTERNAL, "%s: %s: shader %d has no SPIR-V in this build", s->label, who, (int)id);
  tb_vk_result r;
  if (!o->module) {
    tb_vk_shader_module_create_info info = {.sType = TB_VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = code->size, .pCode = code->words};
    r = s->vk.vkCreateShaderModule(s->device, &info, NULL, &o->module);
    if (r != TB_VK_SUCCESS) {
      o->module = 0;
      return tb_error(r == TB_VK_ERROR_OUT_OF_HOST_MEMORY || r == TB_VK_ERROR_OUT_OF_DEVICE_MEMORY ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER,
                      "%s: %s: vkCreateShaderModule for shader '%s' failed with %d %s", s->label, who, code->name, (int)r,
                      tb_vk_result_name(r));
    }
  }
  if (!o->set_layout) {
    tb_vk_descriptor_set_layout_binding b[8];
    uint32_t n = tb_vk_shader_bindings(id);
    for (uint32_t i = 0; i < n; i++)
      b[i] = (tb_vk_descriptor_set_layout_binding){i, TB_VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, TB_VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    tb_vk_descriptor_set_layout_create_info info = {.sType = TB_VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, .bindingCount = n, .pBindings = b};
    r = s->vk.vkCreateDescriptorSetLayout(s->device, &info, NULL, &o->set_layout);
    if (r != TB_VK_SUCCESS) {
      o->set_layout = 0;
      return tb_vk_fail(s, "vkCreateDescriptorSetLayout", r);
    }
  }
  tb_vk_push_constant_range range = {TB_VK_SHADER_STAGE_COMPUTE_BIT, 0, VK_PUSH_BYTES};
  tb_vk_pipeline_layout_create_info info = {
      .sType = TB_VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &o->set_layout,
      .pushConstantRangeCount = 1,
      .pPushConstantRanges = &range,
  };
  r = s->vk.vkCreatePipelineLayout(s->device, &info, NULL, &o->layout);
  if (r != TB_VK_SUCCESS) {
    o->layout = 0;
    return tb_vk_fail(s, "vkCreatePipelineLayout", r);
  }
  return TB_OK;
}

tb_status tb_vk_pipeline_get(vk_state *s, tb_vk_shader_id id, const uint32_t *spec, uint32_t n_spec, const char *who, vk_pipeline **out) {
  *out = NULL;
  vk_compute *c = NULL;
  tb_status st = tb_vk_compute_get(s, &c);
  if (st != TB_OK) return st;
  if ((unsigned)id >= TB_VK_SHADER_COUNT || n_spec > VK_MAX_SPEC)
    return tb_error(TB_ERR_INTERNAL, "%s: %s: shader %d with %u constants", s->label, who, (int)id, n_spec);
  for (vk_pipeline *p = c->pipelines; p; p = p->next)
    if (p->shader == id && p->n_spec == n_spec && (n_spec == 0 || memcmp(p->spec, spec, n_spec * sizeof *spec) == 0)) {
      c->stats.pipelines_reused++;
      *out = p;
      return TB_OK;
    }
  st = shader_objects(s, c, id, who);
  if (st != TB_OK) return st;
  vk_pipeline *p = calloc(1, sizeof *p);
  if (!p) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: %s: out of host memory for a pipeline", s->label, who);
  p->shader = id;
  p->n_spec = n_spec;
  if (n_spec) memcpy(p->spec, spec, n_spec * sizeof *spec);
  tb_vk_specialization_map_entry entries[VK_MAX_SPEC];
  for (uint32_t i = 0; i < n_spec; i++) entries[i] = (tb_vk_specialization_map_entry){i, i * 4u, 4};
  tb_vk_specialization_info si = {n_spec, entries, n_spec * 4u, p->spec};
  tb_vk_compute_pipeline_create_info info = {
      .sType = TB_VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = TB_VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = TB_VK_SHADER_STAGE_COMPUTE_BIT,
                .module = c->shaders[id].module,
                .pName = "main",
                .pSpecializationInfo = n_spec ? &si : NULL},
      .layout = c->shaders[id].layout,
      .basePipelineIndex = -1,
  };
  tb_vk_result r;
  if (c->fail_next_pipeline) {
    r = c->fail_next_pipeline;
    c->fail_next_pipeline = 0;
  } else {
    r = s->vk.vkCreateComputePipelines(s->device, c->cache, 1, &info, NULL, &p->pipeline);
    c->stats.pipelines_created++;
  }
  if (r != TB_VK_SUCCESS) {
    free(p);
    return tb_error(r == TB_VK_ERROR_OUT_OF_HOST_MEMORY || r == TB_VK_ERROR_OUT_OF_DEVICE_MEMORY ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER,
                    "%s: %s: vkCreateComputePipelines for shader '%s' failed with %d %s; the node cannot run on this device",
                    s->label, who, tb_vk_shader_table[id].name, (int)r, tb_vk_result_name(r));
  }
  c->cache_dirty = true;
  p->next = c->pipelines;
  c->pipelines = p;
  *out = p;
  return TB_OK;
}
