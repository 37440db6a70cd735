/* The Vulkan backend's compute declarations (runtime/vulkan_device_api.h: shaders, pipelines, pipeline cache,
 * descriptors, 16-bit storage) against the system's vulkan_core.h: sizes, offsets, structure types, flag
 * bits. Checked at compile time when the header is installed; without it there is nothing to compare
 * with. Also the embedded shader table: every shader present as SPIR-V (magic number, whole words). */
#include <string.h>
#include "backend/vulkan/kernels/vk_shaders.h"
#include "runtime/vulkan_device_api.h"
#include "test_util.h"

#if __has_include(<vulkan/vulkan_core.h>)
#include <vulkan/vulkan_core.h>
#define HAVE_VULKAN_HEADERS 1
#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), #a)
#define OFF(a, fa, b, fb) _Static_assert(offsetof(a, fa) == offsetof(b, fb), #a "." #fa)
#define EQ(a, b) _Static_assert((a) == (b), #a)
SAME(tb_vk_shader_module_create_info, VkShaderModuleCreateInfo);
OFF(tb_vk_shader_module_create_info, pCode, VkShaderModuleCreateInfo, pCode);
SAME(tb_vk_descriptor_set_layout_binding, VkDescriptorSetLayoutBinding);
OFF(tb_vk_descriptor_set_layout_binding, pImmutableSamplers, VkDescriptorSetLayoutBinding, pImmutableSamplers);
SAME(tb_vk_descriptor_set_layout_create_info, VkDescriptorSetLayoutCreateInfo);
OFF(tb_vk_descriptor_set_layout_create_info, pBindings, VkDescriptorSetLayoutCreateInfo, pBindings);
SAME(tb_vk_push_constant_range, VkPushConstantRange);
SAME(tb_vk_pipeline_layout_create_info, VkPipelineLayoutCreateInfo);
OFF(tb_vk_pipeline_layout_create_info, pPushConstantRanges, VkPipelineLayoutCreateInfo, pPushConstantRanges);
SAME(tb_vk_specialization_map_entry, VkSpecializationMapEntry);
SAME(tb_vk_specialization_info, VkSpecializationInfo);
OFF(tb_vk_specialization_info, pData, VkSpecializationInfo, pData);
SAME(tb_vk_pipeline_shader_stage_create_info, VkPipelineShaderStageCreateInfo);
OFF(tb_vk_pipeline_shader_stage_create_info, pSpecializationInfo, VkPipelineShaderStageCreateInfo, pSpecializationInfo);
SAME(tb_vk_compute_pipeline_create_info, VkComputePipelineCreateInfo);
OFF(tb_vk_compute_pipeline_create_info, layout, VkComputePipelineCreateInfo, layout);
OFF(tb_vk_compute_pipeline_create_info, basePipelineIndex, VkComputePipelineCreateInfo, basePipelineIndex);
SAME(tb_vk_pipeline_cache_create_info, VkPipelineCacheCreateInfo);
OFF(tb_vk_pipeline_cache_create_info, pInitialData, VkPipelineCacheCreateInfo, pInitialData);
SAME(tb_vk_descriptor_pool_size, VkDescriptorPoolSize);
SAME(tb_vk_descriptor_pool_create_info, VkDescriptorPoolCreateInfo);
OFF(tb_vk_descriptor_pool_create_info, pPoolSizes, VkDescriptorPoolCreateInfo, pPoolSizes);
SAME(tb_vk_descriptor_set_allocate_info, VkDescriptorSetAllocateInfo);
OFF(tb_vk_descriptor_set_allocate_info, pSetLayouts, VkDescriptorSetAllocateInfo, pSetLayouts);
SAME(tb_vk_descriptor_buffer_info, VkDescriptorBufferInfo);
SAME(tb_vk_write_descriptor_set, VkWriteDescriptorSet);
OFF(tb_vk_write_descriptor_set, pBufferInfo, VkWriteDescriptorSet, pBufferInfo);
OFF(tb_vk_write_descriptor_set, pTexelBufferView, VkWriteDescriptorSet, pTexelBufferView);
SAME(tb_vk_pipeline_cache_header, VkPipelineCacheHeaderVersionOne);
OFF(tb_vk_pipeline_cache_header, pipelineCacheUUID, VkPipelineCacheHeaderVersionOne, pipelineCacheUUID);
SAME(tb_vk_16bit_storage_features, VkPhysicalDevice16BitStorageFeatures);
OFF(tb_vk_16bit_storage_features, storageInputOutput16, VkPhysicalDevice16BitStorageFeatures, storageInputOutput16);
SAME(tb_vk_pipeline, VkPipeline);
SAME(tb_vk_descriptor_set, VkDescriptorSet);
EQ(TB_VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO, VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
EQ(TB_VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
EQ(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
EQ(TB_VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER);
EQ(TB_VK_SHADER_STAGE_COMPUTE_BIT, VK_SHADER_STAGE_COMPUTE_BIT);
EQ(TB_VK_PIPELINE_BIND_POINT_COMPUTE, VK_PIPELINE_BIND_POINT_COMPUTE);
EQ(TB_VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
EQ(TB_VK_ACCESS_SHADER_READ_BIT, VK_ACCESS_SHADER_READ_BIT);
EQ(TB_VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_SHADER_WRITE_BIT);
EQ(TB_VK_ACCESS_HOST_WRITE_BIT, VK_ACCESS_HOST_WRITE_BIT);
EQ(TB_VK_SUBGROUP_FEATURE_BASIC_BIT, VK_SUBGROUP_FEATURE_BASIC_BIT);
EQ(TB_VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
EQ(TB_VK_PIPELINE_CACHE_HEADER_VERSION_ONE, VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
EQ(TB_VK_ERROR_INITIALIZATION_FAILED, VK_ERROR_INITIALIZATION_FAILED);
#endif

static void matches_system_header(void **state) {
  (void)state;
#ifdef HAVE_VULKAN_HEADERS
  assert_int_equal(sizeof(tb_vk_compute_pipeline_create_info), sizeof(VkComputePipelineCreateInfo)); /* the rest at compile time */
#else
  skip(); /* no <vulkan/vulkan_core.h> (libvulkan-dev) on this machine: nothing to compare with */
#endif
}

/* Built with glslc here: every shader is SPIR-V (magic 0x07230203, whole 32-bit words) with a name. */
static void every_shader_is_embedded(void **state) {
  (void)state;
  if (tb_vk_shaders_missing) fail_msg("this build has no shaders: %s", tb_vk_shaders_missing);
  static const char *const names[] = {"unary", "binary", "copy", "matmul", "conv2d", "pool", "batchnorm", "softmax", "softmax_sg",
                                      "layernorm", "layernorm_sg", "reduce", "reduce_sg", "gather", "cast", "attention",
                                      "attention_sg", "unary_f16", "binary_f16", "lstm_gates"};
  assert_int_equal(sizeof names / sizeof names[0], TB_VK_SHADER_COUNT);
  for (int i = 0; i < TB_VK_SHADER_COUNT; i++) {
    const tb_vk_shader_code *c = &tb_vk_shader_table[i];
    assert_string_equal(c->name, names[i]);
    assert_non_null(c->words);
    assert_true(c->size >= 20 && c->size % 4 == 0);
    assert_int_equal(c->words[0], 0x07230203u);
    assert_true(tb_vk_shader_bindings((tb_vk_shader_id)i) >= 2);
  }
  assert_int_equal(tb_vk_shader_bindings(TB_VK_SHADER_BATCHNORM), 6);
  assert_int_equal(tb_vk_shader_bindings(TB_VK_SHADER_COUNT), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_system_header),
      cmocka_unit_test(every_shader_is_embedded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
