/* Internal: the embedded SPIR-V of the Vulkan compute shaders (the .comp files in shaders/, compiled by glslc at build
 * time through cmake/vulkan_shaders.cmake into generated/vk_shaders.c), with each shader's descriptor
 * bindings (storage buffers 0..n-1), the `_SG` variants built with subgroup arithmetic and the `_F16`
 * variants with fp16 buffers. */
#ifndef TB_BACKEND_VK_SHADERS_H
#define TB_BACKEND_VK_SHADERS_H
#include <stddef.h>
#include <stdint.h>

/* Keep in step with TB_VK_SHADERS in cmake/vulkan_shaders.cmake: X(id, storage buffers). */
#define TB_VK_SHADER_LIST(X) \
  X(UNARY, 2)                \
  X(BINARY, 3)               \
  X(COPY, 2)                 \
  X(MATMUL, 4)               \
  X(CONV2D, 5)               \
  X(POOL, 2)                 \
  X(BATCHNORM, 6)            \
  X(SOFTMAX, 2)              \
  X(SOFTMAX_SG, 2)           \
  X(LAYERNORM, 6)            \
  X(LAYERNORM_SG, 6)         \
  X(REDUCE, 2)               \
  X(REDUCE_SG, 2)            \
  X(GATHER, 3)               \
  X(CAST, 2)                 \
  X(ATTENTION, 4)            \
  X(ATTENTION_SG, 4)         \
  X(UNARY_F16, 2)            \
  X(BINARY_F16, 3)           \
  X(LSTM_GATES, 7)

typedef enum tb_vk_shader_id {
#define TB_VK_SHADER_ENUM(id, bindings) TB_VK_SHADER_##id,
  TB_VK_SHADER_LIST(TB_VK_SHADER_ENUM)
#undef TB_VK_SHADER_ENUM
      TB_VK_SHADER_COUNT
} tb_vk_shader_id;

typedef struct tb_vk_shader_code {
  const char *name;      /* "softmax_sg" */
  const uint32_t *words; /* NULL when the build had no glslc */
  size_t size;           /* bytes */
} tb_vk_shader_code;

extern const tb_vk_shader_code tb_vk_shader_table[TB_VK_SHADER_COUNT];
/* NULL when the shaders are embedded; else why not (glslc was absent at build time). */
extern const char *const tb_vk_shaders_missing;

/* Storage-buffer bindings of a shader. */
uint32_t tb_vk_shader_bindings(tb_vk_shader_id id);

#endif
